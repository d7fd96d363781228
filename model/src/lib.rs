//! A stateright model of Chandy–Lamport snapshots that drives the library's own core
//! (`chandy_lamport::Process`), its properties, and what the `model` command prints.
//!
//! The modules, lowest floor first (a module uses only its own floor's and lower ones):
//! [`engine`] (a generic depth-first search over any stateright model), [`model`] (the model and
//! its properties), [`reduce`] (partial-order and symmetry reduction), [`explorer`] (the state
//! graph stateright walks, and the space-time diagram), [`mod@check`] (a check's settings, run,
//! result, report and the merge of shards) and [`cli`] (the command: flags, printing, exit
//! codes).

#![deny(missing_docs)]

pub mod check;
pub mod cli;
pub mod engine;
pub mod explorer;
pub mod model;
pub mod reduce;

pub use check::{check, CheckOptions, CheckResult, Strategy, Verdict};
pub use model::action::Action;
pub use model::config::{Checkpointing, Config, ConfigError, InitiatorSpec, Mode, Resolved, TopologySpec};
pub use model::machine::ChandyLamport;
