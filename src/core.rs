//! The marker rules as a pure state machine: no threads, no channels, no clocks.
//!
//! A [`Process`] holds one process's application state and its part of every snapshot in
//! flight. Drivers (the model, the threaded runtime, the simulator) feed it events — an
//! application send, a message arriving on an incoming channel, the start of a snapshot — and
//! carry out the [`Effect`]s it returns, in order.
//!
//! The sending rule is enforced here: recording and sending the markers happen in the same call,
//! and effects are ordered, so no application message can leave on a channel between a
//! process's recording and that snapshot's marker.

use std::fmt::Debug;
use std::hash::Hash;

use serde::{Deserialize, Serialize};
use smallvec::SmallVec;
use thiserror::Error;

use crate::algorithm::Algorithm;
use crate::snapshot::LocalSnapshot;
use crate::topology::{ChannelId, ProcessId, Topology};
use crate::variant::Variant;

/// Identifies one snapshot; several may be in flight at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SnapshotId(pub u32);

impl std::fmt::Display for SnapshotId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// What travels on a channel: an application message or a marker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Message<M> {
    /// An application message.
    App(M),
    /// The marker of a snapshot (a barrier, in the barrier algorithms).
    Marker(SnapshotId),
    /// Barrier algorithms only: the checkpoint was cancelled upstream (a cancellation barrier).
    Cancel(SnapshotId),
}

/// Why an application refused a local step: a send or an internal step it cannot take now.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{0}")]
pub struct Refusal(pub String);

/// The application running at each process: its state is what a snapshot records.
///
/// Every change of the state is one of three transitions, so a trace checker can recompute any
/// process's state from its initial state and its events: a send, a receipt, an internal step.
/// The core applies them; drivers never change the state behind its back.
pub trait Application: Clone + Eq + Hash + Debug {
    /// Application messages.
    type Msg: Clone + Eq + Hash + Debug;
    /// Internal steps: local events that send nothing (e.g. a sale to the port town).
    type Step: Clone + Eq + Hash + Debug;

    /// The sender's side of sending `msg` to `to` (e.g. a debit). A refused send must leave the
    /// state unchanged.
    fn on_send(&mut self, to: ProcessId, msg: &Self::Msg) -> Result<(), Refusal>;

    /// Applies the receipt of `msg`, sent by `from`.
    fn on_message(&mut self, from: ProcessId, msg: &Self::Msg);

    /// Applies internal step `step`. A refused step must leave the state unchanged.
    fn on_internal(&mut self, step: &Self::Step) -> Result<(), Refusal>;
}

/// What the driver must do after a step, in this order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect<M> {
    /// Put `message` at the tail of `channel`.
    Send {
        /// An outgoing channel of this process.
        channel: ChannelId,
        /// The message or marker.
        message: Message<M>,
    },
    /// This process recorded its local state for `snapshot`.
    Recorded {
        /// The snapshot.
        snapshot: SnapshotId,
        /// True when the recording was an initiation rather than a marker's receipt.
        initiated: bool,
    },
    /// The record of `channel` for `snapshot` is closed.
    Closed {
        /// The snapshot.
        snapshot: SnapshotId,
        /// The incoming channel.
        channel: ChannelId,
    },
    /// This process's part of `snapshot` is complete: fetch it with
    /// [`Process::take_local_snapshot`] or read it with [`Process::slot`].
    Completed {
        /// The snapshot.
        snapshot: SnapshotId,
    },
    /// Barrier algorithms only: this process gave up its part of `snapshot` (it declined, a
    /// cancellation barrier arrived, a newer checkpoint's barrier subsumed it, or its trigger
    /// came after a newer one). The coordinator aborts the checkpoint.
    Aborted {
        /// The snapshot.
        snapshot: SnapshotId,
    },
}

/// A step the core refuses. The process state is unchanged when one is returned.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum CoreError {
    /// A message arrived on a channel that is not incoming at this process.
    #[error("process {process}: channel {} is not an incoming channel", channel.0)]
    NotIncoming {
        /// The process.
        process: ProcessId,
        /// The channel.
        channel: ChannelId,
    },
    /// An application send on a channel that is not outgoing at this process.
    #[error("process {process}: channel {} is not an outgoing channel", channel.0)]
    NotOutgoing {
        /// The process.
        process: ProcessId,
        /// The channel.
        channel: ChannelId,
    },
    /// A marker or initiation for a snapshot this process has already completed.
    #[error("process {process}: snapshot {snapshot} is already complete here")]
    SnapshotCompleted {
        /// The process.
        process: ProcessId,
        /// The snapshot.
        snapshot: SnapshotId,
    },
    /// A second marker for the same snapshot on the same channel.
    #[error("process {process}: second marker of snapshot {snapshot} on channel {}", channel.0)]
    DuplicateMarker {
        /// The process.
        process: ProcessId,
        /// The snapshot.
        snapshot: SnapshotId,
        /// The channel.
        channel: ChannelId,
    },
    /// An initiation at a process that has already recorded for this snapshot (a second
    /// initiation, or one after a marker of the same id arrived).
    #[error("process {process}: snapshot {snapshot} is already recorded here")]
    AlreadyRecorded {
        /// The process.
        process: ProcessId,
        /// The snapshot.
        snapshot: SnapshotId,
    },
    /// A query for a snapshot this process does not hold.
    #[error("process {process}: unknown snapshot {snapshot}")]
    UnknownSnapshot {
        /// The process.
        process: ProcessId,
        /// The snapshot.
        snapshot: SnapshotId,
    },
    /// The application refused a send or an internal step.
    #[error("process {process}: the application refused the step: {reason}")]
    Refused {
        /// The process.
        process: ProcessId,
        /// Why.
        reason: Refusal,
    },
    /// An application message taken from an input that aligned barriers block.
    #[error("process {process}: channel {} is blocked until the barriers align", channel.0)]
    Blocked {
        /// The process.
        process: ProcessId,
        /// The channel.
        channel: ChannelId,
    },
    /// A transmission from an output buffer that is empty.
    #[error("process {process}: nothing is buffered for channel {}", channel.0)]
    NothingBuffered {
        /// The process.
        process: ProcessId,
        /// The channel.
        channel: ChannelId,
    },
    /// A barrier that overtook data, in an algorithm whose barriers never overtake.
    #[error("process {process}: a barrier overtook data on channel {}, but {algorithm} barriers never overtake", channel.0)]
    Overtaking {
        /// The process.
        process: ProcessId,
        /// The channel.
        channel: ChannelId,
        /// The algorithm the process runs.
        algorithm: Algorithm,
    },
    /// A cancellation barrier, or a decline, in an algorithm that has no cancellation.
    #[error("process {process}: {algorithm} has no cancellation barriers")]
    NoCancellation {
        /// The process.
        process: ProcessId,
        /// The algorithm the process runs.
        algorithm: Algorithm,
    },
    /// A local snapshot was taken before it was complete.
    #[error("process {process}: snapshot {snapshot} is not complete yet")]
    Incomplete {
        /// The process.
        process: ProcessId,
        /// The snapshot.
        snapshot: SnapshotId,
    },
}

/// A list that is almost always empty: one pointer wide, on the heap only when used (and
/// `None` again when emptied, so equal lists are equal values).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[allow(clippy::box_collection)] // one word in every process state, instead of a Vec's three
struct Rare<T>(Option<Box<Vec<T>>>);

impl<T> Default for Rare<T> {
    fn default() -> Self {
        Rare(None)
    }
}

impl<T> Rare<T> {
    fn as_slice(&self) -> &[T] {
        self.0.as_deref().map_or(&[], Vec::as_slice)
    }

    fn vec_mut(&mut self) -> &mut Vec<T> {
        self.0.get_or_insert_with(Box::default)
    }

    fn take(&mut self) -> Vec<T> {
        self.0.take().map(|b| *b).unwrap_or_default()
    }

    /// Removes the item at `at` (`None` when there is none), emptying to `None`.
    fn remove(&mut self, at: usize) -> Option<T> {
        let list = self.0.as_mut().filter(|l| at < l.len())?;
        let item = list.remove(at);
        if list.is_empty() {
            self.0 = None;
        }
        Some(item)
    }
}

/// A set of small indices: one word inline, more on the heap only when needed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct Bits {
    low: u64,
    high: Rare<u64>,
}

impl Bits {
    fn get(&self, i: usize) -> bool {
        match i {
            0..64 => self.low & (1 << i) != 0,
            _ => self.high.as_slice().get(i / 64 - 1).is_some_and(|w| w & (1 << (i % 64)) != 0),
        }
    }

    fn set(&mut self, i: usize) {
        if i < 64 {
            self.low |= 1 << i;
        } else {
            let w = i / 64 - 1;
            let high = self.high.vec_mut();
            if high.len() <= w {
                high.resize(w + 1, 0);
            }
            high[w] |= 1 << (i % 64);
        }
    }

    fn count(&self) -> usize {
        (self.low.count_ones() + self.high.as_slice().iter().map(|w| w.count_ones()).sum::<u32>()) as usize
    }
}

/// One process's part of one snapshot: the recorded state, which incoming channels' markers
/// have arrived, and the messages recorded on them. Laid out flat (one bit set, one list of
/// messages tagged with their channel, in arrival order) so that a model checker clones it
/// cheaply and a busy runtime appends in constant time. Equality and hashing look at each
/// channel's record on its own: how arrivals on different channels interleaved is not part of
/// the snapshot.
#[derive(Debug)]
pub struct Slot<A: Application> {
    /// The snapshot.
    pub id: SnapshotId,
    /// The recorded local state; `None` only while the `late-record` fault holds it back.
    pub state: Option<A>,
    incoming: u32,
    closed: Bits,
    recorded: SmallVec<[(u32, A::Msg); 2]>,
    /// Unaligned barriers only: the output buffers when the barriers went out (outgoing channel
    /// number, message), in channel order.
    output: Rare<(u32, A::Msg)>,
}

/// Clones a short list by pushing (cheaper than the generic `collect` for 0–2 items, and a
/// model checker clones these millions of times).
fn clone_small<A: smallvec::Array>(v: &SmallVec<A>) -> SmallVec<A>
where
    A::Item: Clone,
{
    let mut out = SmallVec::new();
    for x in v {
        out.push(x.clone());
    }
    out
}

impl<A: Application> Clone for Slot<A> {
    fn clone(&self) -> Self {
        Slot {
            id: self.id,
            state: self.state.clone(),
            incoming: self.incoming,
            closed: self.closed.clone(),
            recorded: clone_small(&self.recorded),
            output: self.output.clone(),
        }
    }
}

impl<A: Application> PartialEq for Slot<A> {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
            && self.state == other.state
            && self.incoming == other.incoming
            && self.closed == other.closed
            && self.output == other.output
            && self.recorded.len() == other.recorded.len()
            && (self.recorded == other.recorded || (0..self.incoming()).all(|i| self.record(i).eq(other.record(i))))
    }
}

impl<A: Application> Eq for Slot<A> {}

impl<A: Application> Hash for Slot<A> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.id.hash(state);
        self.state.hash(state);
        self.incoming.hash(state);
        self.closed.hash(state);
        self.output.hash(state);
        self.recorded.len().hash(state);
        if self.recorded.is_empty() {
            return;
        }
        for i in 0..self.incoming() {
            for m in self.record(i) {
                m.hash(state);
            }
            state.write_u8(0xff);
        }
    }
}

impl<A: Application> Slot<A> {
    fn new(id: SnapshotId, incoming: usize) -> Self {
        Slot {
            id,
            state: None,
            incoming: incoming as u32,
            closed: Bits::default(),
            recorded: SmallVec::new(),
            output: Rare::default(),
        }
    }

    /// The local state is recorded and every channel record is closed.
    pub fn is_complete(&self) -> bool {
        self.state.is_some() && self.closed.count() == self.incoming as usize
    }

    /// Number of incoming channels (records).
    pub fn incoming(&self) -> usize {
        self.incoming as usize
    }

    /// Whether the marker has arrived on incoming channel number `i` (in
    /// [`Topology::incoming`] order): its record is closed.
    pub fn marker(&self, i: usize) -> bool {
        self.closed.get(i)
    }

    /// The messages recorded on incoming channel number `i`, in arrival order.
    pub fn record(&self, i: usize) -> impl Iterator<Item = &A::Msg> + '_ {
        self.recorded.iter().filter(move |(c, _)| *c as usize == i).map(|(_, m)| m)
    }

    /// Unaligned barriers: what outgoing channel number `j`'s output buffer held when the
    /// barrier overtook it (the sender's side of that channel's state), oldest first.
    pub fn output(&self, j: usize) -> impl Iterator<Item = &A::Msg> + '_ {
        self.output.as_slice().iter().filter(move |(c, _)| *c as usize == j).map(|(_, m)| m)
    }

    /// Every recorded message with its incoming channel number, in arrival order.
    pub fn recorded(&self) -> impl Iterator<Item = (usize, &A::Msg)> + '_ {
        self.recorded.iter().map(|(c, m)| (*c as usize, m))
    }

    /// Records `msg` on incoming channel number `i`: after its other messages, or before them
    /// (`reversed`, the `records-reversed` fault).
    fn push(&mut self, i: usize, msg: A::Msg, reversed: bool) {
        let first = if reversed { self.recorded.iter().position(|(c, _)| *c as usize == i) } else { None };
        match first {
            Some(at) => self.recorded.insert(at, (i as u32, msg)),
            None => self.recorded.push((i as u32, msg)),
        }
    }

    /// Every channel's record, by channel number, in one pass.
    fn records(&self) -> Vec<Vec<A::Msg>> {
        let mut out = vec![Vec::new(); self.incoming as usize];
        for (c, m) in &self.recorded {
            if let Some(r) = out.get_mut(*c as usize) {
                r.push(m.clone());
            }
        }
        out
    }

    /// Whether messages arriving on incoming channel number `i` are being recorded.
    fn records_on(&self, i: usize, variant: Variant) -> bool {
        self.state.is_some()
            && !self.is_complete()
            && (!self.closed.get(i) || variant == Variant::KeepRecordingAfterMarker)
            && variant != Variant::NoChannelRecording
    }
}

/// Ids of snapshots completed and taken, as sorted disjoint inclusive ranges `(first, last)`
/// (compact when snapshots complete in order; empty, and free to clone, in a model that never
/// takes them). Inclusive, so that every id up to `u32::MAX` fits.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct IdSet(Rare<(u32, u32)>);

impl IdSet {
    fn contains(&self, id: u32) -> bool {
        self.0.as_slice().iter().any(|&(a, b)| a <= id && id <= b)
    }

    fn insert(&mut self, id: u32) {
        if self.contains(id) {
            return;
        }
        let ranges = self.0.vec_mut();
        let pos = ranges.iter().position(|&(a, _)| a > id).unwrap_or(ranges.len());
        ranges.insert(pos, (id, id));
        // Merge with the neighbours it touches.
        if pos + 1 < ranges.len() && u64::from(ranges[pos].1) + 1 == u64::from(ranges[pos + 1].0) {
            ranges[pos].1 = ranges[pos + 1].1;
            ranges.remove(pos + 1);
        }
        if pos > 0 && u64::from(ranges[pos - 1].1) + 1 == u64::from(ranges[pos].0) {
            ranges[pos - 1].1 = ranges[pos].1;
            ranges.remove(pos);
        }
    }
}

/// One process: its application and its part of every snapshot it has seen.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Process<A: Application> {
    id: ProcessId,
    variant: Variant,
    app: A,
    slots: SmallVec<[Slot<A>; 1]>,
    taken: IdSet,
    /// `send-before-marker` only: snapshots whose markers wait for the next step.
    held: Rare<SnapshotId>,
    /// `stale-state` only: the application state before the latest receipt.
    stale: Option<Box<A>>,
    algorithm: Algorithm,
    /// Aligned barriers: incoming channel numbers that are back edges (never waited for).
    back: Bits,
    /// Unaligned barriers: the output buffers (outgoing channel number, message), oldest first.
    out: Rare<(u32, A::Msg)>,
    /// Barrier algorithms: one more than the newest checkpoint id this process has started,
    /// cancelled or seen a barrier of (0: none). Older barriers are obsolete.
    newest: u32,
}

impl<A: Application> Clone for Process<A> {
    fn clone(&self) -> Self {
        Process {
            id: self.id,
            variant: self.variant,
            app: self.app.clone(),
            slots: clone_small(&self.slots),
            taken: self.taken.clone(),
            held: self.held.clone(),
            stale: self.stale.clone(),
            algorithm: self.algorithm,
            back: self.back.clone(),
            out: self.out.clone(),
            newest: self.newest,
        }
    }
}

impl<A: Application> Process<A> {
    /// A process running the correct algorithm.
    pub fn new(id: ProcessId, app: A) -> Self {
        Self::with_variant(id, app, Variant::None)
    }

    /// A process running a fault variant (channel faults leave the core unchanged).
    pub fn with_variant(id: ProcessId, app: A, variant: Variant) -> Self {
        Process {
            id,
            variant,
            app,
            slots: SmallVec::new(),
            taken: IdSet::default(),
            held: Rare::default(),
            stale: None,
            algorithm: Algorithm::ChandyLamport,
            back: Bits::default(),
            out: Rare::default(),
            newest: 0,
        }
    }

    /// The same process following `algorithm`'s rules. `roots` are where snapshots start: the
    /// aligned mode's back edges are those of [`Topology::back_edges`] from them.
    pub fn with_algorithm(mut self, topology: &Topology, algorithm: Algorithm, roots: &[ProcessId]) -> Self {
        self.algorithm = algorithm;
        self.back = Bits::default();
        if algorithm == Algorithm::Aligned {
            let back = topology.back_edges(roots);
            for (i, c) in topology.incoming(self.id).iter().enumerate() {
                if back[c.index()] {
                    self.back.set(i);
                }
            }
        }
        self
    }

    /// The marker rules it follows.
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// Whether incoming `channel` is blocked: aligned barriers, its barrier arrived and this
    /// process has not recorded yet. A driver takes nothing from a blocked channel (the core
    /// refuses an application message from it).
    pub fn is_blocked(&self, topology: &Topology, channel: ChannelId) -> bool {
        self.incoming_index(topology, channel).is_ok_and(|i| self.blocked(i))
    }

    fn blocked(&self, i: usize) -> bool {
        self.algorithm == Algorithm::Aligned
            && self.variant != Variant::ProcessAfterBarrier
            && !self.back.get(i)
            && self.slots.iter().any(|s| s.state.is_none() && s.closed.get(i))
    }

    /// Whether slot `i` may record: aligned barriers wait until every input that is not a back
    /// edge has delivered its barrier.
    fn aligned(&self, topology: &Topology, i: usize) -> bool {
        self.algorithm != Algorithm::Aligned
            || (0..topology.incoming(self.id).len()).all(|j| self.back.get(j) || self.slots[i].closed.get(j))
    }

    /// Unaligned barriers: the messages waiting in the output buffer of `channel`, oldest
    /// first (empty in the other algorithms, which send at once).
    pub fn buffered(&self, topology: &Topology, channel: ChannelId) -> impl Iterator<Item = &A::Msg> + '_ {
        let j = self.outgoing_index(topology, channel).map_or(u32::MAX, |j| j as u32);
        self.out.as_slice().iter().filter(move |(c, _)| *c == j).map(|(_, m)| m)
    }

    /// Unaligned barriers: every message waiting in an output buffer, whatever its channel.
    pub fn buffered_all(&self) -> impl Iterator<Item = &A::Msg> + '_ {
        self.out.as_slice().iter().map(|(_, m)| m)
    }

    /// Unaligned barriers: the oldest message buffered for `channel` leaves on it.
    pub fn transmit(
        &mut self,
        topology: &Topology,
        channel: ChannelId,
        out: &mut Vec<Effect<A::Msg>>,
    ) -> Result<(), CoreError> {
        let j = self.outgoing_index(topology, channel)? as u32;
        let at = self.out.as_slice().iter().position(|(c, _)| *c == j);
        let (_, msg) =
            at.and_then(|at| self.out.remove(at)).ok_or(CoreError::NothingBuffered { process: self.id, channel })?;
        out.push(Effect::Send { channel, message: Message::App(msg) });
        Ok(())
    }

    /// This process's id.
    pub fn id(&self) -> ProcessId {
        self.id
    }

    /// The fault variant it runs.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// The application.
    pub fn app(&self) -> &A {
        &self.app
    }

    /// Snapshots held here: in flight, or complete and not yet taken.
    pub fn slots(&self) -> &[Slot<A>] {
        &self.slots
    }

    /// This process's part of `snapshot`, if it holds one.
    pub fn slot(&self, snapshot: SnapshotId) -> Option<&Slot<A>> {
        self.slots.iter().find(|s| s.id == snapshot)
    }

    /// Whether this process has recorded its state for `snapshot` (taken snapshots count).
    pub fn has_recorded(&self, snapshot: SnapshotId) -> bool {
        self.taken.contains(snapshot.0) || self.slot(snapshot).is_some_and(|s| s.state.is_some())
    }

    /// Whether this process's part of `snapshot` is complete (taken snapshots count).
    pub fn is_complete(&self, snapshot: SnapshotId) -> bool {
        self.taken.contains(snapshot.0) || self.slot(snapshot).is_some_and(Slot::is_complete)
    }

    fn incoming_index(&self, topology: &Topology, channel: ChannelId) -> Result<usize, CoreError> {
        topology
            .incoming(self.id)
            .iter()
            .position(|&c| c == channel)
            .ok_or(CoreError::NotIncoming { process: self.id, channel })
    }

    fn outgoing_index(&self, topology: &Topology, channel: ChannelId) -> Result<usize, CoreError> {
        topology
            .outgoing(self.id)
            .iter()
            .position(|&c| c == channel)
            .ok_or(CoreError::NotOutgoing { process: self.id, channel })
    }

    fn slot_index(&self, snapshot: SnapshotId) -> Option<usize> {
        self.slots.iter().position(|s| s.id == snapshot)
    }

    /// An application send of `msg` on `channel`: the application's side of the send
    /// ([`Application::on_send`], e.g. a debit) happens here, then the message leaves.
    pub fn send(
        &mut self,
        topology: &Topology,
        channel: ChannelId,
        msg: A::Msg,
        out: &mut Vec<Effect<A::Msg>>,
    ) -> Result<(), CoreError> {
        let j = self.outgoing_index(topology, channel)?;
        let to = topology.channel(channel).to;
        self.app.on_send(to, &msg).map_err(|reason| CoreError::Refused { process: self.id, reason })?;
        if self.algorithm == Algorithm::Unaligned {
            // Into the output buffer; `transmit` puts it on the wire.
            self.out.vec_mut().push((j as u32, msg));
        } else {
            out.push(Effect::Send { channel, message: Message::App(msg) });
        }
        // send-before-marker: the held markers leave only now, behind the message.
        self.release_markers(topology, out);
        Ok(())
    }

    /// An internal step of the application: no message, but its state changes.
    pub fn internal(
        &mut self,
        topology: &Topology,
        step: &A::Step,
        out: &mut Vec<Effect<A::Msg>>,
    ) -> Result<(), CoreError> {
        self.app.on_internal(step).map_err(|reason| CoreError::Refused { process: self.id, reason })?;
        self.release_markers(topology, out);
        Ok(())
    }

    /// Whether this process holds back work that [`Process::flush`] would do now. Only the
    /// `send-before-marker` and `late-record` faults defer anything; a driver flushes a process
    /// when it is idle, so that deferred markers and recordings still happen.
    pub fn has_deferred(&self) -> bool {
        !self.held.as_slice().is_empty()
            || (self.variant == Variant::LateRecord && self.slots.iter().any(|s| s.state.is_none()))
    }

    /// The process is idle: deferred markers leave and deferred recordings happen.
    pub fn flush(&mut self, topology: &Topology, out: &mut Vec<Effect<A::Msg>>) {
        self.release_markers(topology, out);
        self.record_pending(topology, out);
    }

    /// `send-before-marker`: markers held back since recording leave now.
    fn release_markers(&mut self, topology: &Topology, out: &mut Vec<Effect<A::Msg>>) {
        for snapshot in self.held.take() {
            self.send_markers(topology, snapshot, out);
        }
    }

    /// `late-record`: recordings held back since a first marker happen now.
    fn record_pending(&mut self, topology: &Topology, out: &mut Vec<Effect<A::Msg>>) {
        if self.variant != Variant::LateRecord {
            return;
        }
        while let Some(i) = self.slots.iter().position(|s| s.state.is_none()) {
            self.record(topology, i, false, out);
        }
    }

    /// Starts `snapshot` here: records the local state and sends the markers. In the barrier
    /// algorithms this is the coordinator's trigger, handled as a source handles it.
    pub fn initiate(
        &mut self,
        topology: &Topology,
        snapshot: SnapshotId,
        out: &mut Vec<Effect<A::Msg>>,
    ) -> Result<(), CoreError> {
        if self.algorithm != Algorithm::ChandyLamport {
            // A trigger: one for a checkpoint already started here changes nothing; one older
            // than the newest seen here is declined; a newer one subsumes the one in progress.
            let (n, newest) = (u64::from(snapshot.0) + 1, u64::from(self.newest));
            if n < newest {
                out.push(Effect::Aborted { snapshot });
            }
            if n <= newest {
                return Ok(());
            }
            self.abort_in_progress(out);
            self.newest = snapshot.0 + 1;
        }
        if self.taken.contains(snapshot.0) {
            return Err(CoreError::SnapshotCompleted { process: self.id, snapshot });
        }
        let i = match self.slot_index(snapshot) {
            Some(i) if self.slots[i].state.is_some() => {
                return Err(CoreError::AlreadyRecorded { process: self.id, snapshot })
            }
            // late-record: a held-back recording happens now.
            Some(i) => i,
            None => self.new_slot(topology, snapshot),
        };
        self.release_markers(topology, out);
        self.record(topology, i, true, out);
        Ok(())
    }

    /// A message (application or marker) arriving on incoming `channel`.
    pub fn receive(
        &mut self,
        topology: &Topology,
        channel: ChannelId,
        message: Message<A::Msg>,
        out: &mut Vec<Effect<A::Msg>>,
    ) -> Result<(), CoreError> {
        self.receive_overtaking(topology, channel, message, &[], out)
    }

    /// Unaligned barriers: `message` (a barrier) taken from incoming `channel` ahead of
    /// `overtaken`, the data queued before it, which stays queued and arrives later. The
    /// overtaken data is recorded as that channel's state. With nothing overtaken this is
    /// [`Process::receive`]; the other algorithms refuse overtaking.
    pub fn receive_overtaking(
        &mut self,
        topology: &Topology,
        channel: ChannelId,
        message: Message<A::Msg>,
        overtaken: &[A::Msg],
        out: &mut Vec<Effect<A::Msg>>,
    ) -> Result<(), CoreError> {
        let idx = self.incoming_index(topology, channel)?;
        if !overtaken.is_empty() && (self.algorithm != Algorithm::Unaligned || !matches!(message, Message::Marker(_))) {
            return Err(CoreError::Overtaking { process: self.id, channel, algorithm: self.algorithm });
        }
        if matches!(message, Message::Cancel(_)) && self.algorithm == Algorithm::ChandyLamport {
            return Err(CoreError::NoCancellation { process: self.id, algorithm: self.algorithm });
        }
        if matches!(message, Message::App(_)) && self.blocked(idx) {
            return Err(CoreError::Blocked { process: self.id, channel });
        }
        self.release_markers(topology, out);
        // late-record: recordings held back by an earlier marker happen after this message.
        let pending: SmallVec<[SnapshotId; 1]> = if self.variant == Variant::LateRecord {
            self.slots.iter().filter(|s| s.state.is_none()).map(|s| s.id).collect()
        } else {
            SmallVec::new()
        };
        match message {
            Message::App(msg) => {
                let from = topology.channel(channel).from;
                if self.variant == Variant::StaleState {
                    self.stale = Some(Box::new(self.app.clone()));
                }
                self.app.on_message(from, &msg);
                let variant = self.variant;
                // aligned-cycle-no-backedge: back edges are neither waited for nor logged.
                let unlogged = variant == Variant::AlignedCycleNoBackedge && self.back.get(idx);
                for slot in self.slots.iter_mut() {
                    if slot.records_on(idx, variant) && !unlogged {
                        slot.push(idx, msg.clone(), variant == Variant::RecordsReversed);
                    }
                }
            }
            Message::Marker(snapshot) if self.algorithm == Algorithm::ChandyLamport => {
                self.receive_marker(topology, idx, channel, snapshot, overtaken, out)?
            }
            Message::Marker(snapshot) => {
                if let Some(counts_for) = self.barrier_for(idx, snapshot, out) {
                    self.receive_marker(topology, idx, channel, counts_for, overtaken, out)?
                }
            }
            Message::Cancel(snapshot) => self.cancel(topology, snapshot, out),
        }
        for snapshot in pending {
            if let Some(i) = self.slot_index(snapshot).filter(|&i| self.slots[i].state.is_none()) {
                self.record(topology, i, false, out);
            }
        }
        Ok(())
    }

    /// Barrier algorithms: the checkpoint a barrier of `snapshot` arriving on incoming channel
    /// number `idx` counts for, or `None` when it is obsolete (older than the newest checkpoint
    /// seen here, or of one given up here) and ignored. A newer barrier subsumes the checkpoint in
    /// progress here.
    fn barrier_for(&mut self, idx: usize, snapshot: SnapshotId, out: &mut Vec<Effect<A::Msg>>) -> Option<SnapshotId> {
        let n = u64::from(snapshot.0) + 1;
        let newest = u64::from(self.newest);
        let given_up = n == newest && self.slot_index(snapshot).is_none() && !self.taken.contains(snapshot.0);
        if n < newest || given_up {
            // mixed-barriers-after-decline (FLINK-21104): the obsolete barrier is taken for the
            // barrier of the checkpoint in progress on this channel.
            if self.variant == Variant::MixedBarriersAfterDecline {
                return self.slots.iter().find(|s| !s.is_complete() && !s.closed.get(idx)).map(|s| s.id);
            }
            return None;
        }
        if n > newest {
            self.abort_in_progress(out);
            self.newest = snapshot.0 + 1;
        }
        // mixed-barriers-after-decline: the genuine barrier that comes later on that channel is
        // taken for a duplicate and dropped.
        let seen = self.taken.contains(snapshot.0) || self.slot(snapshot).is_some_and(|s| s.closed.get(idx));
        if self.variant == Variant::MixedBarriersAfterDecline && seen {
            return None;
        }
        Some(snapshot)
    }

    /// Barrier algorithms: gives up every checkpoint in progress here (not yet complete).
    fn abort_in_progress(&mut self, out: &mut Vec<Effect<A::Msg>>) {
        while let Some(i) = self.slots.iter().position(|s| !s.is_complete()) {
            let slot = self.slots.remove(i);
            out.push(Effect::Aborted { snapshot: slot.id });
        }
    }

    /// Barrier algorithms: a cancellation barrier of `snapshot`. Obsolete ones, and those of a
    /// checkpoint complete or given up here, are ignored; otherwise the checkpoint is given up
    /// (with any older one in progress) and the cancellation goes on downstream.
    fn cancel(&mut self, topology: &Topology, snapshot: SnapshotId, out: &mut Vec<Effect<A::Msg>>) {
        let n = u64::from(snapshot.0) + 1;
        let newest = u64::from(self.newest);
        if n < newest {
            return;
        }
        if n == newest {
            match self.slot_index(snapshot) {
                Some(i) if !self.slots[i].is_complete() => {
                    self.slots.remove(i);
                }
                _ => return,
            }
        } else {
            self.abort_in_progress(out);
            self.newest = snapshot.0 + 1;
        }
        out.push(Effect::Aborted { snapshot });
        self.send_cancels(topology, snapshot, out);
    }

    fn send_cancels(&self, topology: &Topology, snapshot: SnapshotId, out: &mut Vec<Effect<A::Msg>>) {
        for &channel in topology.outgoing(self.id) {
            out.push(Effect::Send { channel, message: Message::Cancel(snapshot) });
        }
    }

    /// Barrier algorithms: this process declines `snapshot` (e.g. its state could not be
    /// written): it gives up its part, complete or not, and sends cancellation barriers on
    /// every outgoing channel. Refused for a snapshot it holds no part of.
    pub fn decline(
        &mut self,
        topology: &Topology,
        snapshot: SnapshotId,
        out: &mut Vec<Effect<A::Msg>>,
    ) -> Result<(), CoreError> {
        if self.algorithm == Algorithm::ChandyLamport {
            return Err(CoreError::NoCancellation { process: self.id, algorithm: self.algorithm });
        }
        let i = self.slot_index(snapshot).ok_or(CoreError::UnknownSnapshot { process: self.id, snapshot })?;
        self.slots.remove(i);
        out.push(Effect::Aborted { snapshot });
        if self.variant != Variant::NoCancellationBarriers {
            self.send_cancels(topology, snapshot, out);
        }
        Ok(())
    }

    fn receive_marker(
        &mut self,
        topology: &Topology,
        idx: usize,
        channel: ChannelId,
        snapshot: SnapshotId,
        overtaken: &[A::Msg],
        out: &mut Vec<Effect<A::Msg>>,
    ) -> Result<(), CoreError> {
        // swap-record: a marker of a snapshot recorded here closes another snapshot's open
        // record of this channel (and that one's marker, later, closes this one's).
        if self.variant == Variant::SwapRecord && self.has_recorded(snapshot) {
            let other = self.slots.iter().position(|s| s.id != snapshot && s.state.is_some() && !s.closed.get(idx));
            if let Some(j) = other {
                self.close(j, idx, channel, out);
                return Ok(());
            }
        }
        let tolerant = self.variant == Variant::CloseAllOnFirstMarker;
        if self.taken.contains(snapshot.0) {
            return if tolerant { Ok(()) } else { Err(CoreError::SnapshotCompleted { process: self.id, snapshot }) };
        }
        let Some(i) = self.slot_index(snapshot) else {
            // Receiving rule, first marker: record, this channel's record is empty (unaligned:
            // the data the barrier overtook) and closed, then follow the sending rule. Aligned
            // barriers record only once every input that is not a back edge has its barrier.
            let i = self.new_slot(topology, snapshot);
            for msg in overtaken {
                self.slots[i].push(idx, msg.clone(), false);
            }
            self.slots[i].closed.set(idx);
            out.push(Effect::Closed { snapshot, channel });
            if self.variant != Variant::LateRecord && self.aligned(topology, i) {
                self.record(topology, i, false, out);
            }
            return Ok(());
        };
        if self.slots[i].closed.get(idx) {
            return if tolerant {
                Ok(())
            } else {
                Err(CoreError::DuplicateMarker { process: self.id, snapshot, channel })
            };
        }
        if self.slots[i].state.is_none() {
            // Aligning (or late-record, still holding back): the record of this channel is
            // empty too; aligned barriers record once the last one they wait for is in.
            self.slots[i].closed.set(idx);
            out.push(Effect::Closed { snapshot, channel });
            if self.variant != Variant::LateRecord && self.aligned(topology, i) {
                self.record(topology, i, false, out);
            }
            return Ok(());
        }
        let variant = self.variant;
        for msg in overtaken {
            if self.slots[i].records_on(idx, variant) {
                self.slots[i].push(idx, msg.clone(), false);
            }
        }
        // Receiving rule, already recorded: close this channel's record.
        if tolerant {
            let slot = &mut self.slots[i];
            for (j, &c) in topology.incoming(self.id).iter().enumerate() {
                if !slot.closed.get(j) {
                    slot.closed.set(j);
                    out.push(Effect::Closed { snapshot, channel: c });
                }
            }
            if slot.is_complete() {
                out.push(Effect::Completed { snapshot });
            }
        } else {
            self.close(i, idx, channel, out);
        }
        Ok(())
    }

    /// Closes the record of incoming channel number `idx` (`channel`) in slot `i`.
    fn close(&mut self, i: usize, idx: usize, channel: ChannelId, out: &mut Vec<Effect<A::Msg>>) {
        let variant = self.variant;
        let slot = &mut self.slots[i];
        if variant == Variant::RecordTwice {
            let again: SmallVec<[A::Msg; 2]> = slot.record(idx).cloned().collect();
            for msg in again {
                slot.push(idx, msg, false);
            }
        }
        slot.closed.set(idx);
        out.push(Effect::Closed { snapshot: slot.id, channel });
        if slot.is_complete() {
            out.push(Effect::Completed { snapshot: slot.id });
        }
    }

    fn new_slot(&mut self, topology: &Topology, snapshot: SnapshotId) -> usize {
        self.slots.push(Slot::new(snapshot, topology.incoming(self.id).len()));
        self.slots.len() - 1
    }

    /// Records the local state in slot `i` and follows the sending rule.
    fn record(&mut self, topology: &Topology, i: usize, initiated: bool, out: &mut Vec<Effect<A::Msg>>) {
        let snapshot = self.slots[i].id;
        let state = match (&self.stale, self.variant) {
            (Some(before), Variant::StaleState) => A::clone(before),
            _ => self.app.clone(),
        };
        self.slots[i].state = Some(state);
        if self.algorithm == Algorithm::Unaligned {
            // The barriers overtake the output buffers: what they hold is channel state.
            self.slots[i].output = self.out.clone();
            if self.variant == Variant::WrongInflightChannels {
                // Only the first outgoing channel is checked for in-flight data.
                self.slots[i].output = Rare::default();
                for &(j, ref m) in self.out.as_slice().iter().filter(|(j, _)| *j == 0) {
                    self.slots[i].output.vec_mut().push((j, m.clone()));
                }
            }
        }
        out.push(Effect::Recorded { snapshot, initiated });
        match self.variant {
            Variant::NoMarkerForwarding if !initiated => {}
            Variant::SendBeforeMarker => self.held.vec_mut().push(snapshot),
            _ => self.send_markers(topology, snapshot, out),
        }
        if self.slots[i].is_complete() {
            out.push(Effect::Completed { snapshot });
        }
    }

    fn send_markers(&self, topology: &Topology, snapshot: SnapshotId, out: &mut Vec<Effect<A::Msg>>) {
        let outgoing = topology.outgoing(self.id);
        // skip-one-marker: no marker on the last outgoing channel.
        let n = outgoing.len() - usize::from(self.variant == Variant::SkipOneMarker && !outgoing.is_empty());
        let copies = if self.variant == Variant::DoubleMarker { 2 } else { 1 };
        for &channel in &outgoing[..n] {
            for _ in 0..copies {
                out.push(Effect::Send { channel, message: Message::Marker(snapshot) });
            }
        }
    }

    /// The same process under another id, with its channel records reordered: the record at
    /// position `i` is the old record at `order[i]`. Model checkers use it to map a state onto a
    /// symmetric one (a permutation of processes that the topology allows).
    pub fn relabeled(&self, id: ProcessId, order: &[usize]) -> Self {
        self.relabeled_with(id, order, &|a: &A| a.clone(), &|m: &A::Msg| m.clone())
    }

    /// [`Process::relabeled`], also mapping every application value the process holds (its
    /// state, recorded states, recorded messages) by `app` and `msg`: for applications whose
    /// states or messages name processes. Chandy–Lamport only: the barrier algorithms' back
    /// edges and output buffers are numbered by channel and are not reordered.
    pub fn relabeled_with(
        &self,
        id: ProcessId,
        order: &[usize],
        app: &dyn Fn(&A) -> A,
        msg: &dyn Fn(&A::Msg) -> A::Msg,
    ) -> Self {
        let mut p = self.clone();
        p.app = app(&p.app);
        p.stale = p.stale.map(|s| Box::new(app(&s)));
        for slot in p.slots.iter_mut() {
            slot.state = slot.state.as_ref().map(app);
            for (_, m) in slot.recorded.iter_mut() {
                *m = msg(m);
            }
        }
        p.id = id;
        if p.slots.is_empty() {
            return p;
        }
        let mut new_index: SmallVec<[u32; 8]> = SmallVec::from_elem(0, order.len());
        for (new, &old) in order.iter().enumerate() {
            if let Some(slot) = new_index.get_mut(old) {
                *slot = new as u32;
            }
        }
        for slot in p.slots.iter_mut() {
            let mut closed = Bits::default();
            for (new, &old) in order.iter().enumerate() {
                if slot.closed.get(old) {
                    closed.set(new);
                }
            }
            slot.closed = closed;
            for (c, _) in slot.recorded.iter_mut() {
                *c = new_index.get(*c as usize).copied().unwrap_or(*c);
            }
        }
        p
    }

    /// Removes the completed local snapshot `snapshot` from this process and returns it; later
    /// markers or initiations of that id are refused with [`CoreError::SnapshotCompleted`].
    pub fn take_local_snapshot(
        &mut self,
        topology: &Topology,
        snapshot: SnapshotId,
    ) -> Result<LocalSnapshot<A>, CoreError> {
        let i = self.slot_index(snapshot).ok_or(CoreError::UnknownSnapshot { process: self.id, snapshot })?;
        if !self.slots[i].is_complete() {
            return Err(CoreError::Incomplete { process: self.id, snapshot });
        }
        let slot = self.slots.remove(i);
        self.taken.insert(snapshot.0);
        let channels = topology.incoming(self.id).iter().copied().zip(slot.records()).collect();
        let outputs = if self.algorithm == Algorithm::Unaligned {
            let outgoing = topology.outgoing(self.id);
            (0..outgoing.len()).map(|j| (outgoing[j], slot.output(j).cloned().collect())).collect()
        } else {
            Vec::new()
        };
        let state = slot.state.ok_or(CoreError::Incomplete { process: self.id, snapshot })?;
        Ok(LocalSnapshot { snapshot, process: self.id, state, channels, outputs })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bank::{Bank, Jars};

    type Out = Vec<Effect<Jars>>;

    fn p(i: u16) -> ProcessId {
        ProcessId(i)
    }
    fn c(topology: &Topology, a: u16, b: u16) -> ChannelId {
        topology.channel_between(p(a), p(b)).unwrap()
    }
    const S0: SnapshotId = SnapshotId(0);
    const S1: SnapshotId = SnapshotId(1);

    fn markers(out: &Out) -> Vec<ChannelId> {
        out.iter()
            .filter_map(|e| match e {
                Effect::Send { channel, message: Message::Marker(_) } => Some(*channel),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn idset_merges_ranges() {
        let mut s = IdSet::default();
        for id in [3, 1, 0, 2, 7, 5, 6] {
            s.insert(id);
        }
        assert_eq!(s.0.as_slice(), &[(0, 3), (5, 7)]);
        assert!(s.contains(6) && !s.contains(4) && !s.contains(8));
        s.insert(4);
        assert_eq!(s.0.as_slice(), &[(0, 7)]);
        s.insert(9);
        assert_eq!(s.0.as_slice(), &[(0, 7), (9, 9)]);
    }

    #[test]
    fn idset_holds_the_largest_id() {
        let mut s = IdSet::default();
        s.insert(u32::MAX);
        assert!(s.contains(u32::MAX) && !s.contains(u32::MAX - 1));
        s.insert(u32::MAX - 1);
        assert_eq!(s.0.as_slice(), &[(u32::MAX - 1, u32::MAX)]);
        // Through the process: a taken snapshot with the largest id is refused afterwards.
        let t = Topology::ring(2).unwrap();
        let mut q = Process::new(p(0), Bank::new(1));
        let mut out = Out::new();
        let last = SnapshotId(u32::MAX);
        q.initiate(&t, last, &mut out).unwrap();
        q.receive(&t, c(&t, 1, 0), Message::Marker(last), &mut out).unwrap();
        q.take_local_snapshot(&t, last).unwrap();
        assert!(q.is_complete(last) && q.has_recorded(last));
        assert_eq!(q.initiate(&t, last, &mut out), Err(CoreError::SnapshotCompleted { process: p(0), snapshot: last }));
    }

    #[test]
    fn sending_rule_initiation_records_then_sends_every_marker() {
        let t = Topology::complete(3).unwrap();
        let mut q = Process::new(p(0), Bank::new(5));
        let mut out = Out::new();
        q.initiate(&t, S0, &mut out).unwrap();
        assert_eq!(out[0], Effect::Recorded { snapshot: S0, initiated: true });
        assert_eq!(markers(&out), t.outgoing(p(0)).to_vec());
        let slot = q.slot(S0).unwrap();
        assert_eq!(slot.state, Some(Bank::new(5)));
        assert!((0..slot.incoming()).all(|i| !slot.marker(i)), "every incoming channel is being recorded");
        // A send after recording goes out after the markers (they are already out).
        out.clear();
        q.send(&t, c(&t, 0, 1), Jars(2), &mut out).unwrap();
        assert_eq!(q.app(), &Bank::new(3), "the send debits the house");
        assert_eq!(out, vec![Effect::Send { channel: c(&t, 0, 1), message: Message::App(Jars(2)) }]);
        assert_eq!(q.slot(S0).unwrap().state, Some(Bank::new(5)), "recorded state is unchanged by later steps");
    }

    #[test]
    fn receiving_rule_first_marker_records_and_closes_that_channel_empty() {
        let t = Topology::complete(3).unwrap();
        let mut q = Process::new(p(1), Bank::new(4));
        let mut out = Out::new();
        q.receive(&t, c(&t, 0, 1), Message::Marker(S0), &mut out).unwrap();
        assert_eq!(out[0], Effect::Closed { snapshot: S0, channel: c(&t, 0, 1) });
        assert_eq!(out[1], Effect::Recorded { snapshot: S0, initiated: false });
        assert_eq!(markers(&out), t.outgoing(p(1)).to_vec());
        let slot = q.slot(S0).unwrap();
        let from0 = t.incoming(p(1)).iter().position(|&x| x == c(&t, 0, 1)).unwrap();
        assert!(slot.marker(from0) && slot.record(from0).next().is_none());
        assert!(!q.is_complete(S0));
    }

    #[test]
    fn receiving_rule_recorded_process_closes_record_with_messages_in_between() {
        let t = Topology::complete(3).unwrap();
        let mut q = Process::new(p(0), Bank::new(1));
        let mut out = Out::new();
        // Before recording: not recorded.
        q.receive(&t, c(&t, 1, 0), Message::App(Jars(1)), &mut out).unwrap();
        q.initiate(&t, S0, &mut out).unwrap();
        assert_eq!(q.slot(S0).unwrap().state, Some(Bank::new(2)));
        // Between recording and the marker: recorded, in order.
        q.receive(&t, c(&t, 1, 0), Message::App(Jars(3)), &mut out).unwrap();
        q.receive(&t, c(&t, 1, 0), Message::App(Jars(4)), &mut out).unwrap();
        q.receive(&t, c(&t, 2, 0), Message::App(Jars(5)), &mut out).unwrap();
        out.clear();
        q.receive(&t, c(&t, 1, 0), Message::Marker(S0), &mut out).unwrap();
        assert_eq!(out, vec![Effect::Closed { snapshot: S0, channel: c(&t, 1, 0) }]);
        // After the marker: not recorded on that channel, still recorded on the open one.
        q.receive(&t, c(&t, 1, 0), Message::App(Jars(6)), &mut out).unwrap();
        q.receive(&t, c(&t, 2, 0), Message::App(Jars(7)), &mut out).unwrap();
        out.clear();
        q.receive(&t, c(&t, 2, 0), Message::Marker(S0), &mut out).unwrap();
        assert_eq!(
            out,
            vec![Effect::Closed { snapshot: S0, channel: c(&t, 2, 0) }, Effect::Completed { snapshot: S0 }]
        );
        let local = q.take_local_snapshot(&t, S0).unwrap();
        assert_eq!(local.state, Bank::new(2));
        assert_eq!(local.channels, vec![(c(&t, 1, 0), vec![Jars(3), Jars(4)]), (c(&t, 2, 0), vec![Jars(5), Jars(7)])]);
        assert_eq!(q.app(), &Bank::new(2 + 3 + 4 + 5 + 6 + 7));
    }

    #[test]
    fn process_with_single_incoming_channel_completes_on_first_marker() {
        let t = Topology::ring(3).unwrap();
        let mut q = Process::new(p(1), Bank::new(0));
        let mut out = Out::new();
        q.receive(&t, c(&t, 0, 1), Message::Marker(S0), &mut out).unwrap();
        assert_eq!(out.last(), Some(&Effect::Completed { snapshot: S0 }));
        assert!(q.is_complete(S0));
    }

    #[test]
    fn overlapping_snapshots_keep_separate_records() {
        let t = Topology::complete(2).unwrap();
        let mut q = Process::new(p(0), Bank::new(10));
        let mut out = Out::new();
        let from1 = c(&t, 1, 0);
        q.initiate(&t, S0, &mut out).unwrap();
        q.receive(&t, from1, Message::App(Jars(1)), &mut out).unwrap();
        q.initiate(&t, S1, &mut out).unwrap();
        q.receive(&t, from1, Message::App(Jars(2)), &mut out).unwrap();
        q.receive(&t, from1, Message::Marker(S0), &mut out).unwrap();
        q.receive(&t, from1, Message::App(Jars(3)), &mut out).unwrap();
        q.receive(&t, from1, Message::Marker(S1), &mut out).unwrap();
        assert_eq!(q.take_local_snapshot(&t, S0).unwrap().channels, vec![(from1, vec![Jars(1), Jars(2)])]);
        let s1 = q.take_local_snapshot(&t, S1).unwrap();
        assert_eq!(s1.state, Bank::new(11));
        assert_eq!(s1.channels, vec![(from1, vec![Jars(2), Jars(3)])]);
    }

    #[test]
    fn refused_steps_are_typed_errors() {
        let t = Topology::ring(3).unwrap();
        let mut q = Process::new(p(1), Bank::new(3));
        let mut out = Out::new();
        let wrong = c(&t, 1, 2); // outgoing, not incoming
        assert_eq!(
            q.receive(&t, wrong, Message::App(Jars(1)), &mut out),
            Err(CoreError::NotIncoming { process: p(1), channel: wrong })
        );
        let not_out = c(&t, 0, 1);
        assert_eq!(
            q.send(&t, not_out, Jars(1), &mut out),
            Err(CoreError::NotOutgoing { process: p(1), channel: not_out })
        );
        q.initiate(&t, S0, &mut out).unwrap();
        assert_eq!(q.initiate(&t, S0, &mut out), Err(CoreError::AlreadyRecorded { process: p(1), snapshot: S0 }));
        assert_eq!(q.take_local_snapshot(&t, S0).unwrap_err(), CoreError::Incomplete { process: p(1), snapshot: S0 });
        assert_eq!(
            q.take_local_snapshot(&t, S1).unwrap_err(),
            CoreError::UnknownSnapshot { process: p(1), snapshot: S1 }
        );
        q.receive(&t, c(&t, 0, 1), Message::Marker(S0), &mut out).unwrap();
        assert!(q.is_complete(S0));
        // A second marker while the slot is still held.
        assert_eq!(
            q.receive(&t, c(&t, 0, 1), Message::Marker(S0), &mut out),
            Err(CoreError::DuplicateMarker { process: p(1), snapshot: S0, channel: c(&t, 0, 1) })
        );
        q.take_local_snapshot(&t, S0).unwrap();
        assert_eq!(
            q.receive(&t, c(&t, 0, 1), Message::Marker(S0), &mut out),
            Err(CoreError::SnapshotCompleted { process: p(1), snapshot: S0 })
        );
        assert_eq!(q.initiate(&t, S0, &mut out), Err(CoreError::SnapshotCompleted { process: p(1), snapshot: S0 }));
        // A marker's receipt then an initiation of the same id.
        let mut r = Process::new(p(2), Bank::new(0));
        r.receive(&t, c(&t, 1, 2), Message::Marker(S1), &mut out).unwrap();
        assert_eq!(r.initiate(&t, S1, &mut out), Err(CoreError::AlreadyRecorded { process: p(2), snapshot: S1 }));
    }

    #[test]
    fn deferred_markers_leave_on_the_next_step_or_when_idle() {
        let t = Topology::complete(3).unwrap();
        let mut q = Process::with_variant(p(0), Bank::new(3), Variant::SendBeforeMarker);
        let mut out = Out::new();
        assert!(!q.has_deferred());
        q.initiate(&t, S0, &mut out).unwrap();
        assert!(markers(&out).is_empty(), "held back");
        assert!(q.has_deferred());
        // The next send leaves first, the markers right behind it.
        out.clear();
        q.send(&t, c(&t, 0, 1), Jars(1), &mut out).unwrap();
        assert_eq!(out[0], Effect::Send { channel: c(&t, 0, 1), message: Message::App(Jars(1)) });
        assert_eq!(markers(&out), t.outgoing(p(0)).to_vec());
        assert!(!q.has_deferred());
        // Held again for a second snapshot; this time the house is idle.
        q.initiate(&t, S1, &mut out).unwrap();
        assert!(q.has_deferred());
        out.clear();
        q.flush(&t, &mut out);
        assert_eq!(markers(&out), t.outgoing(p(0)).to_vec());
        assert!(!q.has_deferred());
    }

    #[test]
    fn a_deferred_recording_happens_after_one_more_message_or_when_idle() {
        let t = Topology::complete(3).unwrap();
        for idle in [false, true] {
            let mut q = Process::with_variant(p(1), Bank::new(3), Variant::LateRecord);
            let mut out = Out::new();
            q.receive(&t, c(&t, 0, 1), Message::Marker(S0), &mut out).unwrap();
            assert!(!q.has_recorded(S0) && q.has_deferred());
            out.clear();
            if idle {
                q.flush(&t, &mut out);
                assert_eq!(q.slot(S0).unwrap().state, Some(Bank::new(3)));
            } else {
                q.receive(&t, c(&t, 2, 1), Message::App(Jars(2)), &mut out).unwrap();
                assert_eq!(q.slot(S0).unwrap().state, Some(Bank::new(5)), "records after the message");
            }
            assert_eq!(out.iter().filter(|e| matches!(e, Effect::Recorded { .. })).count(), 1);
            assert_eq!(markers(&out), t.outgoing(p(1)).to_vec());
            assert!(!q.has_deferred());
        }
        // The correct algorithm defers nothing.
        let mut q = Process::new(p(1), Bank::new(3));
        let mut out = Out::new();
        q.receive(&t, c(&t, 0, 1), Message::Marker(S0), &mut out).unwrap();
        assert!(q.has_recorded(S0) && !q.has_deferred());
    }

    #[test]
    fn swap_record_closes_the_other_snapshots_record() {
        let t = Topology::complete(2).unwrap();
        let from1 = c(&t, 1, 0);
        let mut q = Process::with_variant(p(0), Bank::new(10), Variant::SwapRecord);
        let mut out = Out::new();
        q.initiate(&t, S0, &mut out).unwrap();
        q.initiate(&t, S1, &mut out).unwrap();
        q.receive(&t, from1, Message::App(Jars(1)), &mut out).unwrap();
        out.clear();
        // S0's marker closes S1's record; S0's stays open and records the next cart.
        q.receive(&t, from1, Message::Marker(S0), &mut out).unwrap();
        assert_eq!(out[0], Effect::Closed { snapshot: S1, channel: from1 });
        assert!(q.is_complete(S1) && !q.is_complete(S0));
        q.receive(&t, from1, Message::App(Jars(2)), &mut out).unwrap();
        out.clear();
        // S1's marker then closes S0's.
        q.receive(&t, from1, Message::Marker(S1), &mut out).unwrap();
        assert_eq!(out[0], Effect::Closed { snapshot: S0, channel: from1 });
        assert_eq!(q.take_local_snapshot(&t, S0).unwrap().channels, vec![(from1, vec![Jars(1), Jars(2)])]);
        assert_eq!(q.take_local_snapshot(&t, S1).unwrap().channels, vec![(from1, vec![Jars(1)])]);
    }

    #[test]
    fn refused_steps_leave_the_state_unchanged() {
        let t = Topology::complete(3).unwrap();
        let mut q = Process::new(p(0), Bank::new(3));
        let mut out = Out::new();
        q.initiate(&t, S0, &mut out).unwrap();
        let before = q.clone();
        let _ = q.receive(&t, c(&t, 0, 1), Message::App(Jars(1)), &mut out);
        let _ = q.initiate(&t, S0, &mut out);
        assert_eq!(q, before);
    }

    #[test]
    fn a_rare_list_removes_only_what_it_holds() {
        let mut r: Rare<u8> = Rare::default();
        assert_eq!(r.remove(0), None);
        r.vec_mut().extend([1, 2]);
        assert_eq!(r.remove(2), None);
        assert_eq!(r.remove(1), Some(2));
        assert_eq!(r.remove(1), None);
        assert_eq!(r.remove(0), Some(1));
        assert!(r.as_slice().is_empty());
    }

    #[test]
    fn bits_beyond_the_inline_word() {
        let mut b = Bits::default();
        let set = [0usize, 63, 64, 65, 130, 200];
        for i in set {
            b.set(i);
        }
        b.set(130);
        for i in 0..260 {
            assert_eq!(b.get(i), set.contains(&i), "bit {i}");
        }
        assert_eq!(b.count(), set.len());
        let mut only_high = Bits::default();
        only_high.set(64);
        assert!(!only_high.get(0) && only_high.get(64) && only_high.count() == 1);
    }

    fn slot(id: u32, incoming: usize, state: Option<u32>, closed: &[usize], recorded: &[(usize, u32)]) -> Slot<Bank> {
        let mut s = Slot::new(SnapshotId(id), incoming);
        s.state = state.map(Bank::new);
        for &i in closed {
            s.closed.set(i);
        }
        for &(i, jars) in recorded {
            s.push(i, Jars(jars), false);
        }
        s
    }

    fn hash_of<T: Hash>(t: &T) -> u64 {
        use std::hash::{BuildHasher, BuildHasherDefault};
        BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default().hash_one(t)
    }

    #[test]
    fn slots_compare_each_channel_record_on_its_own() {
        let base = slot(0, 3, Some(2), &[0], &[(0, 1), (1, 2), (0, 3)]);
        // The same records, interleaved differently across channels: equal, same hash.
        let interleaved = slot(0, 3, Some(2), &[0], &[(1, 2), (0, 1), (0, 3)]);
        assert_eq!(base, interleaved);
        assert_eq!(hash_of(&base), hash_of(&interleaved));
        assert_eq!(base.incoming(), 3);
        assert_eq!(base.recorded().map(|(c, m)| (c, m.0)).collect::<Vec<_>>(), [(0, 1), (1, 2), (0, 3)]);
        // Each field on its own makes a difference.
        let differing = [
            slot(1, 3, Some(2), &[0], &[(0, 1), (1, 2), (0, 3)]),
            slot(0, 3, Some(5), &[0], &[(0, 1), (1, 2), (0, 3)]),
            slot(0, 3, None, &[0], &[(0, 1), (1, 2), (0, 3)]),
            slot(0, 4, Some(2), &[0], &[(0, 1), (1, 2), (0, 3)]),
            slot(0, 3, Some(2), &[0, 2], &[(0, 1), (1, 2), (0, 3)]),
            slot(0, 3, Some(2), &[0], &[(0, 1), (1, 2)]),
            slot(0, 3, Some(2), &[0], &[(0, 3), (1, 2), (0, 1)]),
            slot(0, 3, Some(2), &[0], &[(0, 1), (2, 2), (0, 3)]),
        ];
        for (k, other) in differing.iter().enumerate() {
            assert_ne!(&base, other, "case {k}");
            assert_ne!(hash_of(&base), hash_of(other), "case {k}");
        }
    }

    #[test]
    fn a_process_reports_its_variant_and_slots() {
        let t = Topology::ring(2).unwrap();
        let mut q = Process::with_variant(p(0), Bank::new(1), Variant::LateRecord);
        assert_eq!(q.variant(), Variant::LateRecord);
        assert!(q.slots().is_empty());
        q.initiate(&t, S0, &mut Out::new()).unwrap();
        assert_eq!(q.slots().iter().map(|s| s.id).collect::<Vec<_>>(), [S0]);
    }

    fn aligned(t: &Topology, i: u16, jars: u32) -> Process<Bank> {
        Process::new(p(i), Bank::new(jars)).with_algorithm(t, Algorithm::Aligned, &[p(0)])
    }

    fn unaligned(t: &Topology, i: u16, jars: u32) -> Process<Bank> {
        Process::new(p(i), Bank::new(jars)).with_algorithm(t, Algorithm::Unaligned, &[p(0)])
    }

    #[test]
    fn aligned_barriers_block_each_input_until_all_are_in_then_record_no_channel_state() {
        // Complete graph from house 0: house 2's inputs 0->2 and 1->2 are no back edges.
        let t = Topology::complete(3).unwrap();
        let mut q = aligned(&t, 2, 0);
        assert_eq!(q.algorithm(), Algorithm::Aligned);
        let mut out = Out::new();
        q.receive(&t, c(&t, 0, 2), Message::Marker(S0), &mut out).unwrap();
        assert_eq!(out, vec![Effect::Closed { snapshot: S0, channel: c(&t, 0, 2) }]);
        assert!(!q.has_recorded(S0));
        assert!(q.is_blocked(&t, c(&t, 0, 2)));
        assert!(!q.is_blocked(&t, c(&t, 1, 2)));
        assert!(!q.has_deferred(), "aligning is not deferred work: flushing must not record");
        // Data behind the barrier waits; data on the other input is taken and not recorded.
        let before = q.clone();
        assert_eq!(
            q.receive(&t, c(&t, 0, 2), Message::App(Jars(1)), &mut out),
            Err(CoreError::Blocked { process: p(2), channel: c(&t, 0, 2) })
        );
        assert_eq!(q, before);
        q.receive(&t, c(&t, 1, 2), Message::App(Jars(2)), &mut out).unwrap();
        assert_eq!(q.app(), &Bank::new(2));
        q.flush(&t, &mut out);
        assert!(!q.has_recorded(S0));
        // The last barrier: record, forward, complete, unblock.
        out.clear();
        q.receive(&t, c(&t, 1, 2), Message::Marker(S0), &mut out).unwrap();
        assert_eq!(out[0], Effect::Closed { snapshot: S0, channel: c(&t, 1, 2) });
        assert_eq!(out[1], Effect::Recorded { snapshot: S0, initiated: false });
        assert_eq!(markers(&out), vec![c(&t, 2, 0), c(&t, 2, 1)]);
        assert_eq!(out.last(), Some(&Effect::Completed { snapshot: S0 }));
        assert!(!q.is_blocked(&t, c(&t, 0, 2)));
        q.receive(&t, c(&t, 0, 2), Message::App(Jars(1)), &mut out).unwrap();
        let local = q.take_local_snapshot(&t, S0).unwrap();
        assert_eq!(local.state, Bank::new(2));
        assert_eq!(local.channels, vec![(c(&t, 0, 2), vec![]), (c(&t, 1, 2), vec![])]);
        assert!(local.outputs.is_empty());
    }

    #[test]
    fn aligned_barriers_log_back_edges_instead_of_waiting_for_them() {
        // From house 0 on the complete graph, 2->1 is a back edge: house 1 records on the
        // barrier from 0 and logs 2->1 until its barrier, as Chandy–Lamport would.
        let t = Topology::complete(3).unwrap();
        let mut q = aligned(&t, 1, 0);
        let mut out = Out::new();
        q.receive(&t, c(&t, 0, 1), Message::Marker(S0), &mut out).unwrap();
        assert!(q.has_recorded(S0));
        assert!(!q.is_blocked(&t, c(&t, 2, 1)));
        q.receive(&t, c(&t, 2, 1), Message::App(Jars(3)), &mut out).unwrap();
        q.receive(&t, c(&t, 2, 1), Message::Marker(S0), &mut out).unwrap();
        let local = q.take_local_snapshot(&t, S0).unwrap();
        assert_eq!(local.channels, vec![(c(&t, 0, 1), vec![]), (c(&t, 2, 1), vec![Jars(3)])]);
        // On a ring the initiator's own input is the back edge: it records at once and logs it.
        let ring = Topology::ring(3).unwrap();
        let mut r = aligned(&ring, 0, 5);
        r.initiate(&ring, S0, &mut out).unwrap();
        r.receive(&ring, c(&ring, 2, 0), Message::App(Jars(1)), &mut out).unwrap();
        r.receive(&ring, c(&ring, 2, 0), Message::Marker(S0), &mut out).unwrap();
        assert_eq!(r.take_local_snapshot(&ring, S0).unwrap().channels, vec![(c(&ring, 2, 0), vec![Jars(1)])]);
    }

    #[test]
    fn unaligned_barriers_overtake_output_buffers_which_become_channel_state() {
        let t = Topology::complete(2).unwrap();
        let (out01, in10) = (c(&t, 0, 1), c(&t, 1, 0));
        let mut q = unaligned(&t, 0, 5);
        let mut out = Out::new();
        q.send(&t, out01, Jars(1), &mut out).unwrap();
        q.send(&t, out01, Jars(2), &mut out).unwrap();
        assert!(out.is_empty(), "sends wait in the output buffer");
        assert_eq!(q.buffered(&t, out01).copied().collect::<Vec<_>>(), [Jars(1), Jars(2)]);
        assert_eq!(q.buffered_all().copied().collect::<Vec<_>>(), [Jars(1), Jars(2)]);
        q.transmit(&t, out01, &mut out).unwrap();
        assert_eq!(out, vec![Effect::Send { channel: out01, message: Message::App(Jars(1)) }]);
        // The barrier leaves at once, ahead of the buffered cart, which is recorded.
        out.clear();
        q.initiate(&t, S0, &mut out).unwrap();
        assert_eq!(markers(&out), vec![out01]);
        assert_eq!(q.slot(S0).unwrap().output(0).copied().collect::<Vec<_>>(), [Jars(2)]);
        out.clear();
        q.transmit(&t, out01, &mut out).unwrap();
        assert_eq!(out, vec![Effect::Send { channel: out01, message: Message::App(Jars(2)) }]);
        assert_eq!(q.transmit(&t, out01, &mut out), Err(CoreError::NothingBuffered { process: p(0), channel: out01 }));
        q.receive(&t, in10, Message::Marker(S0), &mut out).unwrap();
        let local = q.take_local_snapshot(&t, S0).unwrap();
        assert_eq!(local.state, Bank::new(2));
        assert_eq!(local.outputs, vec![(out01, vec![Jars(2)])]);
    }

    #[test]
    fn unaligned_barriers_overtake_queued_input_which_becomes_channel_state() {
        let t = Topology::complete(3).unwrap();
        let mut q = unaligned(&t, 1, 0);
        let mut out = Out::new();
        q.receive_overtaking(&t, c(&t, 0, 1), Message::Marker(S0), &[Jars(1), Jars(2)], &mut out).unwrap();
        assert_eq!(q.slot(S0).unwrap().state, Some(Bank::new(0)), "recorded before the overtaken data");
        // The overtaken carts still arrive, after the barrier: applied, not recorded again.
        q.receive(&t, c(&t, 0, 1), Message::App(Jars(1)), &mut out).unwrap();
        q.receive(&t, c(&t, 0, 1), Message::App(Jars(2)), &mut out).unwrap();
        // The other input: recorded until its barrier, which overtakes one more cart.
        q.receive(&t, c(&t, 2, 1), Message::App(Jars(4)), &mut out).unwrap();
        q.receive_overtaking(&t, c(&t, 2, 1), Message::Marker(S0), &[Jars(8)], &mut out).unwrap();
        q.receive(&t, c(&t, 2, 1), Message::App(Jars(8)), &mut out).unwrap();
        let local = q.take_local_snapshot(&t, S0).unwrap();
        assert_eq!(local.channels, vec![(c(&t, 0, 1), vec![Jars(1), Jars(2)]), (c(&t, 2, 1), vec![Jars(4), Jars(8)])]);
        assert_eq!(q.app(), &Bank::new(15));
    }

    #[test]
    fn only_unaligned_barriers_overtake() {
        let t = Topology::complete(2).unwrap();
        for mut q in [Process::new(p(1), Bank::new(0)), aligned(&t, 1, 0)] {
            let before = q.clone();
            let algorithm = q.algorithm();
            assert_eq!(
                q.receive_overtaking(&t, c(&t, 0, 1), Message::Marker(S0), &[Jars(1)], &mut Out::new()),
                Err(CoreError::Overtaking { process: p(1), channel: c(&t, 0, 1), algorithm })
            );
            assert_eq!(q, before);
        }
        let mut u = unaligned(&t, 1, 0);
        assert!(matches!(
            u.receive_overtaking(&t, c(&t, 0, 1), Message::App(Jars(2)), &[Jars(1)], &mut Out::new()),
            Err(CoreError::Overtaking { .. })
        ));
    }

    #[test]
    fn unaligned_channel_state_is_the_receivers_side_then_the_senders() {
        use crate::snapshot::Assembler;
        let t = Topology::complete(2).unwrap();
        let (c01, c10) = (c(&t, 0, 1), c(&t, 1, 0));
        let mut a = unaligned(&t, 0, 5);
        let mut b = unaligned(&t, 1, 0);
        let mut out = Out::new();
        a.send(&t, c01, Jars(1), &mut out).unwrap();
        a.transmit(&t, c01, &mut out).unwrap(); // on the wire
        a.send(&t, c01, Jars(2), &mut out).unwrap(); // buffered
        a.initiate(&t, S0, &mut out).unwrap(); // the barrier is on the wire behind cart 1
                                               // b takes the barrier ahead of cart 1.
        b.receive_overtaking(&t, c01, Message::Marker(S0), &[Jars(1)], &mut out).unwrap();
        a.receive(&t, c10, Message::Marker(S0), &mut out).unwrap();
        let mut assembler = Assembler::new();
        assert_eq!(assembler.add(&t, a.take_local_snapshot(&t, S0).unwrap()), Ok(None));
        let global = assembler.add(&t, b.take_local_snapshot(&t, S0).unwrap()).unwrap().unwrap();
        assert_eq!(global.state.channels[c01.index()], vec![Jars(1), Jars(2)]);
        assert_eq!(global.state.processes, vec![Bank::new(2), Bank::new(0)]);
    }

    fn cancels(out: &Out) -> Vec<(ChannelId, SnapshotId)> {
        out.iter()
            .filter_map(|e| match e {
                Effect::Send { channel, message: Message::Cancel(s) } => Some((*channel, *s)),
                _ => None,
            })
            .collect()
    }

    fn aborted(out: &Out) -> Vec<SnapshotId> {
        out.iter()
            .filter_map(|e| match e {
                Effect::Aborted { snapshot } => Some(*snapshot),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_cancellation_barrier_gives_up_the_checkpoint_unblocks_and_goes_on_downstream() {
        let t = Topology::complete(3).unwrap();
        let mut q = aligned(&t, 2, 0);
        let mut out = Out::new();
        q.receive(&t, c(&t, 0, 2), Message::Marker(S0), &mut out).unwrap();
        assert!(q.is_blocked(&t, c(&t, 0, 2)));
        out.clear();
        q.receive(&t, c(&t, 1, 2), Message::Cancel(S0), &mut out).unwrap();
        assert_eq!(aborted(&out), [S0]);
        assert_eq!(cancels(&out), [(c(&t, 2, 0), S0), (c(&t, 2, 1), S0)]);
        assert!(!q.is_blocked(&t, c(&t, 0, 2)) && q.slots().is_empty() && !q.has_recorded(S0));
        // The late barrier and a second cancellation of the checkpoint given up change nothing.
        let before = q.clone();
        out.clear();
        q.receive(&t, c(&t, 1, 2), Message::Marker(S0), &mut out).unwrap();
        q.receive(&t, c(&t, 0, 2), Message::Cancel(S0), &mut out).unwrap();
        assert_eq!((out.len(), &q), (0, &before));
        q.receive(&t, c(&t, 0, 2), Message::App(Jars(1)), &mut out).unwrap();
        // The next checkpoint runs as usual.
        q.receive(&t, c(&t, 0, 2), Message::Marker(S1), &mut out).unwrap();
        q.receive(&t, c(&t, 1, 2), Message::Marker(S1), &mut out).unwrap();
        assert!(q.is_complete(S1));
    }

    #[test]
    fn a_cancellation_of_a_checkpoint_never_seen_gives_up_the_older_one_in_progress() {
        let t = Topology::complete(3).unwrap();
        let mut q = unaligned(&t, 2, 0);
        let mut out = Out::new();
        q.receive(&t, c(&t, 0, 2), Message::Marker(S0), &mut out).unwrap();
        assert!(q.has_recorded(S0));
        out.clear();
        q.receive(&t, c(&t, 1, 2), Message::Cancel(S1), &mut out).unwrap();
        assert_eq!(aborted(&out), [S0, S1]);
        assert_eq!(cancels(&out).len(), 2);
        assert!(q.slots().is_empty());
        // Barriers of either are obsolete now.
        out.clear();
        q.receive(&t, c(&t, 1, 2), Message::Marker(S0), &mut out).unwrap();
        q.receive(&t, c(&t, 0, 2), Message::Marker(S1), &mut out).unwrap();
        assert!(out.is_empty() && q.slots().is_empty());
        // A cancellation of a checkpoint complete here is ignored.
        let mut r = unaligned(&t, 2, 0);
        let s2 = SnapshotId(2);
        r.receive(&t, c(&t, 0, 2), Message::Marker(s2), &mut out).unwrap();
        r.receive(&t, c(&t, 1, 2), Message::Marker(s2), &mut out).unwrap();
        assert!(r.is_complete(s2));
        out.clear();
        r.receive(&t, c(&t, 1, 2), Message::Cancel(s2), &mut out).unwrap();
        assert!(out.is_empty() && r.is_complete(s2));
    }

    #[test]
    fn a_newer_barrier_subsumes_the_checkpoint_in_progress_and_older_barriers_are_obsolete() {
        let t = Topology::complete(3).unwrap();
        for algorithm in [Algorithm::Aligned, Algorithm::Unaligned] {
            let mut q = Process::new(p(2), Bank::new(0)).with_algorithm(&t, algorithm, &[p(0)]);
            let mut out = Out::new();
            q.receive(&t, c(&t, 0, 2), Message::Marker(S0), &mut out).unwrap();
            out.clear();
            q.receive(&t, c(&t, 1, 2), Message::Marker(S1), &mut out).unwrap();
            assert_eq!(aborted(&out), [S0], "{algorithm}");
            assert!(q.slot(S0).is_none() && q.slot(S1).is_some(), "{algorithm}");
            // The old barrier on the other channel is ignored: S1's record of it stays open.
            out.clear();
            q.receive(&t, c(&t, 1, 2), Message::Marker(S0), &mut out).unwrap();
            q.receive(&t, c(&t, 0, 2), Message::App(Jars(3)), &mut out).unwrap();
            assert!(aborted(&out).is_empty() && !q.slot(S1).is_some_and(|s| s.marker(0)), "{algorithm}");
            q.receive(&t, c(&t, 0, 2), Message::Marker(S1), &mut out).unwrap();
            assert!(q.is_complete(S1), "{algorithm}");
        }
    }

    #[test]
    fn mixed_barriers_after_decline_takes_an_obsolete_barrier_for_the_current_one() {
        let t = Topology::complete(3).unwrap();
        let mut q = Process::with_variant(p(2), Bank::new(0), Variant::MixedBarriersAfterDecline).with_algorithm(
            &t,
            Algorithm::Unaligned,
            &[p(0)],
        );
        let mut out = Out::new();
        q.receive(&t, c(&t, 0, 2), Message::Marker(S0), &mut out).unwrap();
        q.receive(&t, c(&t, 0, 2), Message::Marker(S1), &mut out).unwrap();
        // S0's late barrier on 1->2 closes S1's record there: the cart behind it is lost to S1.
        q.receive(&t, c(&t, 1, 2), Message::Marker(S0), &mut out).unwrap();
        assert!(q.is_complete(S1));
        q.receive(&t, c(&t, 1, 2), Message::App(Jars(1)), &mut out).unwrap();
        assert_eq!(q.slot(S1).map(|s| s.recorded().count()), Some(0));
    }

    #[test]
    fn a_decline_gives_up_the_part_and_sends_cancellations() {
        let t = Topology::ring(3).unwrap();
        let mut q = unaligned(&t, 1, 0);
        let mut out = Out::new();
        assert_eq!(q.decline(&t, S0, &mut out), Err(CoreError::UnknownSnapshot { process: p(1), snapshot: S0 }));
        q.receive(&t, c(&t, 0, 1), Message::Marker(S0), &mut out).unwrap();
        assert!(q.is_complete(S0));
        out.clear();
        q.decline(&t, S0, &mut out).unwrap();
        assert_eq!(
            out,
            vec![Effect::Aborted { snapshot: S0 }, Effect::Send { channel: c(&t, 1, 2), message: Message::Cancel(S0) }]
        );
        assert!(q.slots().is_empty() && !q.is_complete(S0));
        // Chandy–Lamport has no cancellation: refused, state unchanged.
        let mut r = Process::new(p(1), Bank::new(0));
        r.receive(&t, c(&t, 0, 1), Message::Marker(S0), &mut out).unwrap();
        let before = r.clone();
        let none = CoreError::NoCancellation { process: p(1), algorithm: Algorithm::ChandyLamport };
        assert_eq!(r.decline(&t, S0, &mut out), Err(none.clone()));
        assert_eq!(r.receive(&t, c(&t, 0, 1), Message::Cancel(S0), &mut out), Err(none));
        assert_eq!(r, before);
        // Nor does a cancellation overtake.
        assert!(matches!(
            q.receive_overtaking(&t, c(&t, 0, 1), Message::Cancel(S1), &[Jars(1)], &mut out),
            Err(CoreError::Overtaking { .. })
        ));
    }

    #[test]
    fn a_trigger_older_than_the_newest_checkpoint_seen_is_declined() {
        let t = Topology::ring(3).unwrap();
        let mut q = aligned(&t, 0, 0);
        let mut out = Out::new();
        q.initiate(&t, S1, &mut out).unwrap();
        assert!(q.has_recorded(S1));
        out.clear();
        q.initiate(&t, S0, &mut out).unwrap();
        assert_eq!(out, vec![Effect::Aborted { snapshot: S0 }]);
        // A second trigger of the one started changes nothing.
        out.clear();
        q.initiate(&t, S1, &mut out).unwrap();
        assert!(out.is_empty());
        // A newer trigger subsumes the one in progress.
        q.initiate(&t, SnapshotId(2), &mut out).unwrap();
        assert_eq!(aborted(&out), [S1]);
        assert!(q.has_recorded(SnapshotId(2)));
    }
}
