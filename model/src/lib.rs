//! A stateright model of Chandy–Lamport snapshots that drives the library's own core
//! (`chandy_lamport::Process`), its properties, and what the `model` command prints.

pub mod config;
pub mod engine;
pub mod ghost;
pub mod literal;
pub mod model;
pub mod por;
pub mod properties;
pub mod run;
pub mod shard;
pub mod stamp;
pub mod state;
pub mod svg;
pub mod symmetry;

pub use config::{Checkpointing, Config, ConfigError, InitiatorSpec, Mode, Resolved, TopologySpec};
pub use model::{Action, ChandyLamport};
pub use run::{check, CheckOptions, CheckResult, Strategy, Verdict};
