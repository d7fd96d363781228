//! The model: processes running the library's core joined by channels, and the properties judged
//! on it. Its configuration (`config`) and the model derived from it (`machine`); its state
//! (`state`, `chans`, full mode's `ghost`); its actions and their words (`action`), which a
//! state enables (`enabling`), the initial state (`start`) and the step each action takes
//! (`step`, and `in_place` for the search's fast path); what a state says (the stable
//! `predicates`, the snapshots' `records`); and the latches, tallies and caches that serve the
//! checker (`bookkeeping`), apart from all of these.

pub mod action;
pub mod bookkeeping;
pub mod chans;
pub mod config;
mod enabling;
pub mod ghost;
pub mod in_place;
pub mod literal;
pub mod machine;
pub mod memo;
pub mod mix;
pub mod names;
mod predicates;
pub mod properties;
mod records;
pub mod serial;
pub mod setting;
pub mod stamp;
mod start;
pub mod state;
mod step;
pub mod wire;

pub use action::{Act, Action};
pub use config::{Checkpointing, Config, ConfigError, InitiatorSpec, Mode, Resolved, TopologySpec};
pub use machine::SnapshotModel;
pub use state::State;
