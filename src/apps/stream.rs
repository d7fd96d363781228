//! The third application: a dataflow job, for exactly-once.
//!
//! A house with tokens is a *source*: it emits that many items, one at a time, from a fixed
//! input sequence, and its state records its position in it. Every house that takes an item in
//! is a keyed operator over it (the key: the item's value's parity):
//! - it folds (input, item) into a rolling digest, so its state depends on what arrived on which
//!   input and in which order;
//! - it stamps the item with its *rank*, the number of items of the same key it took in before,
//!   and, while the item has hops left, passes it on: items wait in a small backlog and leave one
//!   at a time, on a channel chosen from the item and its rank — so where an operator's output
//!   goes depends on the order its input came in.
//!
//! A failure-free run may end in several states (a house with two inputs takes them in any
//! interleaving), each with every item taken in once, each channel's items in the order sent. A
//! recovery that loses, duplicates, reorders or misroutes an item changes some house's digest,
//! so the model compares each quiet state, whatever crashes and recoveries happened, with the set
//! of the failure-free run's quiet ends. Items are conserved (the ledger): each is in its
//! source's input, in transit, waiting in a backlog, or ended at the house where its hops ran out.

use serde::{Deserialize, Serialize};

use crate::apps::spec::{Move, Setup, Spec};
use crate::protocol::{Application, Refusal};
use crate::protocol::{ProcessId, Topology};

/// Items a backlog holds; the most tokens (items) a run may have in all.
pub const BACKLOG: usize = 8;

/// An item of the stream: its value (unique in a run), the hops it has left, and the rank the
/// last operator gave it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Item {
    /// The value: `8 × source + position + 1`.
    pub value: u8,
    /// Houses it still passes through after the receiver.
    pub hops: u8,
    /// Items of its key the house that sent it took in before it (0 from a source).
    pub rank: u8,
}

/// A house of the stream application.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stream {
    /// This house's index (constant: items' values name their source).
    pub me: u8,
    /// Items in this source's input sequence (0: not a source).
    pub inputs: u8,
    /// Position in the input sequence: items emitted so far.
    pub position: u8,
    /// Items taken in.
    pub count: u8,
    /// Sum of their values.
    pub sum: u16,
    /// Rolling digest of every (input, item) taken in, in the order taken in (0: none).
    pub digest: u32,
    /// Items of each key (value parity) taken in.
    pub keyed: [u8; 2],
    /// Items taken in here with no hops left: their journey ended.
    pub ended: u8,
    /// Items taken in and waiting to be passed on, oldest first (`waiting` of them).
    pub backlog: [Item; BACKLOG],
    /// Items in the backlog.
    pub waiting: u8,
    /// Items that arrived at a full backlog and could not be passed on (never in a run whose
    /// items are each taken in once: only duplicates overflow it).
    pub overflow: u8,
}

impl Stream {
    /// Source `me` with `inputs` items to emit (0: not a source).
    pub fn new(me: ProcessId, inputs: u8) -> Self {
        Stream { me: me.0 as u8, inputs, ..Stream::default() }
    }

    /// The next item this source emits, if any: its hops take it through every other house.
    fn next_item(&self, topology: &Topology) -> Option<Item> {
        (self.position < self.inputs).then(|| Item {
            value: self.me * BACKLOG as u8 + self.position + 1,
            hops: topology.len().saturating_sub(1) as u8,
            rank: 0,
        })
    }
}

/// The digest after taking in `item` from `from`: FNV-1a over the (input, value, rank) bytes, so
/// that another input, another order, one item more or one fewer gives another digest.
fn fold(digest: u32, from: ProcessId, item: &Item) -> u32 {
    let mut h = if digest == 0 { 0x811c_9dc5 } else { digest };
    for byte in [from.0 as u8, item.value, item.rank] {
        h = (h ^ u32::from(byte)).wrapping_mul(0x0100_0193);
    }
    h
}

/// The outgoing channel number item `item` leaves on from a house with `out` outgoing channels.
fn route(item: &Item, out: usize) -> usize {
    (usize::from(item.value) + usize::from(item.hops) + usize::from(item.rank)) % out.max(1)
}

impl Application for Stream {
    type Msg = Item;
    type Step = ();

    fn on_send(&mut self, _to: ProcessId, item: &Item) -> Result<(), Refusal> {
        if self.waiting > 0 && self.backlog[0] == *item {
            self.backlog.copy_within(1..usize::from(self.waiting), 0);
            self.waiting -= 1;
            self.backlog[usize::from(self.waiting)] = Item::default();
            return Ok(());
        }
        if self.position < self.inputs && item.value == self.me * BACKLOG as u8 + self.position + 1 {
            self.position += 1;
            return Ok(());
        }
        Err(Refusal(format!("item {} is neither the next input nor the oldest waiting", item.value)))
    }

    fn on_message(&mut self, from: ProcessId, item: &Item) {
        self.count = self.count.wrapping_add(1);
        self.sum = self.sum.wrapping_add(u16::from(item.value));
        self.digest = fold(self.digest, from, item);
        let key = &mut self.keyed[usize::from(item.value % 2)];
        let rank = *key;
        *key = key.wrapping_add(1);
        if item.hops == 0 {
            self.ended = self.ended.wrapping_add(1);
            return;
        }
        let next = Item { value: item.value, hops: item.hops - 1, rank };
        match self.backlog.get_mut(usize::from(self.waiting)) {
            Some(slot) => {
                *slot = next;
                self.waiting += 1;
            }
            None => self.overflow = self.overflow.wrapping_add(1),
        }
    }

    fn on_internal(&mut self, _step: &()) -> Result<(), Refusal> {
        Err(Refusal("the stream application has no internal steps".into()))
    }
}

impl Spec for Stream {
    const NAME: &'static str = "stream";
    const CONSERVES: bool = true;
    const MAX_TOKENS: u32 = BACKLOG as u32;
    const MAX_TOTAL_TOKENS: u32 = BACKLOG as u32;

    fn initial(p: ProcessId, tokens: u32) -> Self {
        Stream::new(p, u8::try_from(tokens).unwrap_or(u8::MAX))
    }

    /// The oldest waiting item, passed on; then the source's next input.
    fn moves(&self, me: ProcessId, topology: &Topology, _setup: &Setup, out: &mut dyn FnMut(Move<Item, ()>)) {
        let outgoing = topology.outgoing(me);
        if outgoing.is_empty() {
            return;
        }
        if self.waiting > 0 {
            let item = self.backlog[0];
            out(Move::Send { channel: outgoing[route(&item, outgoing.len())], msg: item });
        }
        if let Some(item) = self.next_item(topology) {
            out(Move::Send { channel: outgoing[usize::from(self.position) % outgoing.len()], msg: item });
        }
    }

    /// Nothing: the inputs and the hops bound the run.
    fn cost(_mv: &Move<Item, ()>) -> u8 {
        0
    }

    /// Items: those still to emit, those waiting, and those that ended here.
    fn held(&self) -> u64 {
        u64::from(self.inputs.saturating_sub(self.position)) + u64::from(self.waiting) + u64::from(self.ended)
    }

    /// One item.
    fn carried(_item: &Item) -> u64 {
        1
    }

    fn describe_state(&self) -> String {
        let mut s = format!("{} in, sum {}", self.count, self.sum);
        if self.count > 0 {
            s += &format!(", digest {:08x}", self.digest);
        }
        if self.inputs > 0 {
            s += &format!(", input {}/{}", self.position, self.inputs);
        }
        if self.waiting > 0 {
            let items: Vec<String> =
                self.backlog[..usize::from(self.waiting)].iter().map(|i| i.value.to_string()).collect();
            s += &format!(", waiting {}", items.join(" "));
        }
        if self.overflow > 0 {
            s += &format!(", {} dropped at a full backlog", self.overflow);
        }
        s
    }

    fn describe(item: &Item) -> String {
        format!("item {} (rank {}, {} hops left)", item.value, item.rank, item.hops)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apps::spec::quiet_outcomes;

    #[test]
    fn items_go_round_a_ring_back_to_their_source() {
        let t = Topology::ring(3).unwrap();
        let initial = vec![Stream::new(ProcessId(0), 2), Stream::new(ProcessId(1), 0), Stream::new(ProcessId(2), 0)];
        let ends = quiet_outcomes(&t, initial, &[0, 0, 0], &Setup::default(), false, 1000).unwrap();
        assert_eq!(ends.len(), 1, "{ends:?}");
        let end = ends.into_iter().next().unwrap();
        // Items 1 and 2 from house 0: every house takes both in, house 0 last.
        assert_eq!(end[0].position, 2);
        assert_eq!((end[0].count, end[1].count, end[2].count), (2, 2, 2));
        assert_eq!((end[0].sum, end[1].sum, end[2].sum), (3, 3, 3));
        assert!(end.iter().all(|h| h.waiting == 0 && h.overflow == 0));
        // Item 2 ended at house 0; house 0 still holds none to emit: the ledger is the 2 inputs.
        assert_eq!((end[0].ended, end.iter().map(Spec::held).sum::<u64>()), (2, 2));
    }

    /// House 2 with `items` taken in, each `(from, value)`.
    fn taken(items: &[(u16, u8)]) -> Stream {
        let mut s = Stream::new(ProcessId(2), 0);
        for &(from, value) in items {
            s.on_message(ProcessId(from), &Item { value, hops: 1, rank: 0 });
        }
        s
    }

    #[test]
    fn the_state_sees_order_origin_loss_and_duplication() {
        let right = taken(&[(0, 1), (0, 3), (1, 9)]);
        for (what, wrong) in [
            ("reordered", taken(&[(0, 3), (0, 1), (1, 9)])),
            ("misrouted", taken(&[(1, 1), (0, 3), (1, 9)])),
            ("lost and duplicated", taken(&[(0, 1), (0, 1), (1, 11)])),
        ] {
            assert_ne!(right.digest, wrong.digest, "{what}");
            assert_eq!((right.count, right.held()), (wrong.count, wrong.held()), "{what}: the ledger cannot tell");
        }
        // Interleaving two inputs is a different order too: both are failure-free ends.
        assert_ne!(right.digest, taken(&[(1, 9), (0, 1), (0, 3)]).digest);
    }

    #[test]
    fn a_keyed_operator_ranks_items_by_key_in_arrival_order_and_routes_by_rank() {
        let s = taken(&[(0, 1), (0, 2), (1, 3), (1, 5)]);
        let ranks: Vec<(u8, u8)> = s.backlog[..4].iter().map(|i| (i.value, i.rank)).collect();
        assert_eq!(ranks, [(1, 0), (2, 0), (3, 1), (5, 2)]);
        assert_eq!((s.keyed, s.held()), ([1, 3], 4));
        let early = taken(&[(1, 3), (0, 1)]);
        assert_eq!(early.backlog[1], Item { value: 1, hops: 0, rank: 1 });
        // Another rank, another way out.
        let (a, b) = (Item { value: 1, hops: 0, rank: 0 }, Item { value: 1, hops: 0, rank: 1 });
        assert_ne!(route(&a, 2), route(&b, 2));
    }

    #[test]
    fn items_are_conserved_from_input_to_end() {
        let t = Topology::ring(2).unwrap();
        let mut s = Stream::new(ProcessId(0), 2);
        assert_eq!(s.held(), 2);
        let item = s.next_item(&t).unwrap();
        s.on_send(ProcessId(1), &item).unwrap();
        assert_eq!((s.held(), Stream::carried(&item)), (1, 1));
        let mut r = Stream::new(ProcessId(1), 0);
        r.on_message(ProcessId(0), &item);
        assert_eq!((r.held(), r.waiting, r.ended), (1, 1, 0));
        r.on_message(ProcessId(0), &Item { value: 2, hops: 0, rank: 0 });
        assert_eq!((r.held(), r.ended), (2, 1));
        assert!(r.describe_state().contains("digest"));
    }

    #[test]
    fn sends_are_refused_unless_they_are_the_next_item() {
        let t = Topology::ring(3).unwrap();
        let mut s = Stream::new(ProcessId(0), 1);
        let item = s.next_item(&t).unwrap();
        assert!(s.on_send(ProcessId(1), &Item { value: 9, hops: 1, rank: 0 }).is_err());
        s.on_send(ProcessId(1), &item).unwrap();
        assert!(s.on_send(ProcessId(1), &item).is_err());
        assert!(s.on_internal(&()).is_err());
    }

    #[test]
    fn a_full_backlog_counts_what_it_cannot_hold() {
        let mut s = Stream::new(ProcessId(1), 0);
        for v in 0..=BACKLOG as u8 {
            s.on_message(ProcessId(0), &Item { value: v + 1, hops: 1, rank: 0 });
        }
        assert_eq!((s.waiting, s.overflow, s.count), (BACKLOG as u8, 1, BACKLOG as u8 + 1));
        assert!(s.describe_state().contains("1 dropped"));
        // The oldest leaves first.
        s.on_send(ProcessId(2), &Item { value: 1, hops: 0, rank: 0 }).unwrap();
        assert_eq!(s.backlog[0].value, 2);
        assert_eq!(s.backlog[BACKLOG - 1], Item::default());
    }
}
