//! One exhaustive check split into independent jobs (`model check --shard I/N`), and their
//! results merged into one verdict (`model merge`).
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

use serde::{Deserialize, Serialize};
use stateright::{Checker, Expectation, Model, Path};

use crate::engine::{
    fingerprint_of, is_discovery, paths, Engine, Fingerprint, Found, Limits, Representative, Root, Seen,
};

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

impl FromStr for ShardSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (i, n) = s.split_once('/').ok_or_else(|| format!("expected I/N (e.g. 0/4), got {s:?}"))?;
        let index: usize = i.trim().parse().map_err(|_| format!("bad shard index {i:?} in {s:?}: expected I/N"))?;
        let count: usize = n.trim().parse().map_err(|_| format!("bad shard count {n:?} in {s:?}: expected I/N"))?;
        if count == 0 {
            return Err(format!("{s}: the shard count N must be at least 1"));
        }
        if index >= count {
            return Err(format!("{s}: the shard index must be below the count (0 to {})", count - 1));
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

/// What a shard reports about its part (the `shard` object of its JSON).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardInfo {
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
    /// Every setting that shapes the state space or the properties (see [`config_key`]).
    pub config: String,
    /// The version of the `model` crate that wrote it.
    pub version: String,
    /// `--depth`, if given (for the merged verdict line).
    pub depth: Option<usize>,
}

/// The model crate's version, as shards record it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// A string naming everything that shapes a check's state space and its properties: the
/// application, the resolved configuration (houses, links, jars, sends, initiators, snapshots,
/// internal steps, theft, variant, property mode, and whatever else the configuration holds,
/// through a hash of all of it) and the checker's symmetry, depth bound and stop-on-failure.
/// Shards merge only when theirs are equal.
pub fn config_key(app: &str, cfg: &crate::Resolved, symmetry: bool, depth: Option<usize>, stop: bool) -> String {
    let mut whole = cfg.clone();
    whole.warnings.clear();
    let t = &cfg.topology;
    let list = |v: Vec<String>| v.join(",");
    let initiators: Vec<String> =
        cfg.initiators.iter().enumerate().filter(|(_, &on)| on).map(|(i, _)| i.to_string()).collect();
    format!(
        "app={app} houses={} links={} tokens={} sends={} initiators={} snapshots={} internal={} theft={} \
         variant={} properties={} symmetry={symmetry} depth={} stop-on-failure={stop} config-hash={:016x}",
        t.len(),
        t.channels().len(),
        list(cfg.tokens.iter().map(u32::to_string).collect()),
        cfg.sends,
        list(initiators),
        cfg.snapshots,
        cfg.internal,
        cfg.theft,
        cfg.variant,
        cfg.mode,
        depth.map_or("none".to_string(), |d| d.to_string()),
        fnv1a(format!("{whole:?}").as_bytes()),
    )
}

/// FNV-1a: a hash that stays the same across builds and machines.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
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
    /// The part, for the report (its `config` filled by the caller).
    pub info: ShardInfo,
}

impl<M> Sharded<M>
where
    M: Model + Send + Sync + 'static,
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
    ) -> Result<Self, String> {
        let Split { depth, prefix_states, frontier, mut roots, seen, found, generated, deepest } =
            split(&model, shard, limits, symmetry);
        let properties = model.properties();
        let failed = properties.iter().any(|p| p.expectation == Expectation::Always && found.contains_key(p.name));
        let info = ShardInfo {
            index: shard.index,
            count: shard.count,
            split_depth: depth,
            prefix_states,
            frontier,
            roots: roots.len(),
            config: String::new(),
            version: VERSION.to_string(),
            depth: None,
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
            info,
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

/// One shard's part of a merge (the `merged.shards` entries).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MergedShard {
    /// `I`.
    pub index: usize,
    /// The file it came from.
    pub file: String,
    /// States it searched.
    pub unique_states: usize,
    /// States it generated, with repeats.
    pub states: usize,
    /// Its wall time.
    pub seconds: f64,
    /// Whether its part was searched to the end.
    pub exhaustive: bool,
    /// Frontier states it searched from.
    pub roots: usize,
}

/// What a merge adds to its result (the `merged` object of its JSON).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MergeInfo {
    /// `N`.
    pub count: usize,
    /// The split depth.
    pub split_depth: usize,
    /// The configuration (see [`config_key`]).
    pub config: String,
    /// The model version that wrote the shards.
    pub version: String,
    /// Every shard, by index.
    pub shards: Vec<MergedShard>,
}

/// Merges shards' results, each with the name of its file, into one verdict: an always-property
/// fails if any shard has a counterexample (the shortest is kept, with its link); a
/// sometimes-property has an example if any shard has one; "holds" and "no example" only when
/// every shard searched its part to the end. The unique-state count is the sum over the shards
/// (which may overlap); the wall time is the slowest shard's. Fails, naming the file, on a
/// result that is not a shard's, shards of different configurations, versions or counts, an
/// index given twice; and on a missing shard.
pub fn merge(inputs: Vec<(String, crate::CheckResult)>) -> Result<crate::CheckResult, String> {
    use crate::run::{PropertyResult, Verdict};
    let mut parts: Vec<(String, crate::CheckResult, ShardInfo)> = Vec::new();
    for (file, result) in inputs {
        let Some(info) = result.shard.clone() else {
            return Err(format!(
                "{file}: not a shard's result (no \"shard\" object): write each with `model check --shard I/N --json`"
            ));
        };
        if let Some((first, _, f)) = parts.first() {
            if info.count != f.count {
                return Err(format!(
                    "{file}: shard {}/{}, but {first} is shard {}/{}: shards of one check share one count N",
                    info.index, info.count, f.index, f.count
                ));
            }
            if info.version != f.version {
                return Err(format!(
                    "{file}: written by model {}, but {first} by model {}: run every shard with the same build",
                    info.version, f.version
                ));
            }
            if info.config != f.config {
                return Err(format!(
                    "{file}: shard of a different configuration than {first}:\n  {file}: {}\n  {first}: {}",
                    info.config, f.config
                ));
            }
        }
        if info.index >= info.count {
            return Err(format!("{file}: shard {}/{}: the index must be below the count", info.index, info.count));
        }
        if let Some((other, _, _)) = parts.iter().find(|(_, _, f)| f.index == info.index) {
            return Err(format!("{file}: shard {}/{} again (also in {other})", info.index, info.count));
        }
        let names = |r: &crate::CheckResult| r.properties.iter().map(|p| p.name.clone()).collect::<Vec<_>>();
        if let Some((first, r, _)) = parts.first() {
            if names(&result) != names(r) {
                return Err(format!("{file}: its properties differ from {first}'s"));
            }
        }
        parts.push((file, result, info));
    }
    let Some((_, _, first)) = parts.first() else {
        return Err("no shard results to merge".to_string());
    };
    let (count, split_depth, config, version, depth) =
        (first.count, first.split_depth, first.config.clone(), first.version.clone(), first.depth);
    let missing: Vec<String> =
        (0..count).filter(|i| parts.iter().all(|(_, _, f)| f.index != *i)).map(|i| format!("{i}/{count}")).collect();
    match missing.len() {
        0 => {}
        1 => return Err(format!("missing shard {}: every shard's result is needed for a verdict", missing[0])),
        _ => {
            return Err(format!("missing shards {}: every shard's result is needed for a verdict", missing.join(", ")))
        }
    }
    parts.sort_by_key(|(_, _, f)| f.index);

    let exhaustive_all = parts.iter().all(|(_, r, _)| r.exhaustive);
    let mut properties = Vec::new();
    for (k, p) in parts[0].1.properties.iter().enumerate() {
        let best = parts
            .iter()
            .map(|(_, r, _)| &r.properties[k])
            .filter(|q| matches!(q.verdict, Verdict::Counterexample | Verdict::ExampleFound))
            .min_by_key(|q| q.path.as_ref().map_or(0, Vec::len));
        let sometimes = p.expectation == "sometimes";
        let verdict = match (sometimes, best.is_some(), exhaustive_all) {
            (true, true, _) => Verdict::ExampleFound,
            (true, false, true) => Verdict::NoExample,
            (true, false, false) => Verdict::NoExampleYet,
            (false, true, _) => Verdict::Counterexample,
            (false, false, true) => Verdict::Holds,
            (false, false, false) => Verdict::NoCounterexampleYet,
        };
        properties.push(PropertyResult {
            name: p.name.clone(),
            expectation: p.expectation.clone(),
            verdict,
            path: best.and_then(|q| q.path.clone()),
            link: best.and_then(|q| q.link.clone()),
        });
    }
    let decided = properties.iter().all(|p| !p.verdict.undecided() && p.path.is_some());
    let bounds: Vec<(usize, &str)> =
        parts.iter().filter_map(|(_, r, f)| r.bound.as_deref().map(|b| (f.index, b))).collect();
    let bound = if bounds.is_empty() {
        None
    } else if bounds.iter().all(|(_, b)| *b == bounds[0].1) {
        Some(bounds[0].1.to_string())
    } else if decided {
        Some("stopped once every property was decided".to_string())
    } else {
        Some(bounds.iter().map(|(i, b)| format!("shard {i}/{count}: {b}")).collect::<Vec<_>>().join("; "))
    };
    let shards = parts
        .iter()
        .map(|(file, r, f)| MergedShard {
            index: f.index,
            file: file.clone(),
            unique_states: r.unique_states,
            states: r.states,
            seconds: r.seconds,
            exhaustive: r.exhaustive,
            roots: f.roots,
        })
        .collect();
    let mut result = crate::CheckResult {
        ok: false,
        exhaustive: bound.is_none(),
        bound,
        stopped: parts.iter().find_map(|(_, r, _)| r.stopped),
        unique_states: parts.iter().map(|(_, r, _)| r.unique_states).sum(),
        states: parts.iter().map(|(_, r, _)| r.states).sum(),
        max_depth: parts.iter().map(|(_, r, _)| r.max_depth).max().unwrap_or(0),
        seconds: parts.iter().map(|(_, r, _)| r.seconds).fold(0.0, f64::max),
        properties,
        summary: String::new(),
        exit_code: 0,
        shard: None,
        merged: Some(MergeInfo { count, split_depth, config, version, shards }),
    };
    let opts = crate::CheckOptions { strategy: crate::Strategy::Dfs, depth, ..crate::CheckOptions::default() };
    crate::run::conclude(&mut result, &opts);
    Ok(result)
}
