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
    /// The event's number among its process's events.
    pub seq: u64,
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
    /// A receipt or loss of a message never sent.
    #[error("{what} of message {id}, which is never sent")]
    NeverSent {
        /// `"receipt"` or `"loss"`.
        what: &'static str,
        /// The id.
        id: LogId,
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
    /// More receipts of a snapshot's marker on a channel than sendings.
    #[error("marker of snapshot {snapshot} on {channel} received, but never sent (or not that often)")]
    MarkerNeverSent {
        /// The snapshot.
        snapshot: SnapshotId,
        /// The channel.
        channel: String,
    },
    /// A `recorded` id no send has.
    #[error("recorded message {id} is never sent")]
    RecordedNeverSent {
        /// The id.
        id: LogId,
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
/// claiming a message of another channel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Anomaly {
    /// The event (its position in [`Logs::trace`]).
    pub position: usize,
    /// What is wrong.
    pub message: String,
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
    /// Claims no correct run makes.
    pub anomalies: Vec<Anomaly>,
}

/// Logs read back: the run, where each event came from, and the snapshots they claim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Logs<A: Application> {
    /// The run, in an order consistent with causality; any process may initiate.
    pub trace: Trace<A>,
    /// The line of each event, by position in the trace.
    pub locations: Vec<Location>,
    /// Every snapshot id the logs mention, in increasing order.
    pub claims: Vec<Claim<A>>,
    /// The logs' spelling of each message id.
    pub names: HashMap<MsgId, LogId>,
}

impl<A: Application> Logs<A> {
    /// The line of the event at `position`.
    pub fn location(&self, position: usize) -> Option<&Location> {
        self.locations.get(position)
    }
}

/// One event line, checked and resolved against the topology.
struct Parsed<A: Application> {
    at: Location,
    process: ProcessId,
    seq: u64,
    body: Body<A::Msg, A::Step>,
    state: Option<A>,
}

enum Body<M, S> {
    Send { channel: ChannelId, msg: LogId, payload: M },
    Receive { channel: ChannelId, msg: LogId },
    Loss { channel: ChannelId, msg: LogId },
    Internal { step: S },
    Record { snapshot: SnapshotId, initiated: bool },
    MarkerSend { snapshot: SnapshotId, channel: ChannelId },
    MarkerReceive { snapshot: SnapshotId, channel: ChannelId, recorded: Vec<LogId> },
}

fn need<T>(kind: Kind, field: &'static str, value: Option<T>) -> Result<T, LogProblem> {
    value.ok_or(LogProblem::MissingField { kind: kind.name(), field })
}

/// The message of a serde_json error without its position (each line is parsed alone: the
/// position is always line 1), with the column kept.
fn json_message(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    match text.strip_suffix(&suffix) {
        Some(message) => format!("{message} (column {})", e.column()),
        None => text,
    }
}

struct Resolver<'t> {
    topology: &'t Topology,
    processes: HashMap<&'t str, ProcessId>,
    channels: HashMap<String, ChannelId>,
}

impl<'t> Resolver<'t> {
    fn new(topology: &'t Topology) -> Self {
        let processes = topology.processes().map(|p| (topology.name(p), p)).collect();
        let channels = (0..topology.channels().len())
            .map(|c| ChannelId(c as u32))
            .map(|c| (topology.channel_label(c), c))
            .collect();
        Resolver { topology, processes, channels }
    }

    /// The channel named `name`, with `process` at its `outgoing` (sender) or incoming end.
    fn channel(&self, process: ProcessId, name: &str, outgoing: bool) -> Result<ChannelId, LogProblem> {
        let c = *self.channels.get(name).ok_or_else(|| LogProblem::UnknownChannel(name.to_string()))?;
        let ch = self.topology.channel(c);
        let end = if outgoing { ch.from } else { ch.to };
        if end != process {
            return Err(LogProblem::WrongEnd {
                process: self.topology.name(process).to_string(),
                channel: name.to_string(),
                end: if outgoing { "sender" } else { "receiver" },
            });
        }
        Ok(c)
    }

    fn parse<A: LogApp>(&self, text: &str, at: Location) -> Result<Parsed<A>, LogError> {
        let err = |problem| LogError::at(&at, problem);
        let line: Line<A::Msg, A::Step, A> = serde_json::from_str(text).map_err(|e| {
            let message = json_message(&e);
            err(match e.classify() {
                serde_json::error::Category::Data => LogProblem::BadValue(message),
                _ => LogProblem::Malformed(message),
            })
        })?;
        let kind = line.kind;
        if let Some((field, _)) = line.present().into_iter().find(|(f, there)| *there && !kind.fields().contains(f)) {
            return Err(err(LogProblem::ExtraField { kind: kind.name(), field }));
        }
        let process = *self
            .processes
            .get(line.process.as_str())
            .ok_or_else(|| err(LogProblem::UnknownProcess(line.process.clone())))?;
        let channel = |outgoing: bool| -> Result<ChannelId, LogProblem> {
            let name = need(kind, "channel", line.channel.as_deref())?;
            self.channel(process, name, outgoing)
        };
        let snapshot = || need(kind, "snapshot", line.snapshot).map(SnapshotId);
        let body = match kind {
            Kind::Send => Body::Send {
                channel: channel(true).map_err(err)?,
                msg: need(kind, "msg", line.msg).map_err(err)?,
                payload: need(kind, "payload", line.payload).map_err(err)?,
            },
            Kind::Receive => {
                Body::Receive { channel: channel(false).map_err(err)?, msg: need(kind, "msg", line.msg).map_err(err)? }
            }
            Kind::Loss => {
                Body::Loss { channel: channel(false).map_err(err)?, msg: need(kind, "msg", line.msg).map_err(err)? }
            }
            Kind::Internal => Body::Internal { step: need(kind, "step", line.step).map_err(err)? },
            Kind::Record => {
                let snapshot = snapshot().map_err(err)?;
                let initiated = need(kind, "initiated", line.initiated).map_err(err)?;
                if line.state.is_none() {
                    return Err(err(LogProblem::MissingField { kind: kind.name(), field: "state" }));
                }
                Body::Record { snapshot, initiated }
            }
            Kind::MarkerSend => {
                Body::MarkerSend { snapshot: snapshot().map_err(err)?, channel: channel(true).map_err(err)? }
            }
            Kind::MarkerReceive => Body::MarkerReceive {
                snapshot: snapshot().map_err(err)?,
                channel: channel(false).map_err(err)?,
                recorded: need(kind, "recorded", line.recorded).map_err(err)?,
            },
        };
        Ok(Parsed { at, process, seq: line.seq, body, state: line.state })
    }
}

/// Reads log files (one per process, or any split of the events among files) against
/// `topology`, with `initial[i]` the initial state of process `i`: the run in a causal order,
/// the line of every event, and the snapshots the logs claim. Errors name the file and line.
pub fn read_logs<A: LogApp>(topology: &Topology, initial: Vec<A>, files: &[PathBuf]) -> Result<Logs<A>, LogError> {
    let mut texts = Vec::with_capacity(files.len());
    for path in files {
        let file = path.display().to_string();
        let text =
            std::fs::read_to_string(path).map_err(|e| LogError::new(file.clone(), 0, LogProblem::Io(e.to_string())))?;
        texts.push((file, text));
    }
    parse_logs(topology, initial, &texts)
}

/// [`read_logs`] on texts already read: `(file name, text)` pairs.
pub fn parse_logs<A: LogApp>(
    topology: &Topology,
    initial: Vec<A>,
    texts: &[(String, String)],
) -> Result<Logs<A>, LogError> {
    let file_of = |i: usize| texts.get(i).map_or_else(|| "<logs>".to_string(), |(f, _)| f.clone());
    if initial.len() != topology.len() {
        let problem = LogProblem::InitialStates { expected: topology.len(), got: initial.len() };
        return Err(LogError::new(file_of(0), 0, problem));
    }
    let resolver = Resolver::new(topology);
    let name = |p: ProcessId| topology.name(p).to_string();
    // Every line, by process.
    let mut by_process: Vec<Vec<Parsed<A>>> = (0..topology.len()).map(|_| Vec::new()).collect();
    for (file, text) in texts {
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let parsed = resolver.parse::<A>(line, Location { file: file.clone(), line: i + 1 })?;
            by_process[parsed.process.index()].push(parsed);
        }
    }
    // Each process's events in seq order: 0, 1, 2, ...
    for (p, events) in by_process.iter_mut().enumerate() {
        events.sort_by_key(|e| e.seq);
        for i in 0..events.len() {
            let (seq, expected) = (events[i].seq, i as u64);
            if seq == expected {
                continue;
            }
            let process = name(ProcessId(p as u16));
            let problem = if i > 0 && events[i - 1].seq == seq {
                LogProblem::SeqRepeated { process, seq, first: events[i - 1].at.clone() }
            } else {
                LogProblem::SeqGap { process, expected, found: seq }
            };
            return Err(LogError::at(&events[i].at, problem));
        }
    }
    // The sends: each id once; the messages get the ids the drivers give them.
    struct Sent<'a> {
        id: MsgId,
        channel: ChannelId,
        at: &'a Location,
    }
    let mut sent: HashMap<&LogId, Sent<'_>> = HashMap::new();
    let mut markers_sent: HashMap<(SnapshotId, ChannelId), (usize, &Location)> = HashMap::new();
    for (p, events) in by_process.iter().enumerate() {
        let mut count = 0;
        for e in events {
            match &e.body {
                Body::Send { channel, msg, .. } => {
                    if let Some(first) = sent.get(msg) {
                        let problem = LogProblem::DuplicateId { id: msg.clone(), first: first.at.clone() };
                        return Err(LogError::at(&e.at, problem));
                    }
                    let id = MsgId::new(ProcessId(p as u16), count);
                    count += 1;
                    sent.insert(msg, Sent { id, channel: *channel, at: &e.at });
                }
                Body::MarkerSend { snapshot, channel } => {
                    markers_sent.entry((*snapshot, *channel)).or_insert((0, &e.at)).0 += 1;
                }
                _ => {}
            }
        }
    }
    // The events, with receipts, losses and records resolved.
    let mut gone: HashMap<&LogId, &Location> = HashMap::new();
    let mut markers_received: HashMap<(SnapshotId, ChannelId), usize> = HashMap::new();
    let mut logs: Vec<Vec<Event<A>>> = Vec::with_capacity(by_process.len());
    let mut recorded_ids: HashMap<(usize, usize), Vec<MsgId>> = HashMap::new();
    for (p, events) in by_process.iter().enumerate() {
        let mut log = Vec::with_capacity(events.len());
        for (index, e) in events.iter().enumerate() {
            let err = |problem| LogError::at(&e.at, problem);
            let kind = match &e.body {
                Body::Send { channel, msg, payload } => {
                    EventKind::Send { channel: *channel, id: sent[msg].id, msg: (*payload).clone() }
                }
                Body::Receive { channel, msg } | Body::Loss { channel, msg } => {
                    let what = if matches!(e.body, Body::Receive { .. }) { "receipt" } else { "loss" };
                    let send = sent.get(msg).ok_or_else(|| err(LogProblem::NeverSent { what, id: msg.clone() }))?;
                    if send.channel != *channel {
                        return Err(err(LogProblem::OtherChannel {
                            what,
                            id: msg.clone(),
                            channel: topology.channel_label(*channel),
                            sent_on: topology.channel_label(send.channel),
                            sent_at: send.at.clone(),
                        }));
                    }
                    if let Some(first) = gone.insert(msg, &e.at) {
                        return Err(err(LogProblem::ReceivedTwice { id: msg.clone(), first: first.clone() }));
                    }
                    match e.body {
                        Body::Receive { .. } => EventKind::Receive { channel: *channel, id: send.id },
                        _ => EventKind::Lost { channel: *channel, id: send.id },
                    }
                }
                Body::Internal { step } => EventKind::Internal { step: step.clone() },
                Body::Record { snapshot, initiated } => {
                    EventKind::Record { snapshot: *snapshot, initiated: *initiated }
                }
                Body::MarkerSend { snapshot, channel } => {
                    EventKind::MarkerSend { snapshot: *snapshot, channel: *channel }
                }
                Body::MarkerReceive { snapshot, channel, recorded } => {
                    let received = markers_received.entry((*snapshot, *channel)).or_default();
                    *received += 1;
                    if markers_sent.get(&(*snapshot, *channel)).map_or(0, |(n, _)| *n) < *received {
                        let channel = topology.channel_label(*channel);
                        return Err(err(LogProblem::MarkerNeverSent { snapshot: *snapshot, channel }));
                    }
                    let ids = recorded
                        .iter()
                        .map(|m| {
                            sent.get(m).map(|s| s.id).ok_or_else(|| LogProblem::RecordedNeverSent { id: m.clone() })
                        })
                        .collect::<Result<Vec<_>, _>>()
                        .map_err(err)?;
                    recorded_ids.insert((p, index), ids);
                    EventKind::MarkerReceive { snapshot: *snapshot, channel: *channel }
                }
            };
            log.push(Event { process: e.process, kind, state: e.state.clone() });
        }
        logs.push(log);
    }
    let location = |(p, index): (usize, usize)| by_process[p][index].at.clone();
    let trace = Trace::merge(initial, logs).map_err(|e| match e {
        TraceError::Unmergeable { at, what, .. } => {
            let waiting = &by_process[at.0][at.1];
            let sent_at = match &waiting.body {
                Body::Receive { msg, .. } | Body::Loss { msg, .. } => sent.get(msg).map(|s| s.at.clone()),
                Body::MarkerReceive { snapshot, channel, .. } => {
                    markers_sent.get(&(*snapshot, *channel)).map(|(_, at)| (*at).clone())
                }
                _ => None,
            };
            LogError::at(&waiting.at, LogProblem::Cycle { what, sent_at })
        }
        other => LogError::new(file_of(0), 0, other.into()),
    })?;
    // Where each event of the merged trace came from: each process's events keep their order.
    let mut next = vec![0usize; topology.len()];
    let origins: Vec<(usize, usize)> = trace
        .events
        .iter()
        .map(|e| {
            let p = e.process.index();
            next[p] += 1;
            (p, next[p] - 1)
        })
        .collect();
    let locations: Vec<Location> = origins.iter().map(|&o| location(o)).collect();
    trace.validate(topology).map_err(|e| {
        let position = match &e {
            TraceError::NotSent { position, .. }
            | TraceError::MarkerNotSent { position, .. }
            | TraceError::Duplicate { position, .. }
            | TraceError::DuplicateId { position, .. }
            | TraceError::WrongChannel { position, .. }
            | TraceError::UnknownProcess { position, .. } => Some(*position),
            _ => None,
        };
        match position.and_then(|p| locations.get(p)) {
            Some(at) => LogError::at(at, e.into()),
            None => LogError::new(file_of(0), 0, e.into()),
        }
    })?;
    let claims = claims(topology, &trace, &origins, &recorded_ids);
    let names = sent.iter().map(|(log_id, s)| (s.id, (*log_id).clone())).collect();
    Ok(Logs { trace, locations, claims, names })
}

/// The snapshots the logs claim: for every snapshot id mentioned, the records and closes, and
/// the global snapshot when it is complete.
fn claims<A: Application>(
    topology: &Topology,
    trace: &Trace<A>,
    origins: &[(usize, usize)],
    recorded_ids: &HashMap<(usize, usize), Vec<MsgId>>,
) -> Vec<Claim<A>> {
    let sends: HashMap<MsgId, (ChannelId, &A::Msg)> = trace
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Send { channel, id, msg } => Some((*id, (*channel, msg))),
            _ => None,
        })
        .collect();
    let mut claims: BTreeMap<SnapshotId, Claim<A>> = BTreeMap::new();
    let mut records: HashMap<(SnapshotId, ChannelId), Vec<MsgId>> = HashMap::new();
    for (position, e) in trace.events.iter().enumerate() {
        let (EventKind::Record { snapshot, .. }
        | EventKind::MarkerSend { snapshot, .. }
        | EventKind::MarkerReceive { snapshot, .. }) = e.kind
        else {
            continue;
        };
        let claim = claims.entry(snapshot).or_insert_with(|| Claim {
            id: snapshot,
            snapshot: None,
            records: vec![None; topology.len()],
            closes: vec![None; topology.channels().len()],
            anomalies: Vec::new(),
        });
        let name = topology.name(e.process);
        match e.kind {
            EventKind::Record { .. } => match claim.records[e.process.index()] {
                Some(_) => claim.anomalies.push(Anomaly {
                    position,
                    message: format!("{name} records its state for snapshot {snapshot} a second time"),
                }),
                None => claim.records[e.process.index()] = Some(position),
            },
            EventKind::MarkerReceive { channel, .. } => {
                let label = topology.channel_label(channel);
                if claim.closes[channel.index()].is_some() {
                    claim.anomalies.push(Anomaly {
                        position,
                        message: format!("the record of {label} for snapshot {snapshot} is closed a second time"),
                    });
                    continue;
                }
                claim.closes[channel.index()] = Some(position);
                let ids = recorded_ids.get(&origins[position]).cloned().unwrap_or_default();
                for id in &ids {
                    match sends.get(id) {
                        Some((sent_on, _)) if *sent_on != channel => claim.anomalies.push(Anomaly {
                            position,
                            message: format!(
                                "the record of {label} claims message {id}, which was sent on {}",
                                topology.channel_label(*sent_on)
                            ),
                        }),
                        _ => {}
                    }
                }
                records.insert((snapshot, channel), ids);
            }
            _ => {}
        }
    }
    for claim in claims.values_mut() {
        let (Some(states), Some(_)) = (
            claim
                .records
                .iter()
                .map(|r| r.and_then(|position| trace.events[position].state.clone()))
                .collect::<Option<Vec<A>>>(),
            claim.closes.iter().copied().collect::<Option<Vec<usize>>>(),
        ) else {
            continue;
        };
        let channels = (0..topology.channels().len())
            .map(|c| {
                let ids = records.get(&(claim.id, ChannelId(c as u32)));
                ids.into_iter().flatten().filter_map(|id| sends.get(id).map(|(_, msg)| (*msg).clone())).collect()
            })
            .collect();
        claim.snapshot = Some(GlobalSnapshot { id: claim.id, state: GlobalState { processes: states, channels } });
    }
    claims.into_values().collect()
}

/// Why a run could not be written as logs.
#[derive(Debug, Error)]
pub enum WriteError {
    /// A file or the directory could not be written.
    #[error("cannot write {path}: {message}")]
    Io {
        /// The path.
        path: String,
        /// The error.
        message: String,
    },
    /// A process name that cannot be a file name (or a `.top` node id).
    #[error("process name {0:?} cannot name a log file and a .top node")]
    BadName(String),
    /// Not one token count per process.
    #[error("{got} token counts for {expected} processes")]
    Tokens {
        /// Processes.
        expected: usize,
        /// Counts given.
        got: usize,
    },
    /// The run was not traced (the runtime's `Options::trace` was off).
    #[error("the run was not traced: there are no events to write")]
    Untraced,
    /// The trace is malformed.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// A snapshot not shaped like the topology.
    #[error("snapshot {0} does not have one state per process and one record per channel")]
    Shape(SnapshotId),
    /// An assembled snapshot whose channel record no marker receipt in the trace closed.
    #[error("snapshot {snapshot}: the record of {channel} is assembled, but the trace has no receipt of its marker")]
    NoClose {
        /// The snapshot.
        snapshot: SnapshotId,
        /// The channel.
        channel: String,
    },
    /// An assembled snapshot holding a message never sent on its channel.
    #[error("snapshot {snapshot}: the record of {channel} holds {message}, which was never sent on it")]
    Unmatched {
        /// The snapshot.
        snapshot: SnapshotId,
        /// The channel.
        channel: String,
        /// The message, printed.
        message: String,
    },
    /// A record event with no state to write.
    #[error("event {position}: a record with no state")]
    NoState {
        /// Its position in the trace.
        position: usize,
    },
    /// A state or message serde could not write.
    #[error("cannot write event {position} as JSON: {message}")]
    Json {
        /// Its position in the trace.
        position: usize,
        /// The error.
        message: String,
    },
}

/// Writes a run as `DIR/<process>.jsonl` (one file per process, every process gets one) and
/// `DIR/topology.top` (with `tokens[i]` for process `i`), creating `DIR` if needed. Returns the
/// log files, in process order. See the module docs for what the lines carry.
pub fn write_logs<A: LogApp>(
    dir: &Path,
    topology: &Topology,
    tokens: &[u32],
    trace: &Trace<A>,
    snapshots: &[GlobalSnapshot<A>],
) -> Result<Vec<PathBuf>, WriteError> {
    if tokens.len() != topology.len() {
        return Err(WriteError::Tokens { expected: topology.len(), got: tokens.len() });
    }
    for name in topology.names() {
        let bad = name.is_empty() || name == "." || name == ".." || name.contains(['/', '\\']);
        if bad {
            return Err(WriteError::BadName(name.clone()));
        }
    }
    let top = super::top::write(topology, tokens).ok_or_else(|| {
        let bad =
            topology.names().iter().find(|n| n.starts_with('#') || n.contains(char::is_whitespace) || n.contains("->"));
        WriteError::BadName(bad.cloned().unwrap_or_default())
    })?;
    let lines = to_lines(topology, trace, snapshots)?;
    let io =
        |path: &Path, e: std::io::Error| WriteError::Io { path: path.display().to_string(), message: e.to_string() };
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let path = dir.join("topology.top");
    std::fs::write(&path, top).map_err(|e| io(&path, e))?;
    let mut files = Vec::with_capacity(lines.len());
    for (p, lines) in topology.processes().zip(lines) {
        let path = dir.join(format!("{}.jsonl", topology.name(p)));
        let mut text = lines.join("\n");
        if !text.is_empty() {
            text.push('\n');
        }
        std::fs::write(&path, text).map_err(|e| io(&path, e))?;
        files.push(path);
    }
    Ok(files)
}

/// The lines of each process's log (by process index), as [`write_logs`] writes them.
pub(crate) fn to_lines<A: LogApp>(
    topology: &Topology,
    trace: &Trace<A>,
    snapshots: &[GlobalSnapshot<A>],
) -> Result<Vec<Vec<String>>, WriteError> {
    trace.validate(topology)?;
    let events = &trace.events;
    let mut first_record: HashMap<(SnapshotId, ProcessId), usize> = HashMap::new();
    let mut first_close: HashMap<(SnapshotId, ChannelId), usize> = HashMap::new();
    let mut sends: HashMap<MsgId, &A::Msg> = HashMap::new();
    for (position, e) in events.iter().enumerate() {
        match &e.kind {
            EventKind::Record { snapshot, .. } => {
                first_record.entry((*snapshot, e.process)).or_insert(position);
            }
            EventKind::MarkerReceive { snapshot, channel } => {
                first_close.entry((*snapshot, *channel)).or_insert(position);
            }
            EventKind::Send { id, msg, .. } => {
                sends.insert(*id, msg);
            }
            _ => {}
        }
    }
    // The receipts on `channel` at its receiver after its record of `snapshot`, before `end`.
    let window = |snapshot: SnapshotId, channel: ChannelId, end: usize| -> Vec<MsgId> {
        let receiver = topology.channel(channel).to;
        let start = first_record.get(&(snapshot, receiver)).map_or(end, |&r| r + 1);
        events[start.min(end)..end]
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::Receive { channel: c, id } if c == channel => Some(id),
                _ => None,
            })
            .collect()
    };
    // What each assembled snapshot claims: the recorded states, and the records as message ids.
    let mut states: HashMap<(SnapshotId, ProcessId), &A> = HashMap::new();
    let mut claimed: HashMap<(SnapshotId, ChannelId), Vec<MsgId>> = HashMap::new();
    for s in snapshots {
        if s.state.processes.len() != topology.len() || s.state.channels.len() != topology.channels().len() {
            return Err(WriteError::Shape(s.id));
        }
        for (p, state) in topology.processes().zip(&s.state.processes) {
            states.insert((s.id, p), state);
        }
        for (c, record) in s.state.channels.iter().enumerate() {
            let channel = ChannelId(c as u32);
            let label = || topology.channel_label(channel);
            let Some(&close) = first_close.get(&(s.id, channel)) else {
                return Err(WriteError::NoClose { snapshot: s.id, channel: label() });
            };
            let candidates = window(s.id, channel, close);
            let all_sent: Vec<MsgId> = events
                .iter()
                .filter_map(|e| match e.kind {
                    EventKind::Send { channel: c, id, .. } if c == channel => Some(id),
                    _ => None,
                })
                .collect();
            let mut used: Vec<MsgId> = Vec::with_capacity(record.len());
            for message in record {
                let matches = |id: &&MsgId| sends.get(*id).is_some_and(|m| *m == message);
                let fresh = |id: &&MsgId| !used.contains(*id);
                let id = candidates
                    .iter()
                    .filter(fresh)
                    .find(matches)
                    .or_else(|| all_sent.iter().filter(fresh).find(matches))
                    .or_else(|| all_sent.iter().find(matches))
                    .copied()
                    .ok_or_else(|| WriteError::Unmatched {
                        snapshot: s.id,
                        channel: label(),
                        message: format!("{message:?}"),
                    })?;
                used.push(id);
            }
            claimed.insert((s.id, channel), used);
        }
    }
    let mut lines: Vec<Vec<String>> = vec![Vec::new(); topology.len()];
    for (position, e) in events.iter().enumerate() {
        let out = &mut lines[e.process.index()];
        let spell = |id: MsgId| LogId(id.to_string());
        let mut line: Line<&A::Msg, &A::Step, &A> = Line {
            process: topology.name(e.process).to_string(),
            seq: out.len() as u64,
            kind: Kind::Internal,
            snapshot: None,
            channel: None,
            msg: None,
            payload: None,
            step: None,
            initiated: None,
            recorded: None,
            state: e.state.as_ref(),
        };
        match &e.kind {
            EventKind::Send { channel, id, msg } => {
                line.kind = Kind::Send;
                line.channel = Some(topology.channel_label(*channel));
                line.msg = Some(spell(*id));
                line.payload = Some(msg);
            }
            EventKind::Receive { channel, id } | EventKind::Lost { channel, id } => {
                line.kind = if matches!(e.kind, EventKind::Receive { .. }) { Kind::Receive } else { Kind::Loss };
                line.channel = Some(topology.channel_label(*channel));
                line.msg = Some(spell(*id));
            }
            EventKind::Internal { step } => line.step = Some(step),
            EventKind::Record { snapshot, initiated } => {
                line.kind = Kind::Record;
                line.snapshot = Some(snapshot.0);
                line.initiated = Some(*initiated);
                let first = first_record.get(&(*snapshot, e.process)) == Some(&position);
                if let Some(state) = states.get(&(*snapshot, e.process)).filter(|_| first) {
                    line.state = Some(*state);
                }
                if line.state.is_none() {
                    return Err(WriteError::NoState { position });
                }
            }
            EventKind::MarkerSend { snapshot, channel } => {
                line.kind = Kind::MarkerSend;
                line.snapshot = Some(snapshot.0);
                line.channel = Some(topology.channel_label(*channel));
            }
            EventKind::MarkerReceive { snapshot, channel } => {
                line.kind = Kind::MarkerReceive;
                line.snapshot = Some(snapshot.0);
                line.channel = Some(topology.channel_label(*channel));
                let first = first_close.get(&(*snapshot, *channel)) == Some(&position);
                let ids = match claimed.get(&(*snapshot, *channel)).filter(|_| first) {
                    Some(ids) => ids.clone(),
                    None => window(*snapshot, *channel, position),
                };
                line.recorded = Some(ids.into_iter().map(spell).collect());
            }
        }
        let text = serde_json::to_string(&line).map_err(|e| WriteError::Json { position, message: e.to_string() })?;
        out.push(text);
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apps::bank::{Bank, Jars, Sale};

    fn topology() -> Topology {
        Topology::complete(2).unwrap()
    }

    fn read(texts: &[(&str, &str)]) -> Result<Logs<Bank>, LogError> {
        let texts: Vec<(String, String)> = texts.iter().map(|(f, t)| (f.to_string(), t.to_string())).collect();
        parse_logs(&topology(), vec![Bank::new(10), Bank::new(10)], &texts)
    }

    fn problem(texts: &[(&str, &str)]) -> (String, usize, LogProblem) {
        let e = read(texts).unwrap_err();
        let at = if e.line == 0 { format!("{}:", e.file) } else { format!("{}:{}:", e.file, e.line) };
        assert!(e.to_string().starts_with(&at), "{e}");
        (e.file, e.line, *e.problem)
    }

    const P0: &str = r#"{"process":"P0","seq":0,"kind":"send","channel":"P0->P1","msg":7,"payload":3,"state":{"jars":7,"sold":0}}
{"process":"P0","seq":1,"kind":"record","snapshot":0,"initiated":true,"state":{"jars":7,"sold":0}}
{"process":"P0","seq":2,"kind":"marker-send","snapshot":0,"channel":"P0->P1"}

{"process":"P0","seq":3,"kind":"marker-receive","snapshot":0,"channel":"P1->P0","recorded":[]}
{"process":"P0","seq":4,"kind":"internal","step":2,"state":{"jars":5,"sold":2}}
"#;
    const P1: &str = r#"{"process":"P1","seq":1,"kind":"record","snapshot":0,"initiated":false,"state":{"jars":10,"sold":0}}
{"process":"P1","seq":0,"kind":"marker-receive","snapshot":0,"channel":"P0->P1","recorded":["7"]}
{"process":"P1","seq":2,"kind":"marker-send","snapshot":0,"channel":"P1->P0"}
{"process":"P1","seq":3,"kind":"receive","channel":"P0->P1","msg":"7"}
"#;

    #[test]
    fn reads_a_run_in_causal_order_and_assembles_its_snapshot() {
        let logs = read(&[("a.jsonl", P0), ("b.jsonl", P1)]).unwrap();
        let t = topology();
        let (c01, c10) = (t.channel_between(ProcessId(0), ProcessId(1)).unwrap(), ChannelId(1));
        assert_eq!(t.channel_label(c10), "P1->P0");
        let id = MsgId::new(ProcessId(0), 0);
        let kinds: Vec<_> = logs.trace.events.iter().map(|e| (e.process.0, e.kind.clone())).collect();
        let s = SnapshotId(0);
        assert_eq!(
            kinds,
            vec![
                (0, EventKind::Send { channel: c01, id, msg: Jars(3) }),
                (0, EventKind::Record { snapshot: s, initiated: true }),
                (0, EventKind::MarkerSend { snapshot: s, channel: c01 }),
                (1, EventKind::MarkerReceive { snapshot: s, channel: c01 }),
                (1, EventKind::Record { snapshot: s, initiated: false }),
                (1, EventKind::MarkerSend { snapshot: s, channel: c10 }),
                (1, EventKind::Receive { channel: c01, id }),
                (0, EventKind::MarkerReceive { snapshot: s, channel: c10 }),
                (0, EventKind::Internal { step: Sale(2) }),
            ]
        );
        let lines: Vec<String> = logs.locations.iter().map(ToString::to_string).collect();
        assert_eq!(lines[..4], ["a.jsonl:1", "a.jsonl:2", "a.jsonl:3", "b.jsonl:2"]);
        assert_eq!(lines[7..], ["a.jsonl:5", "a.jsonl:6"]);
        assert_eq!(logs.trace.events[2].state, None);
        assert_eq!(logs.names[&id], LogId("7".into()));
        assert_eq!(logs.claims.len(), 1);
        let claim = &logs.claims[0];
        assert_eq!((claim.records.clone(), claim.closes.clone()), (vec![Some(1), Some(4)], vec![Some(3), Some(7)]));
        let snapshot = claim.snapshot.clone().unwrap();
        assert_eq!(snapshot.state.processes, vec![Bank::new(7), Bank::new(10)]);
        assert_eq!(snapshot.state.channels, vec![vec![Jars(3)], vec![]]);
        assert!(claim.anomalies.is_empty());
        let report = crate::check::check(&t, &logs.trace, &snapshot).unwrap();
        assert_eq!(report.violations, vec![]);
    }

    #[test]
    fn bad_lines_are_named_by_file_and_line() {
        let bad = |line: &str| problem(&[("a.jsonl", P0), ("b.jsonl", &format!("{P1}{line}\n"))]);
        let (file, line, p) = bad("{\"process\":\"P1\",");
        assert_eq!((file.as_str(), line), ("b.jsonl", 5));
        assert!(matches!(p, LogProblem::Malformed(_)), "{p}");
        let (_, _, p) = bad(r#"{"process":"P1","seq":4,"kind":"teleport"}"#);
        assert!(p.to_string().contains("unknown variant `teleport`"), "{p}");
        let (_, _, p) = bad(r#"{"process":"P1","seq":4,"kind":"internal","step":1,"colour":"red"}"#);
        assert!(p.to_string().contains("unknown field `colour`"), "{p}");
        assert_eq!(
            bad(r#"{"process":"P1","seq":4,"kind":"internal","step":1,"msg":3}"#).2,
            LogProblem::ExtraField { kind: "internal", field: "msg" }
        );
        assert_eq!(
            bad(r#"{"process":"P1","seq":4,"kind":"send","channel":"P1->P0","payload":1}"#).2,
            LogProblem::MissingField { kind: "send", field: "msg" }
        );
        assert_eq!(
            bad(r#"{"process":"P1","seq":4,"kind":"record","snapshot":1,"initiated":true}"#).2,
            LogProblem::MissingField { kind: "record", field: "state" }
        );
        assert_eq!(
            bad(r#"{"process":"P7","seq":4,"kind":"internal","step":1}"#).2,
            LogProblem::UnknownProcess("P7".into())
        );
        assert_eq!(
            bad(r#"{"process":"P1","seq":4,"kind":"send","channel":"P1->P1","msg":"x","payload":1}"#).2,
            LogProblem::UnknownChannel("P1->P1".into())
        );
        assert_eq!(
            bad(r#"{"process":"P1","seq":4,"kind":"send","channel":"P0->P1","msg":"x","payload":1}"#).2,
            LogProblem::WrongEnd { process: "P1".into(), channel: "P0->P1".into(), end: "sender" }
        );
        assert_eq!(
            bad(r#"{"process":"P1","seq":5,"kind":"internal","step":1}"#).2,
            LogProblem::SeqGap { process: "P1".into(), expected: 4, found: 5 }
        );
        let first = Location { file: "b.jsonl".into(), line: 4 };
        assert_eq!(
            bad(r#"{"process":"P1","seq":3,"kind":"internal","step":1}"#),
            ("b.jsonl".into(), 5, LogProblem::SeqRepeated { process: "P1".into(), seq: 3, first })
        );
        assert_eq!(
            bad(r#"{"process":"P1","seq":4,"kind":"receive","channel":"P0->P1","msg":"8"}"#).2,
            LogProblem::NeverSent { what: "receipt", id: LogId("8".into()) }
        );
        let first = Location { file: "b.jsonl".into(), line: 4 };
        assert_eq!(
            bad(r#"{"process":"P1","seq":4,"kind":"loss","channel":"P0->P1","msg":"7"}"#).2,
            LogProblem::ReceivedTwice { id: LogId("7".into()), first }
        );
        let first = Location { file: "a.jsonl".into(), line: 1 };
        assert_eq!(
            bad(r#"{"process":"P1","seq":4,"kind":"send","channel":"P1->P0","msg":7,"payload":1}"#).2,
            LogProblem::DuplicateId { id: LogId("7".into()), first }
        );
        assert_eq!(
            bad(r#"{"process":"P1","seq":4,"kind":"marker-receive","snapshot":1,"channel":"P0->P1","recorded":[]}"#).2,
            LogProblem::MarkerNeverSent { snapshot: SnapshotId(1), channel: "P0->P1".into() }
        );
        let (_, _, p) = bad(r#"{"process":"P1","seq":4,"kind":"receive","channel":"P0->P1","msg":-1}"#);
        assert!(p.to_string().contains("a string or a non-negative integer"), "{p}");
    }

    #[test]
    fn a_recorded_id_never_sent_and_a_cycle_are_refused() {
        let p1 = P1.replace(r#""recorded":["7"]"#, r#""recorded":["nine"]"#);
        assert_eq!(
            problem(&[("a.jsonl", P0), ("b.jsonl", &p1)]),
            ("b.jsonl".into(), 2, LogProblem::RecordedNeverSent { id: LogId("nine".into()) })
        );
        // P0 receives P1's message before sending its own; P1 receives P0's before sending.
        let a = r#"{"process":"P0","seq":0,"kind":"receive","channel":"P1->P0","msg":"b"}
{"process":"P0","seq":1,"kind":"send","channel":"P0->P1","msg":"a","payload":1}"#;
        let b = r#"{"process":"P1","seq":0,"kind":"receive","channel":"P0->P1","msg":"a"}
{"process":"P1","seq":1,"kind":"send","channel":"P1->P0","msg":"b","payload":1}"#;
        let (file, line, p) = problem(&[("a.jsonl", a), ("b.jsonl", b)]);
        assert_eq!((file.as_str(), line), ("a.jsonl", 1));
        let sent_at = Some(Location { file: "b.jsonl".into(), line: 2 });
        assert_eq!(p, LogProblem::Cycle { what: format!("message {}", MsgId::new(ProcessId(1), 0)), sent_at });
    }

    #[test]
    fn anomalies_and_incomplete_snapshots() {
        // P1 never closes P0->P1 in this log: the snapshot is not assembled.
        let p1: String = P1.lines().filter(|l| !l.contains("\"seq\":0")).collect::<Vec<_>>().join("\n");
        let p1 =
            p1.replace("\"seq\":1", "\"seq\":0").replace("\"seq\":2", "\"seq\":1").replace("\"seq\":3", "\"seq\":2");
        let logs = read(&[("a.jsonl", P0), ("b.jsonl", &p1)]).unwrap();
        assert_eq!(logs.claims[0].snapshot, None);
        assert_eq!(logs.claims[0].closes[0], None);
        // A record claiming a message of another channel.
        let p0 = P0.replace(r#""recorded":[]"#, r#""recorded":["7"]"#);
        let logs = read(&[("a.jsonl", &p0), ("b.jsonl", P1)]).unwrap();
        let anomalies = &logs.claims[0].anomalies;
        assert_eq!(anomalies.len(), 1);
        assert!(anomalies[0].message.contains("the record of P1->P0 claims message m0.0, which was sent on P0->P1"));
        assert_eq!(logs.locations[anomalies[0].position].to_string(), "a.jsonl:5");
    }

    #[test]
    fn written_lines_read_back_to_the_same_run() {
        let logs = read(&[("a.jsonl", P0), ("b.jsonl", P1)]).unwrap();
        let snapshot = logs.claims[0].snapshot.clone().unwrap();
        let lines = to_lines(&topology(), &logs.trace, &[snapshot]).unwrap();
        assert!(lines[1][0].contains(r#""recorded":["m0.0"]"#), "{}", lines[1][0]);
        let texts: Vec<(String, String)> =
            lines.iter().enumerate().map(|(p, l)| (format!("P{p}.jsonl"), l.join("\n"))).collect();
        let again: Logs<Bank> = parse_logs(&topology(), vec![Bank::new(10), Bank::new(10)], &texts).unwrap();
        assert_eq!(again.trace, logs.trace);
        assert_eq!(again.claims[0].snapshot, logs.claims[0].snapshot);
    }
}
