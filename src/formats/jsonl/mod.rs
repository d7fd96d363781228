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

mod claims;
mod line;
mod logs;
mod parsed;
mod read;
#[cfg(test)]
mod tests;
mod write;

pub use line::{Kind, Line, Location, LogApp, LogId};
pub use logs::{Anomaly, Claim, Damage, LogError, LogProblem, Logs, States};
pub use read::{parse_logs, read_logs};
pub use write::{write_logs, WriteError};
