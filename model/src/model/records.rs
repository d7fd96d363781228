//! What the houses recorded of a snapshot, read where they keep it: the record assembled,
//! compared with an expected one or summed (the ledger), the snapshots a house or a state has
//! done, and the carts an unaligned sender still buffers.

use chandy_lamport::apps::spec::Spec;
use chandy_lamport::{ChannelId, SnapshotId};

use super::machine::ChandyLamport;
use super::state::{Cart, Core, House, Recorded, State};

impl<A: Spec> ChandyLamport<A> {
    /// What snapshot `s` recorded, once every house's part is complete.
    pub fn recorded(&self, state: &State<A>, s: SnapshotId) -> Option<Recorded<A>> {
        let t = &self.cfg.topology;
        let mut houses = Vec::with_capacity(state.procs.len());
        let mut channels = vec![Vec::new(); t.channels().len()];
        for p in &state.procs {
            let slot = p.slot(s).filter(|slot| slot.is_complete())?;
            houses.push(slot.state?.0);
            for (i, &c) in t.incoming(p.id()).iter().enumerate() {
                // The receiver's side first: unaligned senders' sides are appended below.
                let mut record: Vec<Cart<A>> = slot.record(i).copied().collect();
                record.append(&mut channels[c.index()]);
                channels[c.index()] = record;
            }
            for (j, &c) in t.outgoing(p.id()).iter().enumerate() {
                channels[c.index()].extend(slot.output(j).copied());
            }
        }
        Some(Recorded { houses, channels })
    }

    /// Whether snapshot `s` recorded on every channel `c`, cart for cart and in order, the carts
    /// `expected(c)` (the channels of [`ChandyLamport::recorded`], read where the houses keep
    /// them: no record is built); `None` when `recorded` gives `None`.
    pub fn records_equal<'a>(
        &self,
        state: &State<A>,
        s: SnapshotId,
        expected: impl Fn(usize) -> &'a [Cart<A>],
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
                let carts = receiver.record(i).chain(sender.output(j)).copied();
                if !carts.eq(expected(c.index()).iter().copied()) {
                    return Some(false);
                }
            }
        }
        Some(true)
    }

    /// The conserved quantity recorded by snapshot `s` (in houses and in transit), once every
    /// house's part is complete; no allocation (the ledger is checked on every state).
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

    /// The snapshots `p` has recorded, one bit per id (a cart it sends now carries these as
    /// its full-mode tag: sent after its sender recorded).
    pub fn recorded_bits(&self, p: &Core<A>) -> u32 {
        self.snapshot_ids().filter(|&s| p.has_recorded(s)).fold(0, |b, s| b | (1 << s.0))
    }

    /// Unaligned barriers: the carts waiting in the output buffer of channel `c`, oldest first.
    pub(super) fn buffered(&self, state: &State<A>, c: usize) -> Vec<Cart<A>> {
        let t = &self.cfg.topology;
        let id = ChannelId(c as u32);
        state.procs[t.channel(id).from.index()].buffered(t, id).copied().collect()
    }
}

/// House `p`'s part of snapshot `s` when it is complete with a recorded state (what a record
/// is read from).
pub(super) fn done<A: Spec>(p: &Core<A>, s: SnapshotId) -> Option<&chandy_lamport::Slot<House<A>>> {
    p.slot(s).filter(|slot| slot.is_complete() && slot.state.is_some())
}
