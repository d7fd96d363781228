//! The processes' steps, remembered. A process's step is a function of its core state and what it is
//! asked to do (the model's configuration being fixed), and a search meets the same process in
//! the same state in a great many global states: each thread keeps its latest steps in a small
//! table, and a step found there hands out the process it led to (shared, not copied) and its
//! effects, without calling the core again. Only accepted steps are kept. The table lives in the
//! thread's [`Scratch`], with the effects buffer and the process a step replaced (moved out, so a
//! step taken in place is put back without counting the process again): one thread-local access
//! a step.

use std::cell::RefCell;
use std::hash::{Hash, Hasher};

use chandy_lamport::apps::spec::Spec;
use chandy_lamport::{ChannelId, CoreError, Effect, Message, SnapshotId, Topology};
use rustc_hash::FxHasher;
use smallvec::SmallVec;

use super::state::{Shared, StampedMsg};

/// What a process is asked to do: the core call and its arguments.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Input<A: Spec> {
    /// `send` on the channel.
    Send(ChannelId, StampedMsg<A>),
    /// `internal`.
    Internal(A::Step),
    /// `receive_overtaking`: the channel, the message and the messages it overtakes.
    Receive(ChannelId, Message<StampedMsg<A>>, SmallVec<[StampedMsg<A>; 4]>),
    /// `initiate`.
    Initiate(SnapshotId),
    /// `release_faults` (fault variants only: the work they deferred).
    ReleaseFaults,
    /// `transmit` on the channel.
    Transmit(ChannelId),
}

impl<A: Spec> Input<A> {
    /// Carries the input out on `process` (the core's own call).
    fn apply(
        &self,
        t: &Topology,
        process: &mut Shared<A>,
        fx: &mut Vec<Effect<StampedMsg<A>>>,
    ) -> Result<(), CoreError> {
        process.edit(|h| match self {
            Input::Send(c, message) => h.send(t, *c, *message, fx),
            Input::Internal(step) => h.internal(t, step, fx),
            Input::Receive(c, msg, overtaken) => h.receive_overtaking(t, *c, *msg, overtaken, fx),
            Input::Initiate(s) => h.initiate(t, *s, fx),
            Input::ReleaseFaults => {
                h.release_faults(t, fx);
                Ok(())
            }
            Input::Transmit(c) => h.transmit(t, *c, fx),
        })
    }
}

/// One remembered step.
struct Entry<A: Spec> {
    before: Shared<A>,
    input: Input<A>,
    after: Shared<A>,
    effects: SmallVec<[Effect<StampedMsg<A>>; 4]>,
}

/// A thread's scratch for the steps of one model (`owner`): its remembered steps,
/// direct-mapped by process and input, the effects of the step being taken, and the process that
/// step replaced.
pub struct Scratch<A: Spec> {
    owner: u64,
    entries: Vec<Option<Entry<A>>>,
    /// The effects of the step being taken, in the core's order.
    pub fx: Vec<Effect<StampedMsg<A>>>,
    /// The process the latest step replaced, moved out of its state (not copied): what puts a
    /// step taken in place back.
    pub replaced: Option<Shared<A>>,
    /// Buffers for a snapshot's record read out of the processes (its processes' states, each
    /// channel's messages), reused from state to state.
    pub record: (Vec<A>, Vec<Vec<A::Msg>>),
    /// The processes the remembered steps hand out, direct-mapped by their hash: a process two steps
    /// lead to is handed out as one shared process, so that a remembered step finds the process it
    /// is asked about by its address, not by comparing the two.
    processes: Vec<Option<Shared<A>>>,
}

/// Entries per thread: `1 << BITS`.
const BITS: u32 = 14;

thread_local! {
    /// This thread's scratch (of whatever application: type-erased).
    static SCRATCH: RefCell<Option<Box<dyn std::any::Any>>> = const { RefCell::new(None) };
}

/// Runs `f` with this thread's scratch for the model numbered `owner`, its effects buffer
/// empty (a scratch of another model is replaced; a call within `f` gets a scratch of its own).
pub fn with<A: Spec, R>(owner: u64, f: impl FnOnce(&mut Scratch<A>) -> R) -> R {
    SCRATCH.with(|cell| {
        let taken = cell.borrow_mut().take().and_then(|b| b.downcast::<Scratch<A>>().ok());
        let mut scratch = match taken {
            Some(s) if s.owner == owner => s,
            _ => Scratch::new(owner),
        };
        scratch.fx.clear();
        scratch.replaced = None;
        let r = f(&mut scratch);
        *cell.borrow_mut() = Some(scratch);
        r
    })
}

/// The table slot of a word (both tables have `1 << BITS` slots).
fn slot(word: u64) -> usize {
    (word.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - BITS)) as usize
}

impl<A: Spec> Scratch<A> {
    /// An empty scratch for the model numbered `owner`.
    fn new(owner: u64) -> Box<Self> {
        Box::new(Scratch {
            owner,
            entries: (0..1usize << BITS).map(|_| None).collect(),
            fx: Vec::new(),
            replaced: None,
            record: (Vec::new(), Vec::new()),
            processes: (0..1usize << BITS).map(|_| None).collect(),
        })
    }

    /// Carries `input` out on `process` (in a model whose topology is `t`), its effects appended
    /// to `fx` and the process it replaces kept in `replaced`: from the table when the same process
    /// took the same input before, else by the core (and then remembered).
    pub fn step(&mut self, t: &Topology, process: &mut Shared<A>, input: Input<A>) -> Result<(), CoreError> {
        let mut h = FxHasher::default();
        input.hash(&mut h);
        let slot = slot(process.hash_word() ^ h.finish());
        match &self.entries[slot] {
            Some(e) if e.input == input && e.before == *process => {
                self.replaced = Some(std::mem::replace(process, e.after.clone()));
                self.fx.extend(e.effects.iter().cloned());
                Ok(())
            }
            _ => {
                let (before, start) = (process.clone(), self.fx.len());
                let result = input.apply(t, process, &mut self.fx);
                if result.is_ok() {
                    self.share(process);
                    let effects = self.fx[start..].iter().cloned().collect();
                    self.entries[slot] = Some(Entry { before: before.clone(), input, after: process.clone(), effects });
                }
                self.replaced = Some(before);
                result
            }
        }
    }

    /// Replaces `process` by the equal process handed out before, if it is still kept; else keeps it.
    fn share(&mut self, process: &mut Shared<A>) {
        let slot = slot(process.hash_word());
        match &self.processes[slot] {
            Some(kept) if kept == process => *process = kept.clone(),
            _ => self.processes[slot] = Some(process.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chandy_lamport::apps::bank::{Bank, Jars};
    use chandy_lamport::{Process, ProcessId};
    use rand::{Rng, SeedableRng};

    use crate::system::stamp::{Stamp, Stamped};

    /// Many more (process, input) pairs than the table has entries, so that pairs share entries: a
    /// remembered step answers only its own process and input, as the core does.
    #[test]
    fn remembered_steps_answer_as_the_core() {
        let t = Topology::complete(3).expect("a topology");
        let mut rng = rand::rngs::StdRng::seed_from_u64(41);
        let mut scratch = Scratch::<Bank>::new(0);
        let mut processes: Vec<Shared<Bank>> =
            (0..3u16).map(|p| Shared::new(Process::new(ProcessId(p), Stamped(Bank::new(2))))).collect();
        let (mut hits, mut steps) = (0, 0);
        for _ in 0..200_000 {
            let p = rng.random_range(0..3usize);
            let message = Stamp { seq: 0, msg: Jars(rng.random_range(1..40)) };
            let input = match rng.random_range(0..3) {
                0 => Input::Send(t.outgoing(ProcessId(p as u16))[rng.random_range(0..2)], message),
                _ => Input::Receive(
                    t.incoming(ProcessId(p as u16))[rng.random_range(0..2)],
                    Message::App(message),
                    SmallVec::new(),
                ),
            };
            let mut core = processes[p].clone();
            let mut core_fx = Vec::new();
            let want = input.apply(&t, &mut core, &mut core_fx);
            scratch.fx.clear();
            let before = processes[p].clone();
            let got = scratch.step(&t, &mut processes[p], input.clone());
            assert_eq!(got.is_ok(), want.is_ok(), "{input:?}");
            assert!(scratch.replaced.take().is_some_and(|r| r.same(&before)), "the process replaced is the one before");
            if got.is_err() {
                processes[p] = before;
                continue;
            }
            steps += 1;
            hits += usize::from(
                scratch.entries.iter().flatten().any(|e| e.after.same(&processes[p])) && !processes[p].same(&core),
            );
            assert!(*processes[p] == *core, "{input:?}: the process after");
            assert_eq!(scratch.fx, core_fx, "{input:?}: the effects");
            if rng.random_range(0..50) == 0 {
                processes[p] = Shared::new(Process::new(ProcessId(p as u16), Stamped(Bank::new(2))));
            }
        }
        assert!(steps > 100_000 && hits > 10_000, "{steps} steps, {hits} from the table");
    }

    /// Two steps that lead to equal processes hand out one shared process; unequal processes stay apart.
    #[test]
    fn steps_to_equal_processes_hand_out_one_process() {
        let t = Topology::complete(3).expect("a topology");
        let process = |jars| Shared::new(Process::new(ProcessId(0), Stamped(Bank::new(jars))));
        let message = Stamp { seq: 0, msg: Jars(1) };
        let (inc, out) = (t.incoming(ProcessId(0))[0], t.outgoing(ProcessId(0))[0]);
        let (mut received, mut sent, mut other) = (process(2), process(4), process(5));
        with(7, |s: &mut Scratch<Bank>| {
            s.step(&t, &mut received, Input::Receive(inc, Message::App(message), SmallVec::new())).expect("a receipt");
            s.step(&t, &mut sent, Input::Send(out, message)).expect("a send");
            s.step(&t, &mut other, Input::Send(out, message)).expect("a send");
        });
        assert_eq!(received.app().0, Bank::new(3));
        assert!(*received == *sent, "three jars either way");
        assert!(received.same(&sent), "one shared process");
        assert!(!other.same(&sent) && *other != *sent);
    }
}
