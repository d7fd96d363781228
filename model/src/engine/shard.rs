//! One exhaustive depth-first search split into independent jobs (`model check --shard I/N`);
//! merging their results is the command line's (`model merge`).
//!
//! Every shard computes the same *prefix*: a breadth-first expansion from the initial states,
//! deduplicated by fingerprint (of the symmetry representative when symmetry is on), level by
//! level until the *split depth* `d`: the first level holding at least [`FRONTIER_PER_SHARD`]
//! states per shard (or no state, or the level the depth bound stops at, or the first level past
//! [`MAX_PREFIX_STATES`] states above it). The states at level `d`, in the order the search met
//! them, are the *frontier*; shard `I` of `N` searches from a contiguous block of it,
//! frontier states `j` with `j·N/F == I` for a frontier of `F` states (neighbours share
//! ancestors, so a block keeps work that overlaps inside one shard), each with its path from the initial state, by the depth-first engine, whose
//! seen set starts with every prefix and frontier state. Shard 0 also judges the prefix states
//! (those above `d`) as the engine would, and reports their discoveries.
//!
//! Why the shards together search everything: a reachable state is either in the prefix or the
//! frontier, or its shortest path from an initial state is longer than `d`; that path passes
//! through the state at its step `d`, a frontier state, and every state after it is deeper than
//! `d`, so none of them is pre-seen: the shard owning that frontier state reaches it.

use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;
use std::str::FromStr;
use std::sync::Arc;
use std::thread::JoinHandle;

use stateright::{Checker, Expectation, Model, Path};
use thiserror::Error;

use super::dfs::{is_discovery, paths, Engine, Found, Limits, Root, SpawnError};
use super::seen::{fingerprint_of, Fingerprint, Representative, Seen};

/// Frontier states wanted per shard when choosing the split depth.
pub const FRONTIER_PER_SHARD: usize = 256;

/// The prefix stops growing once it holds this many states, whatever the frontier's size.
pub const MAX_PREFIX_STATES: usize = 1_000_000;

/// Which shard of how many (`I/N`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShardSpec {
    /// `I`: 0 ≤ index < count.
    pub index: usize,
    /// `N`: at least 1.
    pub count: usize,
}

/// A shard's `I/N` that is not one.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ShardSpecError {
    /// No `/`.
    #[error("expected I/N (e.g. 0/4), got {0:?}")]
    NoSlash(String),
    /// `I` is not a number.
    #[error("bad shard index {index:?} in {spec:?}: expected I/N")]
    Index {
        /// The text given.
        spec: String,
        /// Its `I`.
        index: String,
    },
    /// `N` is not a number.
    #[error("bad shard count {count:?} in {spec:?}: expected I/N")]
    Count {
        /// The text given.
        spec: String,
        /// Its `N`.
        count: String,
    },
    /// `N` is 0.
    #[error("{0}: the shard count N must be at least 1")]
    NoShards(String),
    /// `I` is not below `N`.
    #[error("{spec}: the shard index must be below the count (0 to {})", count - 1)]
    Beyond {
        /// The text given.
        spec: String,
        /// `N`.
        count: usize,
    },
}

impl FromStr for ShardSpec {
    type Err = ShardSpecError;
    fn from_str(s: &str) -> Result<Self, ShardSpecError> {
        let (i, n) = s.split_once('/').ok_or_else(|| ShardSpecError::NoSlash(s.to_string()))?;
        let index: usize =
            i.trim().parse().map_err(|_| ShardSpecError::Index { spec: s.to_string(), index: i.to_string() })?;
        let count: usize =
            n.trim().parse().map_err(|_| ShardSpecError::Count { spec: s.to_string(), count: n.to_string() })?;
        if count == 0 {
            return Err(ShardSpecError::NoShards(s.to_string()));
        }
        if index >= count {
            return Err(ShardSpecError::Beyond { spec: s.to_string(), count });
        }
        Ok(ShardSpec { index, count })
    }
}

impl fmt::Display for ShardSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// A shard's part of the prefix.
pub struct Split<M: Model> {
    /// The split depth `d` (steps from an initial state to a frontier state).
    pub depth: usize,
    /// States above the split depth.
    pub prefix_states: usize,
    /// States at the split depth.
    pub frontier: usize,
    /// This shard's frontier states, with their paths.
    pub roots: Vec<Root<M>>,
    /// Every prefix and frontier state's fingerprint.
    pub seen: Arc<Seen>,
    /// Shard 0: the prefix states' discoveries (first met, so shortest).
    pub found: Found<M::Action>,
    /// Successor states generated while expanding the prefix, with repeats, plus the initial
    /// states.
    pub generated: usize,
    /// The engine's depth (the initial state at 1) of the deepest prefix or frontier state.
    pub deepest: usize,
}

/// Computes the prefix (see the module documentation) and shard `shard`'s roots; judges the
/// prefix states when `shard` is shard 0.
pub fn split<M>(model: &M, shard: ShardSpec, limits: Limits, symmetry: Representative<M::State>) -> Split<M>
where
    M: Model,
    M::State: Hash + Clone,
    M::Action: Clone,
{
    let fp = |s: &M::State| -> Fingerprint { fingerprint_of(s, symmetry) };
    let judge = shard.index == 0;
    let properties = model.properties();
    let seen = Arc::new(Seen::default());
    let mut found: Found<M::Action> = HashMap::new();
    let mut level: Vec<Root<M>> = Vec::new();
    let mut generated = 0;
    for (init, state) in model.init_states().into_iter().enumerate() {
        generated += 1;
        if seen.insert(fp(&state)) {
            level.push(Root { state, init, path: Vec::new() });
        }
    }
    let want = shard.count.saturating_mul(FRONTIER_PER_SHARD);
    let mut depth = 0;
    let mut prefix_states = 0;
    let mut actions = Vec::new();
    loop {
        // The engine's depth of this level: the initial states are at 1.
        let at = depth + 1;
        if level.len() >= want
            || level.is_empty()
            || prefix_states >= MAX_PREFIX_STATES
            || limits.target_max_depth.is_some_and(|t| at >= t)
        {
            break;
        }
        let mut next = Vec::new();
        for root in level {
            prefix_states += 1;
            if judge {
                for p in &properties {
                    if is_discovery(p, model, &root.state) {
                        found.entry(p.name).or_insert_with(|| (root.init, root.path.clone()));
                    }
                }
            }
            model.actions(&root.state, &mut actions);
            for a in actions.drain(..) {
                let Some(state) = model.next_state(&root.state, a.clone()) else { continue };
                generated += 1;
                if seen.insert(fp(&state)) {
                    let mut path = root.path.clone();
                    path.push(a);
                    next.push(Root { state, init: root.init, path });
                }
            }
        }
        level = next;
        depth += 1;
    }
    let frontier = level.len();
    let deepest = if frontier > 0 { depth + 1 } else { depth };
    let frontier = level.len();
    let roots = level
        .into_iter()
        .enumerate()
        .filter(|(j, _)| j * shard.count / frontier.max(1) == shard.index)
        .map(|(_, r)| r)
        .collect();
    Split { depth, prefix_states, frontier, roots, seen, found, generated, deepest }
}

/// Where a shard's part of the search lies: the split, and how much of the frontier is this
/// shard's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Part {
    /// `I`.
    pub index: usize,
    /// `N`.
    pub count: usize,
    /// The split depth `d`: steps from an initial state to a frontier state.
    pub split_depth: usize,
    /// States above the split depth (judged by shard 0).
    pub prefix_states: usize,
    /// States at the split depth.
    pub frontier: usize,
    /// Frontier states this shard searched from.
    pub roots: usize,
}

/// A shard's search: the engine from this shard's roots, with the prefix's counts and (shard 0)
/// discoveries added, as one [`Checker`].
pub struct Sharded<M: Model> {
    engine: Engine<M>,
    found: Found<M::Action>,
    /// States this shard owns before the engine runs: its roots, and for shard 0 the prefix.
    owned: usize,
    /// Fingerprints the seen set held before the engine ran.
    prefilled: usize,
    generated: usize,
    deepest: usize,
    /// The part, for the report.
    pub part: Part,
}

impl<M> Sharded<M>
where
    M: super::in_place::InPlace + Send + Sync + 'static,
    M::State: Hash + Clone + Send + Sync + 'static,
    M::Action: Clone + PartialEq + Send + Sync + 'static,
{
    /// Computes the prefix and starts shard `shard`'s search with `threads` workers.
    pub fn spawn(
        model: M,
        shard: ShardSpec,
        threads: usize,
        limits: Limits,
        symmetry: Representative<M::State>,
    ) -> Result<Self, SpawnError> {
        let Split { depth, prefix_states, frontier, mut roots, seen, found, generated, deepest } =
            split(&model, shard, limits, symmetry);
        let properties = model.properties();
        let failed = properties.iter().any(|p| p.expectation == Expectation::Always && found.contains_key(p.name));
        let part = Part {
            index: shard.index,
            count: shard.count,
            split_depth: depth,
            prefix_states,
            frontier,
            roots: roots.len(),
        };
        // As the engine would: stop once every property is decided, or at a failure if asked.
        if found.len() == properties.len() || (failed && limits.stop_on_failure) {
            roots.clear();
        }
        let owned = roots.len() + if shard.index == 0 { prefix_states } else { 0 };
        let prefilled = seen.len();
        let engine = Engine::spawn_from(model, roots, seen, threads, limits, symmetry)?;
        Ok(Sharded {
            engine,
            found,
            owned,
            prefilled,
            generated: if shard.index == 0 { generated } else { 0 },
            deepest,
            part,
        })
    }
}

impl<M> Checker<M> for Sharded<M>
where
    M: Model,
    M::State: Hash + Clone + PartialEq,
    M::Action: Clone + PartialEq,
{
    fn model(&self) -> &M {
        self.engine.model()
    }

    fn state_count(&self) -> usize {
        self.engine.state_count() + self.generated
    }

    /// The states this shard searched: its roots and what it found beyond them (and for shard
    /// 0 the prefix), not the other shards' roots that its seen set starts with.
    fn unique_state_count(&self) -> usize {
        (self.engine.unique_state_count() + self.owned).saturating_sub(self.prefilled)
    }

    fn max_depth(&self) -> usize {
        self.engine.max_depth().max(self.deepest)
    }

    fn discoveries(&self) -> HashMap<&'static str, Path<M::State, M::Action>> {
        let mut all = self.engine.discoveries();
        // A prefix discovery is shallower than any the engine makes.
        all.extend(paths(self.engine.model(), self.found.clone()));
        all
    }

    fn handles(&mut self) -> Vec<JoinHandle<()>> {
        self.engine.handles()
    }

    fn is_done(&self) -> bool {
        self.engine.is_done()
    }
}
