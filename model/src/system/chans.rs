//! The channels' contents: every message and marker in transit, with its ghost tag, stored flat
//! per state.

use std::hash::Hash;

use chandy_lamport::Message;
use serde::ser::{Error as _, SerializeStruct};
use serde::{Deserialize, Serialize, Serializer};
use smallvec::SmallVec;

use super::serial::Flat;
use super::stamp::Stamp;

/// A message in transit with its ghost tag: in full mode, bit `s` is set when the message was
/// sent after its sender recorded snapshot `s`; in literal mode, the message's id; in basic
/// mode, always 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Tagged<M> {
    /// The message or marker.
    pub msg: Message<Stamp<M>>,
    /// The ghost tag.
    pub tag: u32,
}

impl<M> Tagged<M> {
    /// Whether this is an application message (a message), not a marker.
    pub fn is_app(&self) -> bool {
        matches!(self.msg, Message::App(_))
    }
}

/// The contents of every channel, stored flat (one run of messages per channel, in channel
/// order) so that cloning a state copies one small buffer instead of a vector per channel. Each
/// channel's run ends where `ends` says, so that a channel is found without summing the lengths
/// before it. Serialized as the runs' lengths and the messages; read back only if the lengths
/// add up to the messages.
#[derive(Debug, PartialEq, Eq, Deserialize)]
#[serde(try_from = "Flat<[u8; 12], [Tagged<M>; 12]>", bound(deserialize = "M: Deserialize<'de>"))]
pub struct Chans<M> {
    /// Where each channel's run ends in `in_transit` (one past its last message).
    ends: SmallVec<[u16; 12]>,
    in_transit: SmallVec<[Tagged<M>; 12]>,
}

impl<M> TryFrom<Flat<[u8; 12], [Tagged<M>; 12]>> for Chans<M> {
    type Error = &'static str;
    fn try_from(flat: Flat<[u8; 12], [Tagged<M>; 12]>) -> Result<Self, &'static str> {
        let (lens, in_transit) = flat.checked("the channels' lengths do not add up to the packets in transit")?;
        if in_transit.len() > usize::from(u16::MAX) {
            return Err("more packets in transit than a state holds (65,535)");
        }
        let mut end = 0u16;
        let ends = lens.iter().map(|&l| {
            end += u16::from(l);
            end
        });
        Ok(Chans { ends: ends.collect(), in_transit })
    }
}

impl<M: Serialize> Serialize for Chans<M> {
    /// As the runs' lengths (one byte each) and the messages, as [`Flat`] reads them.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut lens: SmallVec<[u8; 12]> = SmallVec::with_capacity(self.ends.len());
        let mut start = 0;
        for &end in &self.ends {
            let len = u8::try_from(end - start)
                .map_err(|_| S::Error::custom(format!("a channel holds {} packets, more than 255", end - start)))?;
            lens.push(len);
            start = end;
        }
        let mut st = s.serialize_struct("Chans", 2)?;
        st.serialize_field("lens", lens.as_slice())?;
        st.serialize_field("packets", self.in_transit.as_slice())?;
        st.end()
    }
}

impl<M: Copy> Clone for Chans<M> {
    /// A plain copy of both buffers (the derived clone goes element by element).
    fn clone(&self) -> Self {
        Chans { ends: SmallVec::from_slice(&self.ends), in_transit: SmallVec::from_slice(&self.in_transit) }
    }
}

impl<M: Copy> Chans<M> {
    /// `n` empty channels.
    pub fn new(n: usize) -> Self {
        Chans { ends: SmallVec::from_elem(0, n), in_transit: SmallVec::new() }
    }

    /// Number of channels.
    #[inline]
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there are no channels at all.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Where channel `c`'s run starts and ends in `in_transit`.
    #[inline]
    fn bounds(&self, c: usize) -> (usize, usize) {
        let start = if c == 0 { 0 } else { self.ends[c - 1] };
        (usize::from(start), usize::from(self.ends[c]))
    }

    /// Moves the ends of channel `c` and every later one by one message, up or down.
    fn shift(&mut self, c: usize, up: bool) {
        for end in &mut self.ends[c..] {
            *end = if up {
                end.checked_add(1).expect("more messages in transit than a state holds (65,535)")
            } else {
                *end - 1
            };
        }
    }

    /// The messages of channel `c`, head first.
    #[inline]
    pub fn get(&self, c: usize) -> &[Tagged<M>] {
        let (start, end) = self.bounds(c);
        &self.in_transit[start..end]
    }

    /// Appends `p` at the tail of channel `c`.
    pub fn push(&mut self, c: usize, p: Tagged<M>) {
        let (_, end) = self.bounds(c);
        self.shift(c, true);
        self.in_transit.insert(end, p);
    }

    /// Puts `p` at `index` of channel `c` (where [`Chans::remove`] took it from).
    pub fn insert(&mut self, c: usize, index: usize, p: Tagged<M>) {
        let (start, end) = self.bounds(c);
        assert!(index <= end - start, "message {index} put into channel {c} of {}", end - start);
        self.shift(c, true);
        self.in_transit.insert(start + index, p);
    }

    /// Removes and returns the message at `index` of channel `c`.
    pub fn remove(&mut self, c: usize, index: usize) -> Tagged<M> {
        let (start, end) = self.bounds(c);
        assert!(index < end - start, "message {index} taken from channel {c} of {}", end - start);
        self.shift(c, false);
        self.in_transit.remove(start + index)
    }

    /// Every channel's messages, in channel order.
    pub fn iter(&self) -> impl Iterator<Item = &[Tagged<M>]> + '_ {
        let mut start = 0;
        self.ends.iter().map(move |&end| {
            let chan = &self.in_transit[start..usize::from(end)];
            start = usize::from(end);
            chan
        })
    }

    /// Every message in transit, whatever its channel.
    pub fn all(&self) -> &[Tagged<M>] {
        &self.in_transit
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chandy_lamport::SnapshotId;

    fn message(seq: u8) -> Tagged<u32> {
        Tagged { msg: Message::App(Stamp { seq, msg: 7 }), tag: u32::from(seq) }
    }

    fn marker() -> Tagged<u32> {
        Tagged { msg: Message::Marker(SnapshotId(0)), tag: 0 }
    }

    fn contents(ch: &Chans<u32>) -> Vec<Vec<Tagged<u32>>> {
        ch.iter().map(<[_]>::to_vec).collect()
    }

    /// Each channel keeps its own messages in order whatever is pushed, taken and put back on
    /// the others; `get`, `iter` and `all` agree.
    #[test]
    fn channels_keep_their_own_messages_in_order() {
        let mut ch = Chans::new(3);
        ch.push(1, message(1));
        ch.push(0, message(2));
        ch.push(2, marker());
        ch.push(1, message(3));
        ch.push(0, marker());
        assert_eq!(contents(&ch), vec![vec![message(2), marker()], vec![message(1), message(3)], vec![marker()]]);
        assert_eq!(ch.all(), &[message(2), marker(), message(1), message(3), marker()]);
        assert_eq!(ch.remove(1, 0), message(1));
        assert_eq!(ch.get(1), &[message(3)]);
        assert_eq!(ch.get(2), &[marker()]);
        ch.insert(1, 0, message(1));
        assert_eq!(contents(&ch), vec![vec![message(2), marker()], vec![message(1), message(3)], vec![marker()]]);
        assert_eq!(ch.remove(0, 1), marker());
        assert_eq!(ch.remove(0, 0), message(2));
        assert_eq!(contents(&ch), vec![vec![], vec![message(1), message(3)], vec![marker()]]);
        ch.insert(0, 0, message(4));
        assert_eq!(ch.get(0), &[message(4)]);
        assert_eq!((ch.len(), ch.all().len()), (3, 4));
        assert!(!ch.is_empty() && Chans::<u32>::new(0).is_empty() && !Chans::<u32>::new(1).is_empty());
        assert_eq!(ch.clone(), ch);
    }

    /// A message is never taken from, or put into, a place past its channel's end (which would
    /// be another channel's message).
    #[test]
    #[should_panic(expected = "message 1 taken from channel 0 of 1")]
    fn a_message_past_its_channels_end_is_not_taken() {
        let mut ch = Chans::new(2);
        ch.push(0, message(1));
        ch.push(1, message(2));
        ch.remove(0, 1);
    }

    #[test]
    #[should_panic(expected = "message 2 put into channel 1 of 1")]
    fn a_message_past_its_channels_end_is_not_put() {
        let mut ch = Chans::new(2);
        ch.push(1, message(2));
        ch.insert(1, 2, message(1));
    }

    /// Written as each channel's length and the messages (the format the wire and spill files
    /// had before the ends were kept), read back equal; lengths that do not add up are refused.
    #[test]
    fn channels_are_written_as_lengths_and_messages() {
        let mut ch = Chans::new(3);
        ch.push(2, message(1));
        ch.push(0, marker());
        ch.push(2, message(2));
        let bytes = bincode::serialize(&ch).unwrap();
        let lens: &[u8] = &[1, 0, 2];
        let in_transit = [marker(), message(1), message(2)];
        assert_eq!(bytes, bincode::serialize(&(lens, &in_transit[..])).unwrap());
        assert_eq!(bincode::deserialize::<Chans<u32>>(&bytes).unwrap(), ch);
        let short: &[u8] = &[1, 0, 1];
        let bad = bincode::serialize(&(short, &in_transit[..])).unwrap();
        let err = bincode::deserialize::<Chans<u32>>(&bad).unwrap_err().to_string();
        assert!(err.contains("do not add up"), "{err}");
    }

    /// A channel of more than 255 messages cannot be written in one length byte: an error, not
    /// a wrong length.
    #[test]
    fn a_channel_too_long_to_write_is_an_error() {
        let mut ch = Chans::new(2);
        for i in 0..256 {
            ch.push(1, message(i as u8));
        }
        assert_eq!(ch.get(1).len(), 256);
        let err = bincode::serialize(&ch).unwrap_err().to_string();
        assert!(err.contains("a channel holds 256 packets, more than 255"), "{err}");
    }

    /// A state holds at most 65,535 messages in transit (the ends are `u16`): as many are read
    /// back, one more is refused.
    #[test]
    fn at_most_65535_messages_are_read_back() {
        let read = |channels: usize, extra: u8| {
            let mut lens = vec![255u8; channels];
            lens.push(extra);
            let in_transit = vec![message(1); 255 * channels + usize::from(extra)];
            bincode::deserialize::<Chans<u32>>(&bincode::serialize(&(lens, in_transit)).unwrap())
        };
        let full = read(257, 0).unwrap();
        assert_eq!((full.len(), full.all().len(), full.get(256).len(), full.get(257).len()), (258, 65_535, 255, 0));
        let err = read(257, 1).unwrap_err().to_string();
        assert!(err.contains("more packets in transit than a state holds"), "{err}");
    }
}
