//! What the processes recorded of a snapshot, read where they keep it: the record assembled,
//! compared with an expected one or summed (the ledger), the snapshots a process or a state has
//! done, and the messages an unaligned sender still buffers.

use chandy_lamport::apps::spec::Spec;
use chandy_lamport::{ChannelId, SnapshotId};

use super::machine::SnapshotModel;
use super::state::{Core, Recorded, StampedApp, StampedMsg, State};

impl<A: Spec> SnapshotModel<A> {
    /// What snapshot `s` recorded, once every process's part is complete.
    pub fn recorded(&self, state: &State<A>, s: SnapshotId) -> Option<Recorded<A>> {
        let t = &self.cfg.topology;
        let mut processes = Vec::with_capacity(state.procs.len());
        let mut channels = vec![Vec::new(); t.channels().len()];
        for p in &state.procs {
            let slot = p.slot(s).filter(|slot| slot.is_complete())?;
            processes.push(slot.state?.0);
            for (i, &c) in t.incoming(p.id()).iter().enumerate() {
                // The receiver's side first: unaligned senders' sides are appended below.
                let mut record: Vec<StampedMsg<A>> = slot.record(i).copied().collect();
                record.append(&mut channels[c.index()]);
                channels[c.index()] = record;
            }
            for (j, &c) in t.outgoing(p.id()).iter().enumerate() {
                channels[c.index()].extend(slot.output(j).copied());
            }
        }
        Some(Recorded { processes, channels })
    }

    /// Whether snapshot `s` recorded on every channel `c`, message for message and in order, the messages
    /// `expected(c)` (the channels of [`SnapshotModel::recorded`], read where the processes keep
    /// them: no record is built); `None` when `recorded` gives `None`.
    pub fn records_equal<'a>(
        &self,
        state: &State<A>,
        s: SnapshotId,
        expected: impl Fn(usize) -> &'a [StampedMsg<A>],
    ) -> Option<bool>
    where
        A: 'a,
    {
        let t = &self.cfg.topology;
        for p in &state.procs {
            done(p, s)?;
        }
        for p in &state.procs {
            let receiver = done(p, s)?;
            for (i, &c) in t.incoming(p.id()).iter().enumerate() {
                let from = t.channel(c).from;
                let sender = done(&state.procs[from.index()], s)?;
                let j = t.outgoing(from).iter().position(|&o| o == c)?;
                let messages = receiver.record(i).chain(sender.output(j)).copied();
                if !messages.eq(expected(c.index()).iter().copied()) {
                    return Some(false);
                }
            }
        }
        Some(true)
    }

    /// The conserved quantity recorded by snapshot `s` (in processes and in transit), once every
    /// process's part is complete; no allocation (the ledger is checked on every state).
    pub fn recorded_accounted(&self, state: &State<A>, s: SnapshotId) -> Option<u64> {
        let mut total = 0u64;
        for p in &state.procs {
            let slot = p.slot(s).filter(|slot| slot.is_complete())?;
            total += slot.state?.held();
            total += slot.recorded().map(|(_, m)| A::carried(&m.msg)).sum::<u64>();
            let outgoing = self.cfg.topology.outgoing(p.id()).len();
            total += (0..outgoing).flat_map(|j| slot.output(j)).map(|m| A::carried(&m.msg)).sum::<u64>();
        }
        Some(total)
    }

    /// The snapshots complete in `state`, one bit per id.
    pub(super) fn done_bits(&self, state: &State<A>) -> u32 {
        self.snapshot_ids().filter(|&s| state.complete(s)).fold(0, |b, s| b | (1 << s.0))
    }

    /// The snapshots `p` has recorded, one bit per id (a message it sends now carries these as
    /// its full-mode tag: sent after its sender recorded).
    pub fn recorded_bits(&self, p: &Core<A>) -> u32 {
        self.snapshot_ids().filter(|&s| p.has_recorded(s)).fold(0, |b, s| b | (1 << s.0))
    }

    /// Unaligned barriers: the messages waiting in the output buffer of channel `c`, oldest first.
    pub(super) fn buffered(&self, state: &State<A>, c: usize) -> Vec<StampedMsg<A>> {
        let t = &self.cfg.topology;
        let id = ChannelId(c as u32);
        state.procs[t.channel(id).from.index()].buffered(t, id).copied().collect()
    }
}

/// Process `p`'s part of snapshot `s` when it is complete with a recorded state (what a record
/// is read from).
pub(super) fn done<A: Spec>(p: &Core<A>, s: SnapshotId) -> Option<&chandy_lamport::Slot<StampedApp<A>>> {
    p.slot(s).filter(|slot| slot.is_complete() && slot.state.is_some())
}
