//! A check's outcome and how it is reported: the verdicts, the exit code, the verdict line, the
//! table, and the JSON object (with a shard's part or a merge's shards).

use std::io::Write;

use serde::{Deserialize, Serialize};

use super::options::{CheckOptions, Strategy};
use crate::engine::distributed::Traffic;
use crate::engine::shard::Part;
pub use crate::system::bookkeeping::Tallies;

/// Exit code: exhaustive, and every property holds.
pub const EXIT_OK: u8 = 0;
/// Exit code: a property fails (a counterexample, or no example after an exhaustive search).
pub const EXIT_FAIL: u8 = 1;
/// Exit code: bad input.
pub const EXIT_BAD_INPUT: u8 = 2;
/// Exit code: the run was not exhaustive and found no failure; some verdicts are undecided.
pub const EXIT_UNDECIDED: u8 = 3;

/// A property's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// An always-property with no counterexample in an exhaustive run.
    Holds,
    /// An always-property that fails.
    Counterexample,
    /// A sometimes-property with an example.
    ExampleFound,
    /// A sometimes-property without one, after an exhaustive run: none exists.
    NoExample,
    /// An always-property with no counterexample in a run that was not exhaustive.
    NoCounterexampleYet,
    /// A sometimes-property with no example in a run that was not exhaustive.
    NoExampleYet,
}

impl Verdict {
    /// As printed in the table.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::Counterexample => "counterexample",
            Verdict::ExampleFound => "example found",
            Verdict::NoExample => "no example",
            Verdict::NoCounterexampleYet => "no counterexample yet",
            Verdict::NoExampleYet => "no example yet",
        }
    }

    /// Whether this verdict fails the check.
    pub fn fails(self) -> bool {
        matches!(self, Verdict::Counterexample | Verdict::NoExample)
    }

    /// Whether the run could not decide this property.
    pub fn undecided(self) -> bool {
        matches!(self, Verdict::NoCounterexampleYet | Verdict::NoExampleYet)
    }
}

/// One property's outcome.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PropertyResult {
    /// Its name.
    pub name: String,
    /// "always" or "sometimes".
    pub expectation: String,
    /// The verdict.
    pub verdict: Verdict,
    /// The discovery's actions, when there is one.
    pub path: Option<Vec<String>>,
    /// The discovery in the Explorer.
    pub link: Option<String>,
}

/// Why a run ended before exploring everything.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// `timeout` elapsed.
    Timeout,
    /// The interrupt flag was raised (Ctrl-C).
    Interrupted,
}

/// A whole check's outcome.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CheckResult {
    /// Exit 0: the run was exhaustive and every property holds.
    pub ok: bool,
    /// Whether every reachable state was explored (not a simulation, no depth bound reached,
    /// not stopped early).
    pub exhaustive: bool,
    /// Why the exploration was bounded, in words (`None` when exhaustive).
    pub bound: Option<String>,
    /// A timeout or an interrupt that ended the run.
    pub stopped: Option<Stop>,
    /// Distinct states (simulation: states generated).
    pub unique_states: usize,
    /// States generated, with repeats.
    pub states: usize,
    /// Longest path explored, in steps.
    pub max_depth: usize,
    /// Wall time.
    pub seconds: f64,
    /// Every property, in order.
    pub properties: Vec<PropertyResult>,
    /// The overall verdict in one line (the table's last line).
    pub summary: String,
    /// The command's exit code for this outcome.
    pub exit_code: u8,
    /// Barrier algorithms: what the explored steps did — checkpoints stored, crashes, restores
    /// — so that a pass can be told from a vacuous one (not in a shard's or a merge's result).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tallies: Option<Tallies>,
    /// A shard's part of a split check (`--shard I/N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardInfo>,
    /// A merge of shards' results (`model merge`): the shards and their counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<MergeInfo>,
    /// A distributed check (`--distributed`): the ranks and what crossed between them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distributed: Option<Traffic>,
}

/// What a shard reports about its part (the `shard` object of its JSON).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardInfo {
    /// The split and this shard's part of it (flattened: `index`, `count`, `split_depth`,
    /// `prefix_states`, `frontier`, `roots`).
    #[serde(flatten)]
    pub part: Part,
    /// Every setting that shapes the state space or the properties (see [`config_key`](super::shards::config_key)).
    pub config: String,
    /// The version of the `model` crate that wrote it.
    pub version: String,
    /// `--depth`, if given (for the merged verdict line).
    pub depth: Option<usize>,
    /// The SHA-256 of the whole result without this field, in lowercase hex (see
    /// [`digest`](super::shards::digest)): `model merge` refuses a file whose content no longer
    /// matches it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
}

/// One shard's part of a merge (the `merged.shards` entries).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MergedShard {
    /// `I`.
    pub index: usize,
    /// The file it came from.
    pub file: String,
    /// States it searched.
    pub unique_states: usize,
    /// States it generated, with repeats.
    pub states: usize,
    /// Its wall time.
    pub seconds: f64,
    /// Whether its part was searched to the end.
    pub exhaustive: bool,
    /// Frontier states it searched from.
    pub roots: usize,
    /// Its file's digest (`shard.digest`), checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
}

/// What a merge adds to its result (the `merged` object of its JSON).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MergeInfo {
    /// `N`.
    pub count: usize,
    /// The split depth.
    pub split_depth: usize,
    /// States above the split depth (judged by shard 0).
    #[serde(default)]
    pub prefix_states: usize,
    /// States at the split depth, each searched from by exactly one shard.
    #[serde(default)]
    pub frontier: usize,
    /// The configuration (see [`config_key`](super::shards::config_key)).
    pub config: String,
    /// The model version that wrote the shards.
    pub version: String,
    /// Every shard, by index.
    pub shards: Vec<MergedShard>,
}

/// Sets the exit code, `ok` and the verdict line from the verdicts (and `shard`, `merged`).
pub(crate) fn conclude(result: &mut CheckResult, opts: &CheckOptions) {
    result.exit_code = exit_code(result);
    result.ok = result.exit_code == EXIT_OK;
    result.summary = summary(result, opts);
    // Exhaustive with no crash: only with --crashes 0.
    if result.tallies.is_some_and(|t| t.crashes == 0) && result.exhaustive {
        result.summary.push_str("; no crash (--crashes 0): exactly-once saw failure-free runs only");
    }
}

/// 1 when a property fails (a counterexample wins over everything), else 3 when some verdict
/// is undecided, else 1 when a sometimes-property has no example, else 0. A shard's missing
/// example is no failure: another shard may have one.
fn exit_code(r: &CheckResult) -> u8 {
    let properties = &r.properties;
    if properties.iter().any(|p| p.verdict == Verdict::Counterexample) {
        EXIT_FAIL
    } else if properties.iter().any(|p| p.verdict.undecided()) {
        EXIT_UNDECIDED
    } else if r.shard.is_none() && properties.iter().any(|p| p.verdict.fails()) {
        EXIT_FAIL
    } else {
        EXIT_OK
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{} {}", group(n), if n == 1 { one } else { many })
}

/// The overall verdict in one line; a shard's starts with `shard I/N: `.
fn summary(r: &CheckResult, opts: &CheckOptions) -> String {
    match &r.shard {
        Some(info) => format!("shard {}/{}: {}", info.part.index, info.part.count, verdict_line(r, opts)),
        None => verdict_line(r, opts),
    }
}

fn verdict_line(r: &CheckResult, opts: &CheckOptions) -> String {
    let states = match &r.merged {
        Some(m) => format!("{} explored across {} shards", plural(r.unique_states, "state", "states"), m.count),
        None => plural(r.unique_states, "state", "states"),
    };
    let scope = match &r.bound {
        None => format!("exhaustive, {states}"),
        Some(bound) => format!("not exhaustive: {bound}; {states}"),
    };
    let names = |verdict: Verdict| -> Vec<String> {
        r.properties.iter().filter(|p| p.verdict == verdict).map(|p| p.name.clone()).collect()
    };
    let failing: Vec<String> = r
        .properties
        .iter()
        .filter(|p| p.verdict == Verdict::Counterexample)
        .map(|p| {
            format!("{} (counterexample, {})", p.name, plural(p.path.as_ref().map_or(0, Vec::len), "step", "steps"))
        })
        .collect();
    if !failing.is_empty() {
        let fail = if failing.len() == 1 { "fails" } else { "fail" };
        return format!("{} {fail}: {}; {scope}", plural(failing.len(), "property", "properties"), failing.join("; "));
    }
    if r.exit_code == EXIT_UNDECIDED {
        let bound = r.bound.as_deref().unwrap_or("bounded");
        let within = match (r.stopped, opts.strategy, opts.depth) {
            (None, Strategy::Simulation, _) => {
                format!("in {} simulated states (not exhaustive: {bound})", group(r.states))
            }
            (None, _, Some(d)) => format!("to depth {d} ({scope})"),
            _ => format!("in {states} (not exhaustive: {bound})"),
        };
        let undecided = r.properties.iter().filter(|p| p.verdict.undecided()).count();
        let mut line = format!("no counterexample {within}; {} undecided", plural(undecided, "property", "properties"));
        let yet = names(Verdict::NoExampleYet);
        if !yet.is_empty() {
            line.push_str(&format!(", no example yet for: {}", yet.join(", ")));
        }
        return line;
    }
    let none = names(Verdict::NoExample);
    if !none.is_empty() && r.shard.is_some() {
        return format!(
            "no counterexample ({scope}); no example in this part for: {} (another shard may have one: merge every \
             shard's result with `model merge`)",
            none.join(", ")
        );
    }
    if !none.is_empty() {
        let holding = r.properties.len() - none.len();
        return format!(
            "no example found for: {} ({scope}: this configuration never shows it); the other {} hold",
            none.join(", "),
            plural(holding, "property", "properties")
        );
    }
    format!("all {} hold ({scope})", plural(r.properties.len(), "property", "properties"))
}

/// Prints the verdict table, the discoveries, the counts and the verdict line.
pub fn print_table(result: &CheckResult, out: &mut dyn Write) -> std::io::Result<()> {
    let width = result.properties.iter().map(|p| p.name.len()).max().unwrap_or(8).max(8);
    writeln!(out)?;
    writeln!(out, "{:<width$}  {:<9}  verdict", "property", "kind")?;
    writeln!(out, "{:-<width$}  {:-<9}  {:-<21}", "", "", "")?;
    for p in &result.properties {
        writeln!(out, "{:<width$}  {:<9}  {}", p.name, p.expectation, p.verdict.label())?;
    }
    for p in result.properties.iter().filter(|p| p.path.is_some()) {
        let path = p.path.as_deref().unwrap_or_default();
        writeln!(out)?;
        writeln!(out, "{} ({}, {} steps):", p.name, p.verdict.label(), path.len())?;
        for (i, a) in path.iter().enumerate() {
            writeln!(out, "  {:>3}. {a}", i + 1)?;
        }
        if let Some(link) = &p.link {
            writeln!(out, "  explore: {link}")?;
        }
    }
    writeln!(out)?;
    if let Some(info) = &result.shard {
        writeln!(
            out,
            "shard {}/{}: split depth {}, {} states above it (judged by shard 0), {} at it, {} searched from here",
            info.part.index,
            info.part.count,
            info.part.split_depth,
            group(info.part.prefix_states),
            group(info.part.frontier),
            group(info.part.roots)
        )?;
    }
    match &result.merged {
        Some(m) => {
            let each: Vec<String> =
                m.shards.iter().map(|s| format!("shard {}: {}", s.index, group(s.unique_states))).collect();
            writeln!(
                out,
                "states explored across shards {} ({}; shards may overlap), states {}, max depth {}, seconds {:.2} \
                 (the slowest shard)",
                group(result.unique_states),
                each.join(", "),
                group(result.states),
                result.max_depth,
                result.seconds
            )?;
        }
        None => writeln!(
            out,
            "unique states {}, states {}, max depth {}, seconds {:.2}",
            group(result.unique_states),
            group(result.states),
            result.max_depth,
            result.seconds
        )?,
    }
    if let Some(d) = &result.distributed {
        let per_state = |x: u64| x as f64 / result.unique_states.max(1) as f64;
        writeln!(
            out,
            "{} ranks: the largest owns {} states ({:.2}× the mean), the busiest expanded {} ({:.2}× the mean); sent \
             between ranks per unique state: {:.2} fingerprints ({:.2} more not sent: asked before), {:.4} states moved \
             to even out levels, {:.0} bytes; peak memory {} MB on the largest rank, {} MB in all",
            d.ranks,
            group(d.largest_share as usize),
            per_state(d.largest_share) * d.ranks as f64,
            group(d.largest_expanded as usize),
            per_state(d.largest_expanded) * d.ranks as f64,
            per_state(d.fingerprints_sent),
            per_state(d.fingerprints_cached),
            per_state(d.states_sent),
            per_state(d.bytes_sent),
            d.largest_peak_bytes >> 20,
            d.total_peak_bytes >> 20
        )?;
        if d.spilled_states > 0 {
            writeln!(
                out,
                "levels kept on disk (past --rank-memory): {} states, {} MB written",
                group(d.spilled_states as usize),
                d.spilled_bytes >> 20
            )?;
        }
    }
    if let Some(t) = &result.tallies {
        writeln!(
            out,
            "steps that stored a checkpoint {}, crashes {}, restores of a checkpoint {} ({} with channel state), \
             steps to a quiet state after a crash {}",
            group(t.stores as usize),
            group(t.crashes as usize),
            group(t.restores as usize),
            group(t.restores_with_channel_state as usize),
            group(t.quiet_after_crash as usize)
        )?;
    }
    writeln!(out, "{}", result.summary)
}

/// `1234567` as `1,234,567`.
pub fn group(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
