//! Steps taken in the state itself: the search's fast path. A step changes the state it is
//! taken from; the successor's digest is that state's less the words of the parts the step
//! changed, plus their new words (see [`Parts`]); then the step is undone, part by part. Only a
//! successor the seen set does not hold is then built in full. The step is the model's one step
//! (`SnapshotModel::advance`).

use chandy_lamport::apps::spec::Spec;
use chandy_lamport::{ChannelId, Effect};
#[cfg(debug_assertions)]
use smallvec::SmallVec;

use super::action::{Act, Action, Stop};
use super::chans::Tagged;
use super::machine::SnapshotModel;
use super::memo::Scratch;
use super::state::{Parts, Shared, State, StateData, MAX_PROCESSES};
use crate::engine::Probe;

/// What a step taken in place changed, as it was: what puts the state back (with the process the
/// step replaced, which the scratch keeps).
struct Undo<A: Spec> {
    /// The one process the step may change.
    process: Option<usize>,
    /// The message the step takes off a channel: its channel, place and itself.
    taken: Option<(usize, usize, Tagged<A::Msg>)>,
    budget: [u8; MAX_PROCESSES],
    sent: [u8; MAX_PROCESSES],
}

impl<A: Spec> SnapshotModel<A> {
    /// The digest of `state` when the search may take its steps in place: states with no
    /// checkpoint coordinator (whose steps also count tallies, and may change every process and
    /// channel), no literal history and no ghost data (copied and hashed whole, a probe cost
    /// more than building the successor).
    pub fn in_place_digest(&self, state: &State<A>) -> Option<u64> {
        Self::probed(state).then(|| state.digest())
    }

    /// Whether the search probes `state`'s steps (see [`SnapshotModel::in_place_digest`]).
    fn probed(state: &State<A>) -> bool {
        state.ckpt.is_none() && state.history.is_none() && state.ghost.is_none()
    }

    /// The process `action` changes, if any: `Err` for the coordinator's actions.
    fn actor(&self, action: &Act<A>) -> Result<Option<usize>, ()> {
        Ok(match *action {
            Action::Send { from: p, .. }
            | Action::Internal { process: p, .. }
            | Action::Initiate { process: p, .. }
            | Action::Flush { process: p }
            | Action::Transmit { process: p, .. } => Some(usize::from(p)),
            Action::Deliver { channel, .. } => {
                Some(self.cfg.topology.channel(ChannelId(u32::from(channel))).to.index())
            }
            Action::Steal { .. } | Action::LoseMarker { .. } => None,
            _ => return Err(()),
        })
    }

    /// Takes `action` in `state` itself, whose digest is `digest`, and puts the state back; see
    /// [`Probe`]. A step the core refuses is left to be built in full (its successor is the
    /// state marked refused).
    pub fn probe_in_place(&self, state: &mut State<A>, digest: u64, action: &Act<A>) -> Probe {
        if !Self::probed(state) {
            return Probe::Build;
        }
        self.books.with_scratch(|scratch| self.probe_with(scratch, state, digest, action))
    }

    /// [`SnapshotModel::probe_in_place`] of each of `actions` in turn, in one scratch: what each
    /// said, in order, appended to `out`.
    pub fn probe_all_in_place(&self, state: &mut State<A>, digest: u64, actions: &[Act<A>], out: &mut Vec<Probe>) {
        if !Self::probed(state) {
            out.extend(actions.iter().map(|_| Probe::Build));
            return;
        }
        self.books
            .with_scratch(|scratch| out.extend(actions.iter().map(|a| self.probe_with(scratch, state, digest, a))));
    }

    /// One probe of a state the search probes, with this thread's scratch.
    fn probe_with(&self, scratch: &mut Scratch<A>, state: &mut State<A>, digest: u64, action: &Act<A>) -> Probe {
        scratch.fx.clear();
        let Ok(actor) = self.actor(action) else { return Probe::Build };
        let taken = match *action {
            Action::Deliver { channel: c, index: i }
            | Action::Steal { channel: c, index: i }
            | Action::LoseMarker { channel: c, index: i } => {
                let (c, i) = (usize::from(c), usize::from(i));
                match state.chans.get(c).get(i) {
                    Some(p) => Some((c, i, *p)),
                    None => return Probe::Build,
                }
            }
            _ => None,
        };
        // Every process but the actor stays the very same (a process changes only by the
        // remembered steps of `memo`, which replace it and never change it where it is):
        // checked in debug builds, and by `tests/in_place.rs` on every step it takes.
        #[cfg(debug_assertions)]
        let before: SmallVec<[*const (); 4]> = state.procs.iter().map(Shared::addr).collect();
        let undo = Undo { process: actor, taken, budget: state.budget, sent: state.sent };
        {
            let result = self.advance(state, *action, scratch);
            let fx = &scratch.fx;
            #[cfg(debug_assertions)]
            {
                let others_kept =
                    state.procs.iter().enumerate().all(|(i, h)| Some(i) == actor || h.addr() == before[i]);
                assert!(others_kept, "a step taken in place changed a process other than its actor's");
            }
            // The channels the step sent on (a refused step sends nothing).
            let sent = || {
                fx.iter().filter(|_| result.is_ok()).filter_map(|e| match e {
                    Effect::Send { channel, .. } => Some(channel.index()),
                    _ => None,
                })
            };
            // The parts the step changed: the actor, any process whose budget or count moved, the
            // channels taken from and sent on (the rest's word is the same: no ghost data,
            // history or coordinator).
            let mut processes = 0u16;
            for i in 0..state.procs.len() {
                if Some(i) == actor || undo.budget[i] != state.budget[i] || undo.sent[i] != state.sent[i] {
                    processes |= 1 << i;
                }
            }
            let mut channels = ChannelSet::default();
            sent().for_each(|c| channels.insert(c));
            if let Some((c, _, _)) = undo.taken {
                channels.insert(c);
            }
            let new = words(state, processes, &channels);
            // Put back: each message sent taken off its channel's tail, the one taken put back.
            for c in sent() {
                let last = state.chans.get(c).len() - 1;
                state.chans.remove(c, last);
            }
            self.undo(state, undo, scratch.replaced.take());
            match result {
                Ok(()) => Probe::Digest(digest.wrapping_add(new).wrapping_sub(words(state, processes, &channels))),
                Err(Stop::NotAStep) => Probe::NotAStep,
                Err(Stop::Refused(_)) => Probe::Build,
            }
        }
    }

    /// Puts `state` back as it was before the step `undo` came from, once what it sent has been
    /// taken off the channels; `replaced` is the process the step replaced (moved out, not
    /// copied), if it took a process step.
    fn undo(&self, state: &mut State<A>, undo: Undo<A>, replaced: Option<Shared<A>>) {
        let Undo { process, taken, budget, sent } = undo;
        if let Some((c, i, tagged)) = taken {
            state.chans.insert(c, i, tagged);
        }
        if let (Some(p), Some(replaced)) = (process, replaced) {
            state.procs[p] = replaced;
        }
        state.budget = budget;
        state.sent = sent;
    }
}

/// The changed processes are bits of a `u16`.
const _: () = assert!(MAX_PROCESSES <= 16);

/// A set of channel indices (channel indices are `u8`).
#[derive(Default)]
struct ChannelSet([u64; 4]);

impl ChannelSet {
    fn insert(&mut self, c: usize) {
        self.0[c / 64] |= 1 << (c % 64);
    }

    /// Calls `f` with each channel in the set, in index order.
    fn each(&self, mut f: impl FnMut(usize)) {
        for (w, &word) in self.0.iter().enumerate() {
            each_bit(word, |b| f(w * 64 + b));
        }
    }
}

/// Calls `f` with the index of each bit set in `bits`, lowest first.
fn each_bit(mut bits: u64, mut f: impl FnMut(usize)) {
    while bits != 0 {
        f(bits.trailing_zeros() as usize);
        bits &= bits - 1;
    }
}

/// The sum of the words of the processes in `processes` (bit `i`: process `i`) and of `channels` of
/// `now`.
fn words<A: Spec>(now: &StateData<A>, processes: u16, channels: &ChannelSet) -> u64 {
    let mut sum = 0u64;
    each_bit(u64::from(processes), |i| {
        sum = sum.wrapping_add(Parts::process(i, &now.procs[i], now.budget[i], now.sent[i]))
    });
    channels.each(|c| sum = sum.wrapping_add(Parts::channel(c, now.chans.get(c))));
    sum
}
