//! Loom and shuttle tests of the threaded runtime's own code: the very [`Cluster`] users run,
//! driven through its public API, under schedulers that explore the interleavings of its
//! threads (loom: all of them up to a preemption bound; shuttle: random and PCT samples).
//!
//! The library holds the driver of a scenario, generic over the application ([`scenario`]), the
//! judgement of a run ([`judge`], generic too), the bank's scenarios ([`houses`], the edge where
//! the bank is plugged in) and a house that burns down ([`fragile`]) and the harnesses that run a scenario under loom (`explore`, built under
//! `--cfg loom`) or shuttle (`schedule`, under `--cfg shuttle`); the rest builds normally too, so
//! `cargo clippy` checks it, and the judge's own tests (`tests/judge.rs`: each way a run can be wrong,
//! made by editing a correct run's outcome, must fail) run in the normal build. The scenario tests
//! build only under `--cfg loom` (`tests/loom_*.rs`) or `--cfg shuttle` (`tests/shuttle_*.rs`),
//! where `chandy_lamport::runtime` takes its threads and channels from that tool; see
//! `scripts/test-all` for the commands.
//!
//! [`Cluster`]: chandy_lamport::runtime::Cluster

#![deny(missing_docs)]

pub mod checkpoints;
#[cfg(loom)]
pub mod explore;
pub mod fragile;
pub mod houses;
pub mod judge;
pub mod panics;
pub mod scenario;
#[cfg(shuttle)]
pub mod schedule;
