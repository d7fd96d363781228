//! What the model keeps for the checker beside its state and rules: the properties' latches,
//! the barrier algorithms' tallies of the steps taken, the checkpoints already judged to
//! recover, the processes shared across encodings (see `wire`), and the number by which a thread's
//! remembered steps (see `memo`) are this model's. None of it changes what a step leads to.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use chandy_lamport::apps::spec::Spec;

use super::memo::{self, Scratch};
use super::names;
use super::state::{Processes, Stored};

/// The latches, tallies and caches of one model (its field `books`), shared by the threads of
/// a check.
pub(crate) struct Bookkeeping<A: Spec> {
    /// One latch per property kind: once a property has a discovery, later states no longer
    /// report it, so the first (with BFS, shortest) path found is the one kept.
    latches: Vec<AtomicBool>,
    /// Barrier algorithms: for each checkpoint stored so far, whether every quiet end its
    /// failure-free continuation reaches is one the failure-free run from the start reaches.
    recovers: Mutex<HashMap<Arc<Stored<A>>, bool>>,
    /// Processes of states decoded from other processes (see `wire`), with their encodings, by a
    /// hash of the encoding: a process read again is shared, as a process a step left unchanged is.
    pub(crate) decoded: Processes<A>,
    /// Processes of states encoded for other processes (see `wire`), with their encodings, by
    /// the process's hash.
    pub(crate) encoded: Processes<A>,
    /// Barrier algorithms: what the steps taken so far did (see [`Tallies`]), in [`Tally`]'s
    /// order.
    tallies: [AtomicU64; 5],
    /// This model's number among those of the process: whose processes' steps a thread's
    /// `memo` table holds.
    id: u64,
}

/// The counters behind [`Tallies`], in its field order.
#[derive(Clone, Copy)]
pub(super) enum Tally {
    Stores,
    Crashes,
    Restores,
    RestoresWithChannelState,
    QuietAfterCrash,
}

/// Barrier algorithms: what the steps of a check did, each step counted once per state it was
/// taken from (the state graph's edges), so that a pass can be told from a vacuous one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Tallies {
    /// Steps that stored a completed checkpoint.
    pub stores: u64,
    /// Crashes.
    pub crashes: u64,
    /// Crashes that restored a stored checkpoint (the others restart from the initial states).
    pub restores: u64,
    /// Restores that put channel state back in transit.
    pub restores_with_channel_state: u64,
    /// Steps after a crash that reached a quiet state (where exactly-once is judged).
    pub quiet_after_crash: u64,
}

impl<A: Spec> Bookkeeping<A> {
    /// A new model's: latches open, counters at zero, caches empty, a number of its own.
    pub(super) fn new() -> Self {
        static MODELS: AtomicU64 = AtomicU64::new(0);
        Bookkeeping {
            latches: (0..names::KINDS).map(|_| AtomicBool::new(false)).collect(),
            recovers: Mutex::new(HashMap::new()),
            decoded: Mutex::new(Vec::new()),
            encoded: Mutex::new(Vec::new()),
            tallies: Default::default(),
            id: MODELS.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// Runs `f` with this thread's scratch for this model (see `memo`): the effects buffer
    /// empty, the remembered steps kept across calls.
    pub(crate) fn with_scratch<R>(&self, f: impl FnOnce(&mut Scratch<A>) -> R) -> R {
        memo::with(self.id, f)
    }

    /// Evaluates property number `index` through its latch: `discovery` is the value that makes
    /// a discovery (false for an always-property, true for a sometimes-property).
    pub(crate) fn latched(&self, index: usize, discovery: bool, eval: impl FnOnce() -> bool) -> bool {
        let latch = &self.latches[index];
        if latch.load(Ordering::Relaxed) {
            return !discovery;
        }
        let value = eval();
        if value == discovery {
            latch.store(true, Ordering::Relaxed);
        }
        value
    }

    /// Counts one step that did `which`.
    pub(super) fn tally(&self, which: Tally) {
        self.tallies[which as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// What the steps taken so far did.
    pub(super) fn tallies(&self) -> Tallies {
        let [stores, crashes, restores, restores_with_channel_state, quiet_after_crash] = self.tally_counts();
        Tallies { stores, crashes, restores, restores_with_channel_state, quiet_after_crash }
    }

    /// The counters behind [`Bookkeeping::tallies`], in its field order.
    pub(crate) fn tally_counts(&self) -> [u64; 5] {
        self.tallies.each_ref().map(|t| t.load(Ordering::Relaxed))
    }

    /// Sets the counters (to a distributed search's sum over its ranks); missing ones to 0.
    pub(crate) fn set_tally_counts(&self, counts: &[u64]) {
        for (i, t) in self.tallies.iter().enumerate() {
            t.store(counts.get(i).copied().unwrap_or(0), Ordering::Relaxed);
        }
    }

    /// Whether checkpoint `stored` recovers: `judge`'s answer, asked the first time only.
    pub(super) fn recovers(&self, stored: &Arc<Stored<A>>, judge: impl FnOnce() -> bool) -> bool {
        if let Some(&known) = self.recovers.lock().unwrap_or_else(|e| e.into_inner()).get(stored) {
            return known;
        }
        let holds = judge();
        self.recovers.lock().unwrap_or_else(|e| e.into_inner()).insert(stored.clone(), holds);
        holds
    }
}
