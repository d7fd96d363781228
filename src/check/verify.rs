//! The trace checker: verifies a recorded run against the Chandy–Lamport theorem, literally.
//!
//! For one snapshot id, with the cut defined by each process's `Record` event:
//! - (a) nothing crosses the cut inward: no message sent after its sender recorded is received
//!   before its receiver recorded;
//! - (b) each channel record is exactly the channel's contents at the cut: the messages sent
//!   before the sender recorded and neither received before the receiver recorded nor stolen, in
//!   sending order;
//! - (c) S* is reachable from S_begin (the state just before the first initiation) by replaying
//!   the pre-cut events in their original order, each receive finding its message at the head of
//!   its channel, and the replay ends exactly in the recorded state;
//! - (d) S_end (the state when the last record closes) is reachable from the recorded S* by
//!   replaying the remaining events up to it;
//! - (e) the snapshot terminated: every process recorded and every channel record closed.
//!
//! Process states are never taken from the log: every replay starts from the initial states (or
//! from the recorded ones) and applies the application's own transitions — a send
//! ([`Application::on_send`]), a receipt ([`Application::on_message`]), an internal step
//! ([`Application::on_internal`]). The states logged with the events (where the log has them)
//! are only cross-checked against the replay, and a difference is reported. An initiation by a process the trace does
//! not allow to initiate is reported too.
//!
//! A stolen message counts as stolen before the cut when it was sent before the cut: the theft
//! can then be moved before the cut without breaking causality.

use std::collections::{HashMap, VecDeque};
use std::fmt;

use thiserror::Error;

use super::trace::{EventKind, MsgId, Trace, TraceError};
use crate::protocol::{Application, Refusal, SnapshotId};
use crate::protocol::{ChannelId, ProcessId, Topology};
use crate::protocol::{GlobalSnapshot, GlobalState};

/// Points at one event of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EventRef {
    /// Position in the whole trace.
    pub position: usize,
    /// The process.
    pub process: ProcessId,
    /// Position among that process's own events.
    pub index: usize,
}

impl fmt::Display for EventRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "event {} ({} step {})", self.position, self.process, self.index)
    }
}

/// The clause of the theorem a violation breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Clause {
    /// (a) nothing crosses the cut inward.
    NoInwardCrossing,
    /// (b) channel records hold exactly the in-flight messages.
    ExactRecords,
    /// (c) the recorded state is reachable from the state at initiation.
    RecordedReachable,
    /// (d) the end state is reachable from the recorded state.
    EndReachable,
    /// (e) the snapshot terminated.
    Terminated,
    /// Only processes allowed to initiate snapshots initiated this one.
    Initiation,
    /// The states logged with the events are the states the application's transitions produce
    /// (a cross-check of the log; the checker itself always uses the recomputed states).
    LoggedStates,
}

/// How a recorded run breaks the theorem.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum Violation {
    /// (e) A process never recorded its state.
    #[error("snapshot {snapshot}: process {process} never recorded its state")]
    NotRecorded {
        /// The snapshot.
        snapshot: SnapshotId,
        /// The process.
        process: ProcessId,
    },
    /// (e) A channel record was never closed by its marker.
    #[error("snapshot {snapshot}: the record of channel {} was never closed (no marker received)", channel.0)]
    NotClosed {
        /// The snapshot.
        snapshot: SnapshotId,
        /// The channel.
        channel: ChannelId,
    },
    /// (a) A message sent after its sender recorded was received before its receiver recorded.
    #[error("snapshot {snapshot}: message {msg} on channel {} crosses the cut inward: sent after the sender recorded ({send}), received before the receiver recorded ({receive})", channel.0)]
    InwardCrossing {
        /// The snapshot.
        snapshot: SnapshotId,
        /// The message.
        msg: MsgId,
        /// Its channel.
        channel: ChannelId,
        /// Its send.
        send: EventRef,
        /// Its receipt.
        receive: EventRef,
    },
    /// (b) A message in flight at the cut is missing from its channel's record.
    #[error("snapshot {snapshot}: message {msg}, in flight on channel {} at the cut (sent at {send}), is missing from the record", channel.0)]
    MissingMessage {
        /// The snapshot.
        snapshot: SnapshotId,
        /// The channel.
        channel: ChannelId,
        /// The missing message.
        msg: MsgId,
        /// Its send.
        send: EventRef,
    },
    /// (b) A channel record holds a message that was not in flight at the cut.
    #[error("snapshot {snapshot}: the record of channel {} holds {message} at index {index}, which was not in flight at the cut{}", channel.0, received.map(|r| format!(" (received at {r})")).unwrap_or_default())]
    ExtraMessage {
        /// The snapshot.
        snapshot: SnapshotId,
        /// The channel.
        channel: ChannelId,
        /// The extra message, printed.
        message: String,
        /// Its index in the record.
        index: usize,
        /// A receipt on that channel after the cut that carried it, if any.
        received: Option<EventRef>,
    },
    /// (b) A channel record holds the right messages in the wrong order.
    #[error("snapshot {snapshot}: the record of channel {} holds the in-flight messages out of order: expected {}, recorded {recorded}", channel.0, expected.iter().map(|m| m.to_string()).collect::<Vec<_>>().join(", "))]
    OutOfOrder {
        /// The snapshot.
        snapshot: SnapshotId,
        /// The channel.
        channel: ChannelId,
        /// The in-flight messages, in sending order.
        expected: Vec<MsgId>,
        /// The record, printed.
        recorded: String,
    },
    /// (c) Replaying the pre-cut events does not lead from S_begin to the recorded state.
    #[error("snapshot {snapshot}: the recorded state is not reachable from the state at initiation: {reason}{}", event.map(|e| format!(" ({e})")).unwrap_or_default())]
    RecordedUnreachable {
        /// The snapshot.
        snapshot: SnapshotId,
        /// The event where the replay failed, if one did.
        event: Option<EventRef>,
        /// What went wrong.
        reason: String,
    },
    /// A process that may not initiate snapshots initiated this one.
    #[error("snapshot {snapshot}: initiated by {process}, which may not initiate snapshots ({event})")]
    NotAnInitiator {
        /// The snapshot.
        snapshot: SnapshotId,
        /// The process.
        process: ProcessId,
        /// Its initiation.
        event: EventRef,
    },
    /// The state logged with an event is not the state the application's transitions produce
    /// from the initial states (or a transition refused a logged step).
    #[error("snapshot {snapshot}: {reason} ({event})")]
    LoggedState {
        /// The snapshot judged.
        snapshot: SnapshotId,
        /// The first event whose logged state is wrong.
        event: EventRef,
        /// What differs.
        reason: String,
    },
    /// (d) Replaying the remaining events does not lead from the recorded state to S_end.
    #[error("snapshot {snapshot}: the end state is not reachable from the recorded state: {reason}{}", event.map(|e| format!(" ({e})")).unwrap_or_default())]
    EndUnreachable {
        /// The snapshot.
        snapshot: SnapshotId,
        /// The event where the replay failed, if one did.
        event: Option<EventRef>,
        /// What went wrong.
        reason: String,
    },
}

impl Violation {
    /// The clause it breaks.
    pub fn clause(&self) -> Clause {
        match self {
            Violation::NotAnInitiator { .. } => Clause::Initiation,
            Violation::LoggedState { .. } => Clause::LoggedStates,
            Violation::NotRecorded { .. } | Violation::NotClosed { .. } => Clause::Terminated,
            Violation::InwardCrossing { .. } => Clause::NoInwardCrossing,
            Violation::MissingMessage { .. } | Violation::ExtraMessage { .. } | Violation::OutOfOrder { .. } => {
                Clause::ExactRecords
            }
            Violation::RecordedUnreachable { .. } => Clause::RecordedReachable,
            Violation::EndUnreachable { .. } => Clause::EndReachable,
        }
    }
}

/// A trace or snapshot the checker cannot judge.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum CheckError {
    /// The trace is malformed.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// The snapshot does not have one state per process and one record per channel.
    #[error("snapshot {snapshot} has {processes} process states and {channels} channel records; the topology has {expected_processes} and {expected_channels}")]
    Shape {
        /// The snapshot.
        snapshot: SnapshotId,
        /// States in the snapshot.
        processes: usize,
        /// Records in the snapshot.
        channels: usize,
        /// Processes in the topology.
        expected_processes: usize,
        /// Channels in the topology.
        expected_channels: usize,
    },
}

/// What the checker found for one snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report<A: Application> {
    /// Every violation found (several clauses may fail at once), in this order: logged states,
    /// initiation, then the theorem's clauses e, a, b, c, d.
    pub violations: Vec<Violation>,
    /// S_begin: the global state just before the first initiation, when there was one.
    pub begin: Option<GlobalState<A>>,
    /// S_end: the global state when the last channel record closed, when they all closed.
    pub end: Option<GlobalState<A>>,
    /// The cut: position of each process's `Record` event, when every process recorded.
    pub cut: Option<Vec<usize>>,
    /// Position of the first initiation (S_begin is the state just before it).
    pub begin_at: Option<usize>,
    /// Position of the event after which S_end holds.
    pub end_at: Option<usize>,
}

impl<A: Application> Report<A> {
    /// Whether a clause holds.
    pub fn holds(&self, clause: Clause) -> bool {
        self.violations.iter().all(|v| v.clause() != clause)
    }
}

/// S_begin, S* and S_end of a verified snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verified<A: Application> {
    /// The state just before the first initiation.
    pub begin: GlobalState<A>,
    /// The recorded state.
    pub star: GlobalState<A>,
    /// The state when the last record closed.
    pub end: GlobalState<A>,
}

/// Why [`verify`] rejected a snapshot.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum VerifyError {
    /// The trace or snapshot could not be judged.
    #[error(transparent)]
    Check(#[from] CheckError),
    /// The run breaks the theorem.
    #[error(transparent)]
    Violation(#[from] Violation),
}

/// Verifies `snapshot` against the run `trace`: `Ok` with S_begin, S* and S_end when every
/// clause holds, otherwise the first violation (in this order: logged states, initiation, then
/// the theorem's clauses e, a, b, c, d).
pub fn verify<A: Application>(
    topology: &Topology,
    trace: &Trace<A>,
    snapshot: &GlobalSnapshot<A>,
) -> Result<Verified<A>, VerifyError> {
    let report = check(topology, trace, snapshot)?;
    // The checker reports violations in this order.
    if let Some(v) = report.violations.into_iter().next() {
        return Err(v.into());
    }
    match (report.begin, report.end) {
        (Some(begin), Some(end)) => Ok(Verified { begin, star: snapshot.state.clone(), end }),
        _ => Err(Violation::NotRecorded { snapshot: snapshot.id, process: ProcessId(0) }.into()),
    }
}

/// Clause (e) alone, for a snapshot that was never assembled: which processes never recorded
/// and which channel records never closed in `trace`.
pub fn unterminated<A: Application>(
    topology: &Topology,
    trace: &Trace<A>,
    snapshot: SnapshotId,
) -> Result<Vec<Violation>, CheckError> {
    trace.validate(topology)?;
    Ok(termination(topology, trace, snapshot))
}

fn termination<A: Application>(topology: &Topology, trace: &Trace<A>, snapshot: SnapshotId) -> Vec<Violation> {
    let mut recorded = vec![false; topology.len()];
    let mut closed = vec![false; topology.channels().len()];
    for e in &trace.events {
        match e.kind {
            EventKind::Record { snapshot: s, .. } if s == snapshot => recorded[e.process.index()] = true,
            EventKind::MarkerReceive { snapshot: s, channel } if s == snapshot => closed[channel.index()] = true,
            _ => {}
        }
    }
    let processes = topology
        .processes()
        .filter(|p| !recorded[p.index()])
        .map(|process| Violation::NotRecorded { snapshot, process });
    let channels = (0..closed.len())
        .filter(|&c| !closed[c])
        .map(|c| Violation::NotClosed { snapshot, channel: ChannelId(c as u32) });
    processes.chain(channels).collect()
}

/// Checks every clause and reports all violations found, with S_begin and S_end.
pub fn check<A: Application>(
    topology: &Topology,
    trace: &Trace<A>,
    snapshot: &GlobalSnapshot<A>,
) -> Result<Report<A>, CheckError> {
    judgeable(topology, trace, snapshot)?;
    Checker::new(topology, trace, snapshot, None, &Debugged).run()
}

/// How the checker prints an application's states, messages and steps in what it reports:
/// `Debug` by default ([`Debugged`]); the log checker prints them as the logs spell them.
pub trait Show<A: Application> {
    /// A state.
    fn state(&self, state: &A) -> String {
        format!("{state:?}")
    }
    /// A message.
    fn msg(&self, msg: &A::Msg) -> String {
        format!("{msg:?}")
    }
    /// An internal step.
    fn step(&self, step: &A::Step) -> String {
        format!("{step:?}")
    }
}

/// States, messages and steps printed with `Debug`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Debugged;

impl<A: Application> Show<A> for Debugged {}

/// A valid trace, and a snapshot with one state per process and one record per channel.
fn judgeable<A: Application>(
    topology: &Topology,
    trace: &Trace<A>,
    snapshot: &GlobalSnapshot<A>,
) -> Result<(), CheckError> {
    trace.validate(topology)?;
    if snapshot.state.processes.len() != topology.len() || snapshot.state.channels.len() != topology.channels().len() {
        return Err(CheckError::Shape {
            snapshot: snapshot.id,
            processes: snapshot.state.processes.len(),
            channels: snapshot.state.channels.len(),
            expected_processes: topology.len(),
            expected_channels: topology.channels().len(),
        });
    }
    Ok(())
}

/// [`check`], with each channel record also given as the ids of the messages it claims (what
/// logs carry): clause (b) then compares the records with the in-flight messages by id, not by
/// content, so that two messages of equal size are not mistaken for each other, and the replays
/// of (c) and (d) name the messages they find by id (a channel's contents, the message at its
/// head), not by content. States, messages and steps are printed with `show`.
pub fn check_ids<A: Application>(
    topology: &Topology,
    trace: &Trace<A>,
    snapshot: &GlobalSnapshot<A>,
    ids: &[Vec<MsgId>],
    show: &dyn Show<A>,
) -> Result<Report<A>, CheckError> {
    check_ids_knowing(topology, trace, snapshot, ids, show, &[])
}

/// [`check_ids`] on a run in which some processes' states are unknown from some point on:
/// `unknown[p]`, when given, is the position of the first event of process `p` whose state
/// cannot be known (it follows a receipt of a message the logs never send, whose content is
/// unknown). From there on `p`'s transitions are not applied and its states are not compared:
/// not with the states logged, not at the cut, not at the end. Whether a snapshot depends on
/// such a state (a record after it) is the caller's to tell: its recorded state is not judged.
pub fn check_ids_knowing<A: Application>(
    topology: &Topology,
    trace: &Trace<A>,
    snapshot: &GlobalSnapshot<A>,
    ids: &[Vec<MsgId>],
    show: &dyn Show<A>,
    unknown: &[Option<usize>],
) -> Result<Report<A>, CheckError> {
    if ids.len() != topology.channels().len() {
        return Err(CheckError::Shape {
            snapshot: snapshot.id,
            processes: snapshot.state.processes.len(),
            channels: ids.len(),
            expected_processes: topology.len(),
            expected_channels: topology.channels().len(),
        });
    }
    judgeable(topology, trace, snapshot)?;
    let mut checker = Checker::new(topology, trace, snapshot, Some(ids), show);
    for (p, from) in unknown.iter().enumerate() {
        if let (Some(from), Some(slot)) = (from, checker.unknown.get_mut(p)) {
            *slot = *from;
        }
    }
    checker.run()
}

struct SendInfo<'t, M> {
    position: usize,
    msg: &'t M,
}

struct Checker<'t, A: Application> {
    topology: &'t Topology,
    trace: &'t Trace<A>,
    snapshot: &'t GlobalSnapshot<A>,
    /// Position of each process's `Record` event.
    record: Vec<Option<usize>>,
    /// Index of each event within its process.
    index: Vec<usize>,
    sends: HashMap<MsgId, SendInfo<'t, A::Msg>>,
    violations: Vec<Violation>,
    /// The ids each channel record claims, when known: (b) compares by id.
    ids: Option<&'t [Vec<MsgId>]>,
    show: &'t dyn Show<A>,
    /// Each process's first position whose state is unknown (`usize::MAX`: none).
    unknown: Vec<usize>,
}

/// Channel contents during a replay.
type Queues<T> = Vec<VecDeque<T>>;

/// A message in a replay by content: equal to another of the same content whatever their ids
/// (the recorded state holds contents), its id kept to name it where known.
#[derive(Clone, Debug)]
struct Tagged<M> {
    id: Option<MsgId>,
    msg: M,
}

impl<M: PartialEq> PartialEq for Tagged<M> {
    fn eq(&self, other: &Self) -> bool {
        self.msg == other.msg
    }
}

/// Message ids, joined.
fn join_ids<'m>(ids: impl IntoIterator<Item = &'m MsgId>) -> String {
    ids.into_iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}

impl<'t, A: Application> Checker<'t, A> {
    fn new(
        topology: &'t Topology,
        trace: &'t Trace<A>,
        snapshot: &'t GlobalSnapshot<A>,
        ids: Option<&'t [Vec<MsgId>]>,
        show: &'t dyn Show<A>,
    ) -> Self {
        let mut record = vec![None; topology.len()];
        let mut index = Vec::with_capacity(trace.events.len());
        let mut counts = vec![0usize; topology.len()];
        let mut sends = HashMap::new();
        for (position, e) in trace.events.iter().enumerate() {
            index.push(counts[e.process.index()]);
            counts[e.process.index()] += 1;
            match &e.kind {
                EventKind::Record { snapshot: s, .. } if *s == snapshot.id => {
                    record[e.process.index()].get_or_insert(position);
                }
                EventKind::Send { id, msg, .. } => {
                    sends.insert(*id, SendInfo { position, msg });
                }
                _ => {}
            }
        }
        let unknown = vec![usize::MAX; topology.len()];
        Checker { topology, trace, snapshot, record, index, sends, violations: Vec::new(), ids, show, unknown }
    }

    fn at(&self, position: usize) -> EventRef {
        EventRef { position, process: self.trace.events[position].process, index: self.index[position] }
    }

    /// Whether the event at `position` is before the cut. A theft counts where its send is.
    fn pre_cut(&self, position: usize, record: &[usize]) -> bool {
        let e = &self.trace.events[position];
        match &e.kind {
            EventKind::Lost { id, .. } => self.sends.get(id).is_some_and(|s| self.pre_cut(s.position, record)),
            _ => position < record[e.process.index()],
        }
    }

    fn run(mut self) -> Result<Report<A>, CheckError> {
        let id = self.snapshot.id;
        // (e) termination.
        let mut closed_at: Vec<Option<usize>> = vec![None; self.topology.channels().len()];
        for (position, e) in self.trace.events.iter().enumerate() {
            if let EventKind::MarkerReceive { snapshot, channel } = e.kind {
                if snapshot == id {
                    closed_at[channel.index()].get_or_insert(position);
                }
            }
        }
        self.check_logged_states();
        self.check_initiators();
        self.violations.extend(termination(self.topology, self.trace, id));
        let record: Vec<usize> = match self.record.iter().copied().collect::<Option<Vec<_>>>() {
            Some(r) => r,
            None => {
                return Ok(Report {
                    violations: self.violations,
                    begin: None,
                    end: None,
                    cut: None,
                    begin_at: None,
                    end_at: None,
                })
            }
        };
        self.check_crossings(&record);
        self.check_records(&record);
        let (begin_at, begin) = self.check_recorded_reachable(&record);
        let end_at = closed_at
            .iter()
            .copied()
            .collect::<Option<Vec<_>>>()
            .map(|closed| closed.into_iter().chain(record.iter().copied()).max().unwrap_or(0));
        let end = end_at.map(|last| self.check_end_reachable(&record, last));
        Ok(Report {
            violations: self.violations,
            begin: Some(begin),
            end,
            cut: Some(record),
            begin_at: Some(begin_at),
            end_at,
        })
    }

    /// (a)
    fn check_crossings(&mut self, record: &[usize]) {
        for (position, e) in self.trace.events.iter().enumerate() {
            if let EventKind::Receive { channel, id } = e.kind {
                let Some(send) = self.sends.get(&id) else { continue };
                if position < record[e.process.index()] && !self.pre_cut(send.position, record) {
                    self.violations.push(Violation::InwardCrossing {
                        snapshot: self.snapshot.id,
                        msg: id,
                        channel,
                        send: self.at(send.position),
                        receive: self.at(position),
                    });
                }
            }
        }
    }

    /// The messages in flight on each channel at the cut, in sending order.
    fn in_flight_at_cut(&self, record: &[usize]) -> Vec<Vec<(MsgId, usize)>> {
        let mut gone_before_cut: HashMap<MsgId, ()> = HashMap::new();
        for (position, e) in self.trace.events.iter().enumerate() {
            match e.kind {
                EventKind::Receive { id, .. } if position < record[e.process.index()] => {
                    gone_before_cut.insert(id, ());
                }
                EventKind::Lost { id, .. } if self.pre_cut(position, record) => {
                    gone_before_cut.insert(id, ());
                }
                _ => {}
            }
        }
        let mut flight = vec![Vec::new(); self.topology.channels().len()];
        for (position, e) in self.trace.events.iter().enumerate() {
            if let EventKind::Send { channel, id, .. } = e.kind {
                if position < record[e.process.index()] && !gone_before_cut.contains_key(&id) {
                    flight[channel.index()].push((id, position));
                }
            }
        }
        flight
    }

    /// (b), by id: the first in-flight message the record lacks, else the first it holds that
    /// was not in flight, else the order.
    fn check_record_ids(&mut self, record: &[usize], ids: &[Vec<MsgId>]) {
        let id = self.snapshot.id;
        let flight = self.in_flight_at_cut(record);
        for (c, expected) in flight.iter().enumerate() {
            let channel = ChannelId(c as u32);
            let recorded = &ids[c];
            if expected.iter().map(|(m, _)| m).eq(recorded.iter()) {
                continue;
            }
            let violation = if let Some((msg, position)) = expected.iter().find(|(m, _)| !recorded.contains(m)) {
                Violation::MissingMessage { snapshot: id, channel, msg: *msg, send: self.at(*position) }
            } else if let Some(index) = recorded.iter().position(|m| !expected.iter().any(|(e, _)| e == m)) {
                let receiver = self.topology.channel(channel).to;
                let received = self.trace.events.iter().enumerate().find_map(|(position, e)| match e.kind {
                    EventKind::Receive { id: m, .. } if m == recorded[index] && position > record[receiver.index()] => {
                        Some(self.at(position))
                    }
                    _ => None,
                });
                Violation::ExtraMessage { snapshot: id, channel, message: recorded[index].to_string(), index, received }
            } else {
                Violation::OutOfOrder {
                    snapshot: id,
                    channel,
                    expected: expected.iter().map(|(m, _)| *m).collect(),
                    recorded: format!("{recorded:?}"),
                }
            };
            self.violations.push(violation);
        }
    }

    /// (b)
    fn check_records(&mut self, record: &[usize]) {
        if let Some(ids) = self.ids {
            return self.check_record_ids(record, ids);
        }
        let id = self.snapshot.id;
        let flight = self.in_flight_at_cut(record);
        for (c, expected) in flight.iter().enumerate() {
            let channel = ChannelId(c as u32);
            let recorded = &self.snapshot.state.channels[c];
            let expected_msgs: Vec<&A::Msg> = expected.iter().map(|(m, _)| self.sends[m].msg).collect();
            if expected_msgs.iter().copied().eq(recorded.iter()) {
                continue;
            }
            // Match as multisets to tell missing, extra and reordered apart.
            let mut unmatched: Vec<Option<&A::Msg>> = recorded.iter().map(Some).collect();
            let mut missing = None;
            for (m, position) in expected {
                let msg = self.sends[m].msg;
                match unmatched.iter_mut().find(|u| u.is_some_and(|r| r == msg)) {
                    Some(slot) => *slot = None,
                    None => {
                        missing.get_or_insert((*m, *position));
                    }
                }
            }
            let violation = if let Some((msg, position)) = missing {
                Violation::MissingMessage { snapshot: id, channel, msg, send: self.at(position) }
            } else if let Some(index) = unmatched.iter().position(Option::is_some) {
                let message = self.show.msg(&recorded[index]);
                let receiver = self.topology.channel(channel).to;
                let received = self.trace.events.iter().enumerate().find_map(|(position, e)| match e.kind {
                    EventKind::Receive { channel: ch, id: m }
                        if ch == channel
                            && position > record[receiver.index()]
                            && self.sends.get(&m).is_some_and(|s| *s.msg == recorded[index]) =>
                    {
                        Some(self.at(position))
                    }
                    _ => None,
                });
                Violation::ExtraMessage { snapshot: id, channel, message, index, received }
            } else {
                Violation::OutOfOrder {
                    snapshot: id,
                    channel,
                    expected: expected.iter().map(|(m, _)| *m).collect(),
                    recorded: format!("{recorded:?}"),
                }
            };
            self.violations.push(violation);
        }
    }

    /// Messages, printed with [`Show`] and joined.
    fn show_all<'m>(&self, msgs: impl IntoIterator<Item = &'m A::Msg>) -> String
    where
        A::Msg: 'm,
    {
        msgs.into_iter().map(|m| self.show.msg(m)).collect::<Vec<_>>().join(", ")
    }

    /// A message of a replay by content: by its id when the records' ids were given and its id
    /// is known, else by its content.
    fn show_tagged(&self, t: &Tagged<A::Msg>) -> String {
        match t.id.filter(|_| self.ids.is_some()) {
            Some(id) => id.to_string(),
            None => self.show.msg(&t.msg),
        }
    }

    fn describe_channel(&self, c: ChannelId) -> String {
        self.topology.channel_label(c)
    }

    /// Replays one event on queues of `key`s (message ids, or contents): a send appends its
    /// key, a receipt takes it — from the head only when `strict` — and a theft takes it from
    /// anywhere; the event's process state changes by the application's transition. Returns
    /// what went wrong.
    fn replay<K: PartialEq + fmt::Debug>(
        &self,
        position: usize,
        states: &mut [A],
        queues: &mut Queues<K>,
        key: impl Fn(MsgId) -> K,
        show: impl Fn(&K) -> String,
        strict: bool,
    ) -> Result<(), String> {
        let e = &self.trace.events[position];
        match &e.kind {
            EventKind::Send { channel, id, .. } => queues[channel.index()].push_back(key(*id)),
            EventKind::Receive { channel, id } => {
                let (q, k) = (&mut queues[channel.index()], key(*id));
                if q.front() == Some(&k) {
                    q.pop_front();
                } else if let Some(i) = q.iter().position(|m| *m == k).filter(|_| !strict) {
                    q.remove(i);
                } else {
                    return Err(match q.front() {
                        Some(head) => format!(
                            "receipt of {id} on {} finds {} at the head of the channel",
                            self.describe_channel(*channel),
                            show(head)
                        ),
                        None => {
                            format!(
                                "receipt of {id} on {} finds the channel without it",
                                self.describe_channel(*channel)
                            )
                        }
                    });
                }
            }
            EventKind::Lost { channel, id } => {
                let (q, k) = (&mut queues[channel.index()], key(*id));
                match q.iter().position(|m| *m == k) {
                    Some(i) => {
                        q.remove(i);
                    }
                    None => return Err(format!("theft of {id} finds {} without it", self.describe_channel(*channel))),
                }
            }
            _ => {}
        }
        self.transition(position, states)
    }

    /// Applies the application's transition of the event at `position` to its process's state
    /// (a theft is the channel's event: it leaves every state alone).
    fn transition(&self, position: usize, states: &mut [A]) -> Result<(), String> {
        let e = &self.trace.events[position];
        let p = e.process;
        if self.unknown_at(position) {
            // Its state is unknown: nothing to apply a transition to.
            return Ok(());
        }
        let refused = |what: String, reason: Refusal| format!("{} cannot {what}: {reason}", self.topology.name(p));
        match &e.kind {
            EventKind::Send { channel, msg, .. } => {
                let to = self.topology.channel(*channel).to;
                states[p.index()].on_send(to, msg).map_err(|r| refused(format!("send {}", self.show.msg(msg)), r))
            }
            EventKind::Receive { channel, id } => {
                let from = self.topology.channel(*channel).from;
                match self.sends.get(id) {
                    Some(send) => {
                        states[p.index()].on_message(from, send.msg);
                        Ok(())
                    }
                    None => Err(format!("receipt of {id}, which was never sent")),
                }
            }
            EventKind::Internal { step } => states[p.index()]
                .on_internal(step)
                .map_err(|r| refused(format!("take step {}", self.show.step(step)), r)),
            EventKind::Lost { .. }
            | EventKind::Record { .. }
            | EventKind::MarkerSend { .. }
            | EventKind::MarkerReceive { .. } => Ok(()),
        }
    }

    /// Whether the state of the process of the event at `position` is unknown there.
    fn unknown_at(&self, position: usize) -> bool {
        let p = self.trace.events[position].process.index();
        self.unknown.get(p).is_some_and(|&from| position >= from)
    }

    /// The logged states against the replayed ones, over the whole trace (where known).
    fn check_logged_states(&mut self) {
        let mut states = self.trace.initial.clone();
        for (position, e) in self.trace.events.iter().enumerate() {
            if let Err(reason) = self.transition(position, &mut states) {
                let reason = format!("the logged step cannot happen: {reason}");
                self.violations.push(Violation::LoggedState {
                    snapshot: self.snapshot.id,
                    event: self.at(position),
                    reason,
                });
                return;
            }
            let replayed = &states[e.process.index()];
            let Some(logged) = e.state.as_ref().filter(|_| !self.unknown_at(position)) else { continue };
            if !matches!(e.kind, EventKind::Lost { .. }) && logged != replayed {
                let reason = format!(
                    "{} logged state {}, but its transitions from the initial state give {}",
                    self.topology.name(e.process),
                    self.show.state(logged),
                    self.show.state(replayed),
                );
                self.violations.push(Violation::LoggedState {
                    snapshot: self.snapshot.id,
                    event: self.at(position),
                    reason,
                });
                return;
            }
        }
    }

    /// Initiations of this snapshot by processes that may not initiate.
    fn check_initiators(&mut self) {
        let id = self.snapshot.id;
        for (position, e) in self.trace.events.iter().enumerate() {
            if let EventKind::Record { snapshot, initiated: true } = e.kind {
                if snapshot == id && !self.trace.initiators.allows(e.process) {
                    let event = self.at(position);
                    self.violations.push(Violation::NotAnInitiator { snapshot, process: e.process, event });
                }
            }
        }
    }

    /// [`Checker::replay`] on message ids.
    fn replay_by_id(
        &self,
        position: usize,
        states: &mut [A],
        queues: &mut Queues<MsgId>,
        strict: bool,
    ) -> Result<(), String> {
        self.replay(position, states, queues, |id| id, MsgId::to_string, strict)
    }

    fn payloads(&self, queues: &Queues<MsgId>) -> Vec<Vec<A::Msg>> {
        queues.iter().map(|q| q.iter().map(|m| self.sends[m].msg.clone()).collect()).collect()
    }

    /// (c); returns the position of the first initiation and S_begin.
    fn check_recorded_reachable(&mut self, record: &[usize]) -> (usize, GlobalState<A>) {
        let id = self.snapshot.id;
        let events = &self.trace.events;
        let first_initiation = events
            .iter()
            .position(|e| matches!(e.kind, EventKind::Record { snapshot, initiated: true } if snapshot == id))
            .unwrap_or_else(|| record.iter().copied().min().unwrap_or(0));
        let mut states = self.trace.initial.clone();
        let mut queues: Queues<MsgId> = vec![VecDeque::new(); self.topology.channels().len()];
        let mut failure: Option<(Option<usize>, String)> = None;
        for position in 0..first_initiation {
            if !self.pre_cut(position, record) {
                failure = Some((
                    Some(position),
                    "an event after its process recorded happens before the snapshot was initiated".to_string(),
                ));
                break;
            }
            if let Err(reason) = self.replay_by_id(position, &mut states, &mut queues, true) {
                failure = Some((Some(position), reason));
                break;
            }
        }
        let begin = GlobalState { processes: states.clone(), channels: self.payloads(&queues) };
        if failure.is_none() {
            for position in first_initiation..events.len() {
                if !self.pre_cut(position, record) {
                    continue;
                }
                if let Err(reason) = self.replay_by_id(position, &mut states, &mut queues, true) {
                    failure = Some((Some(position), reason));
                    break;
                }
            }
        }
        if failure.is_none() {
            let channels = self.payloads(&queues);
            let recorded = &self.snapshot.state;
            let known = |p: usize| record[p] < self.unknown[p];
            if let Some(p) = (0..states.len()).find(|&p| known(p) && states[p] != recorded.processes[p]) {
                let name = self.topology.name(ProcessId(p as u16));
                failure = Some((
                    None,
                    format!(
                        "{name} recorded {} but its state at the cut is {}",
                        self.show.state(&recorded.processes[p]),
                        self.show.state(&states[p])
                    ),
                ));
            } else if let Some(c) = (0..channels.len()).find(|&c| channels[c] != recorded.channels[c]) {
                failure = Some((
                    None,
                    format!(
                        "channel {} recorded [{}] but holds [{}] at the cut",
                        self.describe_channel(ChannelId(c as u32)),
                        match self.ids.and_then(|ids| ids.get(c)).filter(|ids| ids.len() == recorded.channels[c].len())
                        {
                            Some(ids) => join_ids(ids),
                            None => self.show_all(&recorded.channels[c]),
                        },
                        match self.ids {
                            Some(_) => join_ids(&queues[c]),
                            None => self.show_all(&channels[c]),
                        }
                    ),
                ));
            }
        }
        if let Some((position, reason)) = failure {
            let event = position.map(|p| self.at(p));
            self.violations.push(Violation::RecordedUnreachable { snapshot: id, event, reason });
        }
        (first_initiation, begin)
    }

    /// (d); returns S_end, the actual state after the event at `last`.
    fn check_end_reachable(&mut self, record: &[usize], last: usize) -> GlobalState<A> {
        let id = self.snapshot.id;
        // The actual S_end.
        let mut states = self.trace.initial.clone();
        let mut queues: Queues<MsgId> = vec![VecDeque::new(); self.topology.channels().len()];
        for position in 0..=last.min(self.trace.events.len().saturating_sub(1)) {
            // Not strict: this is the run as it happened, FIFO or not.
            let _ = self.replay_by_id(position, &mut states, &mut queues, false);
        }
        let end = GlobalState { processes: states, channels: self.payloads(&queues) };
        let end_ids = queues;
        // Replay from the recorded S*, by content (each message tagged with its id where known).
        let mut states = self.snapshot.state.processes.clone();
        let mut queues: Queues<Tagged<A::Msg>> = self
            .snapshot
            .state
            .channels
            .iter()
            .enumerate()
            .map(|(c, msgs)| {
                let ids = self.ids.and_then(|ids| ids.get(c)).filter(|ids| ids.len() == msgs.len());
                let id = |i: usize| ids.and_then(|ids| ids.get(i)).copied();
                msgs.iter().enumerate().map(|(i, msg)| Tagged { id: id(i), msg: msg.clone() }).collect()
            })
            .collect();
        let mut failure: Option<(Option<usize>, String)> = None;
        for position in 0..=last.min(self.trace.events.len().saturating_sub(1)) {
            if self.pre_cut(position, record) {
                continue;
            }
            let content = |id: MsgId| Tagged { id: Some(id), msg: self.sends[&id].msg.clone() };
            let show = |t: &Tagged<A::Msg>| self.show_tagged(t);
            if let Err(reason) = self.replay(position, &mut states, &mut queues, content, show, true) {
                failure = Some((Some(position), reason));
                break;
            }
        }
        if failure.is_none() {
            let known = |p: usize| last < self.unknown[p];
            if let Some(p) = (0..states.len()).find(|&p| known(p) && states[p] != end.processes[p]) {
                let name = self.topology.name(ProcessId(p as u16));
                failure = Some((
                    None,
                    format!(
                        "{name} ends in {} instead of {}",
                        self.show.state(&states[p]),
                        self.show.state(&end.processes[p])
                    ),
                ));
            } else if let Some(c) =
                (0..queues.len()).find(|&c| !queues[c].iter().map(|t| &t.msg).eq(end.channels[c].iter()))
            {
                let replayed: Vec<String> = queues[c].iter().map(|t| self.show_tagged(t)).collect();
                failure = Some((
                    None,
                    format!(
                        "channel {} ends holding [{}] instead of [{}]",
                        self.describe_channel(ChannelId(c as u32)),
                        replayed.join(", "),
                        match self.ids {
                            Some(_) => join_ids(&end_ids[c]),
                            None => self.show_all(&end.channels[c]),
                        }
                    ),
                ));
            }
        }
        if let Some((position, reason)) = failure {
            let event = position.map(|p| self.at(p));
            self.violations.push(Violation::EndUnreachable { snapshot: id, event, reason });
        }
        end
    }
}
