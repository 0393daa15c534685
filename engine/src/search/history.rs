//! What the search learns about moves and evaluations while it runs, kept across the moves
//! of one game and forgotten by `ucinewgame`:
//! - butterfly history (side, from-square, to-square): quiet moves that cut off before;
//! - continuation history (the previous move's piece and target × this move's): quiet
//!   moves that answered the same move well, one, two and four plies back;
//! - capture history (the capturing piece and target × the captured role): captures that
//!   cut off before, which orders captures of equal victims and breaks MVV's ties;
//! - counter moves: the quiet move that last refuted a given piece-to;
//! - correction histories: how far the static evaluation missed the search's score, by side
//!   to move and pawn structure, and by side to move and each side's placement of its other
//!   pieces, added back to later static evaluations of similar positions.
//!
//! Every table is bounded by the "gravity" update `h += b - h·|b|/MAX`, which keeps values
//! within ±MAX without clamping and lets recent results outweigh old ones.

use crate::eval::CorrectionKeys;
use crate::types::{Color, Role};

/// Distinct (colour, role) pieces.
const PIECES: usize = 2 * Role::ALL.len();
/// Square indices are below the Gustavian grid's 80 cells on every board (the 8x8 board's
/// are below 64). Not a round 128: the continuation table is this squared times the pieces
/// squared, and at 80 it is 2.5 MB instead of 6.4 MB, which stays in cache better and costs
/// less to clear.
const SQUARES: usize = crate::gustavian::square::CELLS;
const _: () = assert!(crate::board8::square::Square::ALL.len() <= SQUARES);
/// Distinct piece-to keys.
const PIECE_TO: usize = PIECES * SQUARES;

/// A moved piece and where it went: the key of the continuation and counter-move tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PieceTo(u16);

impl PieceTo {
    /// No move (the root, or a null move): reads as neutral and is never updated.
    pub const NONE: PieceTo = PieceTo(PIECE_TO as u16);

    /// The key of a `color` `role` arriving on the square of dense index `to` (below
    /// [`CELLS`](crate::gustavian::square::CELLS), the Gustavian grid's cell count).
    #[inline]
    pub fn new(color: Color, role: Role, to: usize) -> PieceTo {
        debug_assert!(to < SQUARES);
        PieceTo(((color.index() * Role::ALL.len() + role.index()) * SQUARES + to) as u16)
    }

    #[inline]
    fn index(self) -> usize {
        usize::from(self.0)
    }

    #[inline]
    fn is_none(self) -> bool {
        self == PieceTo::NONE
    }
}

/// A quiet move as the history tables key it: the mover, its from- and to-squares (dense
/// indices below [`CELLS`](crate::gustavian::square::CELLS), the Gustavian grid's cell
/// count) and its piece-to key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quiet {
    /// The side that moves.
    pub side: Color,
    /// Dense index of the from-square.
    pub from: usize,
    /// Dense index of the to-square.
    pub to: usize,
    /// The moved piece and its target.
    pub piece_to: PieceTo,
}

/// How many plies back each continuation key of a quiet move's score lies: the opponent's
/// last move, the side's own last move, and the side's own move before that.
pub const CONTINUATION_PLIES: [usize; 3] = [1, 2, 4];

/// What each continuation table's score is divided by when a quiet move is scored, ply for ply
/// with [`CONTINUATION_PLIES`]: the side's own move before last speaks at half weight. Kept
/// beside the plies so that a ply added there is both updated and read.
const CONTINUATION_DIVISORS: [i32; CONTINUATION_PLIES.len()] = [1, 1, 2];

/// The continuation keys of the moves [`CONTINUATION_PLIES`] back.
pub type Previous = [PieceTo; CONTINUATION_PLIES.len()];

/// The bound of the butterfly and continuation histories.
pub const HISTORY_MAX: i32 = 16_384;
/// Butterfly entries per side (from × to).
const BUTTERFLY: usize = SQUARES * SQUARES;
/// Correction entries per side, by pawn key.
const CORRECTION_SIZE: usize = 16_384;
/// Correction entries are in 1/32 centipawn.
const CORRECTION_GRAIN: i32 = 32;
/// The bound of a correction entry: ±128 centipawns.
const CORRECTION_MAX: i32 = 128 * CORRECTION_GRAIN;

/// The bonus for a quiet move that cut off at `depth` (and the malus for those tried before it).
#[inline]
pub fn stat_bonus(depth: i32) -> i32 {
    (16 * depth * depth + 32 * depth + 16).min(1_600)
}

#[inline]
fn gravity(h: &mut i32, bonus: i32, max: i32) {
    let b = bonus.clamp(-max, max);
    *h += b - *h * b.abs() / max;
}

/// The tables of one searcher.
pub struct Histories<M> {
    butterfly: Vec<i32>,
    /// `(PIECE_TO + 1)` rows (the last, for [`PieceTo::NONE`], stays zero) of `PIECE_TO`.
    continuation: Vec<i16>,
    /// `PIECE_TO` rows of one entry per captured role.
    capture: Vec<i16>,
    counter: Vec<Option<M>>,
    /// By side to move and pawn key.
    correction: Vec<i32>,
    /// By side to move, the colour whose pieces are keyed, and that colour's non-pawn key.
    non_pawn_correction: Vec<i32>,
}

impl<M: Copy + Eq> Histories<M> {
    /// Empty tables.
    pub fn new() -> Self {
        Histories {
            butterfly: vec![0; 2 * BUTTERFLY],
            continuation: vec![0; (PIECE_TO + 1) * PIECE_TO],
            capture: vec![0; PIECE_TO * Role::ALL.len()],
            counter: vec![None; PIECE_TO + 1],
            correction: vec![0; 2 * CORRECTION_SIZE],
            non_pawn_correction: vec![0; 4 * CORRECTION_SIZE],
        }
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.butterfly.fill(0);
        self.continuation.fill(0);
        self.capture.fill(0);
        self.counter.fill(None);
        self.correction.fill(0);
        self.non_pawn_correction.fill(0);
    }

    #[inline]
    fn butterfly_index(side: Color, from: usize, to: usize) -> usize {
        side.index() * BUTTERFLY + from * SQUARES + to
    }

    #[inline]
    fn continuation_index(prev: PieceTo, this: PieceTo) -> usize {
        prev.index() * PIECE_TO + this.index()
    }

    /// The ordering score of a quiet move: its butterfly history plus its continuation
    /// histories after the moves one (`prev[0]`) and two (`prev[1]`) plies back, and half of
    /// that after the side's own move before last (`prev[2]`, four plies back), which says
    /// less about this move than the two moves just played.
    #[inline]
    pub fn quiet_score(&self, q: Quiet, prev: Previous) -> i32 {
        let continuation: i32 = prev
            .iter()
            .zip(CONTINUATION_DIVISORS)
            .map(|(&p, divisor)| {
                i32::from(self.continuation[Self::continuation_index(p, q.piece_to)]) / divisor
            })
            .sum();
        self.butterfly[Self::butterfly_index(q.side, q.from, q.to)] + continuation
    }

    /// Rewards (positive `bonus`) or punishes a quiet move in every table it is scored by.
    pub fn update_quiet(&mut self, q: Quiet, prev: Previous, bonus: i32) {
        gravity(
            &mut self.butterfly[Self::butterfly_index(q.side, q.from, q.to)],
            bonus,
            HISTORY_MAX,
        );
        for p in prev {
            if !p.is_none() {
                let h = &mut self.continuation[Self::continuation_index(p, q.piece_to)];
                let mut v = i32::from(*h);
                gravity(&mut v, bonus, HISTORY_MAX);
                // Gravity keeps |v| ≤ HISTORY_MAX < i16::MAX.
                *h = v as i16;
            }
        }
    }

    #[inline]
    fn capture_index(piece_to: PieceTo, victim: Role) -> usize {
        piece_to.index() * Role::ALL.len() + victim.index()
    }

    /// The history of the capture of a `victim` by the piece and target of `piece_to`.
    #[inline]
    pub fn capture_score(&self, piece_to: PieceTo, victim: Role) -> i32 {
        i32::from(self.capture[Self::capture_index(piece_to, victim)])
    }

    /// Rewards (positive `bonus`) or punishes a capture.
    pub fn update_capture(&mut self, piece_to: PieceTo, victim: Role, bonus: i32) {
        let h = &mut self.capture[Self::capture_index(piece_to, victim)];
        let mut v = i32::from(*h);
        gravity(&mut v, bonus, HISTORY_MAX);
        // Gravity keeps |v| ≤ HISTORY_MAX < i16::MAX.
        *h = v as i16;
    }

    /// The quiet move that last refuted `prev`.
    #[inline]
    pub fn counter(&self, prev: PieceTo) -> Option<M> {
        self.counter[prev.index()]
    }

    /// Records `mv` as the refutation of `prev`.
    #[inline]
    pub fn set_counter(&mut self, prev: PieceTo, mv: M) {
        if !prev.is_none() {
            self.counter[prev.index()] = Some(mv);
        }
    }

    #[inline]
    fn correction_index(side: Color, pawn_key: u64) -> usize {
        side.index() * CORRECTION_SIZE + (pawn_key as usize & (CORRECTION_SIZE - 1))
    }

    #[inline]
    fn non_pawn_index(side: Color, of: Color, key: u64) -> usize {
        (side.index() * 2 + of.index()) * CORRECTION_SIZE + (key as usize & (CORRECTION_SIZE - 1))
    }

    /// Centipawns to add to `side`'s static evaluation in positions with these keys: the pawn
    /// structure's correction plus the mean of the two sides' piece placements'.
    #[inline]
    pub fn correction(&self, side: Color, keys: CorrectionKeys) -> i32 {
        let pawns = self.correction[Self::correction_index(side, keys.pawns)];
        let pieces: i32 = Color::ALL
            .iter()
            .map(|&of| {
                self.non_pawn_correction[Self::non_pawn_index(side, of, keys.non_pawn[of.index()])]
            })
            .sum();
        (pawns + pieces / 2) / CORRECTION_GRAIN
    }

    /// Learns that a search to `depth` scored `error` centipawns above the (corrected)
    /// static evaluation, in every table the correction reads.
    pub fn update_correction(&mut self, side: Color, keys: CorrectionKeys, error: i32, depth: i32) {
        let bonus =
            (error * CORRECTION_GRAIN * depth / 8).clamp(-CORRECTION_MAX / 4, CORRECTION_MAX / 4);
        gravity(
            &mut self.correction[Self::correction_index(side, keys.pawns)],
            bonus,
            CORRECTION_MAX,
        );
        for of in Color::ALL {
            gravity(
                &mut self.non_pawn_correction
                    [Self::non_pawn_index(side, of, keys.non_pawn[of.index()])],
                bonus,
                CORRECTION_MAX,
            );
        }
    }
}

impl<M: Copy + Eq> Default for Histories<M> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gravity_keeps_values_bounded() {
        let mut h: Histories<u32> = Histories::new();
        let this = PieceTo::new(Color::White, Role::Knight, 21);
        let knight = Quiet {
            side: Color::White,
            from: 6,
            to: 21,
            piece_to: this,
        };
        let prev = [
            PieceTo::new(Color::Black, Role::Pawn, 35),
            PieceTo::NONE,
            PieceTo::NONE,
        ];
        for _ in 0..10_000 {
            h.update_quiet(knight, prev, stat_bonus(40));
        }
        let s = h.quiet_score(knight, prev);
        assert!((1..=2 * HISTORY_MAX).contains(&s), "{s}");
        for _ in 0..10_000 {
            h.update_quiet(knight, prev, -stat_bonus(40));
        }
        let s = h.quiet_score(knight, prev);
        assert!((-2 * HISTORY_MAX..0).contains(&s), "{s}");
        // The NONE row is never written: a move after the root or a null move reads neutral.
        assert_eq!(
            h.quiet_score(
                Quiet {
                    from: 0,
                    to: 0,
                    ..knight
                },
                [PieceTo::NONE; 3]
            ),
            0
        );
    }

    /// The move four plies back keys a continuation of its own, read at half weight: the
    /// same bonus counts fully one or two plies back.
    #[test]
    fn the_move_four_plies_back_counts_half() {
        let mut h: Histories<u32> = Histories::new();
        let knight = Quiet {
            side: Color::White,
            from: 6,
            to: 21,
            piece_to: PieceTo::new(Color::White, Role::Knight, 21),
        };
        let earlier = PieceTo::new(Color::White, Role::Bishop, 12);
        let four_back = [PieceTo::NONE, PieceTo::NONE, earlier];
        h.update_quiet(knight, four_back, stat_bonus(3));
        let butterfly = h.quiet_score(knight, [PieceTo::NONE; 3]);
        let continuation =
            h.quiet_score(knight, [earlier, PieceTo::NONE, PieceTo::NONE]) - butterfly;
        assert!(continuation > 0, "the update reached the continuation");
        assert_eq!(
            h.quiet_score(knight, four_back),
            butterfly + continuation / 2
        );
    }

    #[test]
    fn correction_moves_towards_the_error_and_stays_bounded() {
        let mut h: Histories<u32> = Histories::new();
        let keys = CorrectionKeys {
            pawns: 0xdead_beef,
            non_pawn: [0x1234, 0x5678],
        };
        for _ in 0..1_000 {
            h.update_correction(Color::Black, keys, 500, 12);
        }
        let c = h.correction(Color::Black, keys);
        // Each table is bounded by 128 centipawns; the correction reads the pawn table and
        // the mean of the two piece tables.
        assert!(c > 128 && c <= 256, "{c}");
        assert_eq!(h.correction(Color::White, keys), 0);
        // Another pawn structure with the same pieces keeps the pieces' half.
        let other_pawns = CorrectionKeys {
            pawns: 0x1111,
            ..keys
        };
        assert!(c > h.correction(Color::Black, other_pawns));
        assert!(h.correction(Color::Black, other_pawns) > 0);
        h.clear();
        assert_eq!(h.correction(Color::Black, keys), 0);
    }

    #[test]
    fn capture_history_is_per_piece_target_and_victim_and_stays_bounded() {
        let mut h: Histories<u32> = Histories::new();
        let knight_takes = PieceTo::new(Color::White, Role::Knight, 44);
        for _ in 0..10_000 {
            h.update_capture(knight_takes, Role::Bishop, stat_bonus(40));
        }
        let s = h.capture_score(knight_takes, Role::Bishop);
        assert!((1..=HISTORY_MAX).contains(&s), "{s}");
        // Another victim, piece or colour on the same square has its own entry.
        assert_eq!(h.capture_score(knight_takes, Role::Rook), 0);
        assert_eq!(
            h.capture_score(PieceTo::new(Color::White, Role::Bishop, 44), Role::Bishop),
            0
        );
        assert_eq!(
            h.capture_score(PieceTo::new(Color::Black, Role::Knight, 44), Role::Bishop),
            0
        );
        for _ in 0..10_000 {
            h.update_capture(knight_takes, Role::Bishop, -stat_bonus(40));
        }
        let s = h.capture_score(knight_takes, Role::Bishop);
        assert!((-HISTORY_MAX..0).contains(&s), "{s}");
        h.clear();
        assert_eq!(h.capture_score(knight_takes, Role::Bishop), 0);
    }
}
