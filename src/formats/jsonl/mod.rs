//! `.jsonl`: recorded runs as JSON lines, one event a line — the format in which any
//! implementation of the marker algorithm can hand its logs to the trace checker
//! (`model verify`), and in which this crate's runtime and simulator write theirs.
//!
//! # The format
//!
//! Each line is one JSON object: one event of one process. The logs of a run may come in any
//! number of files — typically one per process — with no global order: the reader puts each
//! process's events in its own order and rebuilds an order consistent with causality. Blank
//! lines are skipped; every other line must be an event.
//!
//! | field | on | value |
//! |---|---|---|
//! | `process` | every line | the process's name, as in the topology (`"P0"`) |
//! | `seq` | every line, or none of a process's | the event's number among its process's events: 0, 1, 2, … (a gap or a repeat is a bad log) |
//! | `time` | any line; every line of a process without `seq` | when the event happened by its process's clock: a number, or an RFC 3339 timestamp (`"2026-12-02T10:00:00.25Z"`); without `seq` it orders the process's events, strictly (a tie is a bad log) |
//! | `kind` | every line | `send`, `receive`, `loss`, `internal`, `record`, `marker-send` or `marker-receive` |
//! | `channel` | `send`, `receive`, `loss`, `marker-receive`; `marker-send` (optional) | the one-way channel, spelled `"FROM->TO"` with the two names as in the topology and no spaces (`"P0->P1"`); a `marker-send` without it is one on every outgoing channel |
//! | `msg` | `send`, `receive`, `loss` | the message's id: a string, or a non-negative integer (the same id as the string of its digits); unique among the run's sends |
//! | `payload` | `send` | the application message, as JSON (the bank's cart of 3 jars: `3`) |
//! | `step` | `internal` | the internal step, as JSON (the bank's sale of 2 jars: `2`) |
//! | `snapshot` | `record`; markers (optional) | the snapshot id, an integer. A `marker-send` without it belongs to the snapshot its process recorded last; a `marker-receive` without it to the snapshot of the marker sent k-th on its channel, when it is the k-th received there |
//! | `initiated` | `record` | `true` when the process initiated the snapshot, `false` when a marker made it record |
//! | `recorded` | `marker-receive` | the ids of the messages the process recorded for that channel, in the order it recorded them: the implementation's claim |
//! | `state` | any line; on `record` required unless states are opaque ([`States`]) | the process's application state right after the event, as JSON (the bank's `{"jars": 7, "sold": 0}`); on a `record` line, the state recorded |
//!
//! A field a line's kind does not use is an error, as is an unknown field. Sends are logged by
//! the sender, receipts by the receiver; a `loss` (a message stolen from its channel while in
//! transit) is logged by the channel's receiving process. Every `marker-receive` closes that
//! channel's record for its snapshot — the first marker a process receives for a snapshot makes
//! it record and closes the marker's channel with an empty record — so every `marker-receive`
//! carries `recorded` (`[]` for an empty record). A non-initiator's `record` may be logged just
//! after the `marker-receive` that caused it, or before it — with at most its own `marker-send`s
//! and receipts on other channels between (another thread's lines): the receipt is read as
//! happening at the record, one atomic step, and the receipts between as after it. Any other
//! event between the two (a send, an internal step, another snapshot's record or marker, a
//! receipt on the marker's own channel) cannot have happened between a marker's receipt and
//! the record it causes: that is a logging error ([`Mislogged`]), and the snapshot is not
//! judged. Log the record and the marker receipt as one atomic step. A snapshot whose every process logged a `record` and whose
//! every channel's record was closed is assembled from the logs: the recorded states of the
//! `record` lines, and the `recorded` ids resolved to the messages sent with them.
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
//! in a process's `seq`, a tie in its `time`, a process with both; two sends with one id; a
//! receipt or loss of a message sent on another channel, or received twice; and logs that admit
//! no causal order (a cycle: each process's next event waits for another's).
//!
//! Damage is no refusal ([`Damage`]): a file whose last line ends unfinished (a process killed
//! while writing), a process with no events, a receipt of a message or marker its sender's log
//! never sends. Such a dangling receipt is left out of the run, and only what depends on it is
//! not judged: a snapshot whose cut holds it (received before its receiver recorded) or whose
//! record of its channel may (received between the record and that channel's marker), and, with
//! interpreted states, its receiver's states after it (the message's content is unknown:
//! [`Logs::unknown`]). A snapshot incomplete in the run whose missing part belongs to a damaged
//! log is not judged either ([`Claim::unjudged`]); every other snapshot is.
//!
//! What each snapshot's lines claim ([`Claim`]: its records, the channel records closed and the
//! ids they claim) is read here; whether a correct run could claim it, and everything else the
//! theorem asks, is judged by [`crate::logs`]. The logged states are never taken as the truth:
//! the trace checker recomputes every state by the application's transitions.
//!
//! The order rebuilt is each process's own order, a receipt or loss after its message's send,
//! and the k-th receipt of a snapshot's marker on a channel after its k-th sending there (see
//! [`crate::check::Trace::merge`]). The messages get the ids this crate's drivers give them
//! ([`crate::check::MsgId::new`]: the sender and the send's number among its sends);
//! [`Logs::names`] keeps the logs' own spelling.
//!
//! # Writing
//!
//! [`write_logs`] writes a run of this crate's runtime or simulator as `DIR/<process>.jsonl`,
//! one file per process, and its topology as `DIR/topology.top` (the `.top` format, with each
//! process's tokens). Message ids are written as [`crate::check::MsgId`] prints them (`"m0.5"`: P0's sixth
//! send). Each `record` line carries the state the snapshot assembled by the driver holds for
//! that process, and the first `marker-receive` of each channel and snapshot the ids of that
//! snapshot's record of the channel. For a snapshot the driver never assembled (open at
//! shutdown, or broken by a fault variant), a `record` line carries the state logged with the
//! event, and a `marker-receive` the messages received on the channel between the record and
//! the marker; such a snapshot is incomplete in the logs too.

mod claims;
mod incremental;
mod line;
mod logs;
mod parsed;
mod read;
#[cfg(test)]
mod tests;
mod write;

pub(crate) use incremental::{Ev, EvBody, Id, Reader as EventReader};
pub use incremental::{NotClean, Source};
pub use line::{Kind, Line, Location, LogApp, LogId};
pub use logs::{Claim, Damage, LogError, LogProblem, Logs, Mislogged, States};
pub use parsed::{Body, Parsed};
pub use read::{parse_logs, read_logs};
pub use write::{write_logs, WriteError};
