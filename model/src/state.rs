//! The model's state: the core's process states, the FIFO contents of every channel, each
//! house's remaining budget, and the ghost data of the chosen property mode.

use chandy_lamport::bank::{Bank, Jars};
use chandy_lamport::trace::Trace;
use chandy_lamport::{Message, Process, SnapshotId};

use crate::ghost::Ghost;

/// A message in transit with its ghost tag: in full mode, bit `s` is set when the message was
/// sent after its sender recorded snapshot `s`; in literal mode, the message's id; in basic
/// mode, always 0.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Packet {
    /// The message or marker.
    pub msg: Message<Jars>,
    /// The ghost tag.
    pub tag: u32,
}

impl Packet {
    /// Whether this is an application message (a cart), not a marker.
    pub fn is_app(&self) -> bool {
        matches!(self.msg, Message::App(_))
    }
}

/// The recorded history, in literal mode.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct History {
    /// Every event so far.
    pub trace: Trace<Bank>,
    /// The id of the next cart sent.
    pub next_msg: u64,
    /// A running hash of the events, so judgements of one history can be cached.
    pub digest: u64,
}

impl History {
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

/// One global state of the model.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct State {
    /// The core's state of every house (the bank application inside).
    pub procs: Vec<Process<Bank>>,
    /// Every channel's contents, head first.
    pub chans: Vec<Vec<Packet>>,
    /// Actions (transfers and sales) each house may still take.
    pub budget: Vec<u8>,
    /// Full mode's ghost data.
    pub ghost: Option<Box<Ghost>>,
    /// Literal mode's history.
    pub history: Option<Box<History>>,
    /// The symmetry group this state is reduced under (0: none); constant in a run.
    pub sym: u16,
}

impl State {
    /// Some house has started snapshot `s` (recorded, or holds its marker).
    pub fn started(&self, s: SnapshotId) -> bool {
        self.procs.iter().any(|p| p.slot(s).is_some() || p.has_recorded(s))
    }

    /// Every house's part of snapshot `s` is complete.
    pub fn complete(&self, s: SnapshotId) -> bool {
        self.procs.iter().all(|p| p.is_complete(s))
    }

    /// Carts in transit on channel `c`.
    pub fn carts(&self, c: usize) -> usize {
        self.chans[c].iter().filter(|p| p.is_app()).count()
    }

    /// Jars in the houses, in transit and sold.
    pub fn jars_accounted(&self) -> u64 {
        let held: u64 = self.procs.iter().map(|p| u64::from(p.app().jars) + u64::from(p.app().sold)).sum();
        let moving: u64 = self
            .chans
            .iter()
            .flatten()
            .map(|p| match p.msg {
                Message::App(Jars(j)) => u64::from(j),
                Message::Marker(_) => 0,
            })
            .sum();
        held + moving
    }

    /// The trade is over: no cart in transit, and no house can send again (no budget, or no
    /// jars and none coming).
    pub fn trade_over(&self) -> bool {
        self.chans.iter().flatten().all(|p| !p.is_app())
            && self.procs.iter().zip(&self.budget).all(|(p, &b)| b == 0 || p.app().jars == 0)
    }
}

/// What a completed snapshot recorded, read from the core's slots.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recorded {
    /// Recorded state of every house.
    pub houses: Vec<Bank>,
    /// Recorded carts per channel.
    pub channels: Vec<Vec<Jars>>,
}

impl Recorded {
    /// Jars recorded in houses and in transit.
    pub fn total(&self) -> u64 {
        let houses: u64 = self.houses.iter().map(|b| u64::from(b.jars)).sum();
        houses + self.channels.iter().flatten().map(|j| u64::from(j.0)).sum::<u64>()
    }

    /// Jars recorded as sold.
    pub fn sold(&self) -> u64 {
        self.houses.iter().map(|b| u64::from(b.sold)).sum()
    }
}
