//! Chandy–Lamport distributed snapshots: the marker rules as a sans-IO core, drivers around it
//! (a threaded runtime, a deterministic simulator), and a trace checker that verifies a recorded
//! run against the theorem.
//!
//! The running example is a ring of trading houses passing jars of oil ([`bank`]): the recorded
//! balances plus the jars recorded in transit must equal the ledger.

#![warn(missing_docs)]

pub mod bank;
pub mod core;
pub mod formats;
pub mod orders;
pub mod runtime;
pub mod sim;
pub mod snapshot;
pub mod spec;
pub(crate) mod sync;
pub mod topology;
pub mod trace;
pub mod variant;
pub mod verify;
pub mod workload;

pub use crate::core::{Application, CoreError, Effect, Message, Process, Slot, SnapshotId};
pub use crate::snapshot::{Assembler, GlobalSnapshot, GlobalState, LocalSnapshot, Tokens};
pub use crate::spec::{Move, Setup, Spec, Stable, View};
pub use crate::topology::{Channel, ChannelId, Initiators, ProcessId, Topology, TopologyError};
pub use crate::trace::{Event, EventKind, MsgId, Trace};
pub use crate::variant::Variant;
pub use crate::verify::{check, unterminated, verify, Clause, Report, Verified, Violation};
