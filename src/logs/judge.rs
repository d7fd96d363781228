//! The judge: every snapshot the logs mention, and the run itself, judged by the theorem's
//! clauses. Clean logs are judged in one pass ([`super::onepass`]); logs with findings (or errors)
//! are then read whole and judged by the trace checker ([`mod@crate::check`]), which words each
//! finding exactly.

use std::collections::{HashMap, HashSet};

use thiserror::Error;

use super::claims::anomalies;
use super::findings::{clause_name, total, AsJson, Finding, Names};
use super::judgement::{conclude, Capped, Judgement, SnapshotVerdict};
use super::onepass::{judge_in_one_pass, Clean, Progress};
use super::semantics::Semantics;
use crate::check::{
    check_ids_knowing, fifo_breaks, unterminated, CheckError, Clause, EventKind, MsgId, Trace, Violation,
};
use crate::formats::jsonl::{parse_logs, read_logs, Claim, LogApp, LogError, LogId, Logs, NotClean, Source};
use crate::protocol::{Application, GlobalSnapshot, GlobalState, ProcessId, SnapshotId, Topology};

/// How the logs are read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Reader {
    /// One pass over the events, every snapshot judged on the way, memory bounded by what is in
    /// flight; logs with findings (or errors) are then read whole to word them.
    #[default]
    OnePass,
    /// Every event in memory first, then each snapshot judged over all of them.
    Whole,
}

/// What the judge tells its caller while it works (progress lines, say); every method does
/// nothing by default, and `()` is the watcher that hears nothing.
pub trait Watch {
    /// How far the one pass has come: called every few tens of thousands of events.
    fn progress(&mut self, _progress: Progress) {}
    /// The one pass stopped (`why`): the logs are now read whole to word the findings.
    fn read_whole(&mut self, _why: &NotClean) {}
}

impl Watch for () {}

/// Logs that cannot be judged.
#[derive(Debug, Error)]
pub enum LogsError {
    /// Bad logs: a line that is not an event, an unknown process, logs with no causal order, …
    /// (the message names the file and line).
    #[error(transparent)]
    Read(#[from] LogError),
    /// No event in any file: there is no run.
    #[error("{files}: no event in the logs: there is no run to verify")]
    NoEvents {
        /// The files read, comma-separated.
        files: String,
    },
    /// The trace checker refused a snapshot's trace or records.
    #[error("snapshot {snapshot} cannot be checked")]
    Snapshot {
        /// The snapshot.
        snapshot: SnapshotId,
        /// Why.
        #[source]
        why: CheckError,
    },
    /// The trace checker refused the run.
    #[error("the logs cannot be checked")]
    Run(#[source] CheckError),
}

/// [`judge_logs`] on files, in one pass, watched by nobody.
pub fn judge_files<A: LogApp>(
    topology: &Topology,
    initial: Vec<A>,
    files: &[std::path::PathBuf],
    semantics: &Semantics<A>,
) -> Result<Judgement, LogsError> {
    judge_logs(topology, initial, Source::Files(files), semantics, Reader::OnePass, &mut ())
}

/// [`judge_logs`] on texts already read (`(file name, text)` pairs), in one pass, watched by
/// nobody.
pub fn judge_texts<A: LogApp>(
    topology: &Topology,
    initial: Vec<A>,
    texts: &[(String, String)],
    semantics: &Semantics<A>,
) -> Result<Judgement, LogsError> {
    judge_logs(topology, initial, Source::Texts(texts), semantics, Reader::OnePass, &mut ())
}

/// Judges the logs of a run of `A` (initial states `initial`) from `source`: every snapshot
/// they mention, and the run. The verdict, the findings and the errors are the same with
/// either reader. Bad logs are an error naming the file and line.
pub fn judge_logs<A: LogApp>(
    topology: &Topology,
    initial: Vec<A>,
    source: Source<'_>,
    semantics: &Semantics<A>,
    reader: Reader,
    watch: &mut dyn Watch,
) -> Result<Judgement, LogsError> {
    let files: Vec<String> = match source {
        Source::Files(files) => files.iter().map(|f| f.display().to_string()).collect(),
        Source::Texts(texts) => texts.iter().map(|(file, _)| file.clone()).collect(),
    };
    if reader == Reader::OnePass {
        let mut progress = |p| watch.progress(p);
        match judge_in_one_pass(topology, &initial, source, &semantics.states, semantics.amount, &mut progress) {
            Ok(clean) => return Ok(clean_outcome(files, &clean)),
            Err(why) => watch.read_whole(&why),
        }
    }
    let logs: Logs<A> = match source {
        Source::Files(paths) => read_logs(topology, initial, paths, &semantics.states)?,
        Source::Texts(texts) => parse_logs(topology, initial, texts, &semantics.states)?,
    };
    judge(topology, &logs, files, semantics)
}

/// The outcome of clean logs: every snapshot holds, the run is consistent, nothing is damaged.
fn clean_outcome(files: Vec<String>, clean: &Clean) -> Judgement {
    let snapshots = clean
        .snapshots
        .iter()
        .map(|s| SnapshotVerdict {
            id: s.0,
            holds: true,
            judged: true,
            not_judged: None,
            findings: Vec::new(),
            more_findings: 0,
        })
        .collect();
    // The pass stops at any marker-rule break (see its module docs): clean logs have none.
    conclude(files, (clean.events, 0), Capped::default(), snapshots, Capped::default(), Capped::default())
}

/// Checks every snapshot the logs mention, and the run itself.
fn judge<A: LogApp>(
    topology: &Topology,
    logs: &Logs<A>,
    files: Vec<String>,
    semantics: &Semantics<A>,
) -> Result<Judgement, LogsError> {
    if logs.kept.iter().all(|&(read, _)| read == 0) {
        return Err(LogsError::NoEvents { files: files.join(", ") });
    }
    let names = Names::new(topology, logs);
    // Without an application, the replays (clauses c and d, logged states) have nothing to
    // recompute: the checker's transitions leave opaque states as they are.
    let judged = |v: &Violation| {
        !(semantics.is_opaque()
            && matches!(v.clause(), Clause::RecordedReachable | Clause::EndReachable | Clause::LoggedStates))
    };
    let mut run = Capped::default();
    for b in fifo_breaks(topology, &logs.trace) {
        run.push(names.fifo(&b));
    }
    let mut seen: HashSet<(usize, String)> = HashSet::new();
    let mut logged = |v: &Violation, run: &mut Capped| {
        if let Violation::LoggedState { event, reason, .. } = v {
            if judged(v) && seen.insert((event.position, reason.clone())) {
                run.push(Finding {
                    clause: clause_name(v.clause()),
                    message: names.rename(reason),
                    at: names.logs.location(event.position).map(|l| format!("event at {l}")).into_iter().collect(),
                    consequences: Vec::new(),
                });
            }
        }
    };
    let by_name: HashMap<&LogId, MsgId> = logs.names.iter().map(|(id, name)| (name, *id)).collect();
    let anomalies = anomalies(topology, logs, semantics.is_opaque());
    let mut snapshots = Vec::with_capacity(logs.claims.len());
    let mut warnings = Capped::default();
    for (claim, anomalies) in logs.claims.iter().zip(&anomalies) {
        if claim.unjudged.is_none() {
            names.marker_rule_breaks(claim).into_iter().for_each(|w| warnings.push(w));
        }
        // A snapshot not judged (a logging error leaves its order unknown; damage may hold what
        // it depends on) has no findings: they would be about what the logs do not tell.
        let unjudged = claim.unjudged.is_some();
        let no_anomalies = Vec::new();
        let anomalies = if unjudged { &no_anomalies } else { anomalies };
        let violations = match &claim.snapshot {
            _ if unjudged => Vec::new(),
            Some(snapshot) => {
                let ids: Vec<Vec<MsgId>> = claim
                    .recorded
                    .iter()
                    .map(|ids| ids.iter().filter_map(|id| by_name.get(id).copied()).collect())
                    .collect();
                check_ids_knowing(topology, &logs.trace, snapshot, &ids, &AsJson, &logs.unknown)
                    .map_err(|why| LogsError::Snapshot { snapshot: claim.id, why })?
                    .violations
            }
            None if claim.unjudged.is_some() => Vec::new(),
            None => unterminated(topology, &logs.trace, claim.id)
                .map_err(|why| LogsError::Snapshot { snapshot: claim.id, why })?,
        };
        // Root causes first: the logs' claims and clauses a, b, e; then the replays (c, d),
        // which fail as a consequence of those when there are any.
        let mut causes: Vec<Finding> = anomalies.iter().map(|a| names.anomaly(a)).collect();
        let mut replays: Vec<Finding> = Vec::new();
        for v in &violations {
            if v.clause() == Clause::LoggedStates {
                logged(v, &mut run);
            } else if !judged(v) {
                continue;
            } else if matches!(v.clause(), Clause::RecordedReachable | Clause::EndReachable) {
                replays.push(with_records(&names, claim, v));
            } else {
                causes.push(names.violation(claim, v));
            }
        }
        // A wrong total follows from any other finding; alone, it is the finding.
        if let Some(total) = semantics.amount.filter(|_| !unjudged).and_then(|amount| total(&names, claim, amount)) {
            match causes.is_empty() {
                true => causes.push(total),
                false => replays.insert(0, total),
            }
        }
        if causes.is_empty() && !replays.is_empty() {
            // No finding of its own explains a failed replay: the first is the cause.
            causes.push(replays.remove(0));
        }
        if let Some(first) = causes.first_mut() {
            first.consequences.extend(replays);
        }
        let mut findings = Capped::default();
        causes.into_iter().for_each(|f| findings.push(f));
        let judged = claim.unjudged.is_none();
        snapshots.push(SnapshotVerdict {
            id: claim.id.0,
            holds: judged && findings.listed.is_empty(),
            judged,
            not_judged: claim.unjudged.clone(),
            findings: findings.listed,
            more_findings: findings.more,
        });
    }
    if !semantics.is_opaque() && logs.claims.iter().all(|c| c.snapshot.is_none() || c.unjudged.is_some()) {
        // No snapshot checked above (none complete, or none judged), so nothing cross-checked
        // the logged states: they are cross-checked through a snapshot id the logs do not use
        // (its own verdict, never recorded, is not reported).
        let probe = GlobalSnapshot {
            id: SnapshotId(u32::MAX),
            state: GlobalState {
                processes: logs.trace.initial.clone(),
                channels: vec![Vec::new(); topology.channels().len()],
            },
        };
        let none = vec![Vec::new(); topology.channels().len()];
        let report =
            check_ids_knowing(topology, &logs.trace, &probe, &none, &AsJson, &logs.unknown).map_err(LogsError::Run)?;
        for v in report.violations.iter().filter(|v| v.clause() == Clause::LoggedStates) {
            logged(v, &mut run);
        }
    }
    let mut damage = Capped::default();
    logs.damage.iter().for_each(|d| damage.push(names.damage(d)));
    logs.mislogged.iter().for_each(|m| damage.push(names.mislogged(m)));
    // Every event read counts, those set aside (the dangling receipts) too: the run judged
    // holds the others.
    let read: usize = logs.kept.iter().map(|&(read, _)| read).sum();
    let set_aside: usize = logs.kept.iter().map(|&(read, kept)| read - kept).sum();
    Ok(conclude(files, (read, set_aside), damage, snapshots, run, warnings))
}

/// A replay's finding (clause c or d); when the recorded states are not what the transitions
/// give and no single event is to blame, the records whose state differs.
fn with_records<A: LogApp>(names: &Names<'_, A>, claim: &Claim<A>, v: &Violation) -> Finding {
    let mut finding = names.violation(claim, v);
    if let (Violation::RecordedUnreachable { event: None, .. }, Some(snapshot)) = (v, &claim.snapshot) {
        let replayed = states_at_records(names.topology, &names.logs.trace, &claim.records);
        for (p, (state, recorded)) in replayed.iter().zip(&snapshot.state.processes).enumerate() {
            let (Some(state), Some(position)) = (state, claim.records[p]) else { continue };
            if state != recorded {
                let name = names.topology.name(ProcessId(p as u16));
                let json = |a: &A| serde_json::to_string(a).unwrap_or_else(|_| format!("{a:?}"));
                if let Some(l) = names.logs.location(position) {
                    finding.at.push(format!(
                        "{name}'s record at {l}: recorded {}, its transitions give {}",
                        json(recorded),
                        json(state)
                    ));
                }
            }
        }
    }
    finding
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
