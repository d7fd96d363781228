//! Channel records: one process's part of one snapshot (its recorded state, which markers have
//! arrived, and the messages recorded on each incoming channel).

use std::hash::Hash;

use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

use super::application::Application;
use super::collections::{clone_small, Bits, Rare};
use super::message::SnapshotId;
use super::variant::Variant;

/// One process's part of one snapshot: the recorded state, which incoming channels' markers
/// have arrived, and the messages recorded on them. Laid out flat (one bit set, one list of
/// messages tagged with their channel, in arrival order) so that a model checker clones it
/// cheaply and a busy runtime appends in constant time. Equality and hashing look at each
/// channel's record on its own: how arrivals on different channels interleaved is not part of
/// the snapshot.
#[derive(Debug, Serialize, Deserialize)]
#[serde(bound(
    serialize = "A: Serialize, A::Msg: Serialize",
    deserialize = "A: Deserialize<'de>, A::Msg: Deserialize<'de>"
))]
pub struct Slot<A: Application> {
    /// The snapshot.
    pub id: SnapshotId,
    /// The recorded local state; `None` only while the `late-record` fault holds it back.
    pub state: Option<A>,
    pub(super) incoming: u32,
    pub(super) closed: Bits,
    #[serde(with = "super::collections::small")]
    pub(super) recorded: SmallVec<[(u32, A::Msg); 2]>,
    /// Unaligned barriers only: the output buffers when the barriers went out (outgoing channel
    /// number, message), in channel order.
    pub(super) output: Rare<(u32, A::Msg)>,
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
    pub(super) fn new(id: SnapshotId, incoming: usize) -> Self {
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
        self.state.is_some() && self.closed.is_first(self.incoming as usize)
    }

    /// Number of incoming channels (records).
    pub fn incoming(&self) -> usize {
        self.incoming as usize
    }

    /// Whether the marker has arrived on incoming channel number `i` (in
    /// [`Topology::incoming`](crate::protocol::Topology::incoming) order): its record is closed.
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
    pub(super) fn push(&mut self, i: usize, msg: A::Msg, reversed: bool) {
        let first = if reversed { self.recorded.iter().position(|(c, _)| *c as usize == i) } else { None };
        match first {
            Some(at) => self.recorded.insert(at, (i as u32, msg)),
            None => self.recorded.push((i as u32, msg)),
        }
    }

    /// Every channel's record, by channel number, in one pass.
    pub(super) fn records(&self) -> Vec<Vec<A::Msg>> {
        let mut out = vec![Vec::new(); self.incoming as usize];
        for (c, m) in &self.recorded {
            if let Some(r) = out.get_mut(*c as usize) {
                r.push(m.clone());
            }
        }
        out
    }

    /// Whether messages arriving on incoming channel number `i` are being recorded.
    pub(super) fn records_on(&self, i: usize, variant: Variant) -> bool {
        // wrong-inflight-channels (FLINK-18139): the gate-local index, 0, stands for every input.
        let i = if variant == Variant::WrongInflightChannels { 0 } else { i };
        self.state.is_some()
            && !self.is_complete()
            && (!self.closed.get(i) || variant == Variant::KeepRecordingAfterMarker)
            && variant != Variant::NoChannelRecording
    }
}
