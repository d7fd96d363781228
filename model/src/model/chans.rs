//! The channels' contents: every message and marker in transit, with its ghost tag, stored flat
//! per state.

use std::hash::Hash;

use chandy_lamport::Message;
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

use super::serial::{small, Flat};
use super::stamp::Stamp;

/// A message in transit with its ghost tag: in full mode, bit `s` is set when the message was
/// sent after its sender recorded snapshot `s`; in literal mode, the message's id; in basic
/// mode, always 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Packet<M> {
    /// The message or marker.
    pub msg: Message<Stamp<M>>,
    /// The ghost tag.
    pub tag: u32,
}

impl<M> Packet<M> {
    /// Whether this is an application message (a cart), not a marker.
    pub fn is_app(&self) -> bool {
        matches!(self.msg, Message::App(_))
    }
}

/// The contents of every channel, stored flat (one run of packets per channel, in channel
/// order) so that cloning a state copies one small buffer instead of a vector per channel.
/// Serialized as its two buffers; read back only if the lengths add up to the packets.
#[derive(Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    try_from = "Flat<[u8; 12], [Packet<M>; 12]>",
    bound(serialize = "M: Serialize", deserialize = "M: Deserialize<'de>")
)]
pub struct Chans<M> {
    #[serde(with = "small")]
    lens: SmallVec<[u8; 12]>,
    #[serde(with = "small")]
    packets: SmallVec<[Packet<M>; 12]>,
}

impl<M> TryFrom<Flat<[u8; 12], [Packet<M>; 12]>> for Chans<M> {
    type Error = &'static str;
    fn try_from(flat: Flat<[u8; 12], [Packet<M>; 12]>) -> Result<Self, &'static str> {
        let (lens, packets) = flat.checked("the channels' lengths do not add up to the packets in transit")?;
        Ok(Chans { lens, packets })
    }
}

impl<M: Copy> Clone for Chans<M> {
    /// A plain copy of both buffers (the derived clone goes element by element).
    fn clone(&self) -> Self {
        Chans { lens: SmallVec::from_slice(&self.lens), packets: SmallVec::from_slice(&self.packets) }
    }
}

impl<M: Copy> Chans<M> {
    /// `n` empty channels.
    pub fn new(n: usize) -> Self {
        Chans { lens: SmallVec::from_elem(0, n), packets: SmallVec::new() }
    }

    /// Number of channels.
    pub fn len(&self) -> usize {
        self.lens.len()
    }

    /// Whether there are no channels at all.
    pub fn is_empty(&self) -> bool {
        self.lens.is_empty()
    }

    fn start(&self, c: usize) -> usize {
        self.lens[..c].iter().map(|&l| usize::from(l)).sum()
    }

    /// The packets of channel `c`, head first.
    pub fn get(&self, c: usize) -> &[Packet<M>] {
        let start = self.start(c);
        &self.packets[start..start + usize::from(self.lens[c])]
    }

    /// Appends `p` at the tail of channel `c`.
    pub fn push(&mut self, c: usize, p: Packet<M>) {
        let end = self.start(c) + usize::from(self.lens[c]);
        self.packets.insert(end, p);
        self.lens[c] += 1;
    }

    /// Puts `p` at `index` of channel `c` (where [`Chans::remove`] took it from).
    pub fn insert(&mut self, c: usize, index: usize, p: Packet<M>) {
        let at = self.start(c) + index;
        self.packets.insert(at, p);
        self.lens[c] += 1;
    }

    /// Removes and returns the packet at `index` of channel `c`.
    pub fn remove(&mut self, c: usize, index: usize) -> Packet<M> {
        let at = self.start(c) + index;
        self.lens[c] -= 1;
        self.packets.remove(at)
    }

    /// Every channel's packets, in channel order.
    pub fn iter(&self) -> impl Iterator<Item = &[Packet<M>]> + '_ {
        let mut start = 0;
        self.lens.iter().map(move |&l| {
            let chan = &self.packets[start..start + usize::from(l)];
            start += usize::from(l);
            chan
        })
    }

    /// Every packet in transit, whatever its channel.
    pub fn all(&self) -> &[Packet<M>] {
        &self.packets
    }
}
