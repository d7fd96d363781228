//! `model verify`: checks the logs of any implementation of the marker algorithm — JSON lines,
//! one event a line (see `chandy_lamport::formats::jsonl`) — against the theorem, snapshot by
//! snapshot, with the library's trace checker. The checker recomputes every state by the
//! application's transitions: the states in the logs are only cross-checked, never trusted.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use chandy_lamport::apps::bank::Bank;
use chandy_lamport::apps::orders::Orders;
use chandy_lamport::apps::spec::Spec;
use chandy_lamport::apps::stream::Stream;
use chandy_lamport::check::{check, unterminated, Clause, EventRef, Violation};
use chandy_lamport::check::{EventKind, MsgId, Trace};
use chandy_lamport::formats::jsonl::{read_logs, Claim, LogApp, Logs};
use chandy_lamport::formats::top::TopFile;
use chandy_lamport::protocol::{GlobalSnapshot, GlobalState};
use chandy_lamport::{Application, ChannelId, SnapshotId, Topology};
use clap::ValueEnum;
use serde::Serialize;

use super::output::{note, to_stdout};
use super::report::{EXIT_FAIL, EXIT_OK, EXIT_UNDECIDED};

/// The exit codes, for `model verify --help`.
pub const VERIFY_EXIT_CODES: &str = "\
Exit codes:
  0  every snapshot in the logs holds, and the logged states are those the transitions produce
  1  some snapshot violates the theorem (or never completed), or the run is inconsistent (a logged
     state the application's transitions do not produce, a step they refuse)
  2  bad input: an unreadable or malformed topology or log file (the message names the file and
     line), an unknown process or channel, a receipt of a message never sent, a gap in a
     process's seq, logs that admit no causal order, logs with no event at all
  3  the logs hold no snapshot (and no logged state is wrong): nothing was judged, never a pass
  4  the output could not be written (standard output a closed pipe or a full disk): the verdict
     is unknown";

/// The application: what the houses run (`check`, `explore`) or what the logs record (`verify`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum App {
    /// Trading houses passing carts of jars: states `{"jars", "sold"}`, payloads and steps
    /// numbers of jars; initial jars from the topology file's tokens.
    Bank,
    /// Houses ordering jars from each other (`chandy_lamport::orders`); initial jars from the
    /// topology file's tokens.
    Orders,
    /// A dataflow job (`chandy_lamport::stream`): houses with tokens are sources emitting that
    /// many items; every house counts the items it takes in and passes them on.
    Stream,
}

/// One thing found wrong, with the log lines it concerns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The clause (`a` … `e`), `initiation`, `logged-states` or `claims`.
    pub clause: &'static str,
    /// What is wrong.
    pub message: String,
    /// The log lines involved, each with its role (`send at P0.jsonl:6`).
    pub at: Vec<String>,
}

/// The most findings listed for one snapshot, and for the run: past that they are counted, so
/// that logs checked against the wrong topology (a thousand processes that never logged) give a
/// page, not millions of lines.
pub const MAX_FINDINGS: usize = 25;

/// The verdict on one snapshot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SnapshotVerdict {
    /// The snapshot id.
    pub id: u32,
    /// Whether it holds.
    pub holds: bool,
    /// Why not: the first [`MAX_FINDINGS`].
    pub findings: Vec<Finding>,
    /// Findings past the first [`MAX_FINDINGS`], counted and not listed.
    pub more_findings: usize,
}

/// Everything `model verify` reports.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// Every snapshot holds and the run is consistent.
    pub ok: bool,
    /// The log files read.
    pub files: Vec<String>,
    /// Events read.
    pub events: usize,
    /// One verdict per snapshot id found in the logs.
    pub snapshots: Vec<SnapshotVerdict>,
    /// Problems of the run as a whole: logged states the transitions do not produce (the first
    /// [`MAX_FINDINGS`]).
    pub run: Vec<Finding>,
    /// Problems of the run past the first [`MAX_FINDINGS`], counted and not listed.
    pub more_run: usize,
    /// The overall verdict in words.
    pub summary: String,
    /// The exit code.
    pub exit_code: u8,
}

/// `model verify`: reads the topology and the logs, checks every snapshot, prints the verdicts
/// (or one JSON object) and returns the exit code. Bad input is an error (exit 2 in `main`).
pub fn run(topology: &Path, traces: &[PathBuf], app: App, json: bool) -> anyhow::Result<ExitCode> {
    let top = TopFile::read(topology)?;
    for w in &top.warnings {
        note(format!("warning: {w}"));
    }
    fn initial<A: Spec>(top: &TopFile, path: &Path) -> anyhow::Result<Vec<A>> {
        match chandy_lamport::apps::spec::too_many_tokens::<A>(&top.tokens) {
            Some((Some(p), t)) => {
                let line = top.node_lines.get(p.index()).map_or(String::new(), |l| format!(":{l}"));
                let (file, name, max) = (path.display(), A::NAME, A::MAX_TOKENS);
                anyhow::bail!("{file}{line}: {t} tokens, but the {name} application takes at most {max}");
            }
            Some((None, t)) => {
                let (file, name, max) = (path.display(), A::NAME, A::MAX_TOTAL_TOKENS);
                anyhow::bail!("{file}: {t} tokens in all, but the {name} application takes at most {max} in all");
            }
            None => {}
        }
        Ok(top.topology.processes().map(|p| A::initial(p, top.tokens.get(p.index()).copied().unwrap_or(0))).collect())
    }
    let outcome = match app {
        App::Bank => verify_logs::<Bank>(&top.topology, initial(&top, topology)?, traces)?,
        App::Orders => verify_logs::<Orders>(&top.topology, initial(&top, topology)?, traces)?,
        App::Stream => verify_logs::<Stream>(&top.topology, initial(&top, topology)?, traces)?,
    };
    to_stdout(|out| {
        if json {
            serde_json::to_writer(&mut *out, &outcome)?;
            writeln!(out)
        } else {
            print_outcome(&outcome, out)
        }
    })?;
    Ok(ExitCode::from(outcome.exit_code))
}

/// Reads the logs of a run of `A` (initial states `initial`) and checks every snapshot they
/// mention; bad logs are an error naming the file and line.
pub fn verify_logs<A: LogApp>(topology: &Topology, initial: Vec<A>, files: &[PathBuf]) -> anyhow::Result<Outcome> {
    let logs: Logs<A> = read_logs(topology, initial, files)?;
    if logs.trace.events.is_empty() {
        let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        anyhow::bail!("{}: no event in the logs: there is no run to verify", names.join(", "));
    }
    let mut run: Vec<Finding> = Vec::new();
    let mut more_run = 0;
    let mut seen: HashSet<(usize, String)> = HashSet::new();
    let mut run_finding = |v: &Violation, logs: &Logs<A>| {
        if let Violation::LoggedState { event, reason, .. } = v {
            if seen.insert((event.position, reason.clone())) {
                if run.len() == MAX_FINDINGS {
                    more_run += 1;
                    return;
                }
                run.push(Finding {
                    clause: clause_name(v.clause()),
                    message: format!("{reason} ({event})"),
                    at: vec![located(logs, "event", event)],
                });
            }
        }
    };
    let mut snapshots = Vec::with_capacity(logs.claims.len());
    for claim in &logs.claims {
        let mut findings = Vec::new();
        let mut more_findings = 0;
        let violations = match &claim.snapshot {
            Some(snapshot) => {
                let report = check(topology, &logs.trace, snapshot)
                    .with_context(|| format!("snapshot {} cannot be checked", claim.id))?;
                report.violations
            }
            None => unterminated(topology, &logs.trace, claim.id)
                .with_context(|| format!("snapshot {} cannot be checked", claim.id))?,
        };
        for v in &violations {
            if v.clause() == Clause::LoggedStates {
                run_finding(v, &logs);
            } else if findings.len() == MAX_FINDINGS {
                more_findings += 1;
            } else {
                findings.push(finding(topology, &logs, claim, v));
            }
        }
        for anomaly in &claim.anomalies {
            if findings.len() == MAX_FINDINGS {
                more_findings += 1;
                continue;
            }
            let at = logs.location(anomaly.position).map(|l| format!("at {l}")).into_iter().collect();
            findings.push(Finding { clause: "claims", message: anomaly.message.clone(), at });
        }
        snapshots.push(SnapshotVerdict { id: claim.id.0, holds: findings.is_empty(), findings, more_findings });
    }
    if logs.claims.iter().all(|c| c.snapshot.is_none()) {
        // No complete snapshot, so no check above cross-checked the logged states: they are
        // cross-checked through a snapshot id the logs do not use (its own verdict, never
        // recorded, is not reported).
        let probe = GlobalSnapshot {
            id: SnapshotId(u32::MAX),
            state: GlobalState {
                processes: logs.trace.initial.clone(),
                channels: vec![Vec::new(); topology.channels().len()],
            },
        };
        let report = check(topology, &logs.trace, &probe).context("the logs cannot be checked")?;
        for v in report.violations.iter().filter(|v| v.clause() == Clause::LoggedStates) {
            run_finding(v, &logs);
        }
    }
    let failed: Vec<u32> = snapshots.iter().filter(|s| !s.holds).map(|s| s.id).collect();
    let total = snapshots.len();
    // Logs with no snapshot judge nothing: never a pass (a failed collection of logs, an
    // implementation that never snapshots), though the logged states were cross-checked.
    let ok = failed.is_empty() && run.is_empty() && total > 0;
    let exit_code = match (ok, total, run.is_empty()) {
        (true, ..) => EXIT_OK,
        (false, 0, true) => EXIT_UNDECIDED,
        _ => EXIT_FAIL,
    };
    let mut summary = match (total, failed.len()) {
        (0, _) => "no snapshot in the logs: nothing was judged".to_string(),
        (1, 0) => "the snapshot holds".to_string(),
        (n, 0) => format!("all {n} snapshots hold"),
        (1, _) => format!("the snapshot violates the theorem (snapshot {})", failed[0]),
        (n, k) => {
            let ids: Vec<String> = failed.iter().map(ToString::to_string).collect();
            let verb = if k == 1 { "violates" } else { "violate" };
            format!("{k} of {n} snapshots {verb} the theorem (snapshot {})", ids.join(", "))
        }
    };
    if !run.is_empty() {
        summary.push_str("; the run is inconsistent: a logged state is not what the transitions produce");
    }
    Ok(Outcome {
        ok,
        files: files.iter().map(|f| f.display().to_string()).collect(),
        events: logs.trace.events.len(),
        snapshots,
        run,
        more_run,
        summary,
        exit_code,
    })
}

fn clause_name(clause: Clause) -> &'static str {
    match clause {
        Clause::NoInwardCrossing => "a",
        Clause::ExactRecords => "b",
        Clause::RecordedReachable => "c",
        Clause::EndReachable => "d",
        Clause::Terminated => "e",
        Clause::Initiation => "initiation",
        Clause::LoggedStates => "logged-states",
    }
}

fn clause_title(clause: &str) -> &'static str {
    match clause {
        "a" => "(a) nothing crosses the cut inward",
        "b" => "(b) channel records hold exactly the in-flight messages",
        "c" => "(c) recorded state reachable from start",
        "d" => "(d) end state reachable from recorded state",
        "e" => "(e) snapshot terminates",
        "initiation" => "only initiators initiate",
        "logged-states" => "logged states",
        _ => "the logs' claims",
    }
}

/// `ROLE at FILE:LINE`, for an event the checker names.
fn located<A: Application>(logs: &Logs<A>, role: &str, event: &EventRef) -> String {
    match logs.location(event.position) {
        Some(l) => format!("{role} at {l}"),
        None => format!("{role}: {event}"),
    }
}

/// A violation, with the log lines it concerns.
fn finding<A: Application>(topology: &Topology, logs: &Logs<A>, claim: &Claim<A>, v: &Violation) -> Finding {
    let close = |channel: &ChannelId| {
        let label = topology.channel_label(*channel);
        claim
            .closes
            .get(channel.index())
            .copied()
            .flatten()
            .and_then(|p| logs.location(p))
            .map(|l| format!("record of {label} closed at {l}"))
    };
    let mut at: Vec<String> = Vec::new();
    let mut ids: Vec<MsgId> = Vec::new();
    match v {
        Violation::InwardCrossing { msg, send, receive, .. } => {
            at.extend([located(logs, "send", send), located(logs, "receipt", receive)]);
            ids.push(*msg);
        }
        Violation::MissingMessage { channel, msg, send, .. } => {
            at.push(located(logs, "send", send));
            at.extend(close(channel));
            ids.push(*msg);
        }
        Violation::ExtraMessage { channel, received, .. } => {
            at.extend(close(channel));
            at.extend(received.iter().map(|r| located(logs, "receipt after the cut", r)));
        }
        Violation::OutOfOrder { channel, expected, .. } => {
            at.extend(close(channel));
            ids.extend(expected);
        }
        Violation::RecordedUnreachable { event: Some(e), .. }
        | Violation::EndUnreachable { event: Some(e), .. }
        | Violation::NotAnInitiator { event: e, .. }
        | Violation::LoggedState { event: e, .. } => at.push(located(logs, "event", e)),
        Violation::RecordedUnreachable { event: None, .. } => {
            // Name the records whose state the transitions do not produce.
            if let Some(snapshot) = &claim.snapshot {
                let replayed = states_at_records(topology, &logs.trace, &claim.records);
                for (p, (state, recorded)) in replayed.iter().zip(&snapshot.state.processes).enumerate() {
                    let (Some(state), Some(position)) = (state, claim.records[p]) else { continue };
                    if state != recorded {
                        let name = topology.name(chandy_lamport::ProcessId(p as u16));
                        if let Some(l) = logs.location(position) {
                            at.push(format!(
                                "{name}'s record at {l}: recorded {recorded:?}, its transitions give {state:?}"
                            ));
                        }
                    }
                }
            }
        }
        Violation::EndUnreachable { event: None, .. } | Violation::NotRecorded { .. } | Violation::NotClosed { .. } => {
        }
    }
    // The logs' own spelling of the message ids named, where it differs from ours.
    for id in ids {
        if let Some(name) = logs.names.get(&id).filter(|n| n.0 != id.to_string()) {
            at.push(format!("{id} is message {name} in the logs"));
        }
    }
    Finding { clause: clause_name(v.clause()), message: v.to_string(), at }
}

/// Each process's state at its record event (by position in `records`), recomputed from its
/// initial state by the application's transitions over its own events; `None` where it never
/// recorded or a transition refused a step before.
fn states_at_records<A: Application>(
    topology: &Topology,
    trace: &Trace<A>,
    records: &[Option<usize>],
) -> Vec<Option<A>> {
    let mut states = trace.initial.clone();
    let mut stuck = vec![false; states.len()];
    let mut out = vec![None; states.len()];
    let mut sends: HashMap<MsgId, &A::Msg> = HashMap::new();
    for (position, e) in trace.events.iter().enumerate() {
        let p = e.process.index();
        if let EventKind::Send { id, msg, .. } = &e.kind {
            sends.insert(*id, msg);
        }
        if p >= states.len() || stuck[p] {
            continue;
        }
        let ok = match &e.kind {
            EventKind::Send { channel, msg, .. } => states[p].on_send(topology.channel(*channel).to, msg).is_ok(),
            EventKind::Receive { channel, id } => match sends.get(id) {
                Some(msg) => {
                    states[p].on_message(topology.channel(*channel).from, msg);
                    true
                }
                None => false,
            },
            EventKind::Internal { step } => states[p].on_internal(step).is_ok(),
            _ => true,
        };
        stuck[p] = !ok;
        if ok && records.get(p).copied().flatten() == Some(position) {
            out[p] = Some(states[p].clone());
        }
    }
    out
}

/// The verdicts as text: a line per snapshot, the findings under it, the run's consistency and
/// the overall verdict.
pub fn print_outcome(outcome: &Outcome, out: &mut dyn Write) -> std::io::Result<()> {
    let files = outcome.files.len();
    writeln!(
        out,
        "read {} event{} from {files} file{}; {} snapshot{} found",
        outcome.events,
        if outcome.events == 1 { "" } else { "s" },
        if files == 1 { "" } else { "s" },
        outcome.snapshots.len(),
        if outcome.snapshots.len() == 1 { "" } else { "s" },
    )?;
    let print = |out: &mut dyn Write, f: &Finding| -> std::io::Result<()> {
        writeln!(out, "  - {}: {}", clause_title(f.clause), f.message)?;
        for at in &f.at {
            writeln!(out, "      {at}")?;
        }
        Ok(())
    };
    for s in &outcome.snapshots {
        if s.holds {
            writeln!(out, "snapshot {}: holds", s.id)?;
        } else {
            writeln!(out, "snapshot {}: VIOLATED", s.id)?;
            for f in &s.findings {
                print(out, f)?;
            }
            if s.more_findings > 0 {
                writeln!(out, "  ... and {} more findings (the first {MAX_FINDINGS} are listed)", s.more_findings)?;
            }
        }
    }
    if outcome.run.is_empty() {
        writeln!(out, "run: consistent (every logged state is what the transitions produce)")?;
    } else {
        writeln!(out, "run: INCONSISTENT")?;
        for f in &outcome.run {
            print(out, f)?;
        }
        if outcome.more_run > 0 {
            writeln!(out, "  ... and {} more findings (the first {MAX_FINDINGS} are listed)", outcome.more_run)?;
        }
    }
    writeln!(out, "verdict: {}", outcome.summary)
}
