//! The checker's settings: the search strategy, threads, reductions, bounds, and where and when
//! to stop.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use crate::engine::shard::ShardSpec;

/// How the state space is explored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Breadth first: shortest paths (with one thread).
    Bfs,
    /// Depth first: least memory.
    Dfs,
    /// Random walks (not exhaustive).
    Simulation,
}

/// An unknown strategy name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown strategy {0:?}: expected bfs, dfs or simulation")]
pub struct UnknownStrategy(pub String);

impl std::str::FromStr for Strategy {
    type Err = UnknownStrategy;
    fn from_str(s: &str) -> Result<Self, UnknownStrategy> {
        match s {
            "bfs" => Ok(Strategy::Bfs),
            "dfs" => Ok(Strategy::Dfs),
            "simulation" => Ok(Strategy::Simulation),
            other => Err(UnknownStrategy(other.to_string())),
        }
    }
}

/// Checker settings.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// Exploration order.
    pub strategy: Strategy,
    /// Worker threads.
    pub threads: usize,
    /// Symmetry reduction (DFS and simulation only).
    pub symmetry: bool,
    /// Explore paths of at most this many steps.
    pub depth: Option<usize>,
    /// Stop at the first counterexample.
    pub stop_on_failure: bool,
    /// Simulation: seed, and states to generate.
    pub seed: u64,
    /// Simulation: how many states to generate before stopping.
    pub max_states: usize,
    /// Address used in Explorer links.
    pub addr: String,
    /// Stop after this long and report what was explored. The workers of a stopped check are
    /// not joined: with two or more threads they stop within a moment, with one they run on
    /// until the process exits (as the `model` command does at once).
    pub timeout: Option<Duration>,
    /// Stop when this flag is raised (the command raises it on Ctrl-C); as for `timeout`.
    pub interrupt: Option<Arc<AtomicBool>>,
    /// Time between progress lines.
    pub progress_every: Duration,
    /// Search only this shard of the state space (depth-first only; see [`crate::engine::shard`]).
    pub shard: Option<ShardSpec>,
    /// `--distributed`: the resident memory per rank, in bytes, at which a rank starts to keep
    /// the breadth-first levels on disk (0: always on disk; `None`: half the memory available at
    /// the start, shared by the ranks on the machine).
    pub rank_memory: Option<u64>,
    /// `--distributed`: where the levels kept on disk go (`None`: the system's temporary directory).
    pub spill_dir: Option<PathBuf>,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            strategy: Strategy::Dfs,
            threads: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            symmetry: false,
            depth: None,
            stop_on_failure: false,
            seed: 0,
            max_states: 1_000_000,
            addr: "127.0.0.1:3000".to_string(),
            timeout: None,
            rank_memory: None,
            spill_dir: None,
            interrupt: None,
            progress_every: Duration::from_secs(3),
            shard: None,
        }
    }
}
