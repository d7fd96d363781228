//! The search engine: an exhaustive depth-first search, its split into shards, and one
//! breadth-first search across processes (`distributed`, over `ranks`: MPI's, or threads),
//! generic over any stateright [`Model`](stateright::Model) and behind stateright's
//! [`Checker`](stateright::Checker) trait (nothing of this crate's model).

pub mod dfs;
pub mod distributed;
pub mod in_place;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod ranks;
pub mod seen;
pub mod shard;
pub mod spill;
pub mod wire;

pub use dfs::{Engine, Limits, Root};
pub use in_place::{InPlace, Probe};
pub use shard::{split, Part, ShardSpec, Sharded};
pub use wire::Wire;
