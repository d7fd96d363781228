//! The verdicts in words for a terminal: a line per snapshot, its findings indented under it,
//! the warnings (a `warning:` line each), the run's consistency and the overall verdict.

use std::io::Write;

use super::findings::{clause_title, Finding};
use super::judgement::{Judgement, MAX_FINDINGS};

/// The verdicts as text: a line per snapshot, the findings under it, the run's consistency and
/// the overall verdict.
pub fn print_outcome(outcome: &Judgement, out: &mut dyn Write) -> std::io::Result<()> {
    let files = outcome.files.len();
    // What was read but left out of the run judged is said apart: receipts and losses of
    // messages or markers no log sends.
    let set_aside = match outcome.set_aside {
        0 => String::new(),
        n => format!(" ({n} of them set aside: receipts or losses of what no log sends)"),
    };
    writeln!(
        out,
        "read {} event{} from {files} file{}{set_aside}; {} snapshot{} found",
        outcome.events,
        if outcome.events == 1 { "" } else { "s" },
        if files == 1 { "" } else { "s" },
        outcome.snapshots.len(),
        if outcome.snapshots.len() == 1 { "" } else { "s" },
    )?;
    fn print(out: &mut dyn Write, f: &Finding, indent: &str) -> std::io::Result<()> {
        writeln!(out, "{indent}- {}: {}", clause_title(f.clause), f.message)?;
        for at in &f.at {
            writeln!(out, "{indent}    {at}")?;
        }
        if !f.consequences.is_empty() {
            writeln!(out, "{indent}    which also breaks:")?;
            for c in &f.consequences {
                print(out, c, &format!("{indent}      "))?;
            }
        }
        Ok(())
    }
    if !outcome.damage.is_empty() {
        let mislogged = outcome.damage.iter().all(|f| f.clause == "logging") && outcome.more_damage == 0;
        writeln!(out, "logs: {}", if mislogged { "LOGGING ERROR" } else { "DAMAGED" })?;
        for f in &outcome.damage {
            print(out, f, "  ")?;
        }
        if outcome.more_damage > 0 {
            writeln!(out, "  ... and {} more (the first {MAX_FINDINGS} are listed)", outcome.more_damage)?;
        }
    }
    for s in &outcome.snapshots {
        match (&s.not_judged, s.holds) {
            (Some(why), _) => writeln!(out, "snapshot {}: not judged: {why}", s.id)?,
            (None, true) => writeln!(out, "snapshot {}: holds", s.id)?,
            (None, false) => {
                writeln!(out, "snapshot {}: VIOLATED", s.id)?;
                for f in &s.findings {
                    print(out, f, "  ")?;
                }
                if s.more_findings > 0 {
                    writeln!(out, "  ... and {} more findings (the first {MAX_FINDINGS} are listed)", s.more_findings)?;
                }
            }
        }
    }
    for w in &outcome.warnings {
        writeln!(out, "warning: {}: {}", clause_title(w.clause), w.message)?;
        for at in &w.at {
            writeln!(out, "    {at}")?;
        }
    }
    if outcome.more_warnings > 0 {
        writeln!(out, "... and {} more warnings (the first {MAX_FINDINGS} are listed)", outcome.more_warnings)?;
    }
    if outcome.run.is_empty() {
        if outcome.app == "none" {
            writeln!(out, "run: consistent (every channel FIFO)")?;
        } else {
            writeln!(out, "run: consistent (every channel FIFO; every logged state is what the transitions produce)")?;
        }
    } else {
        writeln!(out, "run: INCONSISTENT")?;
        for f in &outcome.run {
            print(out, f, "  ")?;
        }
        if outcome.more_run > 0 {
            writeln!(out, "  ... and {} more findings (the first {MAX_FINDINGS} are listed)", outcome.more_run)?;
        }
    }
    writeln!(out, "verdict: {}", outcome.summary)
}
