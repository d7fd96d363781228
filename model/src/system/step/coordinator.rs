//! The barrier algorithms' coordinator steps: a trigger, the periodic timer at the maximum, an
//! acknowledgement, a completion, a store, a decline and a crash, with what they do to the
//! processes (a trigger handled, parts of checkpoints that are over discarded, budgets kept for a
//! recovery). With Chandy–Lamport there is no coordinator, and each of them is no step.

use std::sync::Arc;

use chandy_lamport::apps::spec::Spec;
use chandy_lamport::check::StepInput;
use chandy_lamport::{Ack, Failure, ProcessId, Slot, SnapshotId};
use smallvec::SmallVec;

use super::super::action::Stop;
use super::super::bookkeeping::Tally;
use super::super::machine::SnapshotModel;
use super::super::memo::Scratch;
use super::super::state::{State, Stored};

impl<A: Spec> SnapshotModel<A> {
    /// The coordinator triggers its next checkpoint: every source is to initiate it.
    pub(super) fn trigger(&self, next: &mut State<A>) -> Result<(), Stop> {
        let ck = next.ckpt.as_mut().ok_or(Stop::NotAStep)?;
        let id = ck.coord.trigger().map_err(Stop::refused)?;
        for p in self.cfg.topology.processes().filter(|p| self.cfg.initiators[p.index()]) {
            ck.triggers[p.index()] |= 1 << id.0;
        }
        Ok(())
    }

    /// Process `p` handles the trigger of `snapshot`, if it had one (an initiation).
    pub(super) fn take_trigger(&self, next: &mut State<A>, p: usize, snapshot: SnapshotId) {
        if let Some(ck) = next.ckpt.as_mut() {
            ck.triggers[p] &= !(1 << snapshot.0);
        }
    }

    /// The periodic timer fires with the most checkpoints pending.
    pub(super) fn timer_at_max(&self, next: &mut State<A>) -> Result<(), Stop> {
        next.ckpt.as_mut().ok_or(Stop::NotAStep)?.coord.timer_at_max();
        Ok(())
    }

    /// `process` acknowledges its complete part of `snapshot`; a part the coordinator no longer
    /// waits for is discarded.
    pub(super) fn ack(&self, next: &mut State<A>, process: u8, snapshot: u8) -> Result<(), Stop> {
        let (p, s) = (process as usize, SnapshotId(u32::from(snapshot)));
        let ck = next.ckpt.as_mut().ok_or(Stop::NotAStep)?;
        match ck.coord.acknowledge(ProcessId(u16::from(process)), s).map_err(Stop::refused)? {
            Ack::Pending | Ack::Acknowledged => {}
            Ack::Stale => {
                let t = &self.cfg.topology;
                next.procs[p].edit(|h| h.take_local_snapshot(t, s).map(drop)).map_err(Stop::refused)?;
            }
        }
        Ok(())
    }

    /// The coordinator completes `snapshot`; the older pending checkpoints it subsumes are over.
    pub(super) fn complete(&self, next: &mut State<A>, snapshot: u8) -> Result<(), Stop> {
        let s = SnapshotId(u32::from(snapshot));
        let subsumed = next.ckpt.as_mut().ok_or(Stop::NotAStep)?.coord.complete(s).map_err(Stop::refused)?;
        self.discard(next, &subsumed);
        Ok(())
    }

    /// Completed `snapshot` is stored, with the processes' budgets when they recorded it: a
    /// recovery restores it from now on, and it is over for the processes.
    pub(super) fn store(&self, next: &mut State<A>, snapshot: u8) -> Result<(), Stop> {
        let t = &self.cfg.topology;
        let s = SnapshotId(u32::from(snapshot));
        let Some(rec) = self.recorded(next, s) else {
            return Err(Stop::refused(format!("checkpoint {s} completed, but a house holds no complete part")));
        };
        let ck = next.ckpt.as_mut().ok_or(Stop::NotAStep)?;
        let mut over = ck.coord.store(s).map_err(Stop::refused)?;
        ck.ids_decreased |= ck.latest.as_ref().is_some_and(|l| l.id > s);
        let mut budgets: SmallVec<[u8; 4]> = SmallVec::from_elem(0, t.len());
        for &(id, process, budget) in &ck.budgets {
            if u32::from(id) == s.0 {
                budgets[usize::from(process)] = budget;
            }
        }
        ck.latest = Some(Arc::new(Stored { id: s, rec, budgets }));
        self.books.tally(Tally::Stores);
        over.push(s);
        self.discard(next, &over);
        Ok(())
    }

    /// `process` declines `snapshot` (its state could not be written).
    pub(super) fn decline(
        &self,
        next: &mut State<A>,
        process: u8,
        snapshot: u8,
        scratch: &mut Scratch<A>,
    ) -> Result<(), Stop> {
        let t = &self.cfg.topology;
        let (p, s) = (process as usize, SnapshotId(u32::from(snapshot)));
        let ck = next.ckpt.as_mut().ok_or(Stop::NotAStep)?;
        ck.declines = ck.declines.checked_sub(1).ok_or(Stop::NotAStep)?;
        // A counted failure (the process's part could not be written): one more in a row
        // than tolerated fails the job over.
        let failure = ck.coord.fail(s);
        next.procs[p].edit(|h| h.decline(t, s, &mut scratch.fx)).map_err(Stop::refused)?;
        self.apply(next, p, StepInput::Idle, &scratch.fx, 0);
        match failure {
            Failure::Stale => {}
            Failure::Aborted => self.discard(next, &[s]),
            Failure::FailJob => self.recover(next),
        }
        Ok(())
    }

    /// The job crashes and recovers.
    pub(super) fn crash(&self, next: &mut State<A>) -> Result<(), Stop> {
        let ck = next.ckpt.as_mut().ok_or(Stop::NotAStep)?;
        ck.crashes = ck.crashes.checked_sub(1).ok_or(Stop::NotAStep)?;
        self.recover(next);
        Ok(())
    }

    /// `process` recorded its state for `snapshot`: while the checkpoint is pending, its budget now
    /// is kept, to be stored (and restored) with it.
    pub(super) fn keep_budget(&self, next: &mut State<A>, process: usize, snapshot: SnapshotId) {
        let budget = next.budget[process];
        if let Some(ck) = next.ckpt.as_mut().filter(|ck| ck.coord.is_pending(snapshot)) {
            ck.budgets.push((snapshot.0 as u8, process as u8, budget));
        }
    }

    /// A process gave `snapshot` up: the coordinator aborts it if it is pending, and the parts of
    /// it the processes completed are discarded.
    pub(super) fn abort(&self, next: &mut State<A>, snapshot: SnapshotId) {
        if next.ckpt.as_mut().is_some_and(|ck| ck.coord.decline(snapshot)) {
            self.discard(next, &[snapshot]);
        }
    }

    /// Checkpoints `ids` are over (aborted, subsumed or stored): their triggers not yet handled
    /// are dropped and every process's complete part of them is discarded.
    fn discard(&self, next: &mut State<A>, ids: &[SnapshotId]) {
        let t = &self.cfg.topology;
        if let Some(ck) = next.ckpt.as_mut() {
            for bits in ck.triggers.iter_mut() {
                *bits &= !ids.iter().fold(0u8, |b, id| b | 1 << id.0);
            }
            ck.budgets.retain(|(id, _, _)| !ids.iter().any(|i| i.0 == u32::from(*id)));
        }
        for p in next.procs.iter_mut() {
            for &id in ids {
                if p.slot(id).is_some_and(Slot::is_complete) {
                    p.edit(|process| process.take_local_snapshot(t, id).map(drop)).ok();
                }
            }
        }
    }
}
