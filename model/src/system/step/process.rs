//! The steps a process takes of its own accord: its application's moves (a send, an internal
//! step), an initiation, a flush of the work a fault variant deferred, and with unaligned
//! barriers a transmission from its output buffer.

use chandy_lamport::apps::spec::{Move, Spec};
use chandy_lamport::check::StepInput;
use chandy_lamport::{ChannelId, SnapshotId};

use super::super::action::Stop;
use super::super::machine::SnapshotModel;
use super::super::memo::{Input, Scratch};
use super::super::state::State;
use super::modes::Before;

impl<A: Spec> SnapshotModel<A> {
    /// `from` sends `msg` on `channel`, spending its budget.
    pub(super) fn send(
        &self,
        next: &mut State<A>,
        from: u8,
        channel: u8,
        msg: A::Msg,
        before: Before,
        scratch: &mut Scratch<A>,
    ) -> Result<(), Stop> {
        let t = &self.cfg.topology;
        let (p, c) = (from as usize, ChannelId(u32::from(channel)));
        next.budget[p] -= A::cost(&Move::Send { channel: c, msg });
        let (message, tag, input) = self.stamp_send(next, p, msg);
        scratch.step(t, &mut next.procs[p], Input::Send(c, message)).map_err(Stop::refused)?;
        self.ghost_send(next, c, message, tag, before);
        self.apply(next, p, input, &scratch.fx, tag);
        Ok(())
    }

    /// `process` takes internal step `step`, spending its budget.
    pub(super) fn internal(
        &self,
        next: &mut State<A>,
        process: u8,
        step: A::Step,
        scratch: &mut Scratch<A>,
    ) -> Result<(), Stop> {
        let t = &self.cfg.topology;
        let p = process as usize;
        next.budget[p] -= A::cost(&Move::Internal(step));
        scratch.step(t, &mut next.procs[p], Input::Internal(step)).map_err(Stop::refused)?;
        self.trace_internal(next, p, step);
        self.apply(next, p, StepInput::Idle, &scratch.fx, 0);
        Ok(())
    }

    /// `process` initiates `snapshot` (with the barrier algorithms, handling the coordinator's
    /// trigger for it).
    pub(super) fn initiate(
        &self,
        next: &mut State<A>,
        process: u8,
        snapshot: u8,
        scratch: &mut Scratch<A>,
    ) -> Result<(), Stop> {
        let t = &self.cfg.topology;
        let p = process as usize;
        let s = SnapshotId(u32::from(snapshot));
        self.take_trigger(next, p, s);
        self.ghost_activate(next, s);
        scratch.step(t, &mut next.procs[p], Input::Initiate(s)).map_err(Stop::refused)?;
        self.apply(next, p, StepInput::Initiate, &scratch.fx, 0);
        Ok(())
    }

    /// `process` is idle and does the work a fault variant deferred.
    pub(super) fn flush(&self, next: &mut State<A>, process: u8, scratch: &mut Scratch<A>) {
        let p = process as usize;
        scratch.step(&self.cfg.topology, &mut next.procs[p], Input::ReleaseFaults).expect("flushing is never refused");
        self.apply(next, p, StepInput::Idle, &scratch.fx, 0);
    }

    /// Unaligned barriers: the oldest message of `process`'s output buffer for `channel` goes onto
    /// the wire, with the tag it was sent with.
    pub(super) fn transmit(
        &self,
        next: &mut State<A>,
        process: u8,
        channel: u8,
        scratch: &mut Scratch<A>,
    ) -> Result<(), Stop> {
        let p = process as usize;
        let c = ChannelId(u32::from(channel));
        scratch.step(&self.cfg.topology, &mut next.procs[p], Input::Transmit(c)).map_err(Stop::refused)?;
        let tag = self.ghost_transmit(next, c);
        self.apply(next, p, StepInput::Idle, &scratch.fx, tag);
        Ok(())
    }
}
