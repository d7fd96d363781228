//! The model's states on the wire ([`Wire`]): the number of houses (a byte); each house's core
//! state, bincode, after its length (4 bytes, little-endian); then the rest of the state
//! ([`Rest`]), bincode. Bincode with variable-width integers: a state of the K=2 basic
//! configuration takes about 120 bytes. A state read back is equal to the one written, with the
//! same digest and fingerprint: every house's hash is recomputed from its core state (or taken
//! from an equal house read before), everything else the digest is made of is sent.
//!
//! Houses repeat: a step changes one house, and the states that travel share few distinct
//! houses. So a house is decoded once: the model keeps the houses it has read, by their bytes
//! (`decoded`, a table indexed by a hash of the bytes), and a house whose bytes equal one read
//! before is that house, shared (and the step memo knows it by its address), neither decoded
//! nor hashed again. Likewise a house is encoded once: the model keeps the houses it has
//! written with their bytes (`encoded`, by the house's hash), and an equal house is those bytes.

use std::hash::Hasher;

use bincode::Options;
use chandy_lamport::apps::spec::Spec;
use smallvec::SmallVec;

use super::config::Mode;
use super::machine::ChandyLamport;
use super::state::{Core, HouseSlots, Houses, Rest, RestData, Shared, State, StateData};
use crate::engine::wire::framed;
use crate::engine::Wire;

/// Bincode's options: variable-width integers (most are small: against fixed-width ones a
/// third of the bytes, and as fast), no limit but the input's end, and no bytes left over.
fn options() -> impl Options {
    bincode::DefaultOptions::new().with_varint_encoding().reject_trailing_bytes()
}

impl<A: Spec> Wire for ChandyLamport<A> {
    fn encode(&self, state: &State<A>, out: &mut Vec<u8>) {
        let data = &*state.0;
        out.push(u8::try_from(data.procs.len()).expect("at most 255 houses"));
        let mut table = slots(&self.books.encoded);
        for house in &data.procs {
            let slot = &mut table[(house.hash_word() >> (64 - HOUSE_BITS)) as usize];
            match slot {
                Some((known, bytes)) if known == house => {
                    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
                    out.extend_from_slice(bytes);
                }
                _ => {
                    let at = out.len() + 4;
                    framed(out, |out| {
                        options().serialize_into(out, &**house).expect("a house always serializes (into memory)")
                    });
                    *slot = Some((house.clone(), out[at..].into()));
                }
            }
        }
        drop(table);
        options().serialize_into(out, &Rest(data)).expect("a state always serializes (into memory)");
    }

    fn decode(&self, bytes: &[u8]) -> Result<State<A>, String> {
        let not = |e: String| format!("not a state: {e}");
        let (&houses, mut rest) = bytes.split_first().ok_or_else(|| not("no bytes".into()))?;
        if usize::from(houses) != self.cfg.topology.len() {
            return Err(format!("not a state of this model: {houses} houses, not {}", self.cfg.topology.len()));
        }
        let mut procs = SmallVec::new();
        {
            let mut table = slots(&self.books.decoded);
            for _ in 0..houses {
                let len = rest.get(..4).ok_or_else(|| not("it ends inside a house".into()))?;
                let len = u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize;
                let house = rest.get(4..4 + len).ok_or_else(|| not("it ends inside a house".into()))?;
                rest = &rest[4 + len..];
                let slot = &mut table[slot_of(house)];
                match slot {
                    Some((shared, known)) if **known == *house => procs.push(shared.clone()),
                    _ => {
                        let core: Core<A> = options().deserialize(house).map_err(|e| not(e.to_string()))?;
                        let shared = Shared::new(core);
                        *slot = Some((shared.clone(), house.into()));
                        procs.push(shared);
                    }
                }
            }
        }
        let data: RestData<A> = options().deserialize(rest).map_err(|e| not(e.to_string()))?;
        let data = data.with(procs).map_err(not)?;
        self.fits(&data)?;
        Ok(State(Box::new(data)))
    }

    /// The [`Tallies`](super::bookkeeping::Tallies) of the steps taken, in their field order.
    fn counters(&self) -> Vec<u64> {
        self.books.tally_counts().to_vec()
    }

    fn set_counters(&self, counters: &[u64]) {
        self.books.set_tally_counts(counters);
    }
}

/// Slots of the tables of houses read and written: `1 << HOUSE_BITS`.
const HOUSE_BITS: u32 = 16;

/// The slots of `houses`, locked (made on first use).
fn slots<A: Spec>(houses: &Houses<A>) -> std::sync::MutexGuard<'_, HouseSlots<A>> {
    let mut table = houses.lock().unwrap_or_else(|e| e.into_inner());
    if table.is_empty() {
        table.resize_with(1 << HOUSE_BITS, || None);
    }
    table
}

/// The slot of the house encoded as `bytes`.
fn slot_of(bytes: &[u8]) -> usize {
    let mut h = rustc_hash::FxHasher::default();
    h.write(bytes);
    (h.finish() >> (64 - HOUSE_BITS)) as usize
}

impl<A: Spec> ChandyLamport<A> {
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
            ("checkpoints", data.ckpt.is_some(), self.cfg.algorithm.coordinated()),
        ];
        if data.sym != self.sym {
            return Err(format!(
                "not a state of this model: symmetry group {}, not {} (a process that registered its groups in \
                 another order)",
                data.sym, self.sym
            ));
        }
        match parts.iter().find(|(_, has, wants)| has != wants) {
            Some((part, has, _)) => {
                Err(format!("not a state of this model: {} {part}", if *has { "unexpected" } else { "no" }))
            }
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::config::Config;
    use chandy_lamport::apps::bank::Bank;
    use stateright::Model;

    /// The default configuration's initial state and its successors (basic mode).
    fn states() -> (ChandyLamport<Bank>, Vec<State<Bank>>) {
        let cfg = Config { mode: Mode::Basic, ..Config::default() };
        let m = ChandyLamport::<Bank>::new(cfg.resolve().expect("valid"));
        let init = m.init_states().remove(0);
        let mut actions = Vec::new();
        m.actions(&init, &mut actions);
        let mut states: Vec<State<Bank>> = actions.drain(..).filter_map(|a| m.next_state(&init, a)).collect();
        states.insert(0, init);
        (m, states)
    }

    fn used(table: &Houses<Bank>) -> usize {
        table.lock().unwrap().iter().filter(|s| s.is_some()).count()
    }

    #[test]
    fn a_house_read_again_is_the_house_read_before() {
        let (m, states) = states();
        let mut bytes = Vec::new();
        m.encode(&states[0], &mut bytes);
        let (one, two) = (m.decode(&bytes).expect("a state"), m.decode(&bytes).expect("a state"));
        assert_eq!(one, states[0]);
        // Three distinct houses, each in its own slot, each shared by the two states read.
        let distinct: std::collections::HashSet<_> = states[0].procs.iter().map(|h| h.hash_word()).collect();
        assert_eq!(distinct.len(), 3);
        assert_eq!(used(&m.books.decoded), 3);
        assert!(one.procs.iter().zip(&two.procs).all(|(a, b)| a.same(b)));
        // A successor changed one house: two of its houses are those read before.
        bytes.clear();
        m.encode(&states[1], &mut bytes);
        let next = m.decode(&bytes).expect("a state");
        assert_eq!(next, states[1]);
        assert_eq!(next.procs.iter().filter(|h| one.procs.iter().any(|o| o.same(h))).count(), 2);
        assert_eq!(used(&m.books.decoded), 4);
    }

    #[test]
    fn budgets_and_counts_are_one_per_house() {
        let (m, states) = states();
        let d = &*states[0].0;
        let rest = |budgets: usize, counts: usize| {
            let fields =
                (&d.chans, &d.budget[..budgets], &d.sent[..counts], &d.refused, &d.ghost, &d.history, d.sym, &d.ckpt);
            let bytes = options().serialize(&fields).expect("serialized");
            options().deserialize::<RestData<Bank>>(&bytes).expect("read").with(d.procs.clone())
        };
        assert_eq!(rest(3, 3).expect("one each"), *d);
        for (budgets, counts) in [(2, 3), (3, 2), (2, 2)] {
            let err = rest(budgets, counts).expect_err("not one each");
            assert!(err.contains("not one per house"), "{err}");
        }
        drop(m);
    }

    #[test]
    fn a_house_written_again_is_the_same_bytes() {
        let (m, states) = states();
        let mut first = Vec::new();
        for s in &states {
            let at = first.len();
            m.encode(s, &mut first);
            // Each state decodes alone from its own bytes.
            assert_eq!(&m.decode(&first[at..]).expect("a state"), s);
        }
        assert!(used(&m.books.encoded) >= 3);
        // Written again (the houses now known): the same bytes.
        let mut again = Vec::new();
        states.iter().for_each(|s| m.encode(s, &mut again));
        assert_eq!(first, again);
    }
}
