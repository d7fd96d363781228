//! The model's state: the core's process states, the FIFO contents of every channel, each
//! process's remaining budget, and the ghost data of the chosen property mode.

use chandy_lamport::apps::spec::Spec;
use chandy_lamport::check::Trace;

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use chandy_lamport::{Message, Process, SnapshotId};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use smallvec::SmallVec;

use super::chans::{Chans, Tagged};
use super::ghost::Ghost;
use super::mix::mix;
use super::serial::small;
use super::serial::{shared, Prefix};
use super::stamp::{Stamp, Stamped};

/// A process as the model runs it: the application, with stamped messages.
pub type StampedApp<A> = Stamped<A>;
/// An application message with its stamp.
pub type StampedMsg<A> = Stamp<<A as chandy_lamport::Application>::Msg>;
/// The core's state of one process.
pub type Core<A> = Process<StampedApp<A>>;

/// One process's core state, shared by every model state that did not change it, with its hash
/// computed once. A step changes one process: the others are not copied, and hashing a state
/// hashes one word per process.
pub struct Shared<A: Spec>(Arc<Cached<A>>);

impl<A: Spec> Clone for Shared<A> {
    fn clone(&self) -> Self {
        Shared(Arc::clone(&self.0))
    }
}

#[derive(Clone)]
struct Cached<A: Spec> {
    hash: u64,
    process: Core<A>,
}

fn hash_of<A: Spec>(p: &Core<A>) -> u64 {
    static SEEDS: ahash::RandomState = ahash::RandomState::with_seeds(
        0x243f_6a88_85a3_08d3,
        0x1319_8a2e_0370_7344,
        0xa409_3822_299f_31d0,
        0x082e_fa98_ec4e_6c89,
    );
    SEEDS.hash_one(p)
}

impl<A: Spec> Shared<A> {
    /// Shares `process`.
    pub fn new(process: Core<A>) -> Self {
        Shared(Arc::new(Cached { hash: hash_of(&process), process }))
    }

    /// Changes the process (copying it first if another state shares it) and rehashes it.
    pub fn edit<R>(&mut self, f: impl FnOnce(&mut Core<A>) -> R) -> R {
        let cached = Arc::make_mut(&mut self.0);
        let r = f(&mut cached.process);
        cached.hash = hash_of(&cached.process);
        r
    }
}

impl<A: Spec> Shared<A> {
    /// The process's hash, computed once per change.
    pub fn hash_word(&self) -> u64 {
        self.0.hash
    }

    /// Where the shared process is (the same address: the same process).
    pub fn addr(&self) -> *const () {
        Arc::as_ptr(&self.0).cast()
    }

    /// Whether `self` and `other` are the same shared process (not merely equal).
    pub fn same(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl<A: Spec> std::ops::Deref for Shared<A> {
    type Target = Core<A>;
    fn deref(&self) -> &Core<A> {
        &self.0.process
    }
}

impl<A: Spec> PartialEq for Shared<A> {
    /// The same shared process without reading either (another thread may be counting it).
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || (self.0.hash == other.0.hash && self.0.process == other.0.process)
    }
}

impl<A: Spec> Eq for Shared<A> {}

impl<A: Spec> Hash for Shared<A> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.0.hash);
    }
}

/// A process serializes as its core state; it is read back unshared, its hash recomputed.
impl<A: Spec> Serialize for Shared<A> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.process.serialize(s)
    }
}

impl<'de, A: Spec> Deserialize<'de> for Shared<A> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Core::<A>::deserialize(d).map(Shared::new)
    }
}

impl<A: Spec> std::fmt::Debug for Shared<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.process.fmt(f)
    }
}

/// Processes with their encodings, in slots (`1 << PROCESS_BITS` once used, see `wire`): those a
/// model has read from other processes, by a hash of their bytes, and those it has written, by
/// the process's hash.
pub(crate) type Processes<A> = std::sync::Mutex<ProcessSlots<A>>;

/// The slots of [`Processes`].
pub(crate) type ProcessSlots<A> = Vec<Option<(Shared<A>, Box<[u8]>)>>;

/// The recorded history, in literal mode.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct History<A: Spec> {
    /// Every event so far.
    pub trace: Trace<StampedApp<A>>,
    /// The id of the next message sent.
    pub next_msg: u64,
    /// A running hash of the events, so judgements of one history can be cached.
    pub digest: u64,
}

impl<A: Spec> History<A> {
    /// Folds the events from `from` on into the digest.
    pub fn seal(&mut self, from: usize) {
        use std::hash::{Hash, Hasher};
        for e in &self.trace.events[from.min(self.trace.events.len())..] {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            (self.digest, e).hash(&mut h);
            self.digest = h.finish();
        }
    }
}

/// One global state of the model. Boxed: the checker moves states around far more often than
/// it clones them, and a move of the box is one word.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct State<A: Spec>(pub Box<StateData<A>>);

impl<A: Spec> std::ops::Deref for State<A> {
    type Target = StateData<A>;
    fn deref(&self) -> &StateData<A> {
        &self.0
    }
}

impl<A: Spec> std::ops::DerefMut for State<A> {
    fn deref_mut(&mut self) -> &mut StateData<A> {
        &mut self.0
    }
}

/// The most processes a state holds (the size of its budget and sequence-number arrays; channel
/// and process indices are `u8`, and 16 processes have at most 240 channels).
pub const MAX_PROCESSES: usize = 16;
const _: () = assert!(super::ghost::INLINE_PROCESSES == MAX_PROCESSES);

/// The contents of a [`State`].
#[derive(Debug, PartialEq, Eq)]
pub struct StateData<A: Spec> {
    /// The core's state of every process (the application inside).
    pub procs: SmallVec<[Shared<A>; 4]>,
    /// Every channel's contents.
    pub chans: Chans<A::Msg>,
    /// Actions (transfers and sales) each process may still take (by process index).
    pub budget: [u8; MAX_PROCESSES],
    /// Messages each process has sent, the last one's stamp (full and literal modes; always 0 in
    /// basic mode, whose messages carry no identity).
    pub sent: [u8; MAX_PROCESSES],
    /// The step that led here was refused by the core (its error): a failure, and a dead end.
    pub refused: Option<Box<str>>,
    /// Full mode's ghost data.
    pub ghost: Option<Ghost<A::Msg>>,
    /// Literal mode's history.
    pub history: Option<Box<History<A>>>,
    /// The symmetry group this state is reduced under (0: none); constant in a run.
    pub sym: u16,
    /// The barrier algorithms' checkpoint coordinator, what it stored, and the failures left.
    pub ckpt: Option<Box<Checkpoints<A>>>,
}

/// The barrier algorithms' side of a state: the coordinator, the triggers on their way to the
/// sources, the newest completed checkpoint (what a recovery restores), and the run's bounds.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct Checkpoints<A: Spec> {
    /// The coordinator (the library's).
    pub coord: chandy_lamport::Coordinator,
    /// Per process: bit `n` is set while checkpoint `n`'s trigger waits to be handled there.
    pub triggers: [u8; MAX_PROCESSES],
    /// The newest completed checkpoint.
    #[serde(with = "shared")]
    pub latest: Option<Arc<Stored<A>>>,
    /// `(checkpoint, process, budget)`: each process's budget when it recorded a checkpoint not yet
    /// over (the trade's input position, restored with the process).
    #[serde(with = "small")]
    pub budgets: SmallVec<[(u8, u8, u8); 4]>,
    /// A checkpoint completed with an id below an earlier completed one's.
    pub ids_decreased: bool,
    /// Declines left.
    pub declines: u8,
    /// Crashes left.
    pub crashes: u8,
    /// The job has failed over (a crash, or more failed checkpoints in a row than tolerated).
    pub failed_over: bool,
}

/// A completed checkpoint as the coordinator stores it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct Stored<A: Spec> {
    /// Its id.
    pub id: SnapshotId,
    /// The processes' states and the channels' records.
    pub rec: Recorded<A>,
    /// Each process's budget when it recorded.
    #[serde(with = "small")]
    pub budgets: SmallVec<[u8; 4]>,
}

impl<A: Spec> Hash for StateData<A> {
    /// The state's [digest](StateData::digest): one word.
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.digest());
    }
}

/// A state's digest is the wrapping sum of one word per part, each word a function of the
/// part's content and its place: process `i` (its core's hash, budget and messages sent), channel
/// `c` (its messages), and the rest. A step that changes a few parts changes the digest by
/// theirs alone ([`StateData::digest`] computes it whole).
pub struct Parts;

impl Parts {
    /// Process `i`'s word.
    pub fn process<A: Spec>(i: usize, process: &Shared<A>, budget: u8, sent: u8) -> u64 {
        let place = (i as u64) << 16 | u64::from(budget) << 8 | u64::from(sent);
        mix(process.hash_word().wrapping_add(mix(place ^ 0x9e37_79b9_7f4a_7c15)))
    }

    /// Channel `c`'s word (an empty channel's is its place's alone: most channels are empty).
    pub fn channel<M: Hash>(c: usize, in_transit: &[Tagged<M>]) -> u64 {
        if in_transit.is_empty() {
            return mix(c as u64 ^ 0x2545_f491_4f6c_dd1d);
        }
        let mut h = rustc_hash::FxHasher::default();
        (c as u64 ^ 0x2545_f491_4f6c_dd1d, in_transit).hash(&mut h);
        mix(h.finish())
    }

    /// The word of everything else.
    #[allow(clippy::too_many_arguments)]
    pub fn rest<A: Spec>(
        processes: usize,
        channels: usize,
        refused: &Option<Box<str>>,
        ghost: &Option<Ghost<A::Msg>>,
        history: &Option<Box<History<A>>>,
        sym: u16,
        ckpt: &Option<Box<Checkpoints<A>>>,
    ) -> u64 {
        let mut h = rustc_hash::FxHasher::default();
        (u64::MAX, processes, channels, refused, ghost, history, sym, ckpt).hash(&mut h);
        mix(h.finish())
    }
}

impl<A: Spec> StateData<A> {
    /// The state's digest, every part's word summed (see [`Parts`]): what the state's
    /// fingerprint is computed from.
    pub fn digest(&self) -> u64 {
        let mut sum = self.rest_word();
        for (i, p) in self.procs.iter().enumerate() {
            sum = sum.wrapping_add(Parts::process(i, p, self.budget[i], self.sent[i]));
        }
        for (c, in_transit) in self.chans.iter().enumerate() {
            sum = sum.wrapping_add(Parts::channel(c, in_transit));
        }
        sum
    }

    /// The word of everything but the processes and channels.
    pub fn rest_word(&self) -> u64 {
        Parts::rest(self.procs.len(), self.chans.len(), &self.refused, &self.ghost, &self.history, self.sym, &self.ckpt)
    }
}

/// Everything of a state but its processes, as it goes on the wire after them (see `wire`): its
/// fields in order, the budget and count arrays only as long as there are processes (beyond them
/// they are always 0). What the state's digest is made of is sent or recomputed (a process's hash
/// from its core state), so the state read back is equal, with the same digest.
pub struct Rest<'a, A: Spec>(pub &'a StateData<A>);

impl<A: Spec> Serialize for Rest<'_, A> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let d = self.0;
        let n = d.procs.len();
        (&d.chans, &d.budget[..n], &d.sent[..n], &d.refused, &d.ghost, &d.history, d.sym, &d.ckpt).serialize(s)
    }
}

/// [`Rest`] as read back: a state once its processes are given ([`RestData::with`]).
#[derive(Deserialize)]
#[serde(bound = "")]
pub struct RestData<A: Spec>(
    Chans<A::Msg>,
    Prefix<MAX_PROCESSES>,
    Prefix<MAX_PROCESSES>,
    Option<Box<str>>,
    Option<Ghost<A::Msg>>,
    Option<Box<History<A>>>,
    u16,
    Option<Box<Checkpoints<A>>>,
);

/// A state's rest whose budgets or counts sent are not one per process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the budgets or counts sent are not one per house")]
pub struct NotOnePerProcess;

impl<A: Spec> RestData<A> {
    /// The state with processes `procs`; an error if the budgets and counts are not one per process.
    pub fn with(self, procs: SmallVec<[Shared<A>; 4]>) -> Result<StateData<A>, NotOnePerProcess> {
        let RestData(chans, budget, sent, refused, ghost, history, sym, ckpt) = self;
        if budget.len != procs.len() || sent.len != procs.len() {
            return Err(NotOnePerProcess);
        }
        let (budget, sent) = (budget.bytes, sent.bytes);
        Ok(StateData { procs, chans, budget, sent, refused, ghost, history, sym, ckpt })
    }
}

impl<A: Spec> Clone for StateData<A> {
    fn clone(&self) -> Self {
        let mut procs = SmallVec::new();
        for p in &self.procs {
            procs.push(p.clone());
        }
        StateData {
            procs,
            chans: self.chans.clone(),
            budget: self.budget,
            sent: self.sent,
            refused: self.refused.clone(),
            ghost: self.ghost.clone(),
            history: self.history.clone(),
            sym: self.sym,
            ckpt: self.ckpt.clone(),
        }
    }
}

impl<A: Spec> StateData<A> {
    /// Some process has started snapshot `s` (recorded, or holds its marker).
    pub fn started(&self, s: SnapshotId) -> bool {
        self.procs.iter().any(|p| p.slot(s).is_some() || p.has_recorded(s))
    }

    /// Every process's part of snapshot `s` is complete.
    pub fn complete(&self, s: SnapshotId) -> bool {
        self.procs.iter().all(|p| p.is_complete(s))
    }

    /// Application messages in transit on channel `c`.
    pub fn messages(&self, c: usize) -> usize {
        self.chans.get(c).iter().filter(|p| p.is_app()).count()
    }

    /// The application messages in transit on each channel, stamps removed.
    pub fn in_transit(&self) -> Vec<Vec<A::Msg>> {
        self.chans
            .iter()
            .map(|chan| {
                chan.iter()
                    .filter_map(|p| match p.msg {
                        Message::App(m) => Some(m.msg),
                        Message::Marker(_) | Message::Cancel(_) => None,
                    })
                    .collect()
            })
            .collect()
    }

    /// Every process's application state.
    pub fn apps(&self) -> Vec<A> {
        self.procs.iter().map(|p| p.app().0).collect()
    }

    /// The conserved quantity in the processes and in transit ([`Spec::held`], [`Spec::carried`]).
    pub fn accounted(&self) -> u64 {
        let held: u64 = self.procs.iter().map(|p| p.app().held()).sum();
        let moving: u64 = self
            .chans
            .all()
            .iter()
            .map(|p| match &p.msg {
                Message::App(m) => A::carried(&m.msg),
                Message::Marker(_) | Message::Cancel(_) => 0,
            })
            .sum();
        // Unaligned barriers: messages still in their senders' output buffers.
        let buffered: u64 = self.procs.iter().flat_map(|p| p.buffered_all()).map(|m| A::carried(&m.msg)).sum();
        held + moving + buffered
    }
}

/// What a completed snapshot recorded, read from the core's slots.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct Recorded<A: Spec> {
    /// Recorded state of every process.
    pub processes: Vec<A>,
    /// Recorded messages per channel.
    pub channels: Vec<Vec<StampedMsg<A>>>,
}

impl<A: Spec> Recorded<A> {
    /// The conserved quantity recorded in processes and in transit.
    pub fn accounted(&self) -> u64 {
        let processes: u64 = self.processes.iter().map(A::held).sum();
        processes + self.channels.iter().flatten().map(|c| A::carried(&c.msg)).sum::<u64>()
    }

    /// The recorded messages per channel, stamps removed.
    pub fn messages(&self) -> Vec<Vec<A::Msg>> {
        self.channels.iter().map(|r| r.iter().map(|c| c.msg).collect()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chandy_lamport::apps::bank::Bank;
    use chandy_lamport::ProcessId;
    use std::collections::HashSet;

    /// A process's word depends on its place, budget and messages sent, each on its own.
    #[test]
    fn process_words_tell_place_budget_and_count_apart() {
        let process = Shared::new(Process::new(ProcessId(0), Stamped(Bank::new(2))));
        let mut words = HashSet::new();
        for i in 0..MAX_PROCESSES {
            for budget in 0..=255u8 {
                for sent in [0, 1, 2, 255] {
                    assert!(words.insert(Parts::process(i, &process, budget, sent)), "{i} {budget} {sent}");
                }
            }
        }
        let other = Shared::new(Process::new(ProcessId(0), Stamped(Bank::new(3))));
        assert_ne!(Parts::process(0, &process, 1, 0), Parts::process(0, &other, 1, 0));
    }

    /// A channel's word depends on its place and on its messages and their order.
    #[test]
    fn channel_words_tell_place_and_contents_apart() {
        let message = |n: u32| Tagged { msg: Message::App(Stamp { seq: 0, msg: n }), tag: 0 };
        let (a, b) = (message(1), message(2));
        let contents: [&[Tagged<u32>]; 5] = [&[], &[a], &[b], &[a, b], &[b, a]];
        let mut words = HashSet::new();
        for c in 0..240 {
            for in_transit in contents {
                assert!(words.insert(Parts::channel(c, in_transit)), "{c} {in_transit:?}");
            }
        }
    }
}
