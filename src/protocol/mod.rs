//! The protocol: the marker rules as a sans-IO state machine ([`Process`]) with the algorithm as
//! a parameter, the checkpoint coordinator, snapshot assembly, topologies and fault variants.
//! Nothing here does I/O, and nothing here imports the rest of the crate.

pub mod algorithm;
pub mod application;
pub(crate) mod collections;
pub mod coordinator;
pub mod message;
pub mod process;
pub mod records;
pub mod recovery;
pub mod snapshot;
pub mod topology;
pub mod variant;

pub use algorithm::*;
pub use application::*;
pub use collections::{clone_small, small};
pub use coordinator::*;
pub use message::*;
pub use process::*;
pub use records::*;
pub use recovery::*;
pub use snapshot::*;
pub use topology::*;
pub use variant::*;
