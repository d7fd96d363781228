//! What only the fault variants keep at a process, apart from the correct algorithm's state.
//!
//! A [`Process`](super::Process) running the correct algorithm has no [`Faults`]: its `faults`
//! field is `None` (one pointer, nothing allocated, nothing to clone), and every fault path
//! starts with that `None` check. Only a variant whose fault needs state of its own
//! ([`Faults::for_variant`]) carries one, boxed:
//!
//! - `send-before-marker`: the snapshots whose markers are held back until the process's next
//!   step (or until it is idle);
//! - `stale-state`: the application state before the latest receipt, recorded instead of the
//!   current one;
//! - `late-record`, `deferred-unaligned-checkpoint`: nothing stored here (the deferred recording
//!   is a slot not yet recorded), but they defer work, which a driver releases through
//!   [`Process::release_faults`](super::Process::release_faults) when the process is idle.

use std::hash::{Hash, Hasher};

use serde::{Deserialize, Serialize};

use super::super::application::Application;
use super::super::collections::Rare;
use super::super::message::SnapshotId;
use super::super::variant::Variant;

/// The fault state of one process running a fault variant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(bound(serialize = "A: Serialize", deserialize = "A: Deserialize<'de>"))]
pub(super) struct Faults<A: Application> {
    /// `send-before-marker`: snapshots whose markers wait for the next step.
    held: Rare<SnapshotId>,
    /// `stale-state`: the application state before the latest receipt.
    stale: Option<A>,
}

/// Nothing held, no stale state.
impl<A: Application> Default for Faults<A> {
    fn default() -> Self {
        Faults { held: Rare::default(), stale: None }
    }
}

impl<A: Application> Faults<A> {
    /// The fault state a process running `variant` starts with: `None` for the correct algorithm
    /// and for every variant whose fault acts without state of its own.
    pub(super) fn for_variant(variant: Variant) -> Option<Box<Self>> {
        Self::kept_by(variant).then(Box::default)
    }

    /// Whether a process running `variant` keeps fault state: the variants that hold markers
    /// back, record a stale state, or defer their recording.
    pub(super) fn kept_by(variant: Variant) -> bool {
        matches!(
            variant,
            Variant::SendBeforeMarker
                | Variant::StaleState
                | Variant::LateRecord
                | Variant::DeferredUnalignedCheckpoint
        )
    }

    /// `late-record` and `deferred-unaligned-checkpoint` (FLINK-17568): a first marker or
    /// barrier starts the snapshot, but the state is recorded (and the markers sent) only after
    /// one more incoming message is taken in, or when the process is idle.
    pub(super) fn defer_recording(variant: Variant) -> bool {
        matches!(variant, Variant::LateRecord | Variant::DeferredUnalignedCheckpoint)
    }

    /// `send-before-marker`: the markers of `snapshot`, just recorded, wait.
    pub(super) fn hold(&mut self, snapshot: SnapshotId) {
        self.held.vec_mut().push(snapshot);
    }

    /// `send-before-marker`: whether markers wait.
    pub(super) fn holds_markers(&self) -> bool {
        !self.held.as_slice().is_empty()
    }

    /// `send-before-marker`: the snapshots whose markers leave now, oldest first; none wait after.
    pub(super) fn release(&mut self) -> Vec<SnapshotId> {
        self.held.take()
    }

    /// `stale-state`: `before`, the state as it is before a receipt, is what the next recording
    /// takes.
    pub(super) fn remember(&mut self, before: &A) {
        self.stale = Some(before.clone());
    }

    /// `stale-state`: the state a recording takes instead of the current one, if any.
    pub(super) fn stale(&self) -> Option<&A> {
        self.stale.as_ref()
    }

    /// Maps the application state it holds by `app` (a relabelling of processes).
    pub(super) fn map_app(&mut self, app: &dyn Fn(&A) -> A) {
        self.stale = self.stale.as_ref().map(app);
    }

    /// Feeds `faults` into `state` as a process's `held` and `stale` fields were fed before they
    /// moved here (`None`: both empty), so that a process hashes as it did: the model checker's
    /// fingerprints, symmetry representatives and shards do not move with the field.
    pub(super) fn hash_as_fields<H: Hasher>(faults: Option<&Self>, state: &mut H) {
        match faults {
            Some(f) => {
                f.held.hash(state);
                f.stale.hash(state);
            }
            None => {
                Rare::<SnapshotId>::default().hash(state);
                None::<&A>.hash(state);
            }
        }
    }
}
