//! Recorded runs: what each process did, in an order consistent with causality.
//!
//! Every driver records the same events through [`Tracer`], which turns one core step (its input
//! and the effects the core returned) into trace events, so no driver has its own idea of what
//! happened.

use std::collections::{HashMap, HashSet};
use std::fmt;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::protocol::{Application, Effect, Message, SnapshotId};
use crate::protocol::{ChannelId, Initiators, ProcessId, Topology};

/// Identifies one application message of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct MsgId(pub u64);

impl MsgId {
    /// The `seq`-th message sent by `process` (unique in a run).
    pub fn new(process: ProcessId, seq: u64) -> Self {
        MsgId((u64::from(process.0) << 48) | (seq & ((1 << 48) - 1)))
    }
}

impl fmt::Display for MsgId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "m{}.{}", self.0 >> 48, self.0 & ((1 << 48) - 1))
    }
}

/// What a process did. `M` is the application's message type, `S` its internal step type.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EventKind<M, S> {
    /// Sent application message `id` on `channel`.
    Send {
        /// The channel.
        channel: ChannelId,
        /// The message.
        id: MsgId,
        /// Its content.
        msg: M,
    },
    /// Received application message `id` from `channel`.
    Receive {
        /// The channel.
        channel: ChannelId,
        /// The message.
        id: MsgId,
    },
    /// Application message `id` was stolen from `channel` while in transit (recorded at the
    /// channel's receiving process).
    Lost {
        /// The channel.
        channel: ChannelId,
        /// The message.
        id: MsgId,
    },
    /// An internal step of the application (no message).
    Internal {
        /// The step.
        step: S,
    },
    /// Recorded the local state for a snapshot.
    Record {
        /// The snapshot.
        snapshot: SnapshotId,
        /// True for an initiation, false when caused by a marker.
        initiated: bool,
    },
    /// Sent the marker of `snapshot` on `channel`.
    MarkerSend {
        /// The snapshot.
        snapshot: SnapshotId,
        /// The channel.
        channel: ChannelId,
    },
    /// Received the marker of `snapshot` from `channel`.
    MarkerReceive {
        /// The snapshot.
        snapshot: SnapshotId,
        /// The channel.
        channel: ChannelId,
    },
}

/// One event and, when the driver logged it, the process's application state right after it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(bound(
    serialize = "A: Serialize, A::Msg: Serialize, A::Step: Serialize",
    deserialize = "A: Deserialize<'de>, A::Msg: Deserialize<'de>, A::Step: Deserialize<'de>"
))]
pub struct Event<A: Application> {
    /// Who did it.
    pub process: ProcessId,
    /// What it did.
    pub kind: EventKind<A::Msg, A::Step>,
    /// The process's state after the event, as the driver logged it (`None` where the log has
    /// none: the drivers of this crate always log one, another implementation's logs may not).
    /// The trace checker never takes it as the truth: it recomputes every state from the
    /// initial states by the application's transitions, and reports a logged state that
    /// differs.
    pub state: Option<A>,
}

/// A run: initial states, who may initiate snapshots, and events in an order consistent with
/// causality (every receive after its send; each process's events in its own order).
///
/// Its serde form is for sending a trace to another process of the same build (the fields', not
/// a stable format); logs are read and written by [`crate::formats::jsonl`].
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(bound(
    serialize = "A: Serialize, A::Msg: Serialize, A::Step: Serialize",
    deserialize = "A: Deserialize<'de>, A::Msg: Deserialize<'de>, A::Step: Deserialize<'de>"
))]
pub struct Trace<A: Application> {
    /// Initial application state of each process.
    pub initial: Vec<A>,
    /// The processes that may initiate snapshots; the checker reports any other initiation.
    pub initiators: Initiators,
    /// The events.
    pub events: Vec<Event<A>>,
}

/// A trace that does not describe a possible run.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum TraceError {
    /// A receive or loss of a message never sent on that channel before.
    #[error("event {position} ({process}): message {id} on channel {} was never sent before", channel.0)]
    NotSent {
        /// Position of the event in the trace.
        position: usize,
        /// Its process.
        process: ProcessId,
        /// The message.
        id: MsgId,
        /// The channel.
        channel: ChannelId,
    },
    /// A marker received that was not sent on that channel before.
    #[error("event {position} ({process}): marker of snapshot {snapshot} on channel {} was never sent before", channel.0)]
    MarkerNotSent {
        /// Position of the event in the trace.
        position: usize,
        /// Its process.
        process: ProcessId,
        /// The snapshot.
        snapshot: SnapshotId,
        /// The channel.
        channel: ChannelId,
    },
    /// A message received or lost twice.
    #[error("event {position} ({process}): message {id} was already received or lost")]
    Duplicate {
        /// Position of the event in the trace.
        position: usize,
        /// Its process.
        process: ProcessId,
        /// The message.
        id: MsgId,
    },
    /// Two sends with one id.
    #[error("event {position} ({process}): message id {id} is used twice")]
    DuplicateId {
        /// Position of the event in the trace.
        position: usize,
        /// Its process.
        process: ProcessId,
        /// The message.
        id: MsgId,
    },
    /// An event on a channel at the wrong end, or on a channel or process that does not exist.
    #[error("event {position} ({process}): channel {} is not {role} at this process", channel.0)]
    WrongChannel {
        /// Position of the event in the trace.
        position: usize,
        /// Its process.
        process: ProcessId,
        /// The channel.
        channel: ChannelId,
        /// "outgoing" or "incoming".
        role: &'static str,
    },
    /// An event of a process that does not exist.
    #[error("event {position}: unknown process {process}")]
    UnknownProcess {
        /// Position of the event in the trace.
        position: usize,
        /// The process.
        process: ProcessId,
    },
    /// The initial states do not match the topology.
    #[error("the trace has {got} initial states for {expected} processes")]
    WrongInitial {
        /// Processes in the topology.
        expected: usize,
        /// Initial states in the trace.
        got: usize,
    },
    /// Per-process logs that cannot be merged: some receipt never finds its send (it was
    /// never sent, or only after something that waits for this receipt: a cycle).
    #[error("cannot order the per-process logs: {process} waits for {what} that is never sent")]
    Unmergeable {
        /// The stuck process.
        process: ProcessId,
        /// The stuck event: its log, and its index in that log.
        at: (usize, usize),
        /// The message or marker it waits for.
        what: String,
    },
}

impl<A: Application> Trace<A> {
    /// An empty trace from these initial states, in which any process may initiate.
    pub fn new(initial: Vec<A>) -> Self {
        Trace { initial, initiators: Initiators::Any, events: Vec::new() }
    }

    /// The same trace with only `initiators` allowed to initiate.
    pub fn with_initiators(mut self, initiators: Initiators) -> Self {
        self.initiators = initiators;
        self
    }

    /// The events of one process, with their positions in the trace.
    pub fn of_process(&self, p: ProcessId) -> impl Iterator<Item = (usize, &Event<A>)> {
        self.events.iter().enumerate().filter(move |(_, e)| e.process == p)
    }

    /// Checks the trace is well formed for `topology`: known processes, events on the right ends
    /// of channels, every receive or loss after its send, no message delivered twice.
    pub fn validate(&self, topology: &Topology) -> Result<(), TraceError> {
        if self.initial.len() != topology.len() {
            return Err(TraceError::WrongInitial { expected: topology.len(), got: self.initial.len() });
        }
        let mut sent: HashMap<MsgId, ChannelId> = HashMap::new();
        let mut gone: HashSet<MsgId> = HashSet::new();
        let mut markers: HashMap<(ChannelId, SnapshotId), usize> = HashMap::new();
        for (position, e) in self.events.iter().enumerate() {
            let process = e.process;
            if process.index() >= topology.len() {
                return Err(TraceError::UnknownProcess { position, process });
            }
            let end = |channel: ChannelId, outgoing: bool| {
                let ok = topology.channels().get(channel.index()).is_some_and(|c| {
                    if outgoing {
                        c.from == process
                    } else {
                        c.to == process
                    }
                });
                if ok {
                    Ok(())
                } else {
                    let role = if outgoing { "outgoing" } else { "incoming" };
                    Err(TraceError::WrongChannel { position, process, channel, role })
                }
            };
            match &e.kind {
                EventKind::Send { channel, id, .. } => {
                    end(*channel, true)?;
                    if sent.insert(*id, *channel).is_some() {
                        return Err(TraceError::DuplicateId { position, process, id: *id });
                    }
                }
                EventKind::Receive { channel, id } | EventKind::Lost { channel, id } => {
                    end(*channel, false)?;
                    if sent.get(id) != Some(channel) {
                        return Err(TraceError::NotSent { position, process, id: *id, channel: *channel });
                    }
                    if !gone.insert(*id) {
                        return Err(TraceError::Duplicate { position, process, id: *id });
                    }
                }
                EventKind::MarkerSend { channel, snapshot } => {
                    end(*channel, true)?;
                    *markers.entry((*channel, *snapshot)).or_default() += 1;
                }
                EventKind::MarkerReceive { channel, snapshot } => {
                    end(*channel, false)?;
                    match markers.get_mut(&(*channel, *snapshot)) {
                        Some(n) if *n > 0 => *n -= 1,
                        _ => {
                            return Err(TraceError::MarkerNotSent {
                                position,
                                process,
                                snapshot: *snapshot,
                                channel: *channel,
                            })
                        }
                    }
                }
                EventKind::Internal { .. } | EventKind::Record { .. } => {}
            }
        }
        Ok(())
    }

    /// Merges per-process logs (each in that process's order) into one trace whose order is
    /// consistent with causality: a receive or loss comes after its send, a marker's receipt
    /// after its sending (the k-th receipt of a snapshot's marker on a channel after its k-th
    /// sending there, as on a FIFO channel). The merge is greedy, log by log, so it finds an
    /// order whenever one exists; when none does, the error names the first stuck event (its
    /// log and its index in that log) and what it waits for.
    pub fn merge(initial: Vec<A>, logs: Vec<Vec<Event<A>>>) -> Result<Self, TraceError> {
        let total = logs.iter().map(Vec::len).sum();
        let mut taken = vec![0usize; logs.len()];
        let mut events = Vec::with_capacity(total);
        let mut sent: HashSet<MsgId> = HashSet::new();
        let mut markers: HashMap<(ChannelId, SnapshotId), usize> = HashMap::new();
        let mut logs: Vec<std::vec::IntoIter<Event<A>>> = logs.into_iter().map(Vec::into_iter).collect();
        let mut heads: Vec<Option<Event<A>>> = logs.iter_mut().map(Iterator::next).collect();
        while events.len() < total {
            let mut progressed = false;
            for (i, head) in heads.iter_mut().enumerate() {
                // Take as many ready events of this process as possible.
                while let Some(e) = head.take() {
                    let ready = match &e.kind {
                        EventKind::Receive { id, .. } | EventKind::Lost { id, .. } => sent.contains(id),
                        EventKind::MarkerReceive { channel, snapshot } => {
                            markers.get(&(*channel, *snapshot)).is_some_and(|&n| n > 0)
                        }
                        _ => true,
                    };
                    if !ready {
                        *head = Some(e);
                        break;
                    }
                    match &e.kind {
                        EventKind::Send { id, .. } => {
                            sent.insert(*id);
                        }
                        EventKind::MarkerSend { channel, snapshot } => {
                            *markers.entry((*channel, *snapshot)).or_default() += 1;
                        }
                        EventKind::MarkerReceive { channel, snapshot } => {
                            if let Some(n) = markers.get_mut(&(*channel, *snapshot)) {
                                *n -= 1;
                            }
                        }
                        _ => {}
                    }
                    events.push(e);
                    progressed = true;
                    taken[i] += 1;
                    *head = logs[i].next();
                }
            }
            if !progressed {
                let log = heads.iter().position(Option::is_some).unwrap_or(0);
                let at = (log, taken.get(log).copied().unwrap_or(0));
                let stuck = heads.iter().flatten().next();
                let (process, what) = match stuck.map(|e| (e.process, &e.kind)) {
                    Some((p, EventKind::Receive { id, .. } | EventKind::Lost { id, .. })) => {
                        (p, format!("message {id}"))
                    }
                    Some((p, EventKind::MarkerReceive { channel, snapshot })) => {
                        (p, format!("the marker of snapshot {snapshot} on channel {}", channel.0))
                    }
                    _ => (ProcessId(0), "an event".to_string()),
                };
                return Err(TraceError::Unmergeable { process, at, what });
            }
        }
        Ok(Trace { initial, initiators: Initiators::Any, events })
    }
}

/// What started a core step, for [`Tracer::step`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepInput {
    /// An application send; the message gets this id.
    Send(MsgId),
    /// An application message received.
    Receive {
        /// The channel.
        channel: ChannelId,
        /// The message.
        id: MsgId,
    },
    /// A marker received.
    Marker {
        /// The channel.
        channel: ChannelId,
        /// The snapshot.
        snapshot: SnapshotId,
    },
    /// A snapshot initiation.
    Initiate,
    /// A step with no input event of its own: an internal step (traced with
    /// [`Tracer::event`] first) or an idle flush of deferred work.
    Idle,
}

/// Turns core steps into trace events. Drivers call [`Tracer::step`] after every core call, and
/// [`Tracer::event`] for steps outside the core (internal steps, thefts).
#[derive(Clone, Debug, Default)]
pub struct Tracer;

impl Tracer {
    /// Appends the events of one core step: its input, then one event per effect that a trace
    /// records. `state` is the process's application state after the step.
    pub fn step<A: Application>(
        log: &mut Vec<Event<A>>,
        process: ProcessId,
        input: StepInput,
        effects: &[Effect<A::Msg>],
        state: &A,
    ) {
        let mut push = |kind| log.push(Event { process, kind, state: Some(state.clone()) });
        match input {
            StepInput::Receive { channel, id } => push(EventKind::Receive { channel, id }),
            StepInput::Marker { channel, snapshot } => push(EventKind::MarkerReceive { snapshot, channel }),
            StepInput::Send(_) | StepInput::Initiate | StepInput::Idle => {}
        }
        for effect in effects {
            match effect {
                Effect::Send { channel, message: Message::App(msg) } => {
                    let id = match input {
                        StepInput::Send(id) => id,
                        _ => continue,
                    };
                    push(EventKind::Send { channel: *channel, id, msg: msg.clone() });
                }
                Effect::Send { channel, message: Message::Marker(snapshot) } => {
                    push(EventKind::MarkerSend { snapshot: *snapshot, channel: *channel })
                }
                Effect::Recorded { snapshot, initiated } => {
                    push(EventKind::Record { snapshot: *snapshot, initiated: *initiated })
                }
                // The trace format is Chandy–Lamport's: cancellations and aborted checkpoints of
                // the barrier algorithms are not logged.
                Effect::Send { message: Message::Cancel(_), .. } | Effect::Aborted { .. } => {}
                Effect::Closed { .. } | Effect::Completed { .. } => {}
            }
        }
    }

    /// Appends an event that is not an effect of a core step (an internal step's own event, a
    /// theft).
    pub fn event<A: Application>(
        log: &mut Vec<Event<A>>,
        process: ProcessId,
        kind: EventKind<A::Msg, A::Step>,
        state: &A,
    ) {
        log.push(Event { process, kind, state: Some(state.clone()) });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apps::bank::{Bank, Jars, Sale};

    fn ev(p: u16, kind: EventKind<Jars, Sale>) -> Event<Bank> {
        Event { process: ProcessId(p), kind, state: Some(Bank::new(0)) }
    }

    #[test]
    fn merge_orders_receives_after_sends() {
        let t = Topology::complete(2).unwrap();
        let c01 = t.channel_between(ProcessId(0), ProcessId(1)).unwrap();
        let id = MsgId::new(ProcessId(0), 0);
        let logs = vec![
            vec![
                ev(0, EventKind::Internal { step: Sale(1) }),
                ev(0, EventKind::Send { channel: c01, id, msg: Jars(1) }),
            ],
            vec![ev(1, EventKind::Receive { channel: c01, id }), ev(1, EventKind::Internal { step: Sale(1) })],
        ];
        let trace = Trace::merge(vec![Bank::new(1), Bank::new(0)], logs).unwrap();
        trace.validate(&t).unwrap();
        let kinds: Vec<_> =
            trace.events.iter().map(|e| (e.process.0, matches!(e.kind, EventKind::Receive { .. }))).collect();
        assert_eq!(kinds, vec![(0, false), (0, false), (1, true), (1, false)]);
    }

    #[test]
    fn merge_and_validate_reject_a_receive_without_send() {
        let t = Topology::complete(2).unwrap();
        let c01 = t.channel_between(ProcessId(0), ProcessId(1)).unwrap();
        let id = MsgId::new(ProcessId(0), 7);
        let logs = vec![vec![], vec![ev(1, EventKind::Receive { channel: c01, id })]];
        assert_eq!(
            Trace::merge(vec![Bank::new(1), Bank::new(0)], logs.clone()),
            Err(TraceError::Unmergeable { process: ProcessId(1), at: (1, 0), what: format!("message {id}") })
        );
        let trace = Trace::new(vec![Bank::new(1), Bank::new(0)]);
        let trace = Trace { events: logs.concat(), ..trace };
        assert_eq!(
            trace.validate(&t),
            Err(TraceError::NotSent { position: 0, process: ProcessId(1), id, channel: c01 })
        );
    }

    #[test]
    fn validate_rejects_wrong_channel_end_and_duplicates() {
        let t = Topology::complete(2).unwrap();
        let c01 = t.channel_between(ProcessId(0), ProcessId(1)).unwrap();
        let id = MsgId::new(ProcessId(0), 0);
        let wrong_end = Trace {
            events: vec![ev(1, EventKind::Send { channel: c01, id, msg: Jars(1) })],
            ..Trace::new(vec![Bank::new(1), Bank::new(0)])
        };
        assert!(matches!(wrong_end.validate(&t), Err(TraceError::WrongChannel { role: "outgoing", .. })));
        let twice = Trace {
            events: vec![
                ev(0, EventKind::Send { channel: c01, id, msg: Jars(1) }),
                ev(1, EventKind::Receive { channel: c01, id }),
                ev(1, EventKind::Receive { channel: c01, id }),
            ],
            ..Trace::new(vec![Bank::new(1), Bank::new(0)])
        };
        assert!(matches!(twice.validate(&t), Err(TraceError::Duplicate { position: 2, .. })));
    }
}
