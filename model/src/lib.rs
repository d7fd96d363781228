//! A stateright model of Chandy–Lamport snapshots that drives the library's own core
//! (`chandy_lamport::Process`), its properties, and what the `model` command prints.
//!
//! The modules, lowest floor first (a module uses only its own floor's and lower ones):
//! [`engine`] (a generic depth-first search over any stateright model), [`system`] (the modelled
//! system: its configuration, state, actions, steps and properties), [`reduce`] (partial-order
//! and symmetry reduction), [`graph`] (the state graph every checker walks, and the space-time
//! diagram), [`mod@check`] (a check's settings, run,
//! result, report and the merge of shards) and [`cli`] (the command: flags, printing, exit
//! codes).

#![deny(missing_docs)]

pub mod check;
pub mod cli;
pub mod engine;
pub mod graph;
pub mod reduce;
pub mod system;

pub use check::{check, CheckOptions, CheckResult, Strategy, Verdict};
pub use system::action::Action;
pub use system::config::{Checkpointing, Config, ConfigError, InitiatorSpec, Mode, Resolved, TopologySpec};
pub use system::machine::SnapshotModel;
