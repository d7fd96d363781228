//! What the property modes add to a step. Full mode's ghost data hears of every message sent,
//! buffered, transmitted, received or stolen, of every snapshot started, recorded by a process
//! and complete everywhere, and of every crash; literal mode's history traces each step's
//! events and seals them. Basic mode adds nothing: a state without ghost data or history
//! passes through these untouched (only a sent message's stamp asks for the mode itself).

use chandy_lamport::apps::spec::Spec;
use chandy_lamport::check::{EventKind, MsgId, StepInput, Tracer};
use chandy_lamport::{ChannelId, Effect, Message, ProcessId, SnapshotId};
use smallvec::SmallVec;

use super::super::chans::Tagged;
use super::super::config::Mode;
use super::super::machine::SnapshotModel;
use super::super::stamp::Stamp;
use super::super::state::{StampedMsg, State};

/// What the property modes read of the state a step is taken from.
#[derive(Clone, Copy)]
pub(super) struct Before {
    /// Full mode: the snapshots complete, one bit per id (0 in the other modes).
    pub(super) done: u32,
    /// Literal mode: how many events the trace holds (0 in the other modes).
    events: usize,
}

impl<A: Spec> SnapshotModel<A> {
    /// What the property modes read of `s` before a step is taken from it.
    pub(super) fn before_step(&self, s: &State<A>) -> Before {
        let done = if s.ghost.is_some() { self.done_bits(s) } else { 0 };
        let events = s.history.as_ref().map_or(0, |h| h.trace.events.len());
        Before { done, events }
    }

    /// After the step: full mode hears of the snapshots it completed, literal mode seals the
    /// events it traced.
    pub(super) fn after_step(&self, next: &mut State<A>, before: Before) {
        self.completed(next, before.done);
        if let Some(h) = next.history.as_mut() {
            h.seal(before.events);
        }
    }

    /// The message process `p` sends with `msg` inside, its tag and the trace's input. Basic mode
    /// stamps nothing; full and literal modes number each sender's messages. Literal mode tags a
    /// message with its id in the trace, the others with the snapshots its sender has recorded.
    pub(super) fn stamp_send(&self, next: &mut State<A>, p: usize, msg: A::Msg) -> (StampedMsg<A>, u32, StepInput) {
        let seq = match self.cfg.mode {
            Mode::Basic => 0,
            Mode::Full | Mode::Literal => {
                next.sent[p] += 1;
                next.sent[p]
            }
        };
        let message = Stamp { seq, msg };
        let (tag, input) = match next.history.as_mut() {
            Some(h) => {
                let id = MsgId(h.next_msg);
                h.next_msg += 1;
                (id.0 as u32, StepInput::Send(id))
            }
            None => (self.recorded_bits(&next.procs[p]), StepInput::Send(MsgId(0))),
        };
        (message, tag, input)
    }

    /// Full mode: the ghost hears of `message` sent on `c` with `tag` (with unaligned barriers,
    /// into its sender's output buffer).
    pub(super) fn ghost_send(
        &self,
        next: &mut State<A>,
        c: ChannelId,
        message: StampedMsg<A>,
        tag: u32,
        before: Before,
    ) {
        let receiver = self.recorded_bits(&next.procs[self.cfg.topology.channel(c).to.index()]);
        if let Some(g) = next.ghost.as_mut() {
            g.on_send(c.index(), message, tag, receiver, before.done);
            if self.cfg.algorithm.buffers_output() {
                g.on_buffer(c.index(), tag);
            }
        }
    }

    /// Full mode: the ghost hears of the message at `i` of `c` received, while it is still there.
    pub(super) fn ghost_receive(&self, next: &mut State<A>, c: ChannelId, i: usize, before: Before) {
        let q = self.cfg.topology.channel(c).to.index();
        let d = &mut *next.0;
        if let (Some(g), Some(Tagged { msg: Message::App(message), tag })) =
            (d.ghost.as_mut(), d.chans.get(c.index()).get(i))
        {
            let recorded = self.recorded_bits(&d.procs[q]);
            g.on_receive(&d.chans, c.index(), i, *message, *tag, recorded, before.done);
        }
    }

    /// Full mode: the ghost hears of `message`, sent with `tag`, stolen from `c`.
    pub(super) fn ghost_theft(
        &self,
        next: &mut State<A>,
        c: ChannelId,
        message: StampedMsg<A>,
        tag: u32,
        before: Before,
    ) {
        if let Some(g) = next.ghost.as_mut() {
            g.on_theft(c.index(), message, A::carried(&message.msg), tag, before.done);
        }
    }

    /// Full mode: the ghost hears that the oldest message of `c`'s output buffer goes onto the
    /// wire; the message's tag, the one it was sent with into the buffer (0 in the other modes).
    pub(super) fn ghost_transmit(&self, next: &mut State<A>, c: ChannelId) -> u32 {
        next.ghost.as_mut().and_then(|g| g.on_transmit(c.index())).unwrap_or(0)
    }

    /// Full mode: snapshot `s` is initiated; the first initiation starts the ghost's snapshot,
    /// read before the process steps.
    pub(super) fn ghost_activate(&self, next: &mut State<A>, s: SnapshotId) {
        if next.ghost.as_ref().is_some_and(|g| !g.snaps[s.0 as usize].active) {
            // Read before the process steps (the triggers are no part of either).
            let (y, accounted) = (self.y_live(next), next.accounted());
            let d = &mut *next.0;
            if let Some(g) = d.ghost.as_mut() {
                g.activate(s.0 as usize, &d.chans, d.procs.len(), accounted, self.initial_total, y);
            }
        }
    }

    /// Full mode: `process` recorded its state for `snapshot` in the step just taken.
    pub(super) fn ghost_record(&self, next: &mut State<A>, process: usize, snapshot: SnapshotId) {
        let Some(mut g) = next.ghost.take() else { return };
        let p = &next.procs[process];
        // The recorded state must be the one its pre-cut events produced: the
        // process's state right now, after the step that recorded.
        let faithful = p.slot(snapshot).and_then(|slot| slot.state.as_ref()) == Some(p.app());
        let incoming: SmallVec<[usize; 8]> = self.cfg.topology.incoming(p.id()).iter().map(|c| c.index()).collect();
        let buffered = |c: usize| self.buffered(next, c);
        g.on_record(snapshot.0 as usize, process, next.budget[process], faithful, &incoming, &next.chans, &buffered);
        next.ghost = Some(g);
    }

    /// Full mode: the job crashed and restores checkpoint `restored` (none: the initial states).
    pub(super) fn ghost_crash(&self, next: &mut State<A>, restored: Option<usize>) {
        if let Some(g) = next.ghost.as_mut() {
            g.on_crash(restored);
        }
    }

    /// Full mode: the completion hooks of the snapshots that completed in this step (those not
    /// in `done_before`).
    fn completed(&self, next: &mut State<A>, done_before: u32) {
        let Some(mut ghost) = next.ghost.take() else { return };
        let done_after = self.done_bits(next);
        for s in self.snapshot_ids().filter(|s| done_after & !done_before & (1 << s.0) != 0) {
            // Complete everywhere, so every part is there.
            let records = self.recorded(next, s).map(|r| r.channels).unwrap_or_default();
            let y = self.y_live(next);
            let buffered = |c: usize| self.buffered(next, c);
            ghost.on_complete(s.0 as usize, &next.chans, &records, y, next.ckpt.is_none(), &buffered);
        }
        next.ghost = Some(ghost);
    }

    /// Literal mode: the trace gets `p`'s internal step `step`.
    pub(super) fn trace_internal(&self, next: &mut State<A>, p: usize, step: A::Step) {
        let app = *next.procs[p].app();
        if let Some(h) = next.history.as_mut() {
            Tracer::event(&mut h.trace.events, ProcessId(p as u16), EventKind::Internal { step }, &app);
        }
    }

    /// Literal mode: the trace gets the loss of message `tag` on `c`, at its receiver.
    pub(super) fn trace_lost(&self, next: &mut State<A>, c: ChannelId, tag: u32) {
        let q = self.cfg.topology.channel(c).to;
        let app = *next.procs[q.index()].app();
        if let Some(h) = next.history.as_mut() {
            let kind = EventKind::Lost { channel: c, id: MsgId(u64::from(tag)) };
            Tracer::event(&mut h.trace.events, q, kind, &app);
        }
    }

    /// Literal mode: the trace gets the core step of `process` on `input` and its `effects`.
    pub(super) fn trace_step(
        &self,
        next: &mut State<A>,
        process: usize,
        input: StepInput,
        effects: &[Effect<StampedMsg<A>>],
    ) {
        let app = *next.procs[process].app();
        if let Some(h) = next.history.as_mut() {
            Tracer::step(&mut h.trace.events, ProcessId(process as u16), input, effects, &app);
        }
    }
}
