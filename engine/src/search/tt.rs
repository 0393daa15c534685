//! The transposition table: one entry per bucket, indexed by the position key, sized in MiB.

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
}

/// The stored static evaluation of a position in check (which has none).
pub const NO_EVAL: i16 = i16::MIN;

/// One stored search result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The full position key, to tell collisions apart.
    pub key: u64,
    /// The best move's code (0: none).
    pub mv: u32,
    /// Score, with mate scores relative to this node.
    pub score: i32,
    /// The raw static evaluation ([`NO_EVAL`] when in check): saves evaluating again.
    pub eval: i16,
    /// Remaining depth searched.
    pub depth: i16,
    /// Score bound.
    pub bound: Bound,
    /// Search generation, for replacement.
    pub age: u8,
}

const EMPTY: Entry = Entry {
    key: 0,
    mv: 0,
    score: 0,
    eval: NO_EVAL,
    depth: -1,
    bound: Bound::Upper,
    age: 0,
};

/// The table. Cleared by `ucinewgame` so searches are reproducible.
pub struct TranspositionTable {
    entries: Vec<Entry>,
    age: u8,
}

impl TranspositionTable {
    /// A table of about `mib` MiB (at least one entry).
    pub fn new(mib: usize) -> Self {
        let n = (mib.max(1) * 1024 * 1024 / std::mem::size_of::<Entry>()).max(1);
        TranspositionTable {
            entries: vec![EMPTY; n],
            age: 0,
        }
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.entries.iter_mut().for_each(|e| *e = EMPTY);
        self.age = 0;
    }

    /// Starts a new search (older entries become cheaper to replace).
    pub fn new_search(&mut self) {
        self.age = self.age.wrapping_add(1);
    }

    #[inline]
    fn index(&self, key: u64) -> usize {
        ((u128::from(key) * self.entries.len() as u128) >> 64) as usize
    }

    /// The entry for `key`, if stored.
    #[inline]
    pub fn probe(&self, key: u64) -> Option<Entry> {
        let e = self.entries[self.index(key)];
        (e.key == key && e.depth >= 0).then_some(e)
    }

    /// Asks the processor to bring `key`'s entry into the cache: called right after a move is
    /// made, so the child's probe a few hundred instructions later finds it there instead of
    /// waiting on memory (the probe's load was a fifth of `engine bench`'s time). A hint only:
    /// what the search reads and stores is unchanged, and so is the bench signature.
    #[inline]
    pub fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        #[allow(unsafe_code)]
        {
            let entry: *const Entry = &self.entries[self.index(key)];
            // SAFETY: a prefetch is a hint: it never faults and changes no memory the
            // program sees, and `entry` points at a live element of `entries`. SSE, which
            // the intrinsic needs, is part of every x86_64 processor.
            unsafe {
                core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
                    entry.cast::<i8>(),
                );
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    /// Stores a result, keeping a deeper entry of the same position from this search.
    #[inline]
    pub fn store(&mut self, key: u64, mv: u32, score: i32, eval: i16, depth: i32, bound: Bound) {
        let i = self.index(key);
        let old = self.entries[i];
        let replace = old.key != key
            || old.age != self.age
            || depth >= i32::from(old.depth) - 2
            || bound == Bound::Exact;
        if replace {
            let mv = if mv == 0 && old.key == key {
                old.mv
            } else {
                mv
            };
            self.entries[i] = Entry {
                key,
                mv,
                score,
                eval,
                depth: depth.clamp(0, 255) as i16,
                bound,
                age: self.age,
            };
        }
    }

    /// Per-mille of entries used by the current search (UCI `hashfull`).
    pub fn hashfull(&self) -> u32 {
        let sample = self.entries.len().min(1000);
        let used = self.entries[..sample]
            .iter()
            .filter(|e| e.depth >= 0 && e.age == self.age)
            .count();
        (used * 1000 / sample.max(1)) as u32
    }
}
