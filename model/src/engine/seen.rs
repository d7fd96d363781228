//! The seen set of the depth-first search: 64-bit state fingerprints (hash compaction, as
//! stateright does) in one open-addressing table that workers fill without locks.

use std::hash::Hash;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{RwLock, RwLockReadGuard};

/// A 64-bit fingerprint of a state.
pub type Fingerprint = u64;

/// The fingerprint of `value` (ahash with fixed seeds: the same in every run and process).
pub fn fingerprint<T: Hash>(value: &T) -> Fingerprint {
    static SEEDS: ahash::RandomState = ahash::RandomState::with_seeds(
        0x9e37_79b9_7f4a_7c15,
        0xbf58_476d_1ce4_e5b9,
        0x94d0_49bb_1331_11eb,
        0x2545_f491_4f6c_dd1d,
    );
    SEEDS.hash_one(value)
}

/// The set of fingerprints seen: an open-addressing table of atomic words (0 marks a free slot;
/// fingerprint 0 is stored as 1), probed linearly and filled by compare-and-swap, so workers
/// insert without locks. The table doubles when three quarters full: workers hold a read lock
/// on it while they insert (see [`Writer`]) and a growing worker takes the write lock.
pub struct Seen {
    table: RwLock<Table>,
    len: AtomicUsize,
    /// Workers waiting to grow the table: writers release their read locks at their next insert.
    growing: AtomicUsize,
}

struct Table {
    slots: *mut AtomicU64,
    len: usize,
    mask: usize,
}

// SAFETY: the table owns its slots, which are atomics.
unsafe impl Send for Table {}
// SAFETY: as above: every access to a slot is atomic.
unsafe impl Sync for Table {}

/// Tables are aligned to (and, on Linux, backed by) 2 MiB pages: a search touches the table at
/// random, and small pages would make most lookups miss the TLB as well as the cache.
const PAGE: usize = 2 << 20;

impl Table {
    fn layout(capacity: usize) -> std::alloc::Layout {
        let bytes = capacity * std::mem::size_of::<AtomicU64>();
        std::alloc::Layout::from_size_align(bytes, PAGE)
            .unwrap_or_else(|_| std::alloc::handle_alloc_error(std::alloc::Layout::new::<AtomicU64>()))
    }

    fn new(capacity: usize) -> Self {
        let layout = Self::layout(capacity);
        // SAFETY: the layout has a non-zero size; zeroed memory is a valid array of AtomicU64
        // (all slots free).
        let slots = unsafe { std::alloc::alloc_zeroed(layout) } as *mut AtomicU64;
        if slots.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        advise_huge_pages(slots.cast(), layout.size());
        Table { slots, len: capacity, mask: capacity - 1 }
    }

    fn slots(&self) -> &[AtomicU64] {
        // SAFETY: `slots` points to `len` initialised atomics owned by this table.
        unsafe { std::slice::from_raw_parts(self.slots, self.len) }
    }

    /// Asks the cache for the line where the search for `fp` starts.
    fn prefetch(&self, fp: u64) {
        prefetch(&self.slots()[fp as usize & self.mask]);
    }

    /// Adds `fp` (not 0); whether it is new.
    fn insert(&self, fp: u64) -> bool {
        let slots = self.slots();
        let mut i = fp as usize & self.mask;
        loop {
            let slot = &slots[i];
            let cur = slot.load(Ordering::Relaxed);
            if cur == fp {
                return false;
            }
            if cur == 0 {
                match slot.compare_exchange(0, fp, Ordering::Relaxed, Ordering::Relaxed) {
                    Ok(_) => return true,
                    Err(now) if now == fp => return false,
                    Err(_) => {}
                }
            }
            i = (i + 1) & self.mask;
        }
    }
}

impl Drop for Table {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.slots.cast(), Self::layout(self.len)) }
    }
}

/// Asks the cache for the line holding `value` (a hint: nothing happens off x86_64).
pub(crate) fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch of a valid reference's address; it never faults.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// Asks Linux to back the whole 2 MiB pages within `bytes` bytes at `start` (memory the caller
/// owns) with huge pages: a search touches its tables at random, and small pages would make most
/// lookups miss the TLB as well as the cache. Failure only loses the advice.
pub(crate) fn advise_huge_pages(start: *mut u8, bytes: usize) {
    #[cfg(target_os = "linux")]
    {
        let from = (start as usize).next_multiple_of(PAGE);
        let to = (start as usize + bytes) / PAGE * PAGE;
        if to > from {
            // SAFETY: advice on whole pages inside memory the caller owns.
            unsafe {
                libc::madvise(from as *mut libc::c_void, to - from, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (start, bytes);
}

/// New fingerprints a [`Writer`] adds before it counts them and lets the table grow.
pub const BATCH: usize = 1024;
const INITIAL_SLOTS: usize = 1 << 20;

impl Default for Seen {
    fn default() -> Self {
        Seen { table: RwLock::new(Table::new(INITIAL_SLOTS)), len: AtomicUsize::new(0), growing: AtomicUsize::new(0) }
    }
}

impl Seen {
    /// Adds `fp`; whether it is new.
    pub fn insert(&self, fp: Fingerprint) -> bool {
        let mut w = self.writer();
        w.insert(fp)
    }

    /// A handle for many inserts in a row.
    pub fn writer(&self) -> Writer<'_> {
        Writer { seen: self, table: None, added: 0 }
    }

    /// How many fingerprints were added (those of running writers counted in batches).
    pub fn len(&self) -> usize {
        self.len.load(Ordering::Relaxed)
    }

    /// Whether none was.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Doubles the table while it is more than three quarters full.
    fn grow(&self) {
        let full = |t: &Table| self.len() * 4 > t.len * 3;
        if !full(&self.table.read().unwrap_or_else(|e| e.into_inner())) {
            return;
        }
        self.growing.fetch_add(1, Ordering::Relaxed);
        let mut table = self.table.write().unwrap_or_else(|e| e.into_inner());
        self.growing.fetch_sub(1, Ordering::Relaxed);
        while full(&table) {
            let bigger = Table::new(table.len * 2);
            for slot in table.slots() {
                let fp = slot.load(Ordering::Relaxed);
                if fp != 0 {
                    bigger.insert(fp);
                }
            }
            *table = bigger;
        }
    }
}

/// Inserts into a [`Seen`] under one read lock, counted every 1,024 new fingerprints, and
/// released as soon as another worker waits to grow the table; it must be paused (or dropped)
/// before its thread waits for anything.
pub struct Writer<'a> {
    seen: &'a Seen,
    table: Option<RwLockReadGuard<'a, Table>>,
    added: usize,
}

impl Writer<'_> {
    /// Adds `fp`; whether it is new.
    pub fn insert(&mut self, fp: Fingerprint) -> bool {
        if self.table.is_some() && self.seen.growing.load(Ordering::Relaxed) > 0 {
            self.pause();
        }
        let table = match &self.table {
            Some(t) => t,
            None => self.table.insert(self.seen.table.read().unwrap_or_else(|e| e.into_inner())),
        };
        let new = table.insert(fp.max(1));
        if new {
            self.added += 1;
            if self.added >= BATCH {
                self.pause();
            }
        }
        new
    }

    /// Asks the cache for the line where inserting `fp` will look.
    pub fn prefetch(&mut self, fp: Fingerprint) {
        let table = match &self.table {
            Some(t) => t,
            None => self.table.insert(self.seen.table.read().unwrap_or_else(|e| e.into_inner())),
        };
        table.prefetch(fp.max(1));
    }

    /// Counts what was added, releases the lock and lets the table grow.
    pub fn pause(&mut self) {
        self.table = None;
        self.seen.len.fetch_add(std::mem::take(&mut self.added), Ordering::Relaxed);
        self.seen.grow();
    }
}

impl Drop for Writer<'_> {
    fn drop(&mut self) {
        self.pause();
    }
}

/// A symmetry reduction: the representative of a state's class.
pub type Representative<S> = Option<fn(&S) -> S>;

/// The fingerprint a search stores for `state`: its representative's under symmetry.
pub fn fingerprint_of<S: Hash>(state: &S, symmetry: Representative<S>) -> Fingerprint {
    match symmetry {
        Some(rep) => fingerprint(&rep(state)),
        None => fingerprint(state),
    }
}
