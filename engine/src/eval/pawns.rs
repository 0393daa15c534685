//! The pawn-structure terms and their cache.
//!
//! Isolated, doubled, backward, connected and passed pawns depend on the pawns of both sides and on nothing else,
//! and pawns move rarely: most nodes of a search share their pawn placement with many others.
//! So the terms are worked out once per placement and kept in a [`PawnCache`] under the pawn
//! key the boards keep incrementally ([`EvalSums::pawn_key`](super::EvalSums::pawn_key)).
//!
//! An entry holds counts ([`PawnCounts`]), not scores: the weights are tunable and may change
//! between two searches with the same cache, and multiplying a handful of counts by the
//! current weights at every node costs next to nothing. A cached entry therefore cannot go
//! stale. Terms that also depend on other pieces (king shelter and the king's open file depend
//! on the king's square, rooks on open files on the rooks') are not cached.
//!
//! Beside them the cache keeps the learned table's parts that depend on the pawns and the two
//! kings' squares alone (in chess: the pawns' and kings' squares and king cells, passed pawns,
//! pawn shapes), summed, under the pawn key with both kings' keys: the same at most nodes.
//! These are sums of values, not counts: the table is compiled in (no option changes it),
//! and `SquareTableScale` applies after.

use super::squares::SquareTable;
use super::terms::{BitSet, EvalBoard};
use crate::params::Params;
use crate::position::SquareName;
use crate::types::{ByColor, Color, Role};

/// Entries of a cache: 2^14 of 24 bytes, 384 KiB per search thread. Over the `bench`
/// searches 93% of probes hit; four times as many entries raise that to 94% only (nearly every
/// miss is a placement's first sighting), so a bigger table would mostly cost memory traffic.
const ENTRIES: usize = 1 << 14;

/// Entries of the learned table's pawn-and-king sums: 2^13 of 32 bytes, 256 KiB per search
/// thread. Their key changes with every king move as well as every pawn move, so placements
/// recur less often than pawn placements alone.
const LEARNED_ENTRIES: usize = 1 << 13;

/// Passed-pawn bonus buckets: relative ranks 2 to 6 and one for the seventh (and any other).
const PASSED_BUCKETS: usize = 6;

/// One side's pawn-structure features: counts only, independent of the weights.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct PawnCounts {
    /// Pawns with no own pawn on an adjacent file.
    isolated: u8,
    /// Pawns beyond the first on each file, summed over the files.
    doubled: u8,
    /// Passed pawns per bucket (see [`PawnCounts::bucket`]).
    passed: [u8; PASSED_BUCKETS],
    /// Relative ranks (1 = start) summed over the pawns defended by an own pawn or standing
    /// beside one: a chain or a phalanx is worth more the further it has come.
    connected: u8,
    /// Pawns with own pawns on adjacent files but none level or behind to cover their advance,
    /// whose stop square an enemy pawn guards: they cannot move up without being lost and are
    /// targets where they stand.
    backward: u8,
}

impl PawnCounts {
    /// The features of `color`'s pawns on `board` (a board has at most 68 squares, so no
    /// count can wrap a `u8`).
    pub(crate) fn of<B: EvalBoard>(board: &B, color: Color) -> PawnCounts {
        let own = board.pieces(color, Role::Pawn);
        let theirs = board.pieces(!color, Role::Pawn);
        let mut counts = PawnCounts::default();
        let their_attacks = B::pawn_attack_set(!color, theirs);
        for sq in own {
            let one = B::square_bb(sq);
            let adjacent = own & B::adjacent_files(sq.file());
            let not_ahead = adjacent & !B::passed_span(color, sq);
            let beside = not_ahead & !B::passed_span(!color, sq);
            let supported = own & B::pawn_attack_set(!color, one);
            if adjacent.is_empty() {
                counts.isolated += 1;
            } else if not_ahead.is_empty() && (B::forward(color, one) & their_attacks).nonempty() {
                counts.backward += 1;
            }
            if (beside | supported).nonempty() {
                counts.connected += B::relative_rank(color, sq);
            }
            if (B::passed_span(color, sq) & theirs).is_empty() {
                counts.passed[Self::bucket(B::relative_rank(color, sq))] += 1;
            }
        }
        for f in 0..B::FILES {
            let n = (own & B::file_mask(f)).count();
            if n > 1 {
                counts.doubled += (n - 1) as u8;
            }
        }
        counts
    }

    /// The bonus bucket of a passed pawn on relative rank `rank` (0 = own back rank): ranks
    /// 1..=5 have their own, everything else takes the seventh rank's.
    #[inline]
    const fn bucket(rank: u8) -> usize {
        match rank {
            1..=5 => rank as usize - 1,
            _ => PASSED_BUCKETS - 1,
        }
    }

    /// Whether this side has a passed pawn (the evaluation then scores the king race).
    #[inline]
    pub(crate) fn has_passers(&self) -> bool {
        self.passed.iter().any(|&n| n > 0)
    }

    /// The (mg, eg) score of these features under the weights `p`.
    #[inline]
    pub(crate) fn score(&self, p: &Params) -> (i32, i32) {
        let isolated = i32::from(self.isolated);
        let doubled = i32::from(self.doubled);
        let (connected, backward) = (i32::from(self.connected), i32::from(self.backward));
        let mut mg = -p.isolated_mg * isolated - p.doubled_mg * doubled
            + p.connected_mg * connected
            - p.backward_mg * backward;
        let mut eg = -p.isolated_eg * isolated - p.doubled_eg * doubled
            + p.connected_eg * connected
            - p.backward_eg * backward;
        let bonus = [
            (p.passed2_mg, p.passed2_eg),
            (p.passed3_mg, p.passed3_eg),
            (p.passed4_mg, p.passed4_eg),
            (p.passed5_mg, p.passed5_eg),
            (p.passed6_mg, p.passed6_eg),
            (p.passed7_mg, p.passed7_eg),
        ];
        for (&n, (bm, be)) in self.passed.iter().zip(bonus) {
            mg += bm * i32::from(n);
            eg += be * i32::from(n);
        }
        (mg, eg)
    }
}

/// One cached placement: the full pawn key, to tell collisions apart, and both sides' counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Entry {
    key: u64,
    /// Indexed by [`Color::index`].
    sides: [PawnCounts; 2],
}

/// One cached placement of pawns and kings: its key ([`EvalBoard::pawn_king_key`]), the
/// learned table it was summed from (a `'static` table is never freed, so its address names
/// it; an empty slot's 0 names none), and both sides' sums of the table's pawn-and-king
/// parts ([`EvalBoard::pawn_king_table_sum`]).
#[derive(Clone, Copy, Debug, Default)]
struct LearnedEntry {
    key: u64,
    table: usize,
    sums: ByColor<(i32, i32)>,
}

/// A fixed-size, always-replace table of pawn-structure features, indexed by the pawn key,
/// and beside it one of the learned table's pawn-and-king sums, indexed by the pawn-and-king
/// key.
///
/// Owned by one search thread (no locking). An empty slot of the first holds key 0 with zero
/// counts, which is exactly the entry of a pawnless board (whose pawn key is 0), so no slot
/// is ever wrong; an empty slot of the second names no table, so it is never taken. Clearing
/// the cache never changes an evaluation, only its speed; the searcher still clears it with
/// its transposition table so that a new game starts from the same state every time.
pub struct PawnCache {
    entries: Box<[Entry]>,
    learned: Box<[LearnedEntry]>,
}

impl PawnCache {
    /// An empty cache of the fixed size.
    pub fn new() -> Self {
        PawnCache {
            entries: vec![Entry::default(); ENTRIES].into_boxed_slice(),
            learned: vec![LearnedEntry::default(); LEARNED_ENTRIES].into_boxed_slice(),
        }
    }

    /// Forgets every entry.
    pub fn clear(&mut self) {
        self.entries.fill(Entry::default());
        self.learned.fill(LearnedEntry::default());
    }

    /// Both sides' sums of `table`'s pawn-and-king parts on `board`
    /// ([`EvalBoard::pawn_king_table_sum`]), from the cache or worked out and stored.
    #[inline]
    pub(crate) fn probe_learned<B: EvalBoard>(
        &mut self,
        board: &B,
        table: &'static SquareTable,
    ) -> ByColor<(i32, i32)> {
        let key = board.pawn_king_key();
        let address = std::ptr::from_ref(table) as usize;
        let entry = &mut self.learned[key as usize & (LEARNED_ENTRIES - 1)];
        if entry.key != key || entry.table != address {
            *entry = LearnedEntry {
                key,
                table: address,
                sums: ByColor::new_with(|c| board.pawn_king_table_sum(table, c)),
            };
        }
        entry.sums
    }

    /// Both sides' pawn features of `board` (indexed by [`Color::index`]), from the cache or
    /// worked out and stored.
    #[inline]
    pub(crate) fn probe<B: EvalBoard>(&mut self, board: &B) -> [PawnCounts; 2] {
        let key = board.sums().pawn_key();
        let entry = &mut self.entries[key as usize & (ENTRIES - 1)];
        if entry.key != key {
            *entry = Entry {
                key,
                sides: [
                    PawnCounts::of(board, Color::White),
                    PawnCounts::of(board, Color::Black),
                ],
            };
        }
        entry.sides
    }
}

impl Default for PawnCache {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for PawnCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PawnCache")
            .field("entries", &self.entries.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board8::Board;
    use crate::variant::{Rules, Variant};

    fn board(fen: &str) -> Board {
        Board::from_fen(Rules::default_for(Variant::Chess), fen)
            .unwrap_or_else(|e| panic!("{fen}: {e}"))
    }

    /// White: a2 and a3 (doubled, isolated, passed on the second and third rank) and c5
    /// (isolated, passed on the fifth); Black has no pawns.
    const PAWNS: &str = "4k3/8/8/2P5/8/P7/P7/4K3 w - - 0 1";

    #[test]
    fn counts_and_their_score() {
        let b = board(PAWNS);
        let white = PawnCounts::of(&b, Color::White);
        assert_eq!(
            white,
            PawnCounts {
                isolated: 3,
                doubled: 1,
                passed: [1, 1, 0, 1, 0, 0],
                connected: 0,
                backward: 0,
            }
        );
        assert_eq!(PawnCounts::of(&b, Color::Black), PawnCounts::default());
        let p = Params::default();
        let mg = -3 * p.isolated_mg - p.doubled_mg + p.passed2_mg + p.passed3_mg + p.passed5_mg;
        let eg = -3 * p.isolated_eg - p.doubled_eg + p.passed2_eg + p.passed3_eg + p.passed5_eg;
        assert_eq!(white.score(&p), (mg, eg));
    }

    /// White: b2 (its stop square b3 guarded by the black a4 pawn, its neighbour c3 already
    /// ahead: backward), c3 (defended by b2) and d3 (beside c3), both connected on relative
    /// rank 2 and passed. Black: a4, isolated and stopped by b2.
    #[test]
    fn connected_and_backward_pawns() {
        let b = board("4k3/8/8/8/p7/2PP4/1P6/4K3 w - - 0 1");
        let white = PawnCounts::of(&b, Color::White);
        assert_eq!(
            white,
            PawnCounts {
                isolated: 0,
                doubled: 0,
                passed: [0, 2, 0, 0, 0, 0],
                connected: 4,
                backward: 1,
            }
        );
        let black = PawnCounts::of(&b, Color::Black);
        assert_eq!((black.isolated, black.backward, black.connected), (1, 0, 0));
        let p = Params::default();
        let mg = 4 * p.connected_mg - p.backward_mg + 2 * p.passed3_mg;
        let eg = 4 * p.connected_eg - p.backward_eg + 2 * p.passed3_eg;
        assert_eq!(white.score(&p), (mg, eg));
        // Without the black pawn guarding b3, b2 may advance: not backward.
        let free = board("4k3/8/8/8/8/2PP4/1P6/4K3 w - - 0 1");
        assert_eq!(PawnCounts::of(&free, Color::White).backward, 0);
    }

    /// The learned sums are kept under the pawns, both kings' squares and the table: an entry
    /// is read back when all three match and worked out again when any differs.
    #[test]
    fn learned_sums_are_kept_under_pawns_kings_and_table() {
        use crate::board8::square_table_testing::patterned_table;
        let b = board(PAWNS);
        let table = patterned_table();
        let other: &'static SquareTable = Box::leak(Box::new(SquareTable::ZERO));
        let sums = |b: &Board, t| ByColor::new_with(|c| b.pawn_king_table_sum(t, c));
        let expected = sums(&b, table);
        assert_ne!(expected, ByColor::default(), "the table is read");
        let mut cache = PawnCache::new();
        assert_eq!(cache.probe_learned(&b, table), expected);
        // The entry is really read: planted sums under the same key and table come back.
        let slot = b.pawn_king_key() as usize & (LEARNED_ENTRIES - 1);
        let planted = ByColor::new_with(|_| (7, -7));
        cache.learned[slot].sums = planted;
        assert_eq!(cache.probe_learned(&b, table), planted);
        // Another table under the same key is summed afresh.
        assert_eq!(cache.probe_learned(&b, other), sums(&b, other));
        // A king on another square makes another key (pawns alike).
        let moved = board("3k4/8/8/2P5/8/P7/P7/4K3 w - - 0 1");
        assert_eq!(moved.sums().pawn_key(), b.sums().pawn_key());
        assert_ne!(moved.pawn_king_key(), b.pawn_king_key());
        cache.learned[moved.pawn_king_key() as usize & (LEARNED_ENTRIES - 1)] = LearnedEntry {
            key: b.pawn_king_key(),
            table: std::ptr::from_ref(table) as usize,
            sums: planted,
        };
        assert_eq!(cache.probe_learned(&moved, table), sums(&moved, table));
        // A cleared cache names no table: nothing planted survives.
        cache.learned[slot].sums = planted;
        cache.clear();
        assert_eq!(cache.probe_learned(&b, table), expected);
    }

    #[test]
    fn an_empty_slot_is_the_pawnless_entry() {
        let b = board("4k3/8/8/8/8/8/8/R3K3 w - - 0 1");
        assert_eq!(b.sums().pawn_key(), 0);
        assert_eq!(PawnCache::new().probe(&b), [PawnCounts::default(); 2]);
    }

    #[test]
    fn the_full_key_tells_collisions_apart() {
        let b = board(PAWNS);
        let key = b.sums().pawn_key();
        let expected = [
            PawnCounts::of(&b, Color::White),
            PawnCounts::of(&b, Color::Black),
        ];
        let wrong = [PawnCounts {
            isolated: 9,
            doubled: 9,
            passed: [9; PASSED_BUCKETS],
            connected: 9,
            backward: 9,
        }; 2];
        let slot = key as usize & (ENTRIES - 1);
        let mut cache = PawnCache::new();
        // Another placement's entry in the same slot is not taken, but replaced.
        cache.entries[slot] = Entry {
            key: key ^ 1 << 63,
            sides: wrong,
        };
        assert_eq!(cache.probe(&b), expected);
        assert_eq!(cache.entries[slot].key, key);
        // An entry under the same key is trusted: the cache is really read.
        cache.entries[slot].sides = wrong;
        assert_eq!(cache.probe(&b), wrong);
        cache.clear();
        assert_eq!(cache.probe(&b), expected);
    }
}
