//! The model's states on the wire ([`Wire`]): the number of processes (a byte); each process's core
//! state, bincode, after its length (4 bytes, little-endian); then the rest of the state
//! ([`Rest`]), bincode. Bincode with variable-width integers: a state of the K=2 basic
//! configuration takes about 120 bytes. A state read back is equal to the one written, with the
//! same digest and fingerprint: every process's hash is recomputed from its core state (or taken
//! from an equal process read before), everything else the digest is made of is sent.
//!
//! Processes repeat: a step changes one process, and the states that travel share few distinct
//! processes. So a process is decoded once: the model keeps the processes it has read, by their bytes
//! (`decoded`, a table indexed by a hash of the bytes), and a process whose bytes equal one read
//! before is that process, shared (and the step memo knows it by its address), neither decoded
//! nor hashed again. Likewise a process is encoded once: the model keeps the processes it has
//! written with their bytes (`encoded`, by the process's hash), and an equal process is those bytes.

use std::hash::Hasher;

use bincode::Options;
use chandy_lamport::apps::spec::Spec;
use smallvec::SmallVec;

use super::config::Mode;
use super::machine::SnapshotModel;
use super::state::{Core, ProcessSlots, Processes, Rest, RestData, Shared, State, StateData};
use crate::engine::wire::{framed, NotAState};
use crate::engine::Wire;

/// Bincode's options: variable-width integers (most are small: against fixed-width ones a
/// third of the bytes, and as fast), no limit but the input's end, and no bytes left over.
fn options() -> impl Options {
    bincode::DefaultOptions::new().with_varint_encoding().reject_trailing_bytes()
}

impl<A: Spec> Wire for SnapshotModel<A> {
    fn encode(&self, state: &State<A>, out: &mut Vec<u8>) {
        let data = &*state.0;
        out.push(u8::try_from(data.procs.len()).expect("at most 255 processes"));
        let mut table = slots(&self.books.encoded);
        for process in &data.procs {
            let slot = &mut table[(process.hash_word() >> (64 - PROCESS_BITS)) as usize];
            match slot {
                Some((known, bytes)) if known == process => {
                    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
                    out.extend_from_slice(bytes);
                }
                _ => {
                    let at = out.len() + 4;
                    framed(out, |out| {
                        options().serialize_into(out, &**process).expect("a process always serializes (into memory)")
                    });
                    *slot = Some((process.clone(), out[at..].into()));
                }
            }
        }
        drop(table);
        options().serialize_into(out, &Rest(data)).expect("a state always serializes (into memory)");
    }

    fn decode(&self, bytes: &[u8]) -> Result<State<A>, NotAState> {
        let not = |why: String| NotAState::bytes(why);
        let (&processes, mut rest) = bytes.split_first().ok_or_else(|| not("no bytes".into()))?;
        if usize::from(processes) != self.cfg.topology.len() {
            return Err(NotAState::of_model(format!("{processes} houses, not {}", self.cfg.topology.len())));
        }
        let mut procs = SmallVec::new();
        {
            let mut table = slots(&self.books.decoded);
            for _ in 0..processes {
                let len = rest.get(..4).ok_or_else(|| not("it ends inside a house".into()))?;
                let len = u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize;
                let process = rest.get(4..4 + len).ok_or_else(|| not("it ends inside a house".into()))?;
                rest = &rest[4 + len..];
                let slot = &mut table[slot_of(process)];
                match slot {
                    Some((shared, known)) if **known == *process => procs.push(shared.clone()),
                    _ => {
                        let core: Core<A> = options().deserialize(process).map_err(|e| not(e.to_string()))?;
                        let shared = Shared::new(core);
                        *slot = Some((shared.clone(), process.into()));
                        procs.push(shared);
                    }
                }
            }
        }
        let data: RestData<A> = options().deserialize(rest).map_err(|e| not(e.to_string()))?;
        let data = data.with(procs).map_err(|e| not(e.to_string()))?;
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

/// Slots of the tables of processes read and written: `1 << PROCESS_BITS`.
const PROCESS_BITS: u32 = 16;

/// The slots of `processes`, locked (made on first use).
fn slots<A: Spec>(processes: &Processes<A>) -> std::sync::MutexGuard<'_, ProcessSlots<A>> {
    let mut table = processes.lock().unwrap_or_else(|e| e.into_inner());
    if table.is_empty() {
        table.resize_with(1 << PROCESS_BITS, || None);
    }
    table
}

/// The slot of the process encoded as `bytes`.
fn slot_of(bytes: &[u8]) -> usize {
    let mut h = rustc_hash::FxHasher::default();
    h.write(bytes);
    (h.finish() >> (64 - PROCESS_BITS)) as usize
}

impl<A: Spec> SnapshotModel<A> {
    /// Whether `data`, as read, has this model's shape: its processes in order, its channels, and
    /// the mode's and algorithm's parts (a state of another configuration is refused, not
    /// stepped).
    fn fits(&self, data: &StateData<A>) -> Result<(), NotAState> {
        let t = &self.cfg.topology;
        let not = |why: String| NotAState::of_model(why);
        if data.procs.len() != t.len() || data.procs.iter().enumerate().any(|(i, p)| p.id().index() != i) {
            return Err(not(format!("its houses are not the {} houses in order", t.len())));
        }
        if data.chans.len() != t.channels().len() {
            return Err(not(format!("{} channels, not {}", data.chans.len(), t.channels().len())));
        }
        let parts = [
            ("ghost data", data.ghost.is_some(), self.cfg.mode == Mode::Full),
            ("history", data.history.is_some(), self.cfg.mode == Mode::Literal),
            ("checkpoints", data.ckpt.is_some(), self.cfg.algorithm.coordinated()),
        ];
        if data.sym != self.sym {
            return Err(not(format!(
                "symmetry group {}, not {} (a process that registered its groups in another order)",
                data.sym, self.sym
            )));
        }
        match parts.iter().find(|(_, has, wants)| has != wants) {
            Some((part, has, _)) => Err(not(format!("{} {part}", if *has { "unexpected" } else { "no" }))),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::config::Config;
    use crate::system::state::NotOnePerProcess;
    use chandy_lamport::apps::bank::Bank;
    use stateright::Model;

    /// The default configuration's initial state and its successors (basic mode).
    fn states() -> (SnapshotModel<Bank>, Vec<State<Bank>>) {
        let cfg = Config { mode: Mode::Basic, ..Config::default() };
        let m = SnapshotModel::<Bank>::new(cfg.resolve().expect("valid"));
        let init = m.init_states().remove(0);
        let mut actions = Vec::new();
        m.actions(&init, &mut actions);
        let mut states: Vec<State<Bank>> = actions.drain(..).filter_map(|a| m.next_state(&init, a)).collect();
        states.insert(0, init);
        (m, states)
    }

    fn used(table: &Processes<Bank>) -> usize {
        table.lock().unwrap().iter().filter(|s| s.is_some()).count()
    }

    #[test]
    fn a_process_read_again_is_the_process_read_before() {
        let (m, states) = states();
        let mut bytes = Vec::new();
        m.encode(&states[0], &mut bytes);
        let (one, two) = (m.decode(&bytes).expect("a state"), m.decode(&bytes).expect("a state"));
        assert_eq!(one, states[0]);
        // Three distinct processes, each in its own slot, each shared by the two states read.
        let distinct: std::collections::HashSet<_> = states[0].procs.iter().map(|h| h.hash_word()).collect();
        assert_eq!(distinct.len(), 3);
        assert_eq!(used(&m.books.decoded), 3);
        assert!(one.procs.iter().zip(&two.procs).all(|(a, b)| a.same(b)));
        // A successor changed one process: two of its processes are those read before.
        bytes.clear();
        m.encode(&states[1], &mut bytes);
        let next = m.decode(&bytes).expect("a state");
        assert_eq!(next, states[1]);
        assert_eq!(next.procs.iter().filter(|h| one.procs.iter().any(|o| o.same(h))).count(), 2);
        assert_eq!(used(&m.books.decoded), 4);
    }

    #[test]
    fn budgets_and_counts_are_one_per_process() {
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
            assert_eq!(err, NotOnePerProcess, "{err}");
        }
        drop(m);
    }

    #[test]
    fn a_process_written_again_is_the_same_bytes() {
        let (m, states) = states();
        let mut first = Vec::new();
        for s in &states {
            let at = first.len();
            m.encode(s, &mut first);
            // Each state decodes alone from its own bytes.
            assert_eq!(&m.decode(&first[at..]).expect("a state"), s);
        }
        assert!(used(&m.books.encoded) >= 3);
        // Written again (the processes now known): the same bytes.
        let mut again = Vec::new();
        states.iter().for_each(|s| m.encode(s, &mut again));
        assert_eq!(first, again);
    }
}
