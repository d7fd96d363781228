//! Which actions a state enables, in the model's fixed order: the processes' moves, the channels'
//! deliveries, thefts and lost markers, flushes and unaligned transmissions, then either the
//! initiations (Chandy–Lamport) or the barrier coordinator's, the sources' and the job's
//! actions; and which of them a complete run may leave out.

use chandy_lamport::apps::spec::{Move, Spec};
use chandy_lamport::{ChannelId, Message, Variant};

use super::action::{Act, Action};
use super::chans::Tagged;
use super::machine::SnapshotModel;
use super::state::{Checkpoints, State};

impl<A: Spec> SnapshotModel<A> {
    /// Appends every enabled action of `state` to `actions`, in the model's order (unreduced:
    /// `--por` chooses among them, see `reduce::por`).
    pub fn push_enabled(&self, state: &State<A>, actions: &mut Vec<Act<A>>) {
        self.each_action(state, |a| {
            actions.push(a);
            true
        });
    }

    /// Every enabled action of `s`, in the model's order (the unreduced list, whatever `--por`).
    pub fn enabled(&self, s: &State<A>) -> Vec<Act<A>> {
        let mut all = Vec::new();
        self.each_action(s, |a| {
            all.push(a);
            true
        });
        all
    }

    /// Whether no action is enabled.
    pub fn is_final(&self, s: &State<A>) -> bool {
        let mut any = false;
        self.each_action(s, |_| {
            any = true;
            false
        });
        !any
    }

    /// Whether nothing but optional actions ([`SnapshotModel::is_optional`]) is enabled: the
    /// trade and every snapshot in flight have run their course.
    pub fn is_quiescent(&self, s: &State<A>) -> bool {
        if s.refused.is_some() {
            return true;
        }
        // The same actions as `each_action`'s, the channels' first: in most states a message is
        // in transit, and its delivery is owed.
        let mut busy = false;
        let mut visit = |a: Act<A>| {
            busy = !self.is_optional(&a);
            !busy
        };
        let _ = self.channel_actions(s, &mut visit)
            && self.process_moves(s, &mut visit)
            && self.later_actions(s, &mut visit);
        !busy
    }

    /// Visits every enabled action in a fixed order; stops early when `visit` returns false. A
    /// state reached by a refused step is a dead end.
    fn each_action(&self, s: &State<A>, mut visit: impl FnMut(Act<A>) -> bool) {
        if s.refused.is_some() {
            return;
        }
        let _ = self.process_moves(s, &mut visit)
            && self.channel_actions(s, &mut visit)
            && self.later_actions(s, &mut visit);
    }

    /// [`SnapshotModel::each_action`]'s processes' moves (transfers and sales); false once `visit`
    /// said stop.
    fn process_moves(&self, s: &State<A>, visit: &mut impl FnMut(Act<A>) -> bool) -> bool {
        let t = &self.cfg.topology;
        for p in t.processes() {
            let i = p.index();
            let budget = s.budget[i];
            let mut go = true;
            s.procs[i].app().moves(p, t, &self.setup, &mut |mv| {
                if !go || A::cost(&mv) > budget {
                    return;
                }
                go = visit(match mv {
                    Move::Send { channel, msg } => Action::Send { from: i as u8, channel: channel.0 as u8, msg },
                    Move::Internal(step) => Action::Internal { process: i as u8, step },
                });
            });
            if !go {
                return false;
            }
        }
        true
    }

    /// [`SnapshotModel::each_action`]'s actions on the channels: deliveries, thefts, lost
    /// markers; false once `visit` said stop.
    fn channel_actions(&self, s: &State<A>, visit: &mut impl FnMut(Act<A>) -> bool) -> bool {
        let t = &self.cfg.topology;
        let non_fifo = self.cfg.variant == Variant::NonFifo;
        let lose = self.cfg.variant == Variant::LoseMarkers;
        let overtaking = self.cfg.algorithm.barriers_overtake();
        for (c, chan) in s.chans.iter().enumerate() {
            let id = ChannelId(c as u32);
            let receiver = &s.procs[t.channel(id).to.index()];
            // Aligned barriers: nothing is taken from a blocked input, barriers and cancellations
            // included (Flink does not poll a blocked channel).
            let blocked = self.cfg.algorithm.aligns() && receiver.is_blocked(t, id);
            // After a recovery the restored messages at the head are already in the receiver's
            // input: nothing overtakes them and bandits cannot reach them.
            let restored = if receiver.is_recovering() { receiver.restored(t, id) } else { 0 };
            for (i, tagged) in chan.iter().enumerate() {
                let (c, index) = (c as u8, i as u8);
                // Overtaking barriers overtake the messages queued ahead of them (not other barriers;
                // cancellations never overtake).
                let barrier = matches!(tagged.msg, Message::Marker(_));
                let overtakes = overtaking && barrier && chan[..i].iter().all(Tagged::is_app);
                let deliverable = if i == 0 { !blocked } else { (non_fifo || overtakes) && restored == 0 };
                if deliverable && !visit(Action::Deliver { channel: c, index }) {
                    return false;
                }
                let reachable = i >= restored;
                if self.cfg.theft && reachable && tagged.is_app() && !visit(Action::Steal { channel: c, index }) {
                    return false;
                }
                if lose && !tagged.is_app() && !visit(Action::LoseMarker { channel: c, index }) {
                    return false;
                }
            }
        }
        true
    }

    /// [`SnapshotModel::each_action`]'s flushes, transmissions, the coordinator's and the
    /// sources' actions, initiations; false once `visit` said stop.
    fn later_actions(&self, s: &State<A>, visit: &mut impl FnMut(Act<A>) -> bool) -> bool {
        let t = &self.cfg.topology;
        for p in t.processes() {
            if s.procs[p.index()].faults_pending() && !visit(Action::Flush { process: p.0 as u8 }) {
                return false;
            }
        }
        if self.cfg.algorithm.buffers_output() {
            for p in t.processes() {
                for &c in t.outgoing(p) {
                    let buffered = s.procs[p.index()].buffered(t, c).next().is_some();
                    if buffered && !visit(Action::Transmit { process: p.0 as u8, channel: c.0 as u8 }) {
                        return false;
                    }
                }
            }
        }
        if let Some(ck) = s.ckpt.as_ref() {
            return self.coordinated_actions(s, ck, visit);
        }
        for p in t.processes() {
            if !self.cfg.initiators[p.index()] {
                continue;
            }
            for snapshot in self.snapshot_ids() {
                let process = &s.procs[p.index()];
                let may = !process.has_recorded(snapshot);
                if may && !visit(Action::Initiate { process: p.0 as u8, snapshot: snapshot.0 as u8 }) {
                    return false;
                }
            }
        }
        true
    }

    /// The barrier algorithms' actions of the coordinator, the sources and failures: triggers
    /// handled, parts acknowledged, declines, the next trigger, a crash; false once `visit` said
    /// stop.
    fn coordinated_actions(&self, s: &State<A>, ck: &Checkpoints<A>, visit: &mut impl FnMut(Act<A>) -> bool) -> bool {
        let t = &self.cfg.topology;
        for p in t.processes() {
            for snapshot in self.snapshot_ids() {
                let waiting = ck.triggers[p.index()] & (1 << snapshot.0) != 0;
                if waiting && !visit(Action::Initiate { process: p.0 as u8, snapshot: snapshot.0 as u8 }) {
                    return false;
                }
            }
        }
        for p in t.processes() {
            for slot in s.procs[p.index()].slots() {
                let (process, snapshot) = (p.0 as u8, slot.id.0 as u8);
                // Acknowledged already, or completed and waiting to be stored.
                if ck.coord.has_acked(slot.id, p) || ck.coord.is_completed(slot.id) {
                    continue;
                }
                if slot.is_complete() && !visit(Action::Ack { process, snapshot }) {
                    return false;
                }
                let declinable = ck.declines > 0 && ck.coord.is_pending(slot.id);
                if declinable && !visit(Action::Decline { process, snapshot }) {
                    return false;
                }
            }
        }
        for snapshot in self.snapshot_ids() {
            let id = snapshot.0 as u8;
            if ck.coord.is_acknowledged(snapshot) && !visit(Action::Complete { snapshot: id }) {
                return false;
            }
            if ck.coord.is_completed(snapshot) && !visit(Action::Store { snapshot: id }) {
                return false;
            }
        }
        let left = ck.coord.next_id().0 < u32::from(self.cfg.snapshots);
        if ck.coord.can_trigger() && left && !visit(Action::Trigger) {
            return false;
        }
        if ck.coord.timer_cancels() && left && !visit(Action::TimerAtMax) {
            return false;
        }
        ck.crashes == 0 || visit(Action::Crash)
    }

    /// Whether `action` is one a run may leave out and still be complete: an initiation in
    /// Chandy–Lamport; a trigger, a decline or a crash with the barrier algorithms' coordinator
    /// (a trigger's handling, an acknowledgement, a delivery are owed).
    pub fn is_optional(&self, action: &Act<A>) -> bool {
        match action {
            Action::Initiate { .. } => !self.cfg.algorithm.coordinated(),
            Action::Trigger | Action::TimerAtMax | Action::Decline { .. } | Action::Crash => true,
            _ => false,
        }
    }
}
