//! Small collections sized for a model checker that clones process states millions of times:
//! a list that is almost always empty, a set of small indices, a set of snapshot ids.

use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

/// A list that is almost always empty: one pointer wide, on the heap only when used (and
/// `None` again when emptied, so equal lists are equal values).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[allow(clippy::box_collection)] // one word in every process state, instead of a Vec's three
pub(crate) struct Rare<T>(Option<Box<Vec<T>>>);

impl<T> Default for Rare<T> {
    fn default() -> Self {
        Rare(None)
    }
}

impl<T> Rare<T> {
    pub(crate) fn as_slice(&self) -> &[T] {
        self.0.as_deref().map_or(&[], Vec::as_slice)
    }

    pub(crate) fn vec_mut(&mut self) -> &mut Vec<T> {
        self.0.get_or_insert_with(Box::default)
    }

    pub(crate) fn take(&mut self) -> Vec<T> {
        self.0.take().map(|b| *b).unwrap_or_default()
    }

    /// Removes the item at `at` (`None` when there is none), emptying to `None`.
    pub(crate) fn remove(&mut self, at: usize) -> Option<T> {
        let list = self.0.as_mut().filter(|l| at < l.len())?;
        let item = list.remove(at);
        if list.is_empty() {
            self.0 = None;
        }
        Some(item)
    }
}

/// A set of small indices: one word inline, more on the heap only when needed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) struct Bits {
    pub(crate) low: u64,
    pub(crate) high: Rare<u64>,
}

impl Bits {
    pub(crate) fn get(&self, i: usize) -> bool {
        match i {
            0..64 => self.low & (1 << i) != 0,
            _ => self.high.as_slice().get(i / 64 - 1).is_some_and(|w| w & (1 << (i % 64)) != 0),
        }
    }

    pub(crate) fn set(&mut self, i: usize) {
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

    pub(crate) fn count(&self) -> usize {
        (self.low.count_ones() + self.high.as_slice().iter().map(|w| w.count_ones()).sum::<u32>()) as usize
    }

    /// Whether the set is exactly the indices below `n` (one comparison when they fit a word: a
    /// model checker asks this of every process at every step).
    pub(crate) fn is_first(&self, n: usize) -> bool {
        match (n, self.high.as_slice().is_empty()) {
            (0..64, true) => self.low == (1 << n) - 1,
            (64, true) => self.low == u64::MAX,
            _ => (0..n).all(|i| self.get(i)) && self.count() == n,
        }
    }
}

/// Clones a short list by pushing (cheaper than the generic `collect` for 0–2 items, and a
/// model checker clones these millions of times).
pub fn clone_small<A: smallvec::Array>(v: &SmallVec<A>) -> SmallVec<A>
where
    A::Item: Clone,
{
    let mut out = SmallVec::new();
    for x in v {
        out.push(x.clone());
    }
    out
}

/// Serde for a `SmallVec` field (`#[serde(with = "...::small")]`), as a sequence: the
/// workspace's `smallvec` is built without its `serde` feature (whose reader reserves whatever
/// length the input claims). The model's state uses it too (`chandy_lamport::protocol::small`).
pub mod small {
    use serde::de::{Deserialize, Deserializer, SeqAccess, Visitor};
    use serde::ser::{Serialize, Serializer};
    use smallvec::{Array, SmallVec};

    /// Writes `v` as a sequence.
    pub fn serialize<A: Array, S: Serializer>(v: &SmallVec<A>, s: S) -> Result<S::Ok, S::Error>
    where
        A::Item: Serialize,
    {
        v.as_slice().serialize(s)
    }

    /// Reads a sequence into a `SmallVec` (on the heap only if it does not fit inline).
    pub fn deserialize<'de, A: Array, D: Deserializer<'de>>(d: D) -> Result<SmallVec<A>, D::Error>
    where
        A::Item: Deserialize<'de>,
    {
        struct Seq<A>(std::marker::PhantomData<A>);
        impl<'de, A: Array> Visitor<'de> for Seq<A>
        where
            A::Item: Deserialize<'de>,
        {
            type Value = SmallVec<A>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a sequence")
            }
            fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<SmallVec<A>, S::Error> {
                let mut out = SmallVec::new();
                while let Some(x) = seq.next_element()? {
                    out.push(x);
                }
                Ok(out)
            }
        }
        d.deserialize_seq(Seq(std::marker::PhantomData))
    }
}

/// Ids of snapshots completed and taken, as sorted disjoint inclusive ranges `(first, last)`
/// (compact when snapshots complete in order; empty, and free to clone, in a model that never
/// takes them). Inclusive, so that every id up to `u32::MAX` fits.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) struct IdSet(Rare<(u32, u32)>);

impl IdSet {
    pub(crate) fn contains(&self, id: u32) -> bool {
        self.0.as_slice().iter().any(|&(a, b)| a <= id && id <= b)
    }

    pub(crate) fn insert(&mut self, id: u32) {
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

#[cfg(test)]
mod tests {
    use super::*;

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

    /// `is_first(n)` holds exactly for the set {0, …, n−1}, within the inline word, at its
    /// edge and beyond it.
    #[test]
    fn bits_that_are_exactly_the_first_n() {
        let first = |n: usize| {
            let mut b = Bits::default();
            (0..n).for_each(|i| b.set(i));
            b
        };
        for n in [0usize, 1, 2, 5, 63, 64, 65, 100, 128, 129] {
            let b = first(n);
            assert!(b.is_first(n), "{n}");
            assert!(!b.is_first(n + 1), "{n} of {}", n + 1);
            if n > 0 {
                assert!(!b.is_first(n - 1), "{n} of {}", n - 1);
                for gap in [0, n / 2, n - 1] {
                    let mut missing = Bits::default();
                    (0..=n).filter(|&i| i != gap).for_each(|i| missing.set(i));
                    assert!(!missing.is_first(n), "{n} without {gap}, with {n}");
                }
            }
        }
        let mut beyond = first(3);
        beyond.set(70);
        assert!(!beyond.is_first(3) && !beyond.is_first(4));
        let mut high = first(64);
        high.set(64);
        assert!(!high.is_first(64) && high.is_first(65));
    }
}
