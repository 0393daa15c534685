//! The transposition table: buckets of four 16-byte entries, one cache line each, indexed by
//! the position key and sized in MiB.
//!
//! Why this shape: a probe costs one cache miss whatever it finds, so a bucket should fill one
//! line and hold as many entries as fit; four entries per line let a deep result survive the
//! shallow ones that hash to the same place (one entry per slot lost them), and 16 bytes per
//! entry instead of 24 hold half as many again in the same memory. An all-zero entry is empty,
//! so a new table is zeroed memory the system hands out lazily instead of a fill loop.
//!
//! Several search threads share one table (UCI `Threads`): its words are atomics read and
//! written with relaxed ordering (plain loads and stores on x86-64 and ARM64, so one thread
//! pays nothing for it), and an entry's key check is folded with its data word, so an entry
//! half-written by another thread reads as a miss instead of another position's result.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::Relaxed};

/// What a stored score means relative to the window it was searched with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// The true score.
    Exact,
    /// At least this (a beta cutoff).
    Lower,
    /// At most this (no move raised alpha).
    Upper,
}

impl Bound {
    /// The bound of a search result: `best` from a window that opened at `original_alpha`, was
    /// raised to `alpha` by the moves tried, and closes at `beta`.
    #[inline]
    pub fn of(best: i32, original_alpha: i32, alpha: i32, beta: i32) -> Bound {
        if best >= beta {
            Bound::Lower
        } else if alpha > original_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        }
    }

    /// The two-bit code of a stored entry; 0 is left for "empty".
    #[inline]
    fn code(self) -> u64 {
        match self {
            Bound::Exact => 1,
            Bound::Lower => 2,
            Bound::Upper => 3,
        }
    }

    #[inline]
    fn from_code(code: u64) -> Option<Bound> {
        match code {
            1 => Some(Bound::Exact),
            2 => Some(Bound::Lower),
            3 => Some(Bound::Upper),
            _ => None,
        }
    }
}

/// The stored static evaluation of a position in check (which has none).
pub const NO_EVAL: i16 = i16::MIN;

/// One stored search result, as a probe returns it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The best move's code (0: none).
    pub mv: u32,
    /// Score, with mate scores relative to this node.
    pub score: i32,
    /// The raw static evaluation ([`NO_EVAL`] when in check): saves evaluating again.
    pub eval: i16,
    /// Remaining depth searched (0 to 255).
    pub depth: i16,
    /// Score bound.
    pub bound: Bound,
}

/// Entries per bucket: four of 16 bytes fill a 64-byte cache line.
const WAYS: usize = 4;
/// Search generations are counted modulo 64 (six bits of the entry).
const AGE_MASK: u8 = 63;

/// The size of an x86-64 (and common ARM64) huge page.
const HUGE_PAGE: usize = 2 * 1024 * 1024;

/// Asks Linux to back `region` (which starts on a [`HUGE_PAGE`] boundary) with huge pages. A
/// hint: where the system refuses (huge pages turned off, another system), the table works the
/// same on small pages, only slower, so the answer is not checked.
fn advise_huge_pages(region: &[Cell]) {
    #[cfg(target_os = "linux")]
    #[allow(unsafe_code)]
    {
        let len = std::mem::size_of_val(region) / HUGE_PAGE * HUGE_PAGE;
        // SAFETY: the range is inside the live allocation `region` borrows and starts on a
        // page boundary; MADV_HUGEPAGE changes how the pages are backed, never their content.
        unsafe {
            libc::madvise(
                region.as_ptr().cast_mut().cast::<libc::c_void>(),
                len,
                libc::MADV_HUGEPAGE,
            );
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = region;
}

/// An entry as stored: two words.
/// - word 0: bits 0-31 the low half of the key (the bucket index comes from the high half)
///   XOR the folded word 1 ([`fold`]), bits 32-63 the move code;
/// - word 1: bits 0-15 the score, 16-31 the evaluation, 32-39 the depth, 40-41 the bound
///   (0: empty), 42-47 the generation.
type Slot = [u64; 2];

/// A slot in the shared table.
type Cell = [AtomicU64; 2];

/// Word 1 folded to the width of the key check: a word 0 read with another entry's word 1
/// (two threads writing one slot at once) fails the check.
#[inline]
fn fold(w1: u64) -> u64 {
    (w1 ^ w1 >> 32) & 0xffff_ffff
}

#[inline]
fn pack(key: u64, e: &Entry, age: u8) -> Slot {
    let w1 = u64::from(e.score as i16 as u16)
        | u64::from(e.eval as u16) << 16
        | (e.depth.clamp(0, 255) as u64) << 32
        | e.bound.code() << 40
        | u64::from(age & AGE_MASK) << 42;
    let w0 = ((key ^ fold(w1)) & 0xffff_ffff) | u64::from(e.mv) << 32;
    [w0, w1]
}

#[inline]
fn load(cell: &Cell) -> Slot {
    [cell[0].load(Relaxed), cell[1].load(Relaxed)]
}

#[inline]
fn put(cell: &Cell, slot: Slot) {
    cell[0].store(slot[0], Relaxed);
    cell[1].store(slot[1], Relaxed);
}

/// `n` empty cells in zeroed memory, which the system backs lazily (a fill loop would touch
/// every page of a table of gigabytes before the first search, and before the huge-page
/// advice).
fn zeroed_cells(n: usize) -> Box<[Cell]> {
    let layout = match std::alloc::Layout::array::<Cell>(n.max(1)) {
        Ok(l) => l,
        Err(_) => std::alloc::handle_alloc_error(std::alloc::Layout::new::<Cell>()),
    };
    #[allow(unsafe_code)]
    // SAFETY: the layout is non-zero-sized (at least one cell); an all-zero `AtomicU64` is
    // `AtomicU64::new(0)` (it has the in-memory representation of `u64`), so the zeroed
    // allocation holds `n.max(1)` initialised cells, owned by the box from here on and freed
    // by it with the same layout.
    unsafe {
        let ptr = std::alloc::alloc_zeroed(layout).cast::<Cell>();
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, n.max(1)))
    }
}

/// The entry in `slot` when it holds one.
#[inline]
fn unpack(slot: Slot) -> Option<Entry> {
    let [w0, w1] = slot;
    Some(Entry {
        bound: Bound::from_code(w1 >> 40 & 3)?,
        mv: (w0 >> 32) as u32,
        score: i32::from(w1 as u16 as i16),
        eval: (w1 >> 16) as u16 as i16,
        depth: (w1 >> 32 & 0xff) as i16,
    })
}

/// Whether `slot` holds an entry: its bound code is 0 only when empty.
#[inline]
fn occupied(slot: Slot) -> bool {
    slot[1] >> 40 & 3 != 0
}

#[inline]
fn holds(slot: Slot, key: u64) -> bool {
    (slot[0] ^ fold(slot[1])) as u32 == key as u32 && occupied(slot)
}

#[inline]
fn slot_age(slot: Slot) -> u8 {
    (slot[1] >> 42) as u8 & AGE_MASK
}

#[inline]
fn slot_depth(slot: Slot) -> i32 {
    (slot[1] >> 32 & 0xff) as i32
}

/// The table. Cleared by `ucinewgame` so searches are reproducible.
pub struct TranspositionTable {
    /// `WAYS * buckets` slots from `first` on; the few before it only align the buckets to
    /// cache lines.
    slots: Box<[Cell]>,
    first: usize,
    buckets: usize,
    /// The generation of the current search, advanced by the thread that leads it.
    age: AtomicU8,
}

impl TranspositionTable {
    /// A table of about `mib` MiB (at least one bucket).
    ///
    /// A table of two huge pages or more starts on a huge-page boundary and is offered to the
    /// system for huge pages: every probe lands on a random line, and with 4 KiB pages nearly
    /// every one also missed the address translation cache (the prefetch's page walk was a
    /// seventh of the search's own time in `engine bench`).
    pub fn new(mib: usize) -> Self {
        const SLOT: usize = std::mem::size_of::<Slot>();
        let buckets = (mib.max(1) * 1024 * 1024 / (WAYS * SLOT)).max(1);
        let huge = WAYS * buckets * SLOT >= 2 * HUGE_PAGE;
        let align = if huge { HUGE_PAGE } else { 64 };
        // Zeroed memory: the allocator asks the system for it, which hands it out lazily, so
        // the advice below comes before the pages are touched (memory the allocator hands
        // back from an earlier table is already backed: the system may merge it later).
        let slots = zeroed_cells(WAYS * buckets + align / SLOT);
        let misalign = slots.as_ptr() as usize % align;
        let first = if misalign.is_multiple_of(SLOT) {
            (align - misalign) % align / SLOT
        } else {
            0
        };
        if huge {
            advise_huge_pages(&slots[first..]);
        }
        TranspositionTable {
            slots,
            first,
            buckets,
            age: AtomicU8::new(0),
        }
    }

    /// Forgets everything.
    pub fn clear(&self) {
        for cell in self.slots.iter() {
            put(cell, [0; 2]);
        }
        self.age.store(0, Relaxed);
    }

    /// Starts a new search (older entries become cheaper to replace).
    pub fn new_search(&self) {
        let next = self.age.load(Relaxed).wrapping_add(1) & AGE_MASK;
        self.age.store(next, Relaxed);
    }

    /// The first slot of `key`'s bucket.
    #[inline]
    fn bucket(&self, key: u64) -> usize {
        self.first + WAYS * ((u128::from(key) * self.buckets as u128) >> 64) as usize
    }

    /// The entry for `key`, if stored.
    #[inline]
    pub fn probe(&self, key: u64) -> Option<Entry> {
        let b = self.bucket(key);
        self.slots[b..b + WAYS]
            .iter()
            .map(load)
            .find(|&s| holds(s, key))
            .and_then(unpack)
    }

    /// Asks the processor to bring `key`'s bucket into the cache before the position is
    /// reached, so its probe finds it there instead of waiting on memory (the probe's load
    /// was a fifth of `engine bench`'s time). A hint only: what the search reads and stores
    /// is unchanged, and so is the bench signature.
    #[inline]
    pub fn prefetch(&self, key: u64) {
        super::prefetch::prefetch(&self.slots[self.bucket(key)]);
    }

    /// Stores a result. The entry of the same position is rewritten unless it holds a deeper
    /// search of this generation; otherwise the bucket's least valuable entry goes: an empty
    /// one, else the shallowest, counting each generation of age as eight plies less.
    #[inline]
    pub fn store(&self, key: u64, mv: u32, score: i32, eval: i16, depth: i32, bound: Bound) {
        let b = self.bucket(key);
        let age = self.age.load(Relaxed);
        let cells = &self.slots[b..b + WAYS];
        let bucket: [Slot; WAYS] = std::array::from_fn(|i| load(&cells[i]));
        let entry = |mv| Entry {
            mv,
            score: score.clamp(i32::from(i16::MIN), i32::from(i16::MAX)),
            eval,
            depth: depth.clamp(0, 255) as i16,
            bound,
        };
        if let Some(i) = bucket.iter().position(|&s| holds(s, key)) {
            let slot = bucket[i];
            let replace =
                slot_age(slot) != age || depth >= slot_depth(slot) - 2 || bound == Bound::Exact;
            if replace {
                let mv = if mv == 0 { (slot[0] >> 32) as u32 } else { mv };
                put(&cells[i], pack(key, &entry(mv), age));
            }
            return;
        }
        let value = |s: Slot| {
            if !occupied(s) {
                i32::MIN
            } else {
                let stale = i32::from(age.wrapping_sub(slot_age(s)) & AGE_MASK);
                slot_depth(s) - 8 * stale
            }
        };
        let mut victim = 0;
        for i in 1..WAYS {
            if value(bucket[i]) < value(bucket[victim]) {
                victim = i;
            }
        }
        put(&cells[victim], pack(key, &entry(mv), age));
    }

    /// Per-mille of entries used by the current search (UCI `hashfull`).
    pub fn hashfull(&self) -> u32 {
        let end = (self.first + 1000).min(self.slots.len());
        let sample = &self.slots[self.first..end];
        let age = self.age.load(Relaxed);
        let used = sample
            .iter()
            .map(load)
            .filter(|&s| occupied(s) && slot_age(s) == age)
            .count();
        (used * 1000 / sample.len().max(1)) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys whose high halves put them in the same bucket of a one-bucket table.
    fn keys(n: u64) -> impl Iterator<Item = u64> {
        (1..=n).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
    }

    #[test]
    fn an_entry_comes_back_as_stored() {
        let tt = TranspositionTable::new(1);
        for (i, key) in keys(100).enumerate() {
            let i = i as i32;
            let bound = [Bound::Exact, Bound::Lower, Bound::Upper][i as usize % 3];
            tt.store(
                key,
                0x8000_0000 | i as u32,
                -31_000 + i,
                -300 + i as i16,
                i,
                bound,
            );
        }
        for (i, key) in keys(100).enumerate() {
            let i = i as i32;
            let e = tt.probe(key).expect("stored");
            assert_eq!(e.mv, 0x8000_0000 | i as u32);
            assert_eq!(e.score, -31_000 + i);
            assert_eq!(e.eval, -300 + i as i16);
            assert_eq!(i32::from(e.depth), i);
            assert_eq!(
                e.bound,
                [Bound::Exact, Bound::Lower, Bound::Upper][i as usize % 3]
            );
        }
        tt.store(7, 1, 0, NO_EVAL, 300, Bound::Lower);
        let e = tt.probe(7).expect("stored");
        assert_eq!((e.eval, e.depth), (NO_EVAL, 255));
    }

    #[test]
    fn a_new_or_cleared_table_is_empty() {
        let tt = TranspositionTable::new(1);
        assert!(keys(1000).all(|k| tt.probe(k).is_none()));
        assert_eq!(tt.hashfull(), 0);
        tt.store(5, 1, 10, 10, 3, Bound::Exact);
        assert!(tt.probe(5).is_some());
        tt.clear();
        assert!(tt.probe(5).is_none());
        // Key 0 is a key like any other, not the mark of an empty entry.
        assert!(tt.probe(0).is_none());
        tt.store(0, 0, 1, 2, 0, Bound::Upper);
        assert_eq!(tt.probe(0).map(|e| e.score), Some(1));
    }

    #[test]
    fn buckets_are_cache_lines() {
        let tt = TranspositionTable::new(1);
        let addr = tt.slots[tt.first..].as_ptr() as usize;
        // The allocator gives 16-byte-aligned memory, so the buckets can be aligned.
        assert_eq!(addr % 64, 0);
        assert!(tt.first + WAYS * tt.buckets <= tt.slots.len());
    }

    #[test]
    fn a_large_table_starts_on_a_huge_page() {
        let tt = TranspositionTable::new(16);
        let addr = tt.slots[tt.first..].as_ptr() as usize;
        assert_eq!(addr % HUGE_PAGE, 0);
        assert!(tt.first + WAYS * tt.buckets <= tt.slots.len());
        assert_eq!(tt.buckets * WAYS * 16, 16 << 20);
    }

    #[test]
    fn a_deeper_entry_survives_shallower_ones_of_its_bucket() {
        let mut tt = TranspositionTable::new(1);
        tt.buckets = 1; // every key in one bucket
        let deep = 0x1234;
        tt.store(deep, 9, 50, 0, 12, Bound::Lower);
        for k in keys(20) {
            tt.store(k, 1, 0, 0, 1, Bound::Upper);
        }
        assert_eq!(tt.probe(deep).map(|e| e.depth), Some(12));
        // From an older search it gives way first.
        for _ in 0..2 {
            tt.new_search();
        }
        for k in keys(20) {
            tt.store(k, 1, 0, 0, 1, Bound::Upper);
        }
        assert!(tt.probe(deep).is_none());
    }

    #[test]
    fn the_same_position_keeps_its_deeper_result_and_its_move() {
        let tt = TranspositionTable::new(1);
        tt.store(42, 77, 10, 0, 10, Bound::Lower);
        tt.store(42, 0, 20, 0, 3, Bound::Upper);
        assert_eq!(tt.probe(42).map(|e| (e.depth, e.mv)), Some((10, 77)));
        tt.store(42, 0, 30, 0, 9, Bound::Upper);
        assert_eq!(
            tt.probe(42).map(|e| (e.depth, e.mv, e.score)),
            Some((9, 77, 30))
        );
        tt.new_search();
        tt.store(42, 5, 40, 0, 1, Bound::Lower);
        assert_eq!(tt.probe(42).map(|e| (e.depth, e.mv)), Some((1, 5)));
        // Only one entry of a position: its bucket's other ways are still empty.
        let b = tt.bucket(42);
        assert_eq!(
            tt.slots[b..b + WAYS]
                .iter()
                .filter(|s| holds(load(s), 42))
                .count(),
            1
        );
    }

    /// A word 0 read with another entry's word 1 (two threads writing one slot at once) is
    /// a miss, not a result of another position or another move.
    #[test]
    fn a_torn_entry_reads_as_a_miss() {
        let entry = |mv, score, depth| Entry {
            mv,
            score,
            eval: 0,
            depth,
            bound: Bound::Lower,
        };
        for (key, other_key) in keys(50).zip(keys(51).skip(1)) {
            let a = pack(key, &entry(7, 100, 10), 1);
            let b = pack(key, &entry(9, -50, 4), 1);
            let c = pack(other_key, &entry(9, -50, 4), 1);
            assert!(holds(a, key) && holds(b, key) && holds(c, other_key));
            assert!(!holds([a[0], b[1]], key) && !holds([b[0], a[1]], key));
            assert!(!holds([a[0], c[1]], key) && !holds([c[0], a[1]], other_key));
        }
    }

    /// Threads storing and probing one small table at once: every hit is the entry stored
    /// for its key (each key's fields are a function of the key).
    #[test]
    fn threads_sharing_the_table_read_only_whole_entries() {
        let tt = std::sync::Arc::new(TranspositionTable::new(1));
        let fields = |k: u64| {
            (
                (k >> 40) as u32 | 1,
                (k >> 20) as i16 as i32,
                (k % 50) as i32,
            )
        };
        let threads: Vec<_> = (0..4u64)
            .map(|t| {
                let tt = std::sync::Arc::clone(&tt);
                std::thread::spawn(move || {
                    let mut hits = 0;
                    let mut previous = 0;
                    for round in 0..20 {
                        for k in keys(20_000).skip(((t + round) % 3) as usize) {
                            let (mv, score, depth) = fields(k);
                            tt.store(k, mv, score, 0, depth, Bound::Exact);
                            // A key another thread may be writing right now.
                            if let Some(e) = tt.probe(previous) {
                                hits += 1;
                                let want = fields(previous);
                                assert_eq!((e.mv, e.score, i32::from(e.depth)), want);
                            }
                            previous = k;
                        }
                    }
                    hits
                })
            })
            .collect();
        for t in threads {
            assert!(t.join().expect("no panic") > 0);
        }
        for k in keys(20_000) {
            if let Some(e) = tt.probe(k) {
                let (mv, score, depth) = fields(k);
                assert_eq!((e.mv, e.score, i32::from(e.depth)), (mv, score, depth));
            }
        }
    }

    #[test]
    fn hashfull_counts_this_search() {
        let tt = TranspositionTable::new(1);
        for k in keys(200_000) {
            tt.store(k, 1, 0, 0, 1, Bound::Exact);
        }
        let full = tt.hashfull();
        assert!(full > 500, "{full}");
        tt.new_search();
        assert_eq!(tt.hashfull(), 0);
    }
}
