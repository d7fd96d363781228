//! The model of a resolved configuration: processes running the library's core
//! (`chandy_lamport::Process`, with an application inside: any [`Spec`]) joined by FIFO
//! channels (its stateright face is `graph::walk`), and what it derives from the
//! configuration once: the application's options and stable predicates, the conserved total,
//! the core's variant, the failure-free run's quiet ends. Every marker rule is the core's; the
//! model only chooses which event happens next (see `enabling`) and carries out the effects the
//! core returns (see `step`). A step the core refuses is not dropped: it leads to a dead-end
//! state marked refused, which fails the property "the core accepts every step the model
//! offers".

use std::sync::Arc;

use chandy_lamport::apps::spec::{stable_predicates, Setup, Spec, Stable};
use chandy_lamport::{SnapshotId, Topology, Variant};

use super::bookkeeping::{Bookkeeping, Tallies};
use super::config::Resolved;
use super::state::{State, Stored};

/// The most states of the failure-free run whose quiet outcomes exactly-once is judged against.
pub const QUIET_STATES: usize = 2_000_000;

/// The model of a resolved configuration, running application `A` under any of the snapshot
/// algorithms (`cfg.algorithm`): what every checker walks (its `Model` implementation is in
/// `graph::walk`).
pub struct SnapshotModel<A: Spec> {
    /// The configuration.
    pub cfg: Resolved,
    /// The application's options.
    pub setup: Setup,
    /// The stable predicates checked with the stable-property rule, in bit order.
    pub predicates: Vec<Stable<A>>,
    /// The conserved quantity at the start.
    pub(super) initial_total: u64,
    /// The core's variant: the configured one, but none for a channel's fault (the model's).
    pub(super) core_variant: Variant,
    /// The registered symmetry group, once symmetry reduction is on.
    pub(crate) sym: u16,
    /// Barrier algorithms: every way the failure-free run (the application alone, no
    /// snapshots, crashes or declines) can end quiet, as the processes' states; `None` with
    /// Chandy–Lamport, or if that run has more than [`QUIET_STATES`] states.
    pub expected: Option<std::collections::HashSet<Vec<A>>>,
    /// The latches, tallies and caches that serve the checker.
    pub(crate) books: Bookkeeping<A>,
}

impl<A: Spec> SnapshotModel<A> {
    /// A model of `cfg`.
    pub fn new(cfg: Resolved) -> Self {
        let initial_total = cfg.topology.processes().map(|p| A::initial(p, cfg.tokens[p.index()]).held()).sum();
        let core_variant = if cfg.variant.is_channel_fault() { Variant::None } else { cfg.variant };
        let setup = Setup { internal: cfg.internal };
        let predicates = stable_predicates::<A>();
        // Coordinated: exactly-once after a crash is judged against the failure-free run's quiet
        // outcomes.
        let expected = if cfg.algorithm.coordinated() {
            let initial = cfg.topology.processes().map(|p| A::initial(p, cfg.tokens[p.index()])).collect();
            let budgets = vec![cfg.sends; cfg.topology.len()];
            let (t, theft) = (&cfg.topology, cfg.theft);
            chandy_lamport::apps::spec::quiet_outcomes(t, initial, &budgets, &setup, theft, QUIET_STATES)
        } else {
            None
        };
        SnapshotModel {
            cfg,
            setup,
            predicates,
            initial_total,
            core_variant,
            sym: 0,
            expected,
            books: Bookkeeping::new(),
        }
    }

    /// What the steps taken so far did (barrier algorithms; zeros with Chandy–Lamport).
    pub fn tallies(&self) -> Tallies {
        self.books.tallies()
    }

    /// Whether a step has no effect but its successor (and the properties' latches, set once):
    /// only the barrier algorithms' steps count [`Tallies`].
    pub fn steps_are_pure(&self) -> bool {
        !self.cfg.algorithm.coordinated()
    }

    /// Whether `s` comes after a crash (barrier algorithms).
    pub fn after_crash(&self, s: &State<A>) -> bool {
        s.ckpt.as_ref().is_some_and(|ck| ck.failed_over)
    }

    /// Whether `stored`, restored and run failure-free (its processes with their budgets, its
    /// records in transit in front of their channels, as a recovery restores it), ends quiet only
    /// as the failure-free run from the start does, and ends at all. False when either run has
    /// more than [`QUIET_STATES`] states: unjudged is no pass. Computed once per checkpoint.
    pub fn recovers(&self, stored: &Arc<Stored<A>>) -> bool {
        self.books.recovers(stored, || {
            let t = &self.cfg.topology;
            let outcomes = chandy_lamport::apps::spec::quiet_outcomes_from(
                t,
                stored.rec.processes.clone(),
                &stored.budgets,
                stored.rec.messages(),
                &self.setup,
                self.cfg.theft,
                QUIET_STATES,
            );
            match (outcomes, self.expected.as_ref()) {
                (Some(ends), Some(expected)) => !ends.is_empty() && ends.is_subset(expected),
                _ => false,
            }
        })
    }

    /// Stamps the initial states with symmetry group `sym` (a registered group's index, 0 for
    /// none); see `reduce::symmetry`, whose `enable_symmetry` calls it.
    pub(crate) fn set_symmetry(&mut self, sym: u16) {
        self.sym = sym;
    }

    /// The topology.
    pub fn topology(&self) -> &Topology {
        &self.cfg.topology
    }

    /// The conserved quantity at the start (jars, for the bank).
    pub fn initial_total(&self) -> u64 {
        self.initial_total
    }

    /// Snapshot ids modelled.
    pub fn snapshot_ids(&self) -> impl Iterator<Item = SnapshotId> {
        (0..u32::from(self.cfg.snapshots)).map(SnapshotId)
    }
}
