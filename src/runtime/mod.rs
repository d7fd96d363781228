//! The threaded runtime: one OS thread per process, one FIFO inbox per process (so every
//! channel is FIFO), a collector thread that assembles global snapshots, and the core's marker
//! rules inside each process thread.
//!
//! Threads and channels come from the crate's `sync` shim, so loom and shuttle can run this very code.
//! Threads block only in `recv` (an idle process first does the work a fault variant deferred),
//! and shutdown is explicit: each process sends a flush on every outgoing channel and keeps
//! handling messages until a flush has arrived on every incoming channel, so no application
//! message is lost. Nothing is recorded on a process's behalf at shutdown, and a process that
//! has flushed no longer records on a marker (it would have to send markers after its flush): a
//! snapshot still open at shutdown is reported as incomplete, never assembled from fabricated
//! parts.
//!
//! # Barrier algorithms
//!
//! With [`Options::algorithm`] set to [`Algorithm::Aligned`](crate::protocol::Algorithm::Aligned) or [`Algorithm::Unaligned`](crate::protocol::Algorithm::Unaligned),
//! snapshots are checkpoints of a coordinator that runs in the collector thread
//! ([`Cluster::trigger_checkpoint`], [`Cluster::await_checkpoint`]); each process thread
//! honours its mode (see the `process` module: blocked inputs stay queued, unaligned barriers
//! overtake queued data and output buffers). [`Cluster::crash_and_recover`] ends every
//! process's incarnation and restarts it from the latest completed checkpoint, its channel
//! state in front of each channel. A shutdown first takes a final checkpoint, so that no
//! barrier or cancellation is in flight when the processes flush.

mod bank;
mod cluster;
mod collector;
mod outcome;
mod process;
mod service;
mod stream;
pub(crate) mod sync;
mod wire;
pub mod workload;

pub use bank::BankCommand;
pub use cluster::Cluster;
pub use outcome::{AbortReason, CheckpointOutcome, Incarnation, Options, Outcome, Rejected, RuntimeError};
pub use service::{NotANeighbour, Outbox, Service};
pub use stream::StreamCommand;
