//! A Chandy–Lamport implementation that is not this project's: written against the guide
//! ("Your Rust implementation under loom and shuttle") alone, in the shape real
//! implementations have — a reader thread per incoming channel, threads that transfer and
//! initiate, and one lock per process over its balance, its outgoing channels and its snapshot
//! bookkeeping — and judged by `chandy_lamport::testing` under loom and shuttle.
//!
//! [`process`] is the implementation, with its broken copies ([`Bug`]); [`scenario`] starts
//! processes on a topology, drives them and returns the execution's recorder. Its threads and
//! locks come from `sync` (`std`, or loom or shuttle by cfg); its channels are the recording
//! channels of `chandy_lamport::testing::channel`, so it records no message itself, only its
//! records and marker receipts. The tests: `tests/std.rs` (real threads), `tests/loom.rs`
//! (`--cfg loom`: 3 processes) and `tests/shuttle.rs` (`--cfg shuttle`: 5 and 6 processes).

#![deny(missing_docs)]

pub mod process;
pub mod scenario;
mod sync;

pub use process::Bug;
pub use scenario::Scenario;
