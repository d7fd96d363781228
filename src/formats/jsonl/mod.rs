//! `.jsonl`: recorded runs as JSON lines, one event a line — the format in which any
//! implementation of the marker algorithm can hand its logs to the trace checker
//! (`model verify`), and in which this crate's runtime and simulator write theirs.
//!
//! # The format
//!
//! Each line is one JSON object: one event of one process. The logs of a run may come in any
//! number of files — typically one per process — with no global order: the reader sorts each
//! process's events by `seq` and rebuilds an order consistent with causality. Blank lines are
//! skipped; every other line must be an event.
//!
//! | field | on | value |
//! |---|---|---|
//! | `process` | every line | the process's name, as in the topology (`"P0"`) |
//! | `seq` | every line | the event's number among its process's events: 0, 1, 2, … (a gap or a repeat is a bad log) |
//! | `kind` | every line | `send`, `receive`, `loss`, `internal`, `record`, `marker-send` or `marker-receive` |
//! | `channel` | `send`, `receive`, `loss`, `marker-send`, `marker-receive` | the one-way channel, spelled `"FROM->TO"` with the two names as in the topology and no spaces (`"P0->P1"`) |
//! | `msg` | `send`, `receive`, `loss` | the message's id: a string, or a non-negative integer (the same id as the string of its digits); unique among the run's sends |
//! | `payload` | `send` | the application message, as JSON (the bank's cart of 3 jars: `3`) |
//! | `step` | `internal` | the internal step, as JSON (the bank's sale of 2 jars: `2`) |
//! | `snapshot` | `record`, `marker-send`, `marker-receive` | the snapshot id, an integer |
//! | `initiated` | `record` | `true` when the process initiated the snapshot, `false` when a marker made it record |
//! | `recorded` | `marker-receive` | the ids of the messages the process recorded for that channel, in the order it recorded them: the implementation's claim |
//! | `state` | any line; required on `record` | the process's application state right after the event, as JSON (the bank's `{"jars": 7, "sold": 0}`); on a `record` line, the state recorded |
//!
//! A field a line's kind does not use is an error, as is an unknown field. Sends are logged by
//! the sender, receipts by the receiver; a `loss` (a message stolen from its channel while in
//! transit) is logged by the channel's receiving process. Every `marker-receive` closes that
//! channel's record for its snapshot — the first marker a process receives for a snapshot makes
//! it record and closes the marker's channel with an empty record — so every `marker-receive`
//! carries `recorded` (`[]` for an empty record). A snapshot whose every process logged a
//! `record` and whose every channel's record was closed is assembled from the logs: the
//! recorded states of the `record` lines, and the `recorded` ids resolved to the messages sent
//! with them.
//!
//! ```text
//! {"process":"P0","seq":0,"kind":"send","channel":"P0->P1","msg":"m0.0","payload":3,"state":{"jars":97,"sold":0}}
//! {"process":"P0","seq":1,"kind":"record","snapshot":0,"initiated":true,"state":{"jars":97,"sold":0}}
//! {"process":"P0","seq":2,"kind":"marker-send","snapshot":0,"channel":"P0->P1","state":{"jars":97,"sold":0}}
//! {"process":"P1","seq":0,"kind":"receive","channel":"P0->P1","msg":"m0.0","state":{"jars":103,"sold":0}}
//! {"process":"P1","seq":1,"kind":"marker-receive","snapshot":0,"channel":"P0->P1","recorded":[],"state":{"jars":103,"sold":0}}
//! ```
//!
//! # What the reader checks
//!
//! [`read_logs`] refuses, naming the file and the line: a line that is not JSON, or not an
//! event (an unknown field or kind, a missing or misplaced field, a value of the wrong type);
//! an unknown process or channel, or an event at the wrong end of its channel; a gap or repeat
//! in a process's `seq`; two sends with one id; a receipt or loss of a message never sent (or
//! sent on another channel, or received twice); a marker received more often than it was sent;
//! a `recorded` id never sent; and logs that admit no causal order (a cycle: each process's next
//! event waits for another's). The logged states are never taken as the truth: the trace checker
//! recomputes every state by the application's transitions and reports a logged state they do
//! not produce.
//!
//! The order rebuilt is each process's `seq` order, a receipt or loss after its message's send,
//! and the k-th receipt of a snapshot's marker on a channel after its k-th sending there (see
//! [`Trace::merge`]). The messages get the ids this crate's drivers give them
//! ([`MsgId::new`]: the sender and the send's number among its sends); [`Logs::names`] keeps the
//! logs' own spelling.
//!
//! # Writing
//!
//! [`write_logs`] writes a run of this crate's runtime or simulator as `DIR/<process>.jsonl`,
//! one file per process, and its topology as `DIR/topology.top` (the `.top` format, with each
//! process's tokens). Message ids are written as [`MsgId`] prints them (`"m0.5"`: P0's sixth
//! send). Each `record` line carries the state the snapshot assembled by the driver holds for
//! that process, and the first `marker-receive` of each channel and snapshot the ids of that
//! snapshot's record of the channel. For a snapshot the driver never assembled (open at
//! shutdown, or broken by a fault variant), a `record` line carries the state logged with the
//! event, and a `marker-receive` the messages received on the channel between the record and
//! the marker; such a snapshot is incomplete in the logs too.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};

use serde::de::{self, DeserializeOwned, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use thiserror::Error;

use crate::check::{Event, EventKind, MsgId, Trace, TraceError};
use crate::protocol::{Application, SnapshotId};
use crate::protocol::{ChannelId, ProcessId, Topology};
use crate::protocol::{GlobalSnapshot, GlobalState};

mod claims;
mod read;
mod write;
#[cfg(test)]
mod tests;

pub use read::{parse_logs, read_logs};
#[cfg(test)]
use write::to_lines;
pub use write::{write_logs, WriteError};

/// An application whose runs can be written and read as JSON lines: its states, messages and
/// internal steps have a JSON form.
pub trait LogApp:
    Application<Msg: Serialize + DeserializeOwned, Step: Serialize + DeserializeOwned> + Serialize + DeserializeOwned
{
}

impl<A> LogApp for A where
    A: Application<Msg: Serialize + DeserializeOwned, Step: Serialize + DeserializeOwned>
        + Serialize
        + DeserializeOwned
{
}

/// What an event line says happened (the `kind` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// `send`.
    Send,
    /// `receive`.
    Receive,
    /// `loss`.
    Loss,
    /// `internal`.
    Internal,
    /// `record`.
    Record,
    /// `marker-send`.
    MarkerSend,
    /// `marker-receive`.
    MarkerReceive,
}

impl Kind {
    /// The name in the logs.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Send => "send",
            Kind::Receive => "receive",
            Kind::Loss => "loss",
            Kind::Internal => "internal",
            Kind::Record => "record",
            Kind::MarkerSend => "marker-send",
            Kind::MarkerReceive => "marker-receive",
        }
    }

    /// The optional fields (other than `state`) a line of this kind has.
    fn fields(self) -> &'static [&'static str] {
        match self {
            Kind::Send => &["channel", "msg", "payload"],
            Kind::Receive | Kind::Loss => &["channel", "msg"],
            Kind::Internal => &["step"],
            Kind::Record => &["snapshot", "initiated"],
            Kind::MarkerSend => &["snapshot", "channel"],
            Kind::MarkerReceive => &["snapshot", "channel", "recorded"],
        }
    }
}

/// A message id as the logs spell it: a string, or a non-negative integer (read as the string
/// of its digits).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LogId(pub String);

impl fmt::Display for LogId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

impl Serialize for LogId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for LogId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct IdVisitor;
        impl Visitor<'_> for IdVisitor {
            type Value = LogId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a message id: a string or a non-negative integer")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<LogId, E> {
                Ok(LogId(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<LogId, E> {
                Ok(LogId(v.to_string()))
            }
        }
        deserializer.deserialize_any(IdVisitor)
    }
}

/// One line of the logs, as serde reads and writes it (`M` the message, `S` the internal step,
/// `A` the state). Which optional fields a line has depends on its kind (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Line<M, S, A> {
    /// The process's name.
    pub process: String,
    /// The event's number among its process's events (when absent, `time` orders them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    /// When the event happened, by the process's clock: a number or an RFC 3339 timestamp
    /// (orders a process's events when the logs have no `seq`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<serde_json::Value>,
    /// What happened.
    pub kind: Kind,
    /// The snapshot id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<u32>,
    /// The channel, `"FROM->TO"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    /// The message id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub msg: Option<LogId>,
    /// The message sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payload: Option<M>,
    /// The internal step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<S>,
    /// Whether a record was an initiation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initiated: Option<bool>,
    /// The ids recorded for the channel a marker closes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded: Option<Vec<LogId>>,
    /// The state after the event (the recorded state, on a `record` line).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<A>,
}

impl<M, S, A> Line<M, S, A> {
    /// The optional fields present, by name.
    fn present(&self) -> [(&'static str, bool); 7] {
        [
            ("snapshot", self.snapshot.is_some()),
            ("channel", self.channel.is_some()),
            ("msg", self.msg.is_some()),
            ("payload", self.payload.is_some()),
            ("step", self.step.is_some()),
            ("initiated", self.initiated.is_some()),
            ("recorded", self.recorded.is_some()),
        ]
    }
}

/// A line of a log file.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Location {
    /// The file, as given.
    pub file: String,
    /// 1-based line number.
    pub line: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// What is wrong with a line of the logs.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum LogProblem {
    /// The file could not be read.
    #[error("cannot read: {0}")]
    Io(String),
    /// Not JSON.
    #[error("malformed JSON: {0}")]
    Malformed(String),
    /// JSON, but not an event: an unknown field or kind, a missing field, a wrong type.
    #[error("not an event: {0}")]
    BadValue(String),
    /// A field the line's kind needs is missing.
    #[error("a {kind} line needs the field `{field}`")]
    MissingField {
        /// The kind.
        kind: &'static str,
        /// The field.
        field: &'static str,
    },
    /// A field the line's kind does not have.
    #[error("a {kind} line has no field `{field}`")]
    ExtraField {
        /// The kind.
        kind: &'static str,
        /// The field.
        field: &'static str,
    },
    /// A process the topology does not have.
    #[error("unknown process {0:?} (not in the topology)")]
    UnknownProcess(String),
    /// A channel the topology does not have.
    #[error("unknown channel {0:?} (not in the topology; channels are spelled \"FROM->TO\")")]
    UnknownChannel(String),
    /// An event at the wrong end of its channel.
    #[error("{process} is not the {end} of channel {channel}")]
    WrongEnd {
        /// The process.
        process: String,
        /// The channel.
        channel: String,
        /// `"sender"` or `"receiver"`.
        end: &'static str,
    },
    /// Two lines of one process with one `seq`.
    #[error("{process} has seq {seq} twice (also at {first})")]
    SeqRepeated {
        /// The process.
        process: String,
        /// The seq.
        seq: u64,
        /// The other line.
        first: Location,
    },
    /// A line with neither `seq` nor `time`.
    #[error("a line needs `seq` (or, in a process's logs that have no `seq` at all, `time`)")]
    NoOrder,
    /// One process's lines with `seq` and others with only `time`.
    #[error("{process}'s lines mix `seq` and `time` (this line has {this}, the line at {other} has {that}): one of them must order all of a process's events")]
    MixedOrder {
        /// The process.
        process: String,
        /// What this line has.
        this: &'static str,
        /// Another line of the process.
        other: Location,
        /// What that line has.
        that: &'static str,
    },
    /// A `time` that is neither a number nor an RFC 3339 timestamp.
    #[error("`time` must be a number or an RFC 3339 timestamp (\"2026-12-02T10:00:00.5Z\"): {0}")]
    BadTime(String),
    /// Two events of one process at one time, or numbers and timestamps mixed.
    #[error("{process} has two events at time {time} (also at {other}): with no `seq`, times must increase strictly")]
    TimeTie {
        /// The process.
        process: String,
        /// The time, as logged.
        time: String,
        /// The other line.
        other: Location,
    },
    /// Numeric times and timestamps in one process's logs.
    #[error("{process}'s times mix numbers and RFC 3339 timestamps (also at {other})")]
    MixedTimes {
        /// The process.
        process: String,
        /// A line with the other kind.
        other: Location,
    },
    /// A marker line without `snapshot` whose snapshot cannot be told.
    #[error("{0}")]
    MarkerSnapshot(String),
    /// A process's `seq` skips numbers.
    #[error("{process}'s seq jumps to {found}: seq {expected} is missing")]
    SeqGap {
        /// The process.
        process: String,
        /// The seq due.
        expected: u64,
        /// The seq found.
        found: u64,
    },
    /// Two sends with one message id.
    #[error("message id {id} is sent twice (first at {first})")]
    DuplicateId {
        /// The id.
        id: LogId,
        /// The first send.
        first: Location,
    },
    /// A receipt or loss on another channel than the send's.
    #[error("{what} of message {id} on {channel}, but it was sent on {sent_on} (at {sent_at})")]
    OtherChannel {
        /// `"receipt"` or `"loss"`.
        what: &'static str,
        /// The id.
        id: LogId,
        /// The channel of this line.
        channel: String,
        /// The channel of the send.
        sent_on: String,
        /// The send.
        sent_at: Location,
    },
    /// A message received or lost twice.
    #[error("message {id} was already received or lost (at {first})")]
    ReceivedTwice {
        /// The id.
        id: LogId,
        /// The first receipt or loss.
        first: Location,
    },
    /// The logs admit no causal order.
    #[error("no causal order exists (a cycle): this event waits for {what}{}, which cannot come before it", sent_at.as_ref().map(|s| format!(" (at {s})")).unwrap_or_default())]
    Cycle {
        /// What the event waits for.
        what: String,
        /// Where that is logged, if anywhere.
        sent_at: Option<Location>,
    },
    /// Initial states that do not match the topology.
    #[error("{got} initial states for {expected} processes")]
    InitialStates {
        /// Processes.
        expected: usize,
        /// States given.
        got: usize,
    },
    /// The trace built from the logs is malformed (the checks above should catch it first).
    #[error(transparent)]
    Trace(#[from] TraceError),
}

/// A bad log: the problem and where (`FILE:LINE: problem`, or `FILE: problem` for the whole
/// file).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{file}{}: {problem}", if *.line == 0 { String::new() } else { format!(":{line}") })]
pub struct LogError {
    /// The file.
    pub file: String,
    /// 1-based line number (0 when the whole file is at fault).
    pub line: usize,
    /// What is wrong (boxed: a `Result` carrying it stays small).
    pub problem: Box<LogProblem>,
}

impl LogError {
    fn new(file: String, line: usize, problem: LogProblem) -> Self {
        LogError { file, line, problem: Box::new(problem) }
    }

    fn at(location: &Location, problem: LogProblem) -> Self {
        LogError::new(location.file.clone(), location.line, problem)
    }
}

/// Something the logs claim about a snapshot that cannot be true of any correct run, though the
/// logs are readable: a process that records twice, a channel record closed twice, a record
/// claiming a message the process had not received on that channel between its recording and
/// the marker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Anomaly {
    /// What is wrong, in the logs' names.
    pub message: String,
    /// The lines involved, each with its role (`"marker receipt"`).
    pub at: Vec<(String, Location)>,
}

/// What the logs claim about one snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claim<A: Application> {
    /// The snapshot.
    pub id: SnapshotId,
    /// The global snapshot, when every process recorded and every channel's record was closed.
    pub snapshot: Option<GlobalSnapshot<A>>,
    /// Each process's (first) `record` event, by position in the trace.
    pub records: Vec<Option<usize>>,
    /// The `marker-receive` that (first) closed each channel's record, by position.
    pub closes: Vec<Option<usize>>,
    /// The message ids each channel's record claims (its closing `recorded` list), by channel.
    pub recorded: Vec<Vec<LogId>>,
    /// Claims no correct run makes.
    pub anomalies: Vec<Anomaly>,
    /// Why the snapshot cannot be judged, when it is incomplete in what was read and what is
    /// missing belongs to a damaged log ([`Logs::damage`]).
    pub unjudged: Option<String>,
}

/// How the reader treats the application states in the logs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum States<A> {
    /// The application's own: every `record` line carries the recorded state, and the checker
    /// recomputes every state by the application's transitions.
    Interpreted,
    /// Opaque values: a `record` line may leave its state out (`blank` is recorded then), and a
    /// recorded state is compared with the state its process logged last before it.
    Opaque {
        /// The state of a record that logs none.
        blank: A,
    },
}

/// Where the logs stop making sense: a file that ends mid-line, a process with no events, a
/// receipt of something its sender's log never sends. The events that depend on the damage
/// (each process's events from its first dangling receipt on) are left out of the run, and the
/// snapshots the damage touches are not judged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Damage {
    /// The process whose log is damaged (missing, cut short), when known.
    pub process: Option<ProcessId>,
    /// The line that shows it.
    pub at: Option<Location>,
    /// What is wrong, in the logs' names.
    pub message: String,
}

/// Logs read back: the run, where each event came from, and the snapshots they claim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Logs<A: Application> {
    /// The run, in an order consistent with causality; any process may initiate. With damage,
    /// the events each process logged before the damage reached it.
    pub trace: Trace<A>,
    /// The line of each event, by position in the trace.
    pub locations: Vec<Location>,
    /// Every snapshot id the logs mention, in increasing order.
    pub claims: Vec<Claim<A>>,
    /// The logs' spelling of each message id.
    pub names: HashMap<MsgId, LogId>,
    /// Damage found, in the order found.
    pub damage: Vec<Damage>,
    /// Each process's events read, and how many of them are in [`Logs::trace`] (fewer when
    /// damage cut the process's log short).
    pub kept: Vec<(usize, usize)>,
    /// Each process's log is damaged: missing, ending mid-line, or cut short by damage.
    pub damaged: Vec<bool>,
}

impl<A: Application> Logs<A> {
    /// The line of the event at `position`.
    pub fn location(&self, position: usize) -> Option<&Location> {
        self.locations.get(position)
    }
}

