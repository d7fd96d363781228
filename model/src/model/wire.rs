//! The model's states on the wire ([`Wire`]): bincode of the state's serde form (see
//! `StateData`'s `Serialize`), with variable-width integers. A state read back is equal to the one
//! written, with the same digest and fingerprint: every house's hash is recomputed from its core
//! state, everything else the digest is made of is sent. Its houses are new (shared with no
//! other state), which the model's steps do not mind: the step memo (`memo`) compares houses by
//! content (the same address is only a shortcut).

use bincode::Options;
use chandy_lamport::apps::spec::Spec;
use chandy_lamport::Algorithm;

use super::config::Mode;
use super::state::{State, StateData};
use super::system::ChandyLamport;
use crate::engine::Wire;

/// Bincode's options: variable-width integers (most are small: a state of the K=2 basic
/// configuration takes about 110 bytes, against 360 with fixed-width ones, and encodes and decodes
/// about as fast), no limit but the input's end, and no bytes left over.
fn options() -> impl Options {
    bincode::DefaultOptions::new().with_varint_encoding().reject_trailing_bytes()
}

impl<A: Spec> Wire for ChandyLamport<A> {
    fn encode(&self, state: &State<A>, out: &mut Vec<u8>) {
        options().serialize_into(out, &*state.0).expect("a state always serializes (into memory)");
    }

    fn decode(&self, bytes: &[u8]) -> Result<State<A>, String> {
        let data: StateData<A> = options().deserialize(bytes).map_err(|e| format!("not a state: {e}"))?;
        self.fits(&data)?;
        let mut state = State(Box::new(data));
        self.share_houses(&mut state);
        Ok(state)
    }

    /// The [`Tallies`](super::system::Tallies) of the steps taken, in their field order.
    fn counters(&self) -> Vec<u64> {
        self.tally_counts().to_vec()
    }

    fn set_counters(&self, counters: &[u64]) {
        self.set_tally_counts(counters);
    }
}

/// Slots of the table of decoded houses: `1 << HOUSE_BITS`.
const HOUSE_BITS: u32 = 16;

impl<A: Spec> ChandyLamport<A> {
    /// Replaces each house of `state` by an equal one decoded before, if the table has it
    /// (then the house is shared, and the step memo knows it by its address); else remembers it.
    fn share_houses(&self, state: &mut State<A>) {
        let mut table = self.decoded.lock().unwrap_or_else(|e| e.into_inner());
        if table.is_empty() {
            table.resize(1 << HOUSE_BITS, None);
        }
        for house in state.procs.iter_mut() {
            let slot = (house.hash_word() >> (64 - HOUSE_BITS)) as usize;
            match &table[slot] {
                Some(known) if known == house => *house = known.clone(),
                _ => table[slot] = Some(house.clone()),
            }
        }
    }

    /// Whether `data`, as read, has this model's shape: its houses in order, its channels, and
    /// the mode's and algorithm's parts (a state of another configuration is refused, not
    /// stepped).
    fn fits(&self, data: &StateData<A>) -> Result<(), String> {
        let t = &self.cfg.topology;
        if data.procs.len() != t.len() || data.procs.iter().enumerate().any(|(i, p)| p.id().index() != i) {
            return Err(format!("not a state of this model: its houses are not the {} houses in order", t.len()));
        }
        if data.chans.len() != t.channels().len() {
            return Err(format!(
                "not a state of this model: {} channels, not {}",
                data.chans.len(),
                t.channels().len()
            ));
        }
        let parts = [
            ("ghost data", data.ghost.is_some(), self.cfg.mode == Mode::Full),
            ("history", data.history.is_some(), self.cfg.mode == Mode::Literal),
            ("checkpoints", data.ckpt.is_some(), self.cfg.algorithm != Algorithm::ChandyLamport),
        ];
        match parts.iter().find(|(_, has, wants)| has != wants) {
            Some((part, has, _)) => {
                Err(format!("not a state of this model: {} {part}", if *has { "unexpected" } else { "no" }))
            }
            None => Ok(()),
        }
    }
}
