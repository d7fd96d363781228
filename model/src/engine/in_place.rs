//! The search's fast path: a model may take a step in the state itself and say the successor's
//! digest, so that a successor already seen (most of them) is never built.

use stateright::Model;

/// What a step taken in place gave.
pub enum Taken<U> {
    /// The state is the successor now: its digest, and what puts the state back.
    Step {
        /// The successor's digest ([`InPlace::digest`] of it).
        digest: u64,
        /// What [`InPlace::undo`] needs.
        undo: U,
    },
    /// The action is not a step of the state (`next_state` gives `None`); the state is as it was.
    NotAStep,
    /// The model builds this successor only with `next_state`; the state is as it was.
    Build,
}

/// A model whose steps the search may take in place. The contract the search relies on: when
/// [`InPlace::digest`] of a state is `Some(d)`, the state's fingerprint is the fingerprint of
/// `d` (its `Hash` writes `d` alone), and a [`Taken::Step`] in that state leaves the state equal
/// to `next_state`'s successor, with that successor's digest, until [`InPlace::undo`] restores
/// it exactly.
pub trait InPlace: Model {
    /// What puts a state back after a step taken in place.
    type Undo;

    /// The digest of `state`, or `None` (the default: every successor built) when its steps
    /// are not taken in place.
    fn digest(&self, _state: &Self::State) -> Option<u64> {
        None
    }

    /// Takes `action` in `state`, whose digest is `digest`.
    fn step_in_place(&self, _state: &mut Self::State, _digest: u64, _action: &Self::Action) -> Taken<Self::Undo> {
        Taken::Build
    }

    /// Puts `state` back as it was before the step.
    fn undo(&self, _state: &mut Self::State, _undo: Self::Undo) {}
}
