//! A rank's two tables of fingerprints: the seen set it owns, each fingerprint with its parent's
//! ([`Parents`]), and its memory of the fingerprints it lately asked other ranks about
//! ([`Asked`]).

use super::super::seen::{self, Fingerprint};

/// The parent recorded for initial state `i`.
pub(super) fn init_parent(i: usize) -> u64 {
    u64::MAX - i as u64
}

/// The key a fingerprint is stored under (0 marks a free slot), as the depth-first engine's.
pub(super) fn key(fp: Fingerprint) -> u64 {
    fp.max(1)
}

/// A rank's seen set: its fingerprints, each with its parent's (or [`init_parent`]), in an
/// open-addressing table probed linearly.
pub(super) struct Parents {
    pub(super) slots: Vec<[u64; 2]>,
    /// Fingerprints held.
    pub(super) len: usize,
}

impl Parents {
    pub(super) fn new() -> Self {
        Parents { slots: table(1 << 16), len: 0 }
    }

    /// Asks the cache for the line where looking `key` up starts.
    pub(super) fn prefetch(&self, key: u64) {
        seen::prefetch(&self.slots[key as usize & (self.slots.len() - 1)]);
    }

    /// Adds `key` with `parent`; whether it is new.
    pub(super) fn insert(&mut self, key: u64, parent: u64) -> bool {
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut i = key as usize & mask;
        loop {
            let slot = &mut self.slots[i];
            if slot[0] == key {
                return false;
            }
            if slot[0] == 0 {
                *slot = [key, parent];
                self.len += 1;
                return true;
            }
            i = (i + 1) & mask;
        }
    }

    /// The parent recorded for `key`.
    pub(super) fn get(&self, key: u64) -> Option<u64> {
        let mask = self.slots.len() - 1;
        let mut i = key as usize & mask;
        loop {
            match self.slots[i] {
                [0, _] => return None,
                [k, parent] if k == key => return Some(parent),
                _ => i = (i + 1) & mask,
            }
        }
    }

    fn grow(&mut self) {
        let bigger = table(self.slots.len() * 2);
        let old = std::mem::replace(&mut self.slots, bigger);
        self.len = 0;
        for [k, parent] in old {
            if k != 0 {
                self.insert(k, parent);
            }
        }
    }
}

/// The fingerprints a rank has lately asked other ranks about, as PReach's cache of states sent
/// (Bingham et al., 2010): a direct-mapped table of [`ASKED`] slots, a key in the slot its low
/// bits name, the newest ask replacing the one before. A successor found here was asked about
/// before, so its owner holds it already and would answer "seen": it is not asked again. Bounded
/// (8 MiB), and it changes no answer: the ask it saves is one its owner would refuse.
pub(super) struct Asked {
    slots: Vec<u64>,
}

/// Slots of a rank's [`Asked`] table.
pub(super) const ASKED: usize = 1 << 20;

impl Asked {
    pub(super) fn new() -> Self {
        Asked { slots: vec![0; ASKED] }
    }

    fn slot(&self, key: u64) -> usize {
        key as usize & (self.slots.len() - 1)
    }

    /// Asks the cache for the line of `key`'s slot.
    pub(super) fn prefetch(&self, key: u64) {
        seen::prefetch(&self.slots[self.slot(key)]);
    }

    /// Whether `key` is to be asked about: not among the asks remembered (and now it is).
    pub(super) fn first(&mut self, key: u64) -> bool {
        let i = self.slot(key);
        let new = self.slots[i] != key;
        self.slots[i] = key;
        new
    }
}

/// `len` free slots; a large table on huge pages where the system has them.
pub(super) fn table(len: usize) -> Vec<[u64; 2]> {
    let mut slots = vec![[0; 2]; len];
    seen::advise_huge_pages(slots.as_mut_ptr().cast(), len * 16);
    slots
}
