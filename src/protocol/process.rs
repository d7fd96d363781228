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

use std::hash::{Hash, Hasher};

use serde::{Deserialize, Serialize};
use smallvec::SmallVec;
use thiserror::Error;

use super::algorithm::Algorithm;
use super::application::{Application, Refusal};
use super::collections::{clone_small, Bits, IdSet, Rare};
use super::message::{Effect, Message, SnapshotId};
use super::records::Slot;
use super::snapshot::LocalSnapshot;
use super::topology::{ChannelId, ProcessId, Topology};
use super::variant::Variant;

mod faults;
use faults::Faults;

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
    /// Anything taken from an input that aligned barriers block.
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
    /// Something new on a channel taken ahead of the restored data still queued on it (a
    /// barrier that overtook it): restored data comes first.
    #[error("process {process}: something new on channel {} came ahead of the {restored} restored message(s) still queued on it", channel.0)]
    AheadOfRestored {
        /// The process.
        process: ProcessId,
        /// The channel.
        channel: ChannelId,
        /// Restored messages still to come on it.
        restored: usize,
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

/// One process: its application and its part of every snapshot it has seen.
///
/// It serializes (serde) when its application, and the application's messages, do: for sending
/// a process state to another process of the same build (the model's distributed search). The
/// format is the fields', not a stable one.
#[derive(Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(bound(
    serialize = "A: Serialize, A::Msg: Serialize",
    deserialize = "A: Deserialize<'de>, A::Msg: Deserialize<'de>"
))]
pub struct Process<A: Application> {
    id: ProcessId,
    variant: Variant,
    app: A,
    #[serde(with = "super::collections::small")]
    slots: SmallVec<[Slot<A>; 1]>,
    taken: IdSet,
    /// The fault variants' own state (held markers, a stale state): `None` for the correct
    /// algorithm, and for the variants that need none ([`Faults::for_variant`]).
    faults: Option<Box<Faults<A>>>,
    algorithm: Algorithm,
    /// Aligned barriers: incoming channel numbers that are back edges (never waited for).
    back: Bits,
    /// Unaligned barriers: the output buffers (outgoing channel number, message), oldest first.
    out: Rare<(u32, A::Msg)>,
    /// Barrier algorithms: one more than the newest checkpoint id this process has started,
    /// cancelled or seen a barrier of (0: none). Older barriers are obsolete.
    newest: u32,
    /// After a recovery: (incoming channel number, how many restored messages it still has to
    /// take in before anything new on it). Empty in normal running.
    restored: Rare<(u32, u32)>,
}

impl<A: Application> Clone for Process<A> {
    fn clone(&self) -> Self {
        Process {
            id: self.id,
            variant: self.variant,
            app: self.app.clone(),
            slots: clone_small(&self.slots),
            taken: self.taken.clone(),
            faults: self.faults.clone(),
            algorithm: self.algorithm,
            back: self.back.clone(),
            out: self.out.clone(),
            newest: self.newest,
            restored: self.restored.clone(),
        }
    }
}

// Field by field, with the fault state where its fields `held` and `stale` were before they
// moved into `Faults` (see `Faults::hash_as_fields`): a process hashes as it did.
impl<A: Application> Hash for Process<A> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.id.hash(state);
        self.variant.hash(state);
        self.app.hash(state);
        self.slots.hash(state);
        self.taken.hash(state);
        Faults::hash_as_fields(self.faults.as_deref(), state);
        self.algorithm.hash(state);
        self.back.hash(state);
        self.out.hash(state);
        self.newest.hash(state);
        self.restored.hash(state);
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
            faults: Faults::for_variant(variant),
            algorithm: Algorithm::ChandyLamport,
            back: Bits::default(),
            out: Rare::default(),
            newest: 0,
            restored: Rare::default(),
        }
    }

    /// The same process following `algorithm`'s rules. `roots` are where snapshots start: the
    /// aligned mode's back edges are those of [`Topology::back_edges`] from them.
    pub fn with_algorithm(mut self, topology: &Topology, algorithm: Algorithm, roots: &[ProcessId]) -> Self {
        self.algorithm = algorithm;
        self.back = Bits::default();
        if algorithm.aligns() {
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
    /// process has not recorded yet. A driver takes nothing from a blocked channel, barriers and
    /// cancellations included (the core refuses anything from it).
    pub fn is_blocked(&self, topology: &Topology, channel: ChannelId) -> bool {
        self.incoming_index(topology, channel).is_ok_and(|i| self.blocked(i))
    }

    fn blocked(&self, i: usize) -> bool {
        self.algorithm.aligns()
            && self.variant != Variant::ProcessAfterBarrier
            && !self.back.get(i)
            && self.slots.iter().any(|s| s.state.is_none() && s.closed.get(i))
    }

    /// Whether slot `i` may record: aligned barriers wait until every input that is not a back
    /// edge has delivered its barrier.
    fn aligned(&self, topology: &Topology, i: usize) -> bool {
        !self.algorithm.aligns()
            || (0..topology.incoming(self.id).len()).all(|j| self.back.get(j) || self.slots[i].closed.get(j))
    }

    /// After a recovery: the first `count` messages this process takes in on incoming `channel`
    /// are the restored channel state (they wait in the process's input ahead of anything new on
    /// that channel). While it still holds restored input, a barrier algorithm's process declines
    /// every new checkpoint, as not ready (Flink's rule since FLINK-20654).
    pub fn restore_input(&mut self, topology: &Topology, channel: ChannelId, count: usize) -> Result<(), CoreError> {
        let i = self.incoming_index(topology, channel)? as u32;
        let list = self.restored.vec_mut();
        list.retain(|(c, _)| *c != i);
        if count > 0 {
            list.push((i, count as u32));
        }
        if list.is_empty() {
            self.restored.take();
        }
        Ok(())
    }

    /// Restored messages incoming `channel` still has to deliver here (0 in normal running).
    pub fn restored(&self, topology: &Topology, channel: ChannelId) -> usize {
        let i = self.incoming_index(topology, channel).map_or(u32::MAX, |i| i as u32);
        self.restored.as_slice().iter().find(|(c, _)| *c == i).map_or(0, |&(_, n)| n as usize)
    }

    /// Whether this process still holds restored input (it is recovering).
    pub fn is_recovering(&self) -> bool {
        !self.restored.as_slice().is_empty()
    }

    /// Takes one restored message of incoming channel number `i` off the count; whether the
    /// message taken in was a restored one.
    fn take_restored(&mut self, i: usize) -> bool {
        let Some(at) = self.restored.as_slice().iter().position(|(c, _)| *c as usize == i) else { return false };
        let list = self.restored.vec_mut();
        list[at].1 -= 1;
        if list[at].1 == 0 {
            self.restored.remove(at);
        }
        true
    }

    /// Barrier algorithms: a checkpoint that would start here while restored input is still
    /// held is declined as not ready (not a failure the coordinator counts): no part is taken,
    /// later barriers of it are obsolete, and cancellation barriers go downstream.
    fn declines_not_ready(&mut self, topology: &Topology, snapshot: SnapshotId, out: &mut Vec<Effect<A::Msg>>) -> bool {
        if !self.is_recovering() || self.variant == Variant::CheckpointDuringRecovery {
            return false;
        }
        self.subsume(topology, out);
        self.newest = snapshot.0 + 1;
        out.push(Effect::Aborted { snapshot });
        self.send_cancels(topology, snapshot, out);
        true
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
        if self.algorithm.buffers_output() {
            // Into the output buffer; `transmit` puts it on the wire.
            self.out.vec_mut().push((j as u32, msg));
        } else {
            out.push(Effect::Send { channel, message: Message::App(msg) });
        }
        // send-before-marker: the held markers leave only now, behind the message.
        self.release_held_markers(topology, out);
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
        self.release_held_markers(topology, out);
        Ok(())
    }

    /// Fault variants only: whether this process holds back work that
    /// [`Process::release_faults`] would do now (markers held back by `send-before-marker`, a
    /// recording deferred by `late-record` or `deferred-unaligned-checkpoint`). The correct
    /// algorithm never defers: for it this is always false, one `None` check. A driver asks it
    /// when a process is idle.
    pub fn faults_pending(&self) -> bool {
        self.faults.as_ref().is_some_and(|f| {
            f.holds_markers() || (self.defers_recording() && self.slots.iter().any(|s| s.state.is_none()))
        })
    }

    /// Fault variants only: `late-record` and `deferred-unaligned-checkpoint` defer recording
    /// ([`Faults::defer_recording`]); the correct algorithm never does.
    fn defers_recording(&self) -> bool {
        self.faults.is_some() && Faults::<A>::defer_recording(self.variant)
    }

    /// Fault variants only: the process is idle, so the work its fault deferred happens: held
    /// markers leave and deferred recordings happen. The correct algorithm defers nothing (this
    /// does nothing for it); a driver calls it when [`Process::faults_pending`] says so.
    pub fn release_faults(&mut self, topology: &Topology, out: &mut Vec<Effect<A::Msg>>) {
        if self.faults.is_none() {
            return;
        }
        self.release_held_markers(topology, out);
        self.record_pending(topology, out);
    }

    /// `send-before-marker`: markers held back since recording leave now (nothing to do without
    /// fault state).
    fn release_held_markers(&mut self, topology: &Topology, out: &mut Vec<Effect<A::Msg>>) {
        let Some(faults) = self.faults.as_mut() else { return };
        for snapshot in faults.release() {
            self.send_markers(topology, snapshot, out);
        }
    }

    /// `late-record`: recordings held back since a first marker happen now.
    fn record_pending(&mut self, topology: &Topology, out: &mut Vec<Effect<A::Msg>>) {
        if !self.defers_recording() {
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
        if self.algorithm.coordinated() {
            // A trigger: one for a checkpoint already started here changes nothing; one older
            // than the newest seen here is declined; a newer one subsumes the one in progress.
            let (n, newest) = (u64::from(snapshot.0) + 1, u64::from(self.newest));
            if n < newest {
                out.push(Effect::Aborted { snapshot });
            }
            if n <= newest || self.declines_not_ready(topology, snapshot, out) {
                return Ok(());
            }
            self.subsume(topology, out);
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
        self.release_held_markers(topology, out);
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
        if !overtaken.is_empty() && (!self.algorithm.barriers_overtake() || !matches!(message, Message::Marker(_))) {
            return Err(CoreError::Overtaking { process: self.id, channel, algorithm: self.algorithm });
        }
        if matches!(message, Message::Cancel(_)) && !self.algorithm.coordinated() {
            return Err(CoreError::NoCancellation { process: self.id, algorithm: self.algorithm });
        }
        if self.blocked(idx) {
            return Err(CoreError::Blocked { process: self.id, channel });
        }
        let restored = self.restored(topology, channel);
        if restored > 0 && !matches!(message, Message::App(_)) {
            return Err(CoreError::AheadOfRestored { process: self.id, channel, restored });
        }
        self.release_held_markers(topology, out);
        // late-record: recordings held back by an earlier marker happen after this message.
        let pending: SmallVec<[SnapshotId; 1]> = if self.defers_recording() {
            self.slots.iter().filter(|s| s.state.is_none()).map(|s| s.id).collect()
        } else {
            SmallVec::new()
        };
        match message {
            Message::App(msg) => {
                let from = topology.channel(channel).from;
                if self.variant == Variant::StaleState {
                    if let Some(faults) = self.faults.as_mut() {
                        faults.remember(&self.app);
                    }
                }
                self.app.on_message(from, &msg);
                let variant = self.variant;
                // checkpoint-during-recovery: restored input is invisible to the recording.
                let restored = self.take_restored(idx) && variant == Variant::CheckpointDuringRecovery;
                // aligned-cycle-no-backedge: back edges are neither waited for nor logged.
                let unlogged = restored || (variant == Variant::AlignedCycleNoBackedge && self.back.get(idx));
                for slot in self.slots.iter_mut() {
                    if slot.records_on(idx, variant) && !unlogged {
                        slot.push(idx, msg.clone(), variant == Variant::RecordsReversed);
                    }
                }
            }
            Message::Marker(snapshot) if !self.algorithm.coordinated() => {
                self.receive_marker(topology, idx, channel, snapshot, overtaken, out)?
            }
            Message::Marker(snapshot) => {
                if let Some(counts_for) = self.barrier_for(topology, idx, snapshot, out) {
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
    fn barrier_for(
        &mut self,
        topology: &Topology,
        idx: usize,
        snapshot: SnapshotId,
        out: &mut Vec<Effect<A::Msg>>,
    ) -> Option<SnapshotId> {
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
            if self.declines_not_ready(topology, snapshot, out) {
                return None;
            }
            self.subsume(topology, out);
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

    /// Barrier algorithms: gives up every checkpoint in progress here (not yet complete),
    /// returning their ids.
    fn abort_in_progress(&mut self, out: &mut Vec<Effect<A::Msg>>) -> SmallVec<[SnapshotId; 1]> {
        let mut aborted = SmallVec::new();
        while let Some(i) = self.slots.iter().position(|s| !s.is_complete()) {
            let slot = self.slots.remove(i);
            out.push(Effect::Aborted { snapshot: slot.id });
            aborted.push(slot.id);
        }
        aborted
    }

    /// Barrier algorithms: a newer checkpoint subsumes those in progress here, which are given
    /// up with cancellation barriers downstream (Flink's `CancelCheckpointMarker`), so that no
    /// process there keeps an input blocked for a barrier that will not come.
    fn subsume(&mut self, topology: &Topology, out: &mut Vec<Effect<A::Msg>>) {
        for snapshot in self.abort_in_progress(out) {
            if self.variant != Variant::NoCancellationBarriers {
                self.send_cancels(topology, snapshot, out);
            }
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
            let _ = self.abort_in_progress(out);
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
        if !self.algorithm.coordinated() {
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
            if !self.defers_recording() && self.aligned(topology, i) {
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
            // Aligning (or deferring, still holding back): the record of this channel is the
            // data its barrier overtook (none but unaligned); aligned barriers record once the
            // last one they wait for is in.
            for msg in overtaken {
                self.slots[i].push(idx, msg.clone(), false);
            }
            self.slots[i].closed.set(idx);
            out.push(Effect::Closed { snapshot, channel });
            if !self.defers_recording() && self.aligned(topology, i) {
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
        // stale-state: the state before the latest receipt is recorded instead.
        let state = match self.faults.as_ref().and_then(|f| f.stale()) {
            Some(before) if self.variant == Variant::StaleState => before.clone(),
            _ => self.app.clone(),
        };
        self.slots[i].state = Some(state);
        if self.algorithm.buffers_output() {
            // The barriers overtake the output buffers: what they hold is channel state.
            self.slots[i].output = self.out.clone();
            if self.variant == Variant::PartialOutputBuffers {
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
            Variant::SendBeforeMarker => self.faults.get_or_insert_with(Box::default).hold(snapshot),
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
        if let Some(faults) = p.faults.as_mut() {
            faults.map_app(app);
        }
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
        let outputs = if self.algorithm.buffers_output() {
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
mod tests;
