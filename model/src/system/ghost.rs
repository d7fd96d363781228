//! Full mode's ghost data: flags, counters and short lists of messages, updated on every step,
//! from which every clause of the theorem can be judged on the current state alone (no
//! per-path history).
//!
//! Each item mirrors a quantity of the trace checker's literal replay (see
//! `chandy_lamport::verify`), so full and literal modes reach the same verdicts. For snapshot
//! `s`, a message is *pre-cut* when sent before its sender recorded `s` (its tag bit `s` is clear);
//! a receipt is pre-cut when its receiver had not recorded `s`; a theft counts with its message.
//! Data start when `s` is first initiated (before that every message is pre-cut and nothing needs
//! remembering), and the replay lists are dropped once `s` completes.

use chandy_lamport::protocol::clone_small;
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

use super::chans::Chans;
use super::serial::{small, Flat};
use super::stamp::Stamp;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// A short list per channel, stored flat (one run per channel, in channel order), so that equal
/// contents are equal values whatever order the channels were filled in. Serialized as its two
/// buffers; read back only if the lengths add up to the items.
#[derive(Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
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

/// Copied, not cloned item by item: a step clones a state's ghost lists (a dozen per snapshot)
/// with the state.
impl<M: Copy> Clone for Lists<M> {
    fn clone(&self) -> Self {
        Lists { lens: SmallVec::from_slice(&self.lens), items: SmallVec::from_slice(&self.items) }
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

    /// Appends `message` to the list of channel `c`.
    pub fn push(&mut self, c: usize, message: Stamp<M>) {
        let end = self.start(c) + usize::from(self.lens[c]);
        self.items.insert(end, message);
        self.lens[c] += 1;
    }

    /// Removes `message` from the list of channel `c`; whether it was there.
    pub fn remove(&mut self, c: usize, message: &Stamp<M>) -> bool {
        let start = self.start(c);
        match self.get(c).iter().position(|x| x == message) {
            Some(i) => {
                self.items.remove(start + i);
                self.lens[c] -= 1;
                true
            }
            None => false,
        }
    }

    /// Replaces the list of channel `c`.
    pub fn set(&mut self, c: usize, messages: impl IntoIterator<Item = Stamp<M>>) {
        let start = self.start(c);
        let end = start + usize::from(self.lens[c]);
        let new: SmallVec<[Stamp<M>; 4]> = messages.into_iter().collect();
        self.items.drain(start..end);
        self.lens[c] = new.len() as u8;
        for (k, message) in new.into_iter().enumerate() {
            self.items.insert(start + k, message);
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

/// The recording budgets held inline: as many as a state holds processes (`state::MAX_PROCESSES`, which
/// asserts it).
pub const INLINE_PROCESSES: usize = 16;

/// Per-snapshot ghost data.
#[derive(Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SnapGhost<M> {
    /// The snapshot has been initiated somewhere.
    pub active: bool,
    /// (a) A message sent after its sender recorded was received before its receiver recorded.
    pub crossed: bool,
    /// (c) A pre-cut receipt took a message that was not the first message of its channel.
    pub prefifo: bool,
    /// (c), (d) Some process recorded a state other than the one its pre-cut events produced.
    pub state_bad: bool,
    /// (d) Set at completion: replaying the post-cut steps from the recorded state fails.
    pub end_bad: bool,
    /// Without a checkpoint coordinator: the snapshot is complete at every process (set when it
    /// completes, and it stays so). With one, which discards parts, always false.
    pub done: bool,
    /// The stable predicates at S_begin (when first initiated), bit `i` for predicate `i`.
    pub y_begin: u8,
    /// The stable predicates at S_end (when the last record closed).
    pub y_end: u8,
    /// The conserved quantity stolen with pre-cut messages (the theft counts as before the
    /// cut).
    pub stolen_pre: u8,
    /// (b), (c) Per channel, from its receiver's recording on: the messages in flight at the cut —
    /// pre-cut sends neither received before the receiver recorded nor stolen — in sending
    /// order. A correct record equals it, message for message.
    pub expected: Lists<M>,
    /// (d) Per channel: post-cut sends before completion, not stolen.
    pub post_sent: Lists<M>,
    /// (d) Per channel: post-cut receipts before completion, in order.
    pub post_received: Lists<M>,
    /// Budget of each process when it recorded (trade-over at S* needs it).
    #[serde(with = "small")]
    pub rec_budget: SmallVec<[u8; INLINE_PROCESSES]>,
}

/// Copied field by field (the lists copied whole, the budgets inline): no allocation.
impl<M: Copy> Clone for SnapGhost<M> {
    fn clone(&self) -> Self {
        SnapGhost {
            expected: self.expected.clone(),
            post_sent: self.post_sent.clone(),
            post_received: self.post_received.clone(),
            rec_budget: SmallVec::from_slice(&self.rec_budget),
            ..*self
        }
    }
}

impl<M> Default for SnapGhost<M> {
    fn default() -> Self {
        SnapGhost {
            active: false,
            crossed: false,
            prefifo: false,
            state_bad: false,
            end_bad: false,
            done: false,
            y_begin: 0,
            y_end: 0,
            stolen_pre: 0,
            expected: Lists::default(),
            post_sent: Lists::default(),
            post_received: Lists::default(),
            rec_budget: SmallVec::new(),
        }
    }
}

/// One snapshot's ghost data, shared by every state whose step did not change it, with its hash
/// computed once per change (as a process is, see `state::Shared`): a step clones a pointer, and
/// hashing a state's ghost hashes one word per snapshot.
pub struct Snap<M>(Arc<(u64, SnapGhost<M>)>);

fn word_of<M: Hash>(g: &SnapGhost<M>) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    (0x9216_d5d9_8979_fb1bu64, g).hash(&mut h);
    super::mix::mix(h.finish())
}

impl<M: Copy + Hash> Snap<M> {
    /// Shares `g`.
    pub fn new(g: SnapGhost<M>) -> Self {
        Snap(Arc::new((word_of(&g), g)))
    }

    /// Changes the data (copying them first if another state shares them) and rehashes them.
    pub fn edit<R>(&mut self, f: impl FnOnce(&mut SnapGhost<M>) -> R) -> R {
        let (word, g) = Arc::make_mut(&mut self.0);
        let r = f(g);
        *word = word_of(g);
        r
    }
}

impl<M> Clone for Snap<M> {
    fn clone(&self) -> Self {
        Snap(Arc::clone(&self.0))
    }
}

impl<M> std::ops::Deref for Snap<M> {
    type Target = SnapGhost<M>;
    fn deref(&self) -> &SnapGhost<M> {
        &self.0 .1
    }
}

impl<M: PartialEq> PartialEq for Snap<M> {
    fn eq(&self, other: &Self) -> bool {
        self.0 .0 == other.0 .0 && (Arc::ptr_eq(&self.0, &other.0) || self.0 .1 == other.0 .1)
    }
}

impl<M: Eq> Eq for Snap<M> {}

impl<M: std::fmt::Debug> std::fmt::Debug for Snap<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0 .1.fmt(f)
    }
}

/// Serialized as the data; read back unshared, its hash recomputed.
impl<M: Serialize> Serialize for Snap<M> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0 .1.serialize(s)
    }
}

impl<'de, M: Copy + Hash + Deserialize<'de>> Deserialize<'de> for Snap<M> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        SnapGhost::deserialize(d).map(Snap::new)
    }
}

/// Ghost data of every snapshot id.
#[derive(Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(bound(serialize = "M: Serialize", deserialize = "M: Copy + Hash + Deserialize<'de>"))]
pub struct Ghost<M> {
    /// Indexed by snapshot id (two inline: most runs have one or two).
    #[serde(with = "small")]
    pub snaps: SmallVec<[Snap<M>; 2]>,
    /// Unaligned barriers: the tags of the messages waiting in output buffers, `(channel, tag)`
    /// oldest first per channel (a message's tag is fixed when it is sent into the buffer).
    #[serde(with = "small")]
    pub buffered: SmallVec<[(u8, u32); 2]>,
}

/// Copied by pushing each snapshot's pointer and copying the buffers' tags whole (the derived
/// clone goes through the generic `collect`: a third of the cost of copying a full-mode state).
impl<M> Clone for Ghost<M> {
    fn clone(&self) -> Self {
        Ghost { snaps: clone_small(&self.snaps), buffered: SmallVec::from_slice(&self.buffered) }
    }
}

/// A ghost hashes as one word per snapshot, in snapshot order, and the buffers' tags.
impl<M> Hash for Ghost<M> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        for g in &self.snaps {
            state.write_u64(g.0 .0);
        }
        self.buffered.hash(state);
    }
}

impl<M: Copy + Hash> Ghost<M> {
    /// Ghost data for `snapshots` ids.
    pub fn new(snapshots: usize) -> Self {
        Ghost { snaps: (0..snapshots).map(|_| Snap::new(SnapGhost::default())).collect(), buffered: SmallVec::new() }
    }
}

impl<M: Copy + Eq + Hash> Ghost<M> {
    /// Unaligned barriers: a message with `tag` went into the output buffer of `channel`.
    pub fn on_buffer(&mut self, channel: usize, tag: u32) {
        self.buffered.push((channel as u8, tag));
    }

    /// Unaligned barriers: the oldest message buffered for `channel` leaves on it; its tag.
    pub fn on_transmit(&mut self, channel: usize) -> Option<u32> {
        let at = self.buffered.iter().position(|&(c, _)| usize::from(c) == channel)?;
        Some(self.buffered.remove(at).1)
    }

    /// The tags of the messages buffered for `channel`, oldest first.
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
                if g.active {
                    g.edit(|g| g.active = false);
                }
            } else if **g != SnapGhost::default() {
                *g = Snap::new(SnapGhost::default());
            }
        }
        self.buffered.clear();
    }

    /// Before the first initiation of `s`, in a state with channels `chans`, `processes` processes and
    /// `accounted` of the conserved quantity (see `StateData::accounted`), where the stable
    /// predicates are `y`.
    pub fn activate(
        &mut self,
        s: usize,
        chans: &Chans<M>,
        processes: usize,
        accounted: u64,
        initial_total: u64,
        y: u8,
    ) {
        if self.snaps[s].active {
            return;
        }
        self.snaps[s].edit(|g| {
            g.active = true;
            let n = chans.len();
            g.expected = Lists::new(n);
            g.post_sent = Lists::new(n);
            g.post_received = Lists::new(n);
            g.rec_budget = SmallVec::from_elem(0, processes);
            // Everything stolen so far was stolen before any cut.
            g.stolen_pre = initial_total.saturating_sub(accounted).min(255) as u8;
            g.y_begin = y;
        });
    }

    /// The active snapshots' bits and data. Each is changed only where a step changes it (with
    /// [`Snap::edit`], which copies data other states share).
    fn active(&mut self) -> impl Iterator<Item = (u32, &mut Snap<M>)> {
        self.snaps.iter_mut().enumerate().filter(|(_, g)| g.active).map(|(s, g)| (1 << s, g))
    }

    /// `message` with `tag` sent on `channel`, whose receiver had recorded the snapshots in
    /// `receiver` (bit set); `done` marks snapshots already complete.
    pub fn on_send(&mut self, channel: usize, message: Stamp<M>, tag: u32, receiver: u32, done: u32) {
        for (bit, g) in self.active() {
            if tag & bit == 0 {
                if receiver & bit != 0 {
                    g.edit(|g| g.expected.push(channel, message));
                }
            } else if done & bit == 0 {
                g.edit(|g| g.post_sent.push(channel, message));
            }
        }
    }

    /// `message` with `tag` at `index` of `channel` (of `chans`) is about to be received by a process
    /// that had recorded the snapshots in `recorded` (bit set); `done` marks snapshots already
    /// complete.
    #[allow(clippy::too_many_arguments)]
    pub fn on_receive(
        &mut self,
        chans: &Chans<M>,
        channel: usize,
        index: usize,
        message: Stamp<M>,
        tag: u32,
        recorded: u32,
        done: u32,
    ) {
        let ahead = chans.get(channel)[..index].iter().any(|p| p.is_app());
        for (bit, g) in self.active() {
            if recorded & bit == 0 {
                // Pre-cut receipt.
                let crossed = tag & bit != 0;
                if crossed && !g.crossed || ahead && !g.prefifo {
                    g.edit(|g| {
                        g.crossed |= crossed;
                        g.prefifo |= ahead;
                    });
                }
            } else if done & bit == 0 {
                g.edit(|g| g.post_received.push(channel, message));
            }
        }
    }

    /// `message` with `tag`, carrying `amount` of the conserved quantity, stolen from `channel`.
    pub fn on_theft(&mut self, channel: usize, message: Stamp<M>, amount: u64, tag: u32, done: u32) {
        for (bit, g) in self.active() {
            if tag & bit == 0 {
                g.edit(|g| {
                    g.expected.remove(channel, &message);
                    g.stolen_pre = g.stolen_pre.saturating_add(amount.min(255) as u8);
                });
            } else if done & bit == 0 {
                g.edit(|g| g.post_sent.remove(channel, &message));
            }
        }
    }

    /// A process recorded snapshot `s` with `budget` actions left; `faithful` tells whether the
    /// recorded state is its state at that moment (the one its pre-cut events produced). The
    /// messages pre-cut-sent and still in each of its incoming `channels` (in `chans`, after the
    /// step: on the road, then, with unaligned barriers, in the sender's output buffer as
    /// `buffered` gives them) start their expected records.
    #[allow(clippy::too_many_arguments)]
    pub fn on_record(
        &mut self,
        s: usize,
        process: usize,
        budget: u8,
        faithful: bool,
        channels: &[usize],
        chans: &Chans<M>,
        buffered: &dyn Fn(usize) -> Vec<Stamp<M>>,
    ) {
        let tags: Vec<Vec<u32>> = channels.iter().map(|&c| self.buffered_tags(c).collect()).collect();
        let Some(g) = self.snaps.get_mut(s).filter(|g| g.active) else { return };
        g.edit(|g| {
            g.rec_budget[process] = budget;
            g.state_bad |= !faithful;
            let bit = 1 << s;
            for (k, &c) in channels.iter().enumerate() {
                let on_road = chans.get(c).iter().filter_map(|p| match p.msg {
                    chandy_lamport::Message::App(message) if p.tag & bit == 0 => Some(message),
                    _ => None,
                });
                let in_buffer =
                    buffered(c).into_iter().zip(&tags[k]).filter(|(_, &t)| t & bit == 0).map(|(message, _)| message);
                g.expected.set(c, on_road.chain(in_buffer));
            }
        });
    }

    /// Snapshot `s` just completed with records `records` (per channel), with channels `chans`,
    /// where the stable predicates are `y` (`stays`: no coordinator will discard its parts, and
    /// it is flagged done); judges (d) by replaying the post-cut receipts on the records followed
    /// by the post-cut sends, which must leave each channel as it really is now (on the road,
    /// then in its sender's output buffer, as `buffered` gives it).
    pub fn on_complete(
        &mut self,
        s: usize,
        chans: &Chans<M>,
        records: &[Vec<Stamp<M>>],
        y: u8,
        stays: bool,
        buffered: &dyn Fn(usize) -> Vec<Stamp<M>>,
    ) {
        self.snaps[s].edit(|g| {
            g.done = stays;
            g.end_bad = records.iter().enumerate().any(|(c, record)| {
                // The record, then the post-cut sends: the post-cut receipts take its head.
                let mut queue = record.iter().chain(g.post_sent.get(c)).copied();
                if !g.post_received.get(c).iter().all(|message| queue.next() == Some(*message)) {
                    return true;
                }
                let actual = chans.get(c).iter().filter_map(|p| match p.msg {
                    chandy_lamport::Message::App(message) => Some(message),
                    chandy_lamport::Message::Marker(_) | chandy_lamport::Message::Cancel(_) => None,
                });
                !queue.eq(actual.chain(buffered(c)))
            });
            g.y_end = y;
            // No longer needed: forget them so that states differing only there merge.
            let n = chans.len();
            g.post_sent = Lists::new(n);
            g.post_received = Lists::new(n);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    fn message(seq: u8) -> Stamp<u32> {
        Stamp { seq, msg: 1 }
    }

    fn fingerprint(g: &Ghost<u32>) -> u64 {
        std::hash::BuildHasherDefault::<rustc_hash::FxHasher>::default().hash_one(g)
    }

    /// Snapshot 0 active on 2 channels between 2 processes.
    fn active() -> Ghost<u32> {
        let mut g = Ghost::new(2);
        g.activate(0, &Chans::new(2), 2, 4, 4, 0);
        g
    }

    /// A step that leaves a snapshot's data as they were leaves them shared with the state it
    /// came from; one that changes them copies them first, and the copy hashes differently.
    #[test]
    fn a_snapshots_data_are_copied_only_when_a_step_changes_them() {
        let before = active();
        let shared = |a: &Ghost<u32>, s: usize| std::ptr::eq::<SnapGhost<u32>>(&*a.snaps[s], &*before.snaps[s]);
        let mut g = before.clone();
        assert!(shared(&g, 0) && shared(&g, 1));
        // Sent after the sender recorded, snapshot 0 complete: nothing to remember.
        g.on_send(0, message(1), 1, 0, 1);
        // A receipt after the receiver recorded, snapshot 0 complete; an inactive snapshot 1.
        g.on_receive(&Chans::new(2), 0, 0, message(1), 0, 1, 1);
        assert!(shared(&g, 0) && shared(&g, 1));
        assert_eq!(fingerprint(&g), fingerprint(&before));

        // A pre-cut receipt of a post-cut message: crossed, copied.
        g.on_receive(&Chans::new(2), 0, 0, message(1), 1, 0, 0);
        assert!(g.snaps[0].crossed && !before.snaps[0].crossed);
        assert!(!shared(&g, 0) && shared(&g, 1));
        assert_ne!(fingerprint(&g), fingerprint(&before));
        // Crossed again: already so, the data stay the very same.
        let again = g.clone();
        g.on_receive(&Chans::new(2), 0, 0, message(1), 1, 0, 0);
        assert!(std::ptr::eq::<SnapGhost<u32>>(&*g.snaps[0], &*again.snaps[0]));

        // A post-cut send before completion is remembered, on a copy.
        let mut h = before.clone();
        h.on_send(1, message(2), 1, 0, 0);
        assert_eq!(h.snaps[0].post_sent.get(1), &[message(2)]);
        assert!(before.snaps[0].post_sent.get(1).is_empty() && !shared(&h, 0));
    }

    /// Equal data are equal and hash alike however they were reached; data that differ in one
    /// snapshot, or the same data under another snapshot id, do not.
    #[test]
    fn ghost_data_hash_by_content_and_place() {
        let mut a = active();
        a.on_send(1, message(2), 1, 0, 0);
        let mut b = Ghost::new(2);
        b.activate(0, &Chans::new(2), 2, 4, 4, 0);
        b.on_send(1, message(2), 1, 0, 0);
        assert!(!std::ptr::eq::<SnapGhost<u32>>(&*a.snaps[0], &*b.snaps[0]));
        assert_eq!(a, b);
        assert_eq!(fingerprint(&a), fingerprint(&b));

        b.on_send(1, message(3), 1, 0, 0);
        assert_ne!(a, b);
        assert_ne!(fingerprint(&a), fingerprint(&b));

        // Snapshot 1 active instead of 0: the same data in the other place.
        let mut c = Ghost::new(2);
        c.activate(1, &Chans::new(2), 2, 4, 4, 0);
        assert_ne!(fingerprint(&c), fingerprint(&active()));

        // Read back, the data hash as before.
        let bytes = serde_json::to_vec(&a).unwrap();
        let read: Ghost<u32> = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(read, a);
        assert_eq!(fingerprint(&read), fingerprint(&a));
    }
}
