//! The model: houses running the library's core joined by channels (its configuration, its
//! state and ghost data, its actions and steps), and the properties judged on it.

pub mod chans;
pub mod config;
pub mod ghost;
pub mod in_place;
pub mod literal;
pub mod memo;
pub mod mix;
pub mod names;
pub mod properties;
pub mod serial;
pub mod stamp;
pub mod state;
pub mod system;
pub mod wire;

pub use config::{Checkpointing, Config, ConfigError, InitiatorSpec, Mode, Resolved, TopologySpec};
pub use state::State;
pub use system::{Act, Action, ChandyLamport};
