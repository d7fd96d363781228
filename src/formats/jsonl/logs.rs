//! What reading logs gives: the run, the snapshots they claim, the damage; and why logs are
//! refused.

use std::collections::HashMap;

use thiserror::Error;

use super::line::{Location, LogId};
use super::parsed::Parsed;
use crate::check::{MsgId, Trace, TraceError};
use crate::protocol::GlobalSnapshot;
use crate::protocol::ProcessId;
use crate::protocol::{Application, SnapshotId};

/// What is wrong with a line of the logs.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum LogProblem {
    /// The file could not be read.
    #[error("cannot read: {0}")]
    Io(String),
    /// A log file given twice (the first spelling).
    #[error("the same file is given twice (also as {0}): its events would be read twice")]
    GivenTwice(String),
    /// A line that is not UTF-8 text.
    #[error("not UTF-8 text: JSON lines are UTF-8")]
    NotUtf8,
    /// Not JSON.
    #[error("malformed JSON: {0}")]
    Malformed(String),
    /// JSON, but not an event: an unknown field or kind, a missing field, a wrong type.
    #[error("not an event: {0}")]
    BadValue(String),
    /// A field holding the application's data (`state`, `payload` or `step`) whose value the
    /// application the logs are read as does not take: `value`, kept so that whoever chose the
    /// application can say which one takes it.
    #[error("not an event: `{path}`: {message}")]
    AppValue {
        /// The field: `state`, `payload` or `step`.
        field: &'static str,
        /// Where in the line serde stopped (`state`, or a path inside it: `state.jars`).
        path: String,
        /// serde's message, with the column.
        message: String,
        /// The field's value as the line gives it.
        value: serde_json::Value,
    },
    /// A field the line's kind needs is missing.
    #[error("this {kind} line needs the field `{field}`")]
    MissingField {
        /// The kind.
        kind: &'static str,
        /// The field.
        field: &'static str,
    },
    /// A field the line's kind does not have.
    #[error("this {kind} line has no field `{field}`")]
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
    pub(super) fn new(file: String, line: usize, problem: LogProblem) -> Self {
        LogError { file, line, problem: Box::new(problem) }
    }

    pub(super) fn at(location: &Location, problem: LogProblem) -> Self {
        LogError::new(location.file.clone(), location.line, problem)
    }
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
    /// recorded state is compared with a state its process logged at the same point of its
    /// history (before it, with no send, receipt, loss or internal step between).
    Opaque {
        /// The state of a record that logs none.
        blank: A,
    },
}

/// Where the logs stop making sense: a file that ends mid-line, a process with no events, a
/// receipt of something its sender's log never sends. A dangling receipt is left out of the run,
/// and what depends on it is not judged: the snapshots whose cut or channel records it may
/// belong to, and with interpreted states its receiver's states after it ([`Logs::unknown`]).
/// Other snapshots a damaged log does not leave incomplete are judged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Damage {
    /// The process whose log is damaged (missing, cut short), when known.
    pub process: Option<ProcessId>,
    /// The line that shows it.
    pub at: Option<Location>,
    /// What is wrong, in the logs' names.
    pub message: String,
}

/// A non-initiator's `record` logged before the `marker-receive` that caused it, with an event
/// between them that cannot have happened between a marker's receipt and the record it causes
/// (a send, an internal step, another snapshot's record or marker, a receipt on the marker's own
/// channel): the logs do not tell on which side of that one atomic step the event happened, so
/// the snapshot is not judged. A logging error of the implementation (typically another thread's
/// line logged between the two), not a verdict on the algorithm.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mislogged {
    /// The process.
    pub process: ProcessId,
    /// The snapshot its record belongs to.
    pub snapshot: SnapshotId,
    /// The `record` line.
    pub record: Location,
    /// The `marker-receive` line that caused it.
    pub marker: Location,
    /// The first line between them that cannot be there.
    pub between: Location,
    /// What is wrong and how to fix it, in the logs' names.
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
    /// Logging errors: records logged apart from the marker receipts that caused them, by
    /// process.
    pub mislogged: Vec<Mislogged>,
    /// Each process's events read, and how many of them are in [`Logs::trace`] (all but its
    /// dangling receipts).
    pub kept: Vec<(usize, usize)>,
    /// Each process's log is damaged: missing, ending mid-line, or not holding a send that
    /// another log receives.
    pub damaged: Vec<bool>,
    /// Each process's receipts and losses of what no log sends (by index among its
    /// [`Logs::lines`]): left out of [`Logs::trace`].
    pub dangling: Vec<Vec<usize>>,
    /// With interpreted states, each process's first position in [`Logs::trace`] whose state is
    /// unknown: it follows the receipt of a message no log sends, whose content is unknown.
    pub unknown: Vec<Option<usize>>,
    /// Every event line read, each process's in its own order: also the dangling receipts left
    /// out of [`Logs::trace`].
    pub lines: Vec<Vec<Parsed<A>>>,
    /// Each event of [`Logs::trace`]: its process, and its index among that process's
    /// [`Logs::lines`].
    pub origins: Vec<(usize, usize)>,
}

impl<A: Application> Logs<A> {
    /// The line of the event at `position`.
    pub fn location(&self, position: usize) -> Option<&Location> {
        self.locations.get(position)
    }
}
