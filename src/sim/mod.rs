//! A tick-based deterministic simulator driving the sans-IO core, and the replay of course
//! scenarios (`.top` + `.events` + delays) against their expected `.snap` files.
//!
//! - [`Simulator`]: any application ([`crate::apps::spec::Spec`]) at every node of a topology, channels
//!   as queues with due times, the course suite's scheduling rules, the marker rules of [`crate::protocol::Process`], a trace for
//!   the trace checker and global snapshots from [`crate::protocol::Assembler`];
//! - [`DelaySource`]: delays from a file (`delays.txt`) or a seeded generator;
//! - [`replay`] (an edge: it plugs in the bank, a token transfer being a cart of jars): a scenario in, verified snapshots as `.snap` text out, compared with the
//!   expected files on request.

mod delays;
mod error;
mod expected;
mod finished;
mod links;
mod replay;
mod simulator;

pub use delays::{DelaySequence, DelaySource, MAX_SEEDED_DELAY};
pub use error::{ReplayError, SimError};
pub use expected::load_expected;
pub use finished::{Finished, SimSnapshot, SnapshotFailure};
pub use replay::{compare_with, replay, run_events, DelayChoice, Replay, ReplayOutcome, SETTLE_TICKS};
pub use simulator::{SimConfig, Simulator, MARKER_LOSS_PERCENT};
