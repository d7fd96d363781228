//! The search's fast path: a model may take a step in the state itself, say the successor's
//! digest and put the state back, so that a successor already seen (most of them) is never
//! built.

use stateright::Model;

/// What a step taken in place said.
pub enum Probe {
    /// The successor's digest ([`InPlace::digest`] of the successor `next_state` builds).
    Digest(u64),
    /// The action is not a step of the state (`next_state` gives `None`).
    NotAStep,
    /// The model builds this successor only with `next_state`.
    Build,
}

/// A model whose steps the search may take in place. The contract the search relies on: when
/// [`InPlace::digest`] of a state is `Some(d)`, the state's fingerprint is the fingerprint of
/// `d` (its `Hash` writes `d` alone); [`InPlace::probe`] leaves the state exactly as it was
/// and says what `next_state` would give.
pub trait InPlace: Model {
    /// The digest of `state`, or `None` (the default: every successor built) when its steps
    /// are not taken in place.
    fn digest(&self, _state: &Self::State) -> Option<u64> {
        None
    }

    /// Takes `action` in `state`, whose digest is `digest`, and puts the state back.
    fn probe(&self, _state: &mut Self::State, _digest: u64, _action: &Self::Action) -> Probe {
        Probe::Build
    }

    /// Whether building a successor (`next_state`) has no effect but the state it returns, so
    /// that a search may build one again rather than keep it. The default, `false`, makes the
    /// distributed search keep a successor it built for its fingerprint until its owner answers.
    fn pure_steps(&self) -> bool {
        false
    }

    /// [`InPlace::probe`] of each of `actions` in turn, what each said appended to `out` in order.
    fn probe_all(&self, state: &mut Self::State, digest: u64, actions: &[Self::Action], out: &mut Vec<Probe>) {
        out.extend(actions.iter().map(|a| self.probe(state, digest, a)));
    }
}
