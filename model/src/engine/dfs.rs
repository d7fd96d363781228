//! The exhaustive depth-first search behind `model check` (the default strategy).
//!
//! stateright's own depth-first checker keeps, for every state waiting on its stack, the whole
//! path of action indices that reached it, and stores fingerprints in a `DashMap`; profiling
//! showed half the time going there. This search implements stateright's [`Checker`] trait, so
//! the report, the Explorer links and the tests treat it like stateright's, but:
//!
//! - each worker keeps one *trail* (the actions from its root to the state being expanded): a
//!   waiting state holds only the action that leads to it, and its path is the trail's prefix
//!   plus that action;
//! - the seen set stores 64-bit fingerprints (hash compaction, as stateright does) in one
//!   open-addressing table filled without locks;
//! - an idle worker is fed by the others: a busy worker moves the shallowest half of its stack
//!   to a shared pool, each moved state with its full path.
//!
//! Properties are judged exactly as stateright's checkers judge them: on every state taken from
//! a stack (within the depth bound), an always-property's first failure and a
//! sometimes-property's first example are kept with their path; the search ends when every
//! property has a discovery, or at the first failure when asked to. Eventually-properties are
//! not supported (the model has none): [`Engine::spawn`] refuses them.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use stateright::{Checker, Expectation, Model, Path, Property};
use thiserror::Error;

use super::in_place::{InPlace, Probe};
use super::seen::{fingerprint, fingerprint_of, Representative, Seen, BATCH};

/// Discoveries by property name: the initial state's index and the actions from it.
pub type Found<A> = HashMap<&'static str, (usize, Vec<A>)>;

/// Whether `state` is a discovery of property `p`: a counterexample to an always-property, an
/// example of a sometimes-property.
pub fn is_discovery<M: Model>(p: &Property<M>, model: &M, state: &M::State) -> bool {
    match p.expectation {
        Expectation::Always => !(p.condition)(model, state),
        _ => (p.condition)(model, state),
    }
}

/// The discoveries `found` as paths of `model`.
pub fn paths<M>(model: &M, found: Found<M::Action>) -> HashMap<&'static str, Path<M::State, M::Action>>
where
    M: Model,
    M::State: Clone + PartialEq,
    M::Action: PartialEq,
{
    let inits = model.init_states();
    found
        .into_iter()
        .filter_map(|(name, (init, actions))| {
            let path = Path::from_actions(model, inits.get(init)?.clone(), actions.iter());
            path.map(|p| (name, p))
        })
        .collect()
}

/// How a search is bounded and when it ends.
#[derive(Clone, Copy, Debug, Default)]
pub struct Limits {
    /// stateright's `target_max_depth`: states at this depth or deeper (the initial state is at
    /// depth 1) are neither judged nor expanded.
    pub target_max_depth: Option<usize>,
    /// End at the first always-property failure.
    pub stop_on_failure: bool,
}

/// A state to search from, with the actions that lead to it from initial state `init`.
pub struct Root<M: Model> {
    /// The state.
    pub state: M::State,
    /// Index of the initial state the path starts from.
    pub init: usize,
    /// The actions from there.
    pub path: Vec<M::Action>,
}

/// A state waiting on a worker's stack: its depth below the worker's root, and the action that
/// leads to it from the state above it on the trail.
struct Entry<M: Model> {
    state: M::State,
    depth: usize,
    action: Option<M::Action>,
    /// Its digest, when the model takes its steps in place and the step that made it said it.
    digest: Option<u64>,
}

/// A successor waiting for the seen set's answer: built, or (taken in place and put back) to
/// be built only if it is new.
enum Successor<S> {
    Built(S),
    Pending(u64),
}

struct Pool<M: Model> {
    roots: Vec<Root<M>>,
    idle: usize,
    done: bool,
}

struct Shared<M: Model> {
    model: Arc<M>,
    threads: usize,
    /// How many properties the model has.
    properties: usize,
    limits: Limits,
    symmetry: Representative<M::State>,
    seen: Arc<Seen>,
    states: AtomicUsize,
    max_depth: AtomicUsize,
    /// Per property (in `model.properties()` order): the first discovery, as (initial state,
    /// actions).
    discoveries: Mutex<Found<M::Action>>,
    stop: AtomicBool,
    pool: Mutex<Pool<M>>,
    wake: Condvar,
    /// Workers waiting for work (read without the lock to decide whether to share).
    hungry: AtomicUsize,
}

/// Why a search cannot start.
#[derive(Debug, Error)]
pub enum SpawnError {
    /// The model has an eventually-property, which the engine does not judge.
    #[error("the depth-first engine does not judge eventually-properties")]
    Eventually,
    /// A worker thread cannot be started.
    #[error("cannot start a checker thread: {0}")]
    Thread(#[source] std::io::Error),
}

/// A running exhaustive search; see the module documentation.
pub struct Engine<M: Model> {
    shared: Arc<Shared<M>>,
    handles: Vec<JoinHandle<()>>,
}

impl<M> Engine<M>
where
    M: InPlace + Send + Sync + 'static,
    M::State: Hash + Clone + Send + Sync + 'static,
    M::Action: Clone + PartialEq + Send + Sync + 'static,
{
    /// Searches everything reachable from the model's initial states, with `threads` workers.
    pub fn spawn(
        model: M,
        threads: usize,
        limits: Limits,
        symmetry: Representative<M::State>,
    ) -> Result<Self, SpawnError> {
        let roots: Vec<Root<M>> = model
            .init_states()
            .into_iter()
            .enumerate()
            .map(|(init, state)| Root { state, init, path: Vec::new() })
            .collect();
        Self::spawn_from(model, roots, Arc::new(Seen::default()), threads, limits, symmetry)
    }

    /// Searches everything reachable from `roots` that `seen` does not already hold; a root
    /// itself is judged and expanded whether or not `seen` holds it.
    pub fn spawn_from(
        model: M,
        roots: Vec<Root<M>>,
        seen: Arc<Seen>,
        threads: usize,
        limits: Limits,
        symmetry: Representative<M::State>,
    ) -> Result<Self, SpawnError> {
        if model.properties().iter().any(|p| p.expectation == Expectation::Eventually) {
            return Err(SpawnError::Eventually);
        }
        let threads = threads.max(1);
        for r in &roots {
            seen.insert(fingerprint_of(&r.state, symmetry));
        }
        let shared = Arc::new(Shared {
            properties: model.properties().len(),
            model: Arc::new(model),
            threads,
            limits,
            symmetry,
            seen,
            states: AtomicUsize::new(roots.len()),
            max_depth: AtomicUsize::new(0),
            discoveries: Mutex::new(HashMap::new()),
            stop: AtomicBool::new(false),
            pool: Mutex::new(Pool { roots: roots.into_iter().rev().collect(), idle: 0, done: false }),
            wake: Condvar::new(),
            hungry: AtomicUsize::new(0),
        });
        let handles = (0..threads)
            .map(|t| {
                let shared = Arc::clone(&shared);
                std::thread::Builder::new()
                    .name(format!("checker-{t}"))
                    .spawn(move || shared.work())
                    .map_err(SpawnError::Thread)
            })
            .collect::<Result<Vec<_>, SpawnError>>()?;
        Ok(Engine { shared, handles })
    }

    /// Asks the workers to end soon (their counts and discoveries stay readable).
    pub fn stop(&self) {
        self.shared.halt();
    }
}

impl<M> Shared<M>
where
    M: InPlace,
    M::State: Hash + Clone,
    M::Action: Clone + PartialEq,
{
    fn halt(&self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.pool.lock().map(|mut p| p.done = true);
        self.wake.notify_all();
    }

    /// The next root to search from, waiting while another worker may still share one; `None`
    /// once every worker waits (the search is over) or the search was stopped.
    fn take(&self) -> Option<Root<M>> {
        let mut pool = self.pool.lock().unwrap_or_else(|e| e.into_inner());
        pool.idle += 1;
        loop {
            if pool.done || self.stop.load(Ordering::Relaxed) {
                return None;
            }
            if let Some(root) = pool.roots.pop() {
                pool.idle -= 1;
                self.hungry.store(pool.idle, Ordering::Relaxed);
                return Some(root);
            }
            if pool.idle == self.threads {
                pool.done = true;
                self.wake.notify_all();
                return None;
            }
            self.hungry.store(pool.idle, Ordering::Relaxed);
            pool = self.wake.wait(pool).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn give(&self, roots: Vec<Root<M>>) {
        let mut pool = self.pool.lock().unwrap_or_else(|e| e.into_inner());
        pool.roots.extend(roots);
        self.hungry.store(0, Ordering::Relaxed);
        self.wake.notify_all();
    }

    fn discover(&self, name: &'static str, root: &Root<M>, trail: &[M::Action], failure: bool) {
        let mut d = self.discoveries.lock().unwrap_or_else(|e| e.into_inner());
        d.entry(name).or_insert_with(|| {
            let mut path = root.path.clone();
            path.extend_from_slice(trail);
            (root.init, path)
        });
        let all = d.len() == self.properties;
        drop(d);
        if all || (failure && self.limits.stop_on_failure) {
            self.halt();
        }
    }

    fn work(&self) {
        let properties = self.model.properties();
        let mut actions = Vec::new();
        let mut probes = Vec::new();
        let mut successors = Vec::new();
        let mut stack: Vec<Entry<M>> = Vec::new();
        let mut trail: Vec<M::Action> = Vec::new();
        let mut deepest = 0;
        let mut seen = self.seen.writer();
        let mut generated = 0;
        loop {
            seen.pause();
            self.states.fetch_add(std::mem::take(&mut generated), Ordering::Relaxed);
            let Some(root) = self.take() else { break };
            let base = root.path.len() + 1;
            trail.clear();
            stack.push(Entry { state: root.state.clone(), depth: 0, action: None, digest: None });
            while let Some(Entry { mut state, depth, action, digest }) = stack.pop() {
                if self.stop.load(Ordering::Relaxed) {
                    stack.clear();
                    break;
                }
                trail.truncate(depth.saturating_sub(1));
                trail.extend(action);
                let at = base + depth;
                if at > deepest {
                    deepest = at;
                    self.max_depth.fetch_max(at, Ordering::Relaxed);
                }
                if self.limits.target_max_depth.is_some_and(|t| at >= t) {
                    continue;
                }
                self.model.actions(&state, &mut actions);
                // Under symmetry a successor's fingerprint is its representative's: built.
                let digest = if self.symmetry.is_none() { digest.or_else(|| self.model.digest(&state)) } else { None };
                match digest {
                    Some(d) => self.model.probe_all(&mut state, d, &actions, &mut probes),
                    None => probes.extend(actions.iter().map(|_| Probe::Build)),
                }
                // All successors first, their table lines fetched together, then the lookups.
                for (a, probe) in actions.drain(..).zip(probes.drain(..)) {
                    let (next, fp) = match probe {
                        Probe::Digest(digest) => (Successor::Pending(digest), fingerprint(&digest)),
                        Probe::NotAStep => continue,
                        Probe::Build => {
                            let Some(next) = self.model.next_state(&state, a.clone()) else { continue };
                            let fp = fingerprint_of(&next, self.symmetry);
                            (Successor::Built(next), fp)
                        }
                    };
                    seen.prefetch(fp);
                    successors.push((next, a, fp));
                }
                // Judged while the table lines are on their way (the probes put the state back).
                for p in &properties {
                    if is_discovery(p, &self.model, &state) {
                        self.discover(p.name, &root, &trail, p.expectation == Expectation::Always);
                    }
                }
                generated += successors.len();
                for (next, a, fp) in successors.drain(..) {
                    if !seen.insert(fp) {
                        continue;
                    }
                    let (next, digest) = match next {
                        Successor::Built(next) => (next, None),
                        Successor::Pending(digest) => {
                            let next = self.model.next_state(&state, a.clone());
                            (next.expect("a step taken in place is a step"), Some(digest))
                        }
                    };
                    stack.push(Entry { state: next, depth: depth + 1, action: Some(a), digest });
                }
                if generated >= BATCH {
                    self.states.fetch_add(std::mem::take(&mut generated), Ordering::Relaxed);
                }
                if stack.len() > 1 && self.hungry.load(Ordering::Relaxed) > 0 {
                    self.share(&mut stack, &root, &trail);
                }
            }
        }
    }

    /// Moves the shallowest half of `stack` to the pool, each state with its full path.
    fn share(&self, stack: &mut Vec<Entry<M>>, root: &Root<M>, trail: &[M::Action]) {
        let half = stack.len() / 2;
        let roots = stack
            .drain(..half)
            .map(|e| {
                let mut path = root.path.clone();
                path.extend_from_slice(&trail[..e.depth - 1]);
                path.extend(e.action);
                Root { state: e.state, init: root.init, path }
            })
            .collect();
        self.give(roots);
    }
}

impl<M> Checker<M> for Engine<M>
where
    M: Model,
    M::State: Hash + Clone + PartialEq,
    M::Action: Clone + PartialEq,
{
    fn model(&self) -> &M {
        &self.shared.model
    }

    fn state_count(&self) -> usize {
        self.shared.states.load(Ordering::Relaxed)
    }

    fn unique_state_count(&self) -> usize {
        self.shared.seen.len()
    }

    fn max_depth(&self) -> usize {
        self.shared.max_depth.load(Ordering::Relaxed)
    }

    fn discoveries(&self) -> HashMap<&'static str, Path<M::State, M::Action>> {
        paths(&*self.shared.model, self.shared.discoveries.lock().unwrap_or_else(|e| e.into_inner()).clone())
    }

    fn handles(&mut self) -> Vec<JoinHandle<()>> {
        std::mem::take(&mut self.handles)
    }

    fn is_done(&self) -> bool {
        self.shared.pool.lock().map_or(true, |p| p.done)
    }
}
