//! Full mode's ghost data: flags, counters and short lists of carts, updated on every step,
//! from which every clause of the theorem can be judged on the current state alone (no
//! per-path history).
//!
//! Each item mirrors a quantity of the trace checker's literal replay (see
//! `chandy_lamport::verify`), so full and literal modes reach the same verdicts. For snapshot
//! `s`, a cart is *pre-cut* when sent before its sender recorded `s` (its tag bit `s` is clear);
//! a receipt is pre-cut when its receiver had not recorded `s`; a theft counts with its cart.
//! Data start when `s` is first initiated (before that every cart is pre-cut and nothing needs
//! remembering), and the replay lists are dropped once `s` completes.

use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

use super::chans::Chans;
use super::serial::{small, Flat};
use super::stamp::Stamp;

/// A short list per channel, stored flat (one run per channel, in channel order), so that equal
/// contents are equal values whatever order the channels were filled in. Serialized as its two
/// buffers; read back only if the lengths add up to the items.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(
    try_from = "Flat<[u8; 6], [Stamp<M>; 2]>",
    bound(serialize = "M: Serialize", deserialize = "M: Deserialize<'de>")
)]
pub struct Lists<M> {
    #[serde(with = "small")]
    lens: SmallVec<[u8; 6]>,
    #[serde(with = "small")]
    items: SmallVec<[Stamp<M>; 2]>,
}

impl<M> TryFrom<Flat<[u8; 6], [Stamp<M>; 2]>> for Lists<M> {
    type Error = &'static str;
    fn try_from(flat: Flat<[u8; 6], [Stamp<M>; 2]>) -> Result<Self, &'static str> {
        let (lens, items) = flat.checked("the ghost lists' lengths do not add up to their items")?;
        Ok(Lists { lens, items })
    }
}

impl<M> Default for Lists<M> {
    fn default() -> Self {
        Lists { lens: SmallVec::new(), items: SmallVec::new() }
    }
}

impl<M: Copy + Eq> Lists<M> {
    /// `n` empty lists.
    pub fn new(n: usize) -> Self {
        Lists { lens: SmallVec::from_elem(0, n), items: SmallVec::new() }
    }

    fn start(&self, c: usize) -> usize {
        self.lens[..c].iter().map(|&l| usize::from(l)).sum()
    }

    /// The list of channel `c`.
    pub fn get(&self, c: usize) -> &[Stamp<M>] {
        let start = self.start(c);
        &self.items[start..start + usize::from(self.lens[c])]
    }

    /// Appends `cart` to the list of channel `c`.
    pub fn push(&mut self, c: usize, cart: Stamp<M>) {
        let end = self.start(c) + usize::from(self.lens[c]);
        self.items.insert(end, cart);
        self.lens[c] += 1;
    }

    /// Removes `cart` from the list of channel `c`; whether it was there.
    pub fn remove(&mut self, c: usize, cart: &Stamp<M>) -> bool {
        let start = self.start(c);
        match self.get(c).iter().position(|x| x == cart) {
            Some(i) => {
                self.items.remove(start + i);
                self.lens[c] -= 1;
                true
            }
            None => false,
        }
    }

    /// Replaces the list of channel `c`.
    pub fn set(&mut self, c: usize, carts: impl IntoIterator<Item = Stamp<M>>) {
        let start = self.start(c);
        let end = start + usize::from(self.lens[c]);
        let new: SmallVec<[Stamp<M>; 4]> = carts.into_iter().collect();
        self.items.drain(start..end);
        self.lens[c] = new.len() as u8;
        for (k, cart) in new.into_iter().enumerate() {
            self.items.insert(start + k, cart);
        }
    }

    /// The same lists with channel `c` moved to `map[c]` and each message relabelled.
    pub fn permuted(&self, map: &[usize], relabel: &dyn Fn(&Stamp<M>) -> Stamp<M>) -> Self {
        let mut out = Lists::new(self.lens.len());
        for (c, &to) in map.iter().enumerate() {
            out.set(to, self.get(c).iter().map(relabel));
        }
        out
    }
}

/// Per-snapshot ghost data.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SnapGhost<M> {
    /// The snapshot has been initiated somewhere.
    pub active: bool,
    /// (a) A cart sent after its sender recorded was received before its receiver recorded.
    pub crossed: bool,
    /// (c) A pre-cut receipt took a cart that was not the first cart of its channel.
    pub prefifo: bool,
    /// (c), (d) Some house recorded a state other than the one its pre-cut events produced.
    pub state_bad: bool,
    /// (d) Set at completion: replaying the post-cut steps from the recorded state fails.
    pub end_bad: bool,
    /// The stable predicates at S_begin (when first initiated), bit `i` for predicate `i`.
    pub y_begin: u8,
    /// The stable predicates at S_end (when the last record closed).
    pub y_end: u8,
    /// The conserved quantity stolen with pre-cut messages (the theft counts as before the
    /// cut).
    pub stolen_pre: u8,
    /// (b), (c) Per channel, from its receiver's recording on: the carts in flight at the cut —
    /// pre-cut sends neither received before the receiver recorded nor stolen — in sending
    /// order. A correct record equals it, cart for cart.
    pub expected: Lists<M>,
    /// (d) Per channel: post-cut sends before completion, not stolen.
    pub post_sent: Lists<M>,
    /// (d) Per channel: post-cut receipts before completion, in order.
    pub post_received: Lists<M>,
    /// Budget of each house when it recorded (trade-over at S* needs it).
    pub rec_budget: Vec<u8>,
}

impl<M> Default for SnapGhost<M> {
    fn default() -> Self {
        SnapGhost {
            active: false,
            crossed: false,
            prefifo: false,
            state_bad: false,
            end_bad: false,
            y_begin: 0,
            y_end: 0,
            stolen_pre: 0,
            expected: Lists::default(),
            post_sent: Lists::default(),
            post_received: Lists::default(),
            rec_budget: Vec::new(),
        }
    }
}

/// Ghost data of every snapshot id.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Ghost<M> {
    /// Indexed by snapshot id.
    pub snaps: Vec<SnapGhost<M>>,
    /// Unaligned barriers: the tags of the carts waiting in output buffers, `(channel, tag)`
    /// oldest first per channel (a cart's tag is fixed when it is sent into the buffer).
    #[serde(with = "small")]
    pub buffered: SmallVec<[(u8, u32); 2]>,
}

impl<M: Copy + Eq> Ghost<M> {
    /// Ghost data for `snapshots` ids.
    pub fn new(snapshots: usize) -> Self {
        Ghost { snaps: (0..snapshots).map(|_| SnapGhost::default()).collect(), buffered: SmallVec::new() }
    }

    /// Unaligned barriers: a cart with `tag` went into the output buffer of `channel`.
    pub fn on_buffer(&mut self, channel: usize, tag: u32) {
        self.buffered.push((channel as u8, tag));
    }

    /// Unaligned barriers: the oldest cart buffered for `channel` leaves on it; its tag.
    pub fn on_transmit(&mut self, channel: usize) -> Option<u32> {
        let at = self.buffered.iter().position(|&(c, _)| usize::from(c) == channel)?;
        Some(self.buffered.remove(at).1)
    }

    /// The tags of the carts buffered for `channel`, oldest first.
    pub fn buffered_tags(&self, channel: usize) -> impl Iterator<Item = u32> + '_ {
        self.buffered.iter().filter(move |&&(c, _)| usize::from(c) == channel).map(|&(_, t)| t)
    }

    /// A crash: the ghost data of every snapshot but `kept` (the checkpoint a recovery restores,
    /// already judged, whose data are frozen) is forgotten, with the buffers' tags (the buffers
    /// start empty).
    pub fn on_crash(&mut self, kept: Option<usize>) {
        for (s, g) in self.snaps.iter_mut().enumerate() {
            if Some(s) == kept {
                // Judged already: frozen (what happens after the crash is not its business).
                g.active = false;
            } else {
                *g = SnapGhost::default();
            }
        }
        self.buffered.clear();
    }

    /// Before the first initiation of `s`, in a state with channels `chans`, `houses` houses and
    /// `accounted` of the conserved quantity (see `StateData::accounted`), where the stable
    /// predicates are `y`.
    pub fn activate(&mut self, s: usize, chans: &Chans<M>, houses: usize, accounted: u64, initial_total: u64, y: u8) {
        let g = &mut self.snaps[s];
        if g.active {
            return;
        }
        g.active = true;
        let n = chans.len();
        g.expected = Lists::new(n);
        g.post_sent = Lists::new(n);
        g.post_received = Lists::new(n);
        g.rec_budget = vec![0; houses];
        // Everything stolen so far was stolen before any cut.
        g.stolen_pre = initial_total.saturating_sub(accounted).min(255) as u8;
        g.y_begin = y;
    }

    fn active(&mut self) -> impl Iterator<Item = (u32, &mut SnapGhost<M>)> {
        self.snaps.iter_mut().enumerate().filter(|(_, g)| g.active).map(|(s, g)| (1 << s, g))
    }

    /// `cart` with `tag` sent on `channel`, whose receiver had recorded the snapshots in
    /// `receiver` (bit set); `done` marks snapshots already complete.
    pub fn on_send(&mut self, channel: usize, cart: Stamp<M>, tag: u32, receiver: u32, done: u32) {
        for (bit, g) in self.active() {
            if tag & bit == 0 {
                if receiver & bit != 0 {
                    g.expected.push(channel, cart);
                }
            } else if done & bit == 0 {
                g.post_sent.push(channel, cart);
            }
        }
    }

    /// `cart` with `tag` at `index` of `channel` (of `chans`) is about to be received by a house
    /// that had recorded the snapshots in `recorded` (bit set); `done` marks snapshots already
    /// complete.
    #[allow(clippy::too_many_arguments)]
    pub fn on_receive(
        &mut self,
        chans: &Chans<M>,
        channel: usize,
        index: usize,
        cart: Stamp<M>,
        tag: u32,
        recorded: u32,
        done: u32,
    ) {
        let ahead = chans.get(channel)[..index].iter().any(|p| p.is_app());
        for (bit, g) in self.active() {
            if recorded & bit == 0 {
                // Pre-cut receipt.
                g.crossed |= tag & bit != 0;
                g.prefifo |= ahead;
            } else if done & bit == 0 {
                g.post_received.push(channel, cart);
            }
        }
    }

    /// `cart` with `tag`, carrying `amount` of the conserved quantity, stolen from `channel`.
    pub fn on_theft(&mut self, channel: usize, cart: Stamp<M>, amount: u64, tag: u32, done: u32) {
        for (bit, g) in self.active() {
            if tag & bit == 0 {
                g.expected.remove(channel, &cart);
                g.stolen_pre = g.stolen_pre.saturating_add(amount.min(255) as u8);
            } else if done & bit == 0 {
                g.post_sent.remove(channel, &cart);
            }
        }
    }

    /// A house recorded snapshot `s` with `budget` actions left; `faithful` tells whether the
    /// recorded state is its state at that moment (the one its pre-cut events produced). The
    /// carts pre-cut-sent and still in each of its incoming `channels` (in `chans`, after the
    /// step: on the road, then, with unaligned barriers, in the sender's output buffer as
    /// `buffered` gives them) start their expected records.
    #[allow(clippy::too_many_arguments)]
    pub fn on_record(
        &mut self,
        s: usize,
        house: usize,
        budget: u8,
        faithful: bool,
        channels: &[usize],
        chans: &Chans<M>,
        buffered: &dyn Fn(usize) -> Vec<Stamp<M>>,
    ) {
        let tags: Vec<Vec<u32>> = channels.iter().map(|&c| self.buffered_tags(c).collect()).collect();
        let Some(g) = self.snaps.get_mut(s).filter(|g| g.active) else { return };
        g.rec_budget[house] = budget;
        g.state_bad |= !faithful;
        let bit = 1 << s;
        for (k, &c) in channels.iter().enumerate() {
            let on_road = chans.get(c).iter().filter_map(|p| match p.msg {
                chandy_lamport::Message::App(cart) if p.tag & bit == 0 => Some(cart),
                _ => None,
            });
            let in_buffer = buffered(c).into_iter().zip(&tags[k]).filter(|(_, &t)| t & bit == 0).map(|(cart, _)| cart);
            g.expected.set(c, on_road.chain(in_buffer));
        }
    }

    /// Snapshot `s` just completed with records `records` (per channel), with channels `chans`, where the
    /// stable predicates are `y`; judges (d) by replaying the post-cut receipts on the records
    /// followed by the post-cut sends, which must leave each channel as it really is now (on the
    /// road, then in its sender's output buffer, as `buffered` gives it).
    pub fn on_complete(
        &mut self,
        s: usize,
        chans: &Chans<M>,
        records: &[Vec<Stamp<M>>],
        y: u8,
        buffered: &dyn Fn(usize) -> Vec<Stamp<M>>,
    ) {
        let g = &mut self.snaps[s];
        g.end_bad = records.iter().enumerate().any(|(c, record)| {
            let mut queue: std::collections::VecDeque<Stamp<M>> =
                record.iter().chain(g.post_sent.get(c)).copied().collect();
            for cart in g.post_received.get(c) {
                if queue.front() != Some(cart) {
                    return true;
                }
                queue.pop_front();
            }
            let actual = chans.get(c).iter().filter_map(|p| match p.msg {
                chandy_lamport::Message::App(cart) => Some(cart),
                chandy_lamport::Message::Marker(_) | chandy_lamport::Message::Cancel(_) => None,
            });
            !queue.into_iter().eq(actual.chain(buffered(c)))
        });
        g.y_end = y;
        // No longer needed: forget them so that states differing only there merge.
        let n = chans.len();
        g.post_sent = Lists::new(n);
        g.post_received = Lists::new(n);
    }
}
