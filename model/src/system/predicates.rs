//! The stable predicates read from a state: live (and quiet, the trade over and nothing in
//! transit, where exactly-once is judged), in what a snapshot recorded, and the rule that
//! judges their detection sound.

use chandy_lamport::apps::spec::{Spec, View};
use chandy_lamport::SnapshotId;

use super::machine::SnapshotModel;
use super::records::done;
use super::state::{Recorded, State};

/// y(S*) implies y(S_end), and not y(S*) implies not y(S_begin), for every stable predicate
/// (bit `i` for predicate `i`): the rule "stable detection is sound" judges, in full and literal
/// modes alike.
pub(crate) fn sound(begin: u8, star: u8, end: u8) -> bool {
    star & !end == 0 && begin & !star == 0
}

impl<A: Spec> SnapshotModel<A> {
    /// Quiet: the trade is over, and nothing is in transit or buffered (where exactly-once is
    /// judged).
    pub fn quiet(&self, s: &State<A>) -> bool {
        self.y_live(s) & 1 != 0 && s.procs.iter().all(|p| p.buffered_all().next().is_none())
    }

    /// The stable predicates that hold in `view`, bit `i` for predicate `i`.
    pub fn y(&self, view: &View<'_, A>) -> u8 {
        self.predicates.iter().enumerate().fold(0, |bits, (i, p)| if (p.holds)(view) { bits | 1 << i } else { bits })
    }

    /// The stable predicates in live state `s`.
    pub fn y_live(&self, s: &State<A>) -> u8 {
        let states = s.apps();
        let mut channels = s.in_transit();
        // Output buffers: a message in its sender's output buffer is in transit too, behind the
        // road's messages.
        if self.cfg.algorithm.buffers_output() {
            for (c, chan) in channels.iter_mut().enumerate() {
                chan.extend(self.buffered(s, c).into_iter().map(|message| message.msg));
            }
        }
        let view = View {
            topology: &self.cfg.topology,
            states: &states,
            budgets: &s.budget[..states.len()],
            channels: &channels,
            initial: self.initial_total,
            setup: self.setup,
        };
        self.y(&view)
    }

    /// The stable predicates in what snapshot `rec` recorded, with each process's budget when it
    /// recorded.
    pub fn y_recorded(&self, rec: &Recorded<A>, budgets: &[u8]) -> u8 {
        let channels = rec.messages();
        let view = View {
            topology: &self.cfg.topology,
            states: &rec.processes,
            budgets,
            channels: &channels,
            initial: self.initial_total,
            setup: self.setup,
        };
        self.y(&view)
    }

    /// The stable predicates in what snapshot `s` recorded, with each process's budget when it
    /// recorded: [`SnapshotModel::y_recorded`] of [`SnapshotModel::recorded`], read where the
    /// processes keep the record into this thread's reused buffers; `None` when `recorded` gives
    /// `None`.
    pub fn y_star(&self, state: &State<A>, s: SnapshotId, budgets: &[u8]) -> Option<u8> {
        let t = &self.cfg.topology;
        self.books.with_scratch(|scratch| {
            let (states, channels) = &mut scratch.record;
            states.clear();
            channels.resize_with(t.channels().len(), Vec::new);
            channels.iter_mut().for_each(Vec::clear);
            for p in &state.procs {
                let slot = done(p, s)?;
                states.push(slot.state?.0);
                for (i, &c) in t.incoming(p.id()).iter().enumerate() {
                    channels[c.index()].extend(slot.record(i).map(|message| message.msg));
                }
            }
            // The receiver's side first, then the sender's (unaligned barriers' output buffers).
            for p in &state.procs {
                let slot = done(p, s)?;
                for (j, &c) in t.outgoing(p.id()).iter().enumerate() {
                    channels[c.index()].extend(slot.output(j).map(|message| message.msg));
                }
            }
            let view = View {
                topology: t,
                states,
                budgets,
                channels: &channels[..t.channels().len()],
                initial: self.initial_total,
                setup: self.setup,
            };
            Some(self.y(&view))
        })
    }
}
