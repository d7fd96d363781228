//! The checkpoint coordinator of the barrier algorithms: Flink's `CheckpointCoordinator`
//! reduced to its protocol, sans-IO like the core. It triggers checkpoints with increasing ids,
//! keeps at most `max_concurrent` pending, completes one when every process has acknowledged
//! it (a newer completed checkpoint subsumes older pending ones), aborts one that a process
//! declines, keeps triggering after aborts, and fails the job over when more checkpoints in a
//! row fail than it tolerates (Flink's `CheckpointFailureManager`). Drivers (the model, the threaded runtime) call
//! it and carry out what it answers; the data of each part stays with the driver.

use serde::{Deserialize, Serialize};
use smallvec::SmallVec;
use thiserror::Error;

use super::message::SnapshotId;
use super::topology::ProcessId;
use super::variant::Variant;

/// One pending checkpoint: its id and which processes have acknowledged it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
struct Pending {
    id: SnapshotId,
    #[serde(with = "super::collections::small")]
    acked: SmallVec<[u64; 1]>,
}

impl Pending {
    fn acked(&self, p: usize) -> bool {
        self.acked.get(p / 64).is_some_and(|w| w & (1 << (p % 64)) != 0)
    }

    fn count(&self) -> usize {
        self.acked.iter().map(|w| w.count_ones() as usize).sum()
    }
}

/// What an acknowledgement led to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ack {
    /// The checkpoint still waits for other processes.
    Pending,
    /// Every process has acknowledged: the checkpoint can be completed
    /// ([`Coordinator::complete`]).
    Acknowledged,
    /// The checkpoint is not pending (aborted or subsumed): the part is discarded.
    Stale,
}

/// What a counted checkpoint failure led to (Flink's `CHECKPOINT_DECLINED`: a process could not
/// take its part).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The checkpoint is not pending (aborted or subsumed already): nothing changes.
    Stale,
    /// It is aborted; the failures in a row are still within the tolerable number.
    Aborted,
    /// It is aborted, and one failure more than tolerable in a row: the job must fail over (the
    /// driver crashes and recovers every process, as [`Coordinator::failover`] says).
    FailJob,
}

/// A call the coordinator refuses; its state is unchanged.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum CoordinatorError {
    /// A trigger while triggering is stopped, or with `max_concurrent` checkpoints pending.
    #[error("no checkpoint can be triggered now ({pending} pending, at most {max}{})", if *.scheduled { "" } else { ", triggering stopped" })]
    CannotTrigger {
        /// Pending checkpoints.
        pending: usize,
        /// The most that may be pending.
        max: usize,
        /// Whether periodic triggering is on.
        scheduled: bool,
    },
    /// An acknowledgement from a process the coordinator does not know.
    #[error("acknowledgement of checkpoint {snapshot} from process {process}, which is not one of the {processes}")]
    UnknownProcess {
        /// The checkpoint.
        snapshot: SnapshotId,
        /// The process.
        process: ProcessId,
        /// How many processes there are.
        processes: usize,
    },
    /// A completion of a checkpoint that is not pending or not acknowledged by every process.
    #[error("checkpoint {0} cannot complete: it is not pending with every part acknowledged")]
    NotAcknowledged(SnapshotId),
    /// Storing a checkpoint that is not completed (or was lost in a failover, or subsumed).
    #[error("checkpoint {0} cannot be stored: it is not completed and waiting to be stored")]
    NotCompleted(SnapshotId),
    /// A second acknowledgement of one checkpoint by one process.
    #[error("process {process} acknowledged checkpoint {snapshot} twice")]
    DuplicateAck {
        /// The checkpoint.
        snapshot: SnapshotId,
        /// The process.
        process: ProcessId,
    },
}

/// The checkpoint coordinator. It serializes (serde) for sending to another process of the same
/// build (the format is the fields', not a stable one).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Coordinator {
    processes: usize,
    max_concurrent: usize,
    next: u32,
    #[serde(with = "super::collections::small")]
    pending: SmallVec<[Pending; 1]>,
    #[serde(with = "super::collections::small")]
    completed: SmallVec<[SnapshotId; 1]>,
    latest: Option<SnapshotId>,
    scheduled: bool,
    variant: Variant,
    tolerable: u32,
    failures: u32,
}

impl Coordinator {
    /// A coordinator of `processes` processes, with at most `max_concurrent` (at least 1)
    /// checkpoints pending; `variant` may be one of the
    /// coordinator faults (`trigger-stops-after-abort`, `no-subsumption`); other variants change nothing here.
    pub fn new(processes: usize, max_concurrent: usize, variant: Variant) -> Self {
        Coordinator {
            processes,
            max_concurrent: max_concurrent.max(1),
            next: 0,
            pending: SmallVec::new(),
            completed: SmallVec::new(),
            latest: None,
            scheduled: true,
            variant,
            tolerable: 0,
            failures: 0,
        }
    }

    /// The same coordinator tolerating `n` failed checkpoints in a row (Flink's
    /// `tolerable-failed-checkpoints`, 0 by default): one more fails the job over.
    pub fn with_tolerable_failures(mut self, n: u32) -> Self {
        self.tolerable = n;
        self
    }

    /// Counted checkpoint failures since the last completion or job failure.
    pub fn failures(&self) -> u32 {
        self.failures
    }

    /// Whether periodic triggering is on and fewer than `max_concurrent` checkpoints are
    /// pending: the next [`Coordinator::trigger`] succeeds.
    pub fn can_trigger(&self) -> bool {
        self.scheduled && self.pending.len() < self.max_concurrent
    }

    /// Whether periodic triggering is on.
    pub fn is_scheduled(&self) -> bool {
        self.scheduled
    }

    /// The id the next trigger takes (ids start at 0 and only increase, across failovers).
    pub fn next_id(&self) -> SnapshotId {
        SnapshotId(self.next)
    }

    /// Starts a new checkpoint; the driver sends its trigger to the sources (the initiators).
    pub fn trigger(&mut self) -> Result<SnapshotId, CoordinatorError> {
        if !self.can_trigger() {
            return Err(CoordinatorError::CannotTrigger {
                pending: self.pending.len(),
                max: self.max_concurrent,
                scheduled: self.scheduled,
            });
        }
        let id = SnapshotId(self.next);
        self.next += 1;
        self.pending.push(Pending { id, acked: SmallVec::from_elem(0, self.processes.div_ceil(64)) });
        Ok(id)
    }

    /// The pending checkpoints, oldest first.
    pub fn pending(&self) -> impl Iterator<Item = SnapshotId> + '_ {
        self.pending.iter().map(|p| p.id)
    }

    /// Whether `snapshot` is pending.
    pub fn is_pending(&self, snapshot: SnapshotId) -> bool {
        self.pending.iter().any(|p| p.id == snapshot)
    }

    /// Whether `process` has acknowledged pending checkpoint `snapshot`.
    pub fn has_acked(&self, snapshot: SnapshotId, process: ProcessId) -> bool {
        self.pending.iter().any(|p| p.id == snapshot && p.acked(process.index()))
    }

    /// The checkpoint stored last, the one a recovery restores (the newest stored one, unless
    /// they were stored out of order).
    pub fn latest(&self) -> Option<SnapshotId> {
        self.latest
    }

    /// Whether every process has acknowledged pending checkpoint `snapshot`: it can complete.
    pub fn is_acknowledged(&self, snapshot: SnapshotId) -> bool {
        self.pending.iter().any(|p| p.id == snapshot && p.count() == self.processes)
    }

    /// Whether `snapshot` is completed and waits to be stored.
    pub fn is_completed(&self, snapshot: SnapshotId) -> bool {
        self.completed.contains(&snapshot)
    }

    /// The completed checkpoints waiting to be stored, in completion order.
    pub fn completed(&self) -> impl Iterator<Item = SnapshotId> + '_ {
        self.completed.iter().copied()
    }

    /// `process` acknowledges `snapshot`: its part is complete and written.
    pub fn acknowledge(&mut self, process: ProcessId, snapshot: SnapshotId) -> Result<Ack, CoordinatorError> {
        let p = process.index();
        if p >= self.processes {
            return Err(CoordinatorError::UnknownProcess { snapshot, process, processes: self.processes });
        }
        let Some(i) = self.pending.iter().position(|c| c.id == snapshot) else { return Ok(Ack::Stale) };
        if self.pending[i].acked(p) {
            return Err(CoordinatorError::DuplicateAck { snapshot, process });
        }
        self.pending[i].acked[p / 64] |= 1 << (p % 64);
        if self.pending[i].count() < self.processes {
            return Ok(Ack::Pending);
        }
        Ok(Ack::Acknowledged)
    }

    /// Completes acknowledged checkpoint `snapshot` (Flink's finalization: its metadata is
    /// written): it leaves the pending list, and every older pending checkpoint is subsumed
    /// (aborted; returned, oldest first). It is not restorable until [`Coordinator::store`]d;
    /// a failover before that loses it.
    pub fn complete(&mut self, snapshot: SnapshotId) -> Result<Vec<SnapshotId>, CoordinatorError> {
        if !self.is_acknowledged(snapshot) {
            return Err(CoordinatorError::NotAcknowledged(snapshot));
        }
        let subsumed = self.older_than(snapshot, self.pending.iter().map(|c| c.id));
        self.pending.retain(|c| c.id != snapshot && !subsumed.contains(&c.id));
        self.completed.push(snapshot);
        self.reschedule();
        Ok(subsumed)
    }

    /// Stores completed checkpoint `snapshot` (Flink's completed-checkpoint store): it is the
    /// one a recovery restores from now on, and the failures in a row start again. Older
    /// completed checkpoints not yet stored are subsumed (returned, oldest first).
    pub fn store(&mut self, snapshot: SnapshotId) -> Result<Vec<SnapshotId>, CoordinatorError> {
        if !self.is_completed(snapshot) {
            return Err(CoordinatorError::NotCompleted(snapshot));
        }
        let subsumed = self.older_than(snapshot, self.completed.iter().copied());
        self.completed.retain(|id| *id != snapshot && !subsumed.contains(id));
        self.latest = Some(snapshot);
        self.failures = 0;
        Ok(subsumed)
    }

    /// A process could not take its part of `snapshot` (Flink's `CHECKPOINT_DECLINED`, counted
    /// against the tolerable failures once per checkpoint): a pending checkpoint is aborted, and
    /// the job fails over when the failures in a row exceed the tolerable number (the count
    /// starts again).
    pub fn fail(&mut self, snapshot: SnapshotId) -> Failure {
        if !self.decline(snapshot) {
            return Failure::Stale;
        }
        self.failures += 1;
        if self.failures > self.tolerable {
            self.failures = 0;
            return Failure::FailJob;
        }
        Failure::Aborted
    }

    /// A process gave `snapshot` up for a reason Flink does not count as a failure (it was not
    /// ready, a cancellation barrier or a newer checkpoint ended it): a pending checkpoint is
    /// aborted (true); one that is not pending any more is left alone (false).
    pub fn decline(&mut self, snapshot: SnapshotId) -> bool {
        let before = self.pending.len();
        self.pending.retain(|c| c.id != snapshot);
        let aborted = self.pending.len() < before;
        if aborted {
            self.reschedule();
        }
        aborted
    }

    /// The job fails over: every pending checkpoint, and every completed one not yet stored, is
    /// aborted (returned, oldest first) and periodic triggering restarts
    /// (trigger-stops-after-abort, FLINK-13256: a periodic trigger cancelled at max-concurrent
    /// stays cancelled, since no pending checkpoint is left to end and reschedule it).
    pub fn failover(&mut self) -> Vec<SnapshotId> {
        let mut aborted: Vec<SnapshotId> = self.pending.drain(..).map(|c| c.id).collect();
        aborted.extend(self.completed.drain(..));
        aborted.sort();
        if self.variant != Variant::TriggerStopsAfterAbort {
            self.scheduled = true;
        }
        aborted
    }

    /// The periodic timer fires while `max_concurrent` checkpoints are pending. Flink drops the
    /// request and the timer runs on: nothing changes (false). trigger-stops-after-abort
    /// (FLINK-13256): the periodic trigger is cancelled until a pending checkpoint completes or
    /// is declined (true when that changed anything).
    pub fn timer_at_max(&mut self) -> bool {
        let cancels = self.timer_cancels();
        if cancels {
            self.scheduled = false;
        }
        cancels
    }

    /// Whether [`Coordinator::timer_at_max`] would change anything now.
    pub fn timer_cancels(&self) -> bool {
        self.variant == Variant::TriggerStopsAfterAbort && self.scheduled && self.pending.len() >= self.max_concurrent
    }

    /// The checkpoints among `ids` that `snapshot` subsumes: the older ones (none under
    /// no-subsumption, where they stay and may complete or be stored later).
    fn older_than(&self, snapshot: SnapshotId, ids: impl Iterator<Item = SnapshotId>) -> Vec<SnapshotId> {
        if self.variant == Variant::NoSubsumption {
            return Vec::new();
        }
        ids.filter(|&id| id < snapshot).collect()
    }

    /// Bookkeeping after a pending checkpoint ended (completed, subsumed or declined): a
    /// periodic trigger cancelled at max-concurrent is rescheduled.
    fn reschedule(&mut self) {
        self.scheduled = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(i: u16) -> ProcessId {
        ProcessId(i)
    }

    /// Completes and stores `id`: what both subsumed.
    fn finish(c: &mut Coordinator, id: SnapshotId) -> Vec<SnapshotId> {
        let mut subsumed = c.complete(id).unwrap();
        subsumed.extend(c.store(id).unwrap());
        subsumed
    }

    #[test]
    fn completion_and_storing_are_steps_of_their_own() {
        let mut c = Coordinator::new(2, 2, Variant::None);
        let (a, b) = (c.trigger().unwrap(), c.trigger().unwrap());
        assert_eq!(c.complete(a), Err(CoordinatorError::NotAcknowledged(a)));
        assert_eq!(c.acknowledge(p(0), a), Ok(Ack::Pending));
        assert!(!c.is_acknowledged(a));
        assert_eq!(c.acknowledge(p(1), a), Ok(Ack::Acknowledged));
        assert!(c.is_acknowledged(a) && c.is_pending(a) && c.latest().is_none());
        assert_eq!(c.store(a), Err(CoordinatorError::NotCompleted(a)));
        // Completed: no longer pending, not yet restorable.
        assert_eq!(c.complete(a), Ok(vec![]));
        assert!(!c.is_pending(a) && c.is_completed(a) && c.latest().is_none());
        assert_eq!(c.completed().collect::<Vec<_>>(), [a]);
        assert_eq!(c.complete(a), Err(CoordinatorError::NotAcknowledged(a)));
        // A failover now loses it with the pending one.
        let mut lost = c.clone();
        assert_eq!(lost.failover(), vec![a, b]);
        assert!(lost.latest().is_none() && !lost.is_completed(a));
        // Stored: the one a recovery restores.
        assert_eq!(c.store(a), Ok(vec![]));
        assert_eq!(c.latest(), Some(a));
        assert!(!c.is_completed(a));
        assert_eq!(c.store(a), Err(CoordinatorError::NotCompleted(a)));
        assert!(c.complete(b).unwrap_err().to_string().contains("cannot complete"));
    }

    #[test]
    fn storing_a_newer_checkpoint_subsumes_an_older_completed_one_not_yet_stored() {
        for variant in [Variant::None, Variant::NoSubsumption] {
            let mut c = Coordinator::new(1, 2, variant);
            let (a, b) = (c.trigger().unwrap(), c.trigger().unwrap());
            assert_eq!(c.acknowledge(p(0), a), Ok(Ack::Acknowledged));
            assert_eq!(c.complete(a), Ok(vec![]));
            assert_eq!(c.acknowledge(p(0), b), Ok(Ack::Acknowledged));
            assert_eq!(c.complete(b), Ok(vec![]));
            let subsumed = c.store(b).unwrap();
            assert_eq!(c.latest(), Some(b));
            if variant == Variant::None {
                assert_eq!(subsumed, vec![a]);
                assert_eq!(c.store(a), Err(CoordinatorError::NotCompleted(a)));
            } else {
                assert!(subsumed.is_empty());
                assert_eq!(c.store(a), Ok(vec![]));
                assert_eq!(c.latest(), Some(a), "no-subsumption: stored out of order");
            }
        }
    }

    #[test]
    fn triggers_increasing_ids_up_to_max_concurrent() {
        let mut c = Coordinator::new(2, 2, Variant::None);
        assert_eq!(c.trigger(), Ok(SnapshotId(0)));
        assert_eq!(c.trigger(), Ok(SnapshotId(1)));
        assert!(!c.can_trigger());
        assert_eq!(c.trigger(), Err(CoordinatorError::CannotTrigger { pending: 2, max: 2, scheduled: true }));
        assert_eq!(c.pending().collect::<Vec<_>>(), [SnapshotId(0), SnapshotId(1)]);
        assert_eq!(c.next_id(), SnapshotId(2));
        assert_eq!(Coordinator::new(1, 0, Variant::None).max_concurrent, 1);
    }

    #[test]
    fn completes_when_every_process_acknowledged() {
        let mut c = Coordinator::new(3, 1, Variant::None);
        let id = c.trigger().unwrap();
        assert_eq!(c.acknowledge(p(0), id), Ok(Ack::Pending));
        assert!(c.has_acked(id, p(0)) && !c.has_acked(id, p(1)));
        assert_eq!(c.acknowledge(p(0), id), Err(CoordinatorError::DuplicateAck { snapshot: id, process: p(0) }));
        assert_eq!(c.acknowledge(p(2), id), Ok(Ack::Pending));
        assert_eq!(c.latest(), None);
        assert_eq!(c.acknowledge(p(1), id), Ok(Ack::Acknowledged));
        assert_eq!(finish(&mut c, id), vec![]);
        assert_eq!(c.latest(), Some(id));
        assert!(!c.is_pending(id) && c.can_trigger());
        assert_eq!(c.acknowledge(p(1), id), Ok(Ack::Stale));
        let err = c.acknowledge(p(3), id);
        assert_eq!(err, Err(CoordinatorError::UnknownProcess { snapshot: id, process: p(3), processes: 3 }));
    }

    #[test]
    fn acknowledgements_of_many_processes() {
        let mut c = Coordinator::new(70, 1, Variant::None);
        let id = c.trigger().unwrap();
        for i in 0..69 {
            assert_eq!(c.acknowledge(p(i), id), Ok(Ack::Pending), "{i}");
        }
        assert!(c.has_acked(id, p(68)) && !c.has_acked(id, p(69)));
        assert_eq!(c.acknowledge(p(69), id), Ok(Ack::Acknowledged));
        assert_eq!(finish(&mut c, id), vec![]);
    }

    #[test]
    fn a_newer_completed_checkpoint_subsumes_older_pending_ones() {
        let mut c = Coordinator::new(1, 3, Variant::None);
        let (a, b, d) = (c.trigger().unwrap(), c.trigger().unwrap(), c.trigger().unwrap());
        assert_eq!(c.acknowledge(p(0), b), Ok(Ack::Acknowledged));
        assert_eq!(finish(&mut c, b), vec![a]);
        assert_eq!(c.pending().collect::<Vec<_>>(), [d]);
        assert_eq!(c.acknowledge(p(0), a), Ok(Ack::Stale));
        assert_eq!(c.latest(), Some(b));
        assert!(c.is_scheduled());
    }

    #[test]
    fn no_subsumption_variant_lets_an_older_checkpoint_complete_after_a_newer_one() {
        let mut c = Coordinator::new(1, 2, Variant::NoSubsumption);
        let (a, b) = (c.trigger().unwrap(), c.trigger().unwrap());
        assert_eq!(c.acknowledge(p(0), b), Ok(Ack::Acknowledged));
        assert_eq!(finish(&mut c, b), vec![]);
        assert!(c.is_pending(a));
        assert_eq!(c.acknowledge(p(0), a), Ok(Ack::Acknowledged));
        assert_eq!(finish(&mut c, a), vec![]);
        assert_eq!(c.latest(), Some(a));
    }

    #[test]
    fn a_decline_aborts_and_triggering_goes_on() {
        let mut c = Coordinator::new(2, 1, Variant::None);
        let a = c.trigger().unwrap();
        assert!(c.decline(a));
        assert!(!c.decline(a));
        assert!(c.can_trigger());
        assert_eq!(c.trigger(), Ok(SnapshotId(1)));
        assert_eq!(c.acknowledge(p(0), a), Ok(Ack::Stale));
    }

    #[test]
    fn failures_in_a_row_beyond_the_tolerable_number_fail_the_job() {
        // Default 0: the first counted failure fails the job; the count starts again after it.
        let mut c = Coordinator::new(2, 1, Variant::None);
        let a = c.trigger().unwrap();
        assert_eq!(c.fail(a), Failure::FailJob);
        assert_eq!((c.failures(), c.fail(a)), (0, Failure::Stale));
        // Tolerating 1: the second failure in a row fails it; a completion between them resets.
        let mut c = Coordinator::new(1, 1, Variant::None).with_tolerable_failures(1);
        let a = c.trigger().unwrap();
        assert_eq!(c.fail(a), Failure::Aborted);
        assert_eq!(c.failures(), 1);
        let b = c.trigger().unwrap();
        assert_eq!(c.acknowledge(p(0), b), Ok(Ack::Acknowledged));
        assert_eq!(finish(&mut c, b), vec![]);
        assert_eq!(c.failures(), 0);
        let d = c.trigger().unwrap();
        assert_eq!(c.fail(d), Failure::Aborted);
        let e = c.trigger().unwrap();
        assert!(c.decline(e), "an uncounted abort");
        assert_eq!(c.failures(), 1);
        let f = c.trigger().unwrap();
        assert_eq!(c.fail(f), Failure::FailJob);
        assert_eq!(c.failures(), 0);
        assert!(c.can_trigger(), "a failure leaves triggering on");
    }

    #[test]
    fn failover_aborts_every_pending_checkpoint_and_triggering_restarts() {
        let mut c = Coordinator::new(2, 2, Variant::None);
        let (a, b) = (c.trigger().unwrap(), c.trigger().unwrap());
        assert_eq!(c.acknowledge(p(0), a), Ok(Ack::Pending));
        assert_eq!(c.failover(), vec![a, b]);
        assert!(c.can_trigger());
        assert_eq!(c.trigger(), Ok(SnapshotId(2)));
        assert_eq!(c.latest(), None);
    }

    #[test]
    fn a_timer_at_max_concurrent_changes_nothing_in_the_correct_coordinator() {
        let mut c = Coordinator::new(1, 1, Variant::None);
        let a = c.trigger().unwrap();
        assert!(!c.timer_at_max());
        assert!(c.is_scheduled());
        assert_eq!(c.failover(), vec![a]);
        assert!(c.can_trigger());
    }

    #[test]
    fn trigger_stops_after_abort_variant_loses_the_timer_only_on_a_failover() {
        // FLINK-13256: the timer fires at max-concurrent and is cancelled; the pending
        // checkpoint's completion or decline reschedules it, a failover's abort does not.
        for end in 0..3 {
            let mut c = Coordinator::new(1, 2, Variant::TriggerStopsAfterAbort);
            let a = c.trigger().unwrap();
            assert!(!c.timer_at_max(), "one of two pending: the timer triggers");
            let b = c.trigger().unwrap();
            assert!(c.timer_at_max() && !c.is_scheduled());
            assert!(!c.timer_at_max(), "already cancelled");
            match end {
                0 => assert!(c.decline(b)),
                1 => {
                    assert_eq!(c.acknowledge(p(0), b), Ok(Ack::Acknowledged));
                    assert_eq!(finish(&mut c, b), vec![a]);
                }
                _ => {
                    assert_eq!(c.failover(), vec![a, b]);
                    assert!(!c.is_scheduled() && !c.can_trigger());
                    let err = c.trigger();
                    assert!(matches!(err, Err(CoordinatorError::CannotTrigger { scheduled: false, .. })), "{err:?}");
                    assert!(err.unwrap_err().to_string().contains("triggering stopped"));
                    continue;
                }
            }
            assert!(c.is_scheduled() && c.can_trigger(), "end {end}");
        }
        // Without the timer at max-concurrent, a failover reschedules nothing it had not.
        let mut c = Coordinator::new(1, 1, Variant::TriggerStopsAfterAbort);
        let a = c.trigger().unwrap();
        assert_eq!(c.failover(), vec![a]);
        assert!(c.can_trigger());
    }
}
