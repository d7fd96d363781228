//! Steps taken in the state itself: the search's fast path. A successor is made by changing the
//! state it comes from, its digest is updated by the parts the step changed alone (see
//! [`parts`]), and the state is put back; only a successor the seen set does not hold is then
//! built in full. The step is the model's one step ([`ChandyLamport::advance`]).

use chandy_lamport::apps::spec::Spec;
use chandy_lamport::{ChannelId, Effect};
use smallvec::SmallVec;

use super::chans::Chans;
use super::ghost::Ghost;
use super::state::{parts, Shared, State, StateData, MAX_HOUSES};
use super::system::{Act, Action, ChandyLamport, Stop};
use crate::engine::Taken;

/// What a step taken in place may change, as it was before: what puts the state back.
pub struct Undo<A: Spec> {
    /// The one house the step may change (its index and the house as it was).
    house: Option<(usize, Shared<A>)>,
    chans: Chans<A::Msg>,
    budget: [u8; MAX_HOUSES],
    sent: [u8; MAX_HOUSES],
    ghost: Option<Box<Ghost<A::Msg>>>,
}

impl<A: Spec> ChandyLamport<A> {
    /// The digest of `state` when the search may take its steps in place: states with neither
    /// a checkpoint coordinator (whose steps also count tallies and may change every house)
    /// nor a literal history.
    pub fn in_place_digest(&self, state: &State<A>) -> Option<u64> {
        (state.ckpt.is_none() && state.history.is_none()).then(|| state.digest())
    }

    /// The house `action` changes, if any: `Err` for the coordinator's actions.
    fn actor(&self, action: &Act<A>) -> Result<Option<usize>, ()> {
        Ok(match *action {
            Action::Send { from: p, .. }
            | Action::Internal { house: p, .. }
            | Action::Initiate { house: p, .. }
            | Action::Flush { house: p }
            | Action::Transmit { house: p, .. } => Some(usize::from(p)),
            Action::Deliver { channel, .. } => {
                Some(self.cfg.topology.channel(ChannelId(u32::from(channel))).to.index())
            }
            Action::Steal { .. } | Action::LoseMarker { .. } => None,
            _ => return Err(()),
        })
    }

    /// Takes `action` in `state` itself, whose digest is `digest`; see [`Taken`]. A step the
    /// core refuses is left to be built in full (its successor is the state marked refused).
    pub fn step_in_place(&self, state: &mut State<A>, digest: u64, action: &Act<A>) -> Taken<Undo<A>> {
        if state.ckpt.is_some() || state.history.is_some() {
            return Taken::Build;
        }
        let Ok(actor) = self.actor(action) else { return Taken::Build };
        // Every house but the actor stays the very same (a house changes only by the
        // remembered steps of `memo`, which replace it and never change it where it is).
        let before: SmallVec<[*const (); 4]> = state.procs.iter().map(Shared::addr).collect();
        let undo = Undo {
            house: actor.map(|p| (p, state.procs[p].clone())),
            chans: state.chans.clone(),
            budget: state.budget,
            sent: state.sent,
            ghost: state.ghost.clone(),
        };
        // The channels the step changes: the one it takes from, and those its effects send on.
        let mut touched = Touched::default();
        if let Action::Deliver { channel: c, .. }
        | Action::Steal { channel: c, .. }
        | Action::LoseMarker { channel: c, .. } = *action
        {
            touched.add(usize::from(c));
        }
        let result = self.with_effects(|fx| {
            let result = self.advance(state, *action, fx);
            for effect in fx.iter() {
                if let Effect::Send { channel, .. } = effect {
                    touched.add(channel.index());
                }
            }
            result
        });
        let others_kept = state.procs.iter().enumerate().all(|(i, h)| Some(i) == actor || h.addr() == before[i]);
        assert!(others_kept, "a step taken in place changed a house other than its actor's");
        match result {
            Ok(()) => Taken::Step { digest: digest_after(digest, &undo, state, &touched), undo },
            Err(stop) => {
                self.undo(state, undo);
                match stop {
                    Stop::NotAStep => Taken::NotAStep,
                    Stop::Refused(_) => Taken::Build,
                }
            }
        }
    }

    /// Puts `state` back as it was before the step `undo` came from.
    pub fn undo(&self, state: &mut State<A>, undo: Undo<A>) {
        let Undo { house, chans, budget, sent, ghost } = undo;
        if let Some((p, house)) = house {
            state.procs[p] = house;
        }
        state.chans = chans;
        state.budget = budget;
        state.sent = sent;
        state.ghost = ghost;
    }
}

/// The channels a step changed: a bit each for the first 128, and every channel beyond.
#[derive(Default)]
struct Touched {
    low: u128,
    beyond: bool,
}

impl Touched {
    fn add(&mut self, c: usize) {
        match 1u128.checked_shl(c as u32) {
            Some(bit) if c < 128 => self.low |= bit,
            _ => self.beyond = true,
        }
    }

    /// The channels (of `n`) to look at.
    fn iter(&self, n: usize) -> impl Iterator<Item = usize> + '_ {
        (0..n).filter(move |&c| if c < 128 { self.low >> c & 1 == 1 } else { self.beyond })
    }
}

/// The digest of `now`, a step away from the state `before` was the digest of (as `undo`
/// holds it): the words of the houses and channels the step changed are exchanged, and the
/// rest's when there is ghost data (the only other part such a step changes).
fn digest_after<A: Spec>(before: u64, undo: &Undo<A>, now: &StateData<A>, touched: &Touched) -> u64 {
    let mut d = before;
    for (i, new) in now.procs.iter().enumerate() {
        let old = match &undo.house {
            Some((p, old)) if *p == i => old,
            _ => new,
        };
        let (b, s) = ((undo.budget[i], undo.sent[i]), (now.budget[i], now.sent[i]));
        if !old.same(new) || b != s {
            d = d.wrapping_sub(parts::house(i, old, b.0, b.1)).wrapping_add(parts::house(i, new, s.0, s.1));
        }
    }
    for c in touched.iter(now.chans.len()) {
        let (old, new) = (undo.chans.get(c), now.chans.get(c));
        if old != new {
            d = d.wrapping_sub(parts::channel(c, old)).wrapping_add(parts::channel(c, new));
        }
    }
    if undo.ghost.is_some() || now.ghost.is_some() {
        let (houses, channels) = (now.procs.len(), now.chans.len());
        let old = parts::rest(houses, channels, &now.refused, &undo.ghost, &now.history, now.sym, &now.ckpt);
        d = d.wrapping_sub(old).wrapping_add(now.rest_word());
    }
    d
}
