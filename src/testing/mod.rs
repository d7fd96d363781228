//! Judging your own implementation, execution by execution (cargo feature `testing`): a
//! [`Recorder`] your code calls at each event, and the library's judge — the one `model verify`
//! runs on logs — on what it recorded.
//!
//! An implementation of the marker algorithm with its own threads, channels and locks records
//! each event of each process through that process's [`ProcessRecorder`] (send, receive, loss,
//! internal step, record, marker sent, marker received with the channel's recorded message ids,
//! and one call for "the first marker of a snapshot, received on this channel, made the process
//! record"). When the execution is over, [`Recorder::judge`] gives the verdicts and findings
//! ([`Judgement`](crate::logs::Judgement)), and [`Recorder::assert_holds`] panics with them in the
//! logs' words unless every snapshot holds. An execution that recorded no snapshot, or whose
//! events cannot be judged, never passes.
//!
//! ```
//! use chandy_lamport::apps::json::{Amount, Balance};
//! use chandy_lamport::logs::Semantics;
//! use chandy_lamport::testing::Recorder;
//! use chandy_lamport::{ProcessId, SnapshotId, Topology};
//!
//! let (p0, p1) = (ProcessId(0), ProcessId(1));
//! let recorder = Recorder::new(&Topology::ring(2)?, vec![Balance(5), Balance(5)], Semantics::balance());
//! let (r0, r1) = (recorder.process(p0), recorder.process(p1));
//! let s = SnapshotId(0);
//! r0.record_initiated(s, Balance(5));
//! r0.marker_send(s, p1);
//! let m = r1.new_message_id();
//! r1.send(p0, &m, Amount(2), Balance(3)); // in flight when P0 recorded
//! r1.record_on_marker(s, p0, Balance(3));
//! r1.marker_send(s, p0);
//! r0.receive(p1, &m, Balance(7));
//! r0.marker_receive(s, p1, [&m]); // P0 recorded the 2 in transit
//! recorder.assert_holds();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Under `--cfg loom` and `--cfg shuttle` the module has helpers that run a scenario under
//! those tools' schedulers and judge every execution: `testing::loom::check` and
//! `testing::shuttle::{check_random, check_pct, replay}`. [`channel`] has FIFO channels that
//! record their own sends and receipts.
//!
//! # The recorder's lock is `std`'s, not the scheduler's
//!
//! Each process's events sit behind a [`std::sync::Mutex`], never loom's or shuttle's. Loom and
//! shuttle run every thread of an execution on one OS thread and switch only at their own
//! operations (a lock, a channel, an atomic); a recorder call holds its lock for a push into a
//! vector and reaches no such operation, so no switch can happen while it is held, no other
//! thread can find it taken, and it cannot deadlock an execution. Being invisible to the
//! scheduler, it adds no interleavings: the schedules explored are the implementation's own,
//! not the recorder's. Under plain `std` it is an ordinary, briefly held lock.
//!
//! The recorder therefore orders nothing: the order of a process's events is the order of its
//! calls, and the implementation decides it. A process with several threads must call the
//! recorder while holding whatever lock orders its events (the one that guards its state and
//! its snapshot bookkeeping): change the state or hand the message to its channel, record,
//! release. A call made after releasing that lock can be overtaken by another thread's event,
//! and the judge then reads, say, a send after the record that followed it.

pub mod channel;
#[cfg(loom)]
pub mod loom;
mod recorder;
#[cfg(all(shuttle, not(loom)))]
pub mod shuttle;
#[cfg(test)]
mod tests;
mod verdict;

pub use recorder::{ProcessRecorder, Recorder};
pub use verdict::{Expect, TestingError};
