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

/// The slots, in address space reserved for the table to double into where the system allows
/// it (see [`Reserved`]), else from the allocator.
struct Table {
    slots: *mut AtomicU64,
    len: usize,
    mask: usize,
    reserved: Option<Reserved>,
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

    /// `capacity` free slots (a power of two), in reserved address space when it can be had.
    fn new(capacity: usize) -> Self {
        if let Some(reserved) = Reserved::new(capacity * std::mem::size_of::<AtomicU64>()) {
            let slots = reserved.start.cast();
            return Table { slots, len: capacity, mask: capacity - 1, reserved: Some(reserved) };
        }
        Self::allocated(capacity)
    }

    /// `capacity` free slots from the allocator.
    fn allocated(capacity: usize) -> Self {
        let layout = Self::layout(capacity);
        // SAFETY: the layout has a non-zero size; zeroed memory is a valid array of AtomicU64
        // (all slots free).
        let slots = unsafe { std::alloc::alloc_zeroed(layout) } as *mut AtomicU64;
        if slots.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        advise_huge_pages(slots.cast(), layout.size());
        Table { slots, len: capacity, mask: capacity - 1, reserved: None }
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

    /// Twice the slots, the same fingerprints: in place when the reserved address space holds
    /// twice the table (no copy, and the old slots' memory is the new table's lower half), else
    /// copied into a new table.
    fn double(&mut self) {
        let bytes = self.len * std::mem::size_of::<AtomicU64>();
        if self.reserved.as_mut().is_some_and(|r| r.commit(2 * bytes)) {
            self.len *= 2;
            self.mask = self.len - 1;
            rehash_doubled(self.slots());
            return;
        }
        let bigger = Table::new(self.len * 2);
        for slot in self.slots() {
            let fp = slot.load(Ordering::Relaxed);
            if fp != 0 {
                bigger.insert(fp);
            }
        }
        *self = bigger;
    }
}

/// Moves every fingerprint of a table doubled in place to where the doubled table looks for it:
/// `slots` are the old table's slots followed by as many free ones (its owner holds it
/// exclusively). The old slots are emptied and their fingerprints put in again, in order from the
/// first free slot, so that a fingerprint put in never passes one still to be moved (it stops at
/// the slot just emptied at the latest): its probe sequence never holds a slot emptied later.
/// The runs that wrapped past the old table's end sit before that free slot: they are set aside
/// and put in last.
fn rehash_doubled(slots: &[AtomicU64]) {
    let (n, mask) = (slots.len() / 2, slots.len() - 1);
    let take = |i: usize| slots[i].swap(0, Ordering::Relaxed);
    let put = |fp: u64| {
        let mut i = fp as usize & mask;
        while slots[i].load(Ordering::Relaxed) != 0 {
            i = (i + 1) & mask;
        }
        slots[i].store(fp, Ordering::Relaxed);
    };
    let first_free = (0..n).find(|&i| slots[i].load(Ordering::Relaxed) == 0).expect("a table at most 3/4 full");
    let wrapped: Vec<u64> = (0..first_free).map(take).collect();
    for i in first_free..n {
        match take(i) {
            0 => {}
            fp => put(fp),
        }
    }
    wrapped.into_iter().for_each(put);
}

impl Drop for Table {
    fn drop(&mut self) {
        if self.reserved.is_none() {
            // SAFETY: allocated in `allocated` with this layout.
            unsafe { std::alloc::dealloc(self.slots.cast(), Self::layout(self.len)) }
        }
    }
}

/// Address space reserved (mapped inaccessible) for a table to double into, of which a prefix
/// is committed (readable, writable, zero until written): doubling in place commits the next
/// part instead of allocating and filling a new table while the old one is still held. Linux
/// and other Unix systems; elsewhere, or when the system refuses, tables are allocated.
struct Reserved {
    /// Where the mapping starts and its length (unmapped on drop).
    map: (*mut u8, usize),
    /// The table's start (aligned to [`PAGE`]) and how many bytes from it are committed.
    start: *mut u8,
    committed: usize,
    /// Bytes from `start` to the mapping's end.
    room: usize,
}

impl Reserved {
    /// Reserves room for the largest table this machine's memory could hold (at least twice
    /// `bytes`; less if the system refuses that much address space) and commits `bytes` of it.
    fn new(bytes: usize) -> Option<Self> {
        #[cfg(unix)]
        {
            let most = physical_memory().checked_next_power_of_two().unwrap_or(1 << (usize::BITS - 2));
            let mut room = most.max(2 * bytes).max(PAGE);
            while room >= 2 * bytes {
                let len = room + PAGE;
                // SAFETY: a new private anonymous mapping of no access: no memory is touched.
                let map = unsafe {
                    libc::mmap(
                        std::ptr::null_mut(),
                        len,
                        libc::PROT_NONE,
                        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                        -1,
                        0,
                    )
                };
                if map != libc::MAP_FAILED {
                    let map = map.cast::<u8>();
                    let start = map.wrapping_add((map as usize).next_multiple_of(PAGE) - map as usize);
                    let mut r = Reserved { map: (map, len), start, committed: 0, room };
                    return r.commit(bytes).then_some(r);
                }
                room /= 2;
            }
        }
        let _ = bytes;
        None
    }

    /// Makes at least the first `bytes` from the start readable and writable, in whole 2 MiB
    /// pages (those past the committed ones read 0); whether the system agreed.
    fn commit(&mut self, bytes: usize) -> bool {
        if bytes > self.room {
            return false;
        }
        #[cfg(unix)]
        if bytes > self.committed {
            let (more, len) = (self.start.wrapping_add(self.committed), bytes.next_multiple_of(PAGE) - self.committed);
            // SAFETY: whole pages inside this mapping (the room is a multiple of PAGE), which
            // nothing else uses.
            let ok = unsafe { libc::mprotect(more.cast(), len, libc::PROT_READ | libc::PROT_WRITE) == 0 };
            if !ok {
                return false;
            }
            advise_huge_pages(more, len);
            touch_pages(more, len);
            self.committed += len;
        }
        bytes <= self.committed
    }
}

impl Drop for Reserved {
    fn drop(&mut self) {
        #[cfg(unix)]
        // SAFETY: the mapping made in `new`, no longer referred to.
        unsafe {
            libc::munmap(self.map.0.cast(), self.map.1);
        }
    }
}

/// Writes a 0 to every 4 KiB page of `bytes` bytes at `start` (committed, zero memory the caller
/// owns exclusively), from as many threads as there are cores: the system backs the pages now,
/// on every core, rather than one by one as the single growing worker (the others waiting for
/// it) moves fingerprints into them. Only for large regions.
#[cfg(unix)]
fn touch_pages(start: *mut u8, bytes: usize) {
    const SMALL: usize = 64 << 20;
    if bytes < SMALL {
        return;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let part = bytes.div_ceil(cores).next_multiple_of(4096);
    let start = start as usize;
    std::thread::scope(|s| {
        for from in (0..bytes).step_by(part) {
            let to = (from + part).min(bytes);
            s.spawn(move || {
                for page in (from..to).step_by(4096) {
                    // SAFETY: inside the committed region, which nothing reads while it grows;
                    // the byte is 0 already (fresh memory), and stays 0.
                    unsafe { std::ptr::write_volatile((start + page) as *mut u8, 0) };
                }
            });
        }
    });
}

/// This machine's memory in bytes (0 if unknown).
#[cfg(unix)]
fn physical_memory() -> usize {
    // SAFETY: sysconf only reads configuration.
    let (pages, size) = unsafe { (libc::sysconf(libc::_SC_PHYS_PAGES), libc::sysconf(libc::_SC_PAGESIZE)) };
    usize::try_from(pages).unwrap_or(0).saturating_mul(usize::try_from(size).unwrap_or(0))
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
            table.double();
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Whether `fp` is in `table`, looked for as `insert` looks.
    fn holds(table: &Table, fp: u64) -> bool {
        let mut i = fp as usize & table.mask;
        loop {
            match table.slots()[i].load(Ordering::Relaxed) {
                0 => return false,
                cur if cur == fp => return true,
                _ => i = (i + 1) & table.mask,
            }
        }
    }

    /// The fingerprints in `table`, sorted, after checking it is a linear-probing table: every
    /// slot from a fingerprint's home to where it sits is taken.
    fn contents(table: &Table) -> Vec<u64> {
        let slots: Vec<u64> = table.slots().iter().map(|s| s.load(Ordering::Relaxed)).collect();
        let mut all = Vec::new();
        for (at, &fp) in slots.iter().enumerate().filter(|(_, &fp)| fp != 0) {
            let mut i = fp as usize & table.mask;
            while i != at {
                assert_ne!(slots[i], 0, "{fp:#x} at {at}: slot {i} on its way is free");
                i = (i + 1) & table.mask;
            }
            all.push(fp);
        }
        all.sort_unstable();
        all
    }

    /// Puts `fps` (not 0) into `table`, doubling it whenever it is three quarters full and once
    /// at the end, and checks after each doubling that it holds exactly them, each found where
    /// `insert` looks, and nothing else.
    fn fill_and_double(mut table: Table, fps: &[u64]) -> Table {
        let mut want = Vec::new();
        let double = |table: &mut Table, want: &mut Vec<u64>| {
            table.double();
            want.sort_unstable();
            assert_eq!(&contents(table), want);
        };
        for &fp in fps {
            if table.insert(fp) {
                want.push(fp);
            }
            if want.len() * 4 > table.len * 3 {
                double(&mut table, &mut want);
            }
        }
        double(&mut table, &mut want);
        assert!(fps.iter().all(|&fp| holds(&table, fp) && !table.insert(fp)));
        table
    }

    /// A run that wraps past the table's end (homes 13 to 15 of 16 slots, 7 fingerprints) is
    /// moved to where the doubled table looks, in place.
    #[test]
    fn a_run_wrapping_past_the_end_is_found_after_doubling_in_place() {
        let table = Table::new(16);
        #[cfg(target_os = "linux")]
        assert!(table.reserved.is_some(), "no address space reserved: the test would check the copy");
        let fps = [13, 29, 14, 45, 15, 31, 47, 1, 60, 3];
        let before = table.slots;
        let table = fill_and_double(table, &fps);
        assert_eq!(table.len, 32);
        assert_eq!(table.slots, before, "doubled in place");
        assert_eq!(table.reserved.as_ref().map(|r| r.committed), Some(PAGE));
    }

    /// The same with the table from the allocator: doubled by copying.
    #[test]
    fn a_table_from_the_allocator_doubles_by_copying() {
        let table = Table::allocated(16);
        let before = table.slots;
        let table = fill_and_double(table, &[13, 29, 14, 45, 15, 31, 47, 1, 60, 3]);
        assert_eq!(table.len, 32);
        assert_ne!(table.slots, before, "copied");
    }

    /// A reservation commits up to its room and refuses past it; a table at its room's end is
    /// copied.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_table_at_its_reservations_end_is_copied() {
        let mut table = Table::new(16);
        let room = table.reserved.as_ref().map(|r| r.room).expect("address space reserved for the table");
        assert!(!table.reserved.as_mut().unwrap().commit(room + 1));
        let r = table.reserved.as_mut().unwrap();
        r.room = 2 * PAGE;
        assert!(r.commit(2 * PAGE) && r.committed == 2 * PAGE, "the whole room committed");
        assert!(!r.commit(2 * PAGE + 1));
        table.reserved.as_mut().unwrap().room = 16 * 8;
        let before = table.slots;
        let table = fill_and_double(table, &(1..=12).collect::<Vec<_>>());
        assert_eq!(table.len, 32);
        assert_ne!(table.slots, before, "copied");
    }

    /// A large commit's pages are backed at once (every one resident), and read 0.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_large_commit_is_backed_at_once() {
        let mut r = Reserved::new(PAGE).expect("address space for a table");
        let bytes = 128 << 20;
        assert!(r.commit(bytes));
        let (from, len) = (r.start.wrapping_add(PAGE), bytes - PAGE);
        let mut resident = vec![0u8; len / 4096];
        // SAFETY: a query on committed pages of this mapping, one byte of answer per page.
        assert_eq!(unsafe { libc::mincore(from.cast(), len, resident.as_mut_ptr()) }, 0);
        assert!(resident.iter().all(|&v| v & 1 == 1), "every page of the commit is backed");
        // SAFETY: committed, initialised (zero) memory this test owns.
        let region = unsafe { std::slice::from_raw_parts(from, len) };
        assert!(region.iter().step_by(4096).all(|&b| b == 0));
    }

    proptest! {
        /// Any fingerprints, crowded into few homes so that runs are long and wrap, are found
        /// after every doubling, in place or copied.
        #[test]
        fn doubling_keeps_every_fingerprint(
            homes in proptest::collection::vec((0u64..8, 0u64..1 << 20), 1..200),
            in_place: bool,
        ) {
            let fps: Vec<u64> = homes.iter().map(|&(low, high)| (high << 3 | (8 + low)) ^ (high << 40)).collect();
            let table = if in_place { Table::new(8) } else { Table::allocated(8) };
            let table = fill_and_double(table, &fps);
            prop_assert!(table.len >= 8);
        }
    }

    /// The seen set grows past its first table and still answers for every fingerprint.
    #[test]
    fn the_seen_set_grows_and_forgets_nothing() {
        let seen = Seen::default();
        let fps: Vec<u64> = (0..INITIAL_SLOTS as u64).map(|i| fingerprint(&i)).collect();
        let mut w = seen.writer();
        assert!(fps.iter().all(|&fp| w.insert(fp)));
        drop(w);
        assert_eq!(seen.len(), fps.len());
        let table = seen.table.read().unwrap();
        assert!(table.len > INITIAL_SLOTS);
        #[cfg(target_os = "linux")]
        assert_eq!(table.reserved.as_ref().map(|r| r.committed), Some(table.len * 8), "exactly the table committed");
        drop(table);
        assert!(fps.iter().all(|&fp| !seen.insert(fp)));
        assert_eq!(seen.len(), fps.len());
    }
}
