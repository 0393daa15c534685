//! The evaluation terms, written once for every board.
//!
//! The 8x8 board (`board8`, u64 bitboards) and the Gustavian board (`gustavian`, u128
//! bitboards on a 10x8 grid with holes) score a position with the same terms: tapered
//! material, piece-square shapes, mobility, rooks on open files, bishop pair, attackers of the
//! enemy king's zone, pawn structure, king shelter, castling. Written twice, the copies would
//! drift apart with every tuning change, so the terms live here once, in [`evaluate_side`].
//!
//! A board takes part by implementing [`EvalBoard`]: its piece sets, attack sets and file
//! masks behind one API ([`BitSet`] for its bitboard type), plus a few hooks where the
//! geometries genuinely differ (the Secutor, rook files on the Gustavian board, its corner
//! kings); the hooks' defaults are the orthodox 8x8 behaviour. [`evaluate`] is generic, not
//! `dyn`: it is monomorphised per board, so every board method is a static, inlinable call and
//! the code is as fast as the hand-written per-board evaluations it replaced.

use std::ops::{BitAnd, BitOr, Not};

use super::{material, phase_weight, taper};
use crate::params::Params;
use crate::position::SquareName;
use crate::types::{Color, Role};

/// The set operations the terms need from a board's bitboard type, whose iteration yields
/// squares `Sq`. `!` may complement within the board's real squares only: the terms always
/// intersect its result with a set of real squares.
pub(crate) trait BitSet<Sq>:
    Copy + BitAnd<Output = Self> + BitOr<Output = Self> + Not<Output = Self> + IntoIterator<Item = Sq>
{
    /// Number of squares.
    fn count(self) -> u32;
    /// Whether no square is set.
    fn is_empty(self) -> bool;
    /// Whether more than one square is set.
    fn more_than_one(self) -> bool;

    /// Whether some square is set.
    #[inline]
    fn nonempty(self) -> bool {
        !self.is_empty()
    }
}

/// What the evaluation terms need from a board: pieces, attack sets, masks, and the hooks
/// where the boards genuinely differ.
pub(crate) trait EvalBoard {
    /// A square of the board.
    type Square: SquareName;
    /// A set of squares of the board.
    type Bitboard: BitSet<Self::Square>;
    /// Files of the board (the doubled-pawn term visits each).
    const FILES: u8;

    /// `color`'s pieces.
    fn color_bb(&self, color: Color) -> Self::Bitboard;
    /// `color`'s pieces of `role`.
    fn pieces(&self, color: Color, role: Role) -> Self::Bitboard;
    /// Every occupied square.
    fn occupied(&self) -> Self::Bitboard;
    /// `color`'s king square.
    fn king(&self, color: Color) -> Self::Square;
    /// The role of the piece on `sq`, if any.
    fn role_at(&self, sq: Self::Square) -> Option<Role>;
    /// How many castling rights `color` still holds.
    fn castling_rights(&self, color: Color) -> i32;

    /// The set holding only `sq`.
    fn square_bb(sq: Self::Square) -> Self::Bitboard;
    /// Unscaled (mg, eg) piece-square value of a `color` piece of `role` on `sq`.
    fn pst(role: Role, sq: Self::Square, color: Color) -> (i32, i32);
    /// The rank of `sq` counted from `color`'s side (0 = own back rank).
    fn relative_rank(color: Color, sq: Self::Square) -> u8;
    /// The (real) squares of a file.
    fn file_mask(file: u8) -> Self::Bitboard;
    /// The squares of the files next to `file`.
    fn adjacent_files(file: u8) -> Self::Bitboard;
    /// Squares strictly in front of `sq` from `color`'s side, on its file and the adjacent
    /// ones: where an enemy pawn stops a passer.
    fn passed_span(color: Color, sq: Self::Square) -> Self::Bitboard;
    /// `set` moved one rank forward from `color`'s side.
    fn forward(color: Color, set: Self::Bitboard) -> Self::Bitboard;
    /// Every square `color`'s `pawns` attack.
    fn pawn_attack_set(color: Color, pawns: Self::Bitboard) -> Self::Bitboard;
    /// Knight targets from `sq`.
    fn knight_attacks(sq: Self::Square) -> Self::Bitboard;
    /// Bishop attacks from `sq` under occupancy `occ`.
    fn bishop_attacks(sq: Self::Square, occ: Self::Bitboard) -> Self::Bitboard;
    /// Rook attacks from `sq` under occupancy `occ`.
    fn rook_attacks(sq: Self::Square, occ: Self::Bitboard) -> Self::Bitboard;
    /// Queen attacks from `sq` under occupancy `occ`.
    fn queen_attacks(sq: Self::Square, occ: Self::Bitboard) -> Self::Bitboard;
    /// King targets from `sq`.
    fn king_attacks(sq: Self::Square) -> Self::Bitboard;

    /// A Secutor's rook-like slide and its collision attack set from `sq`; `None` on boards
    /// without Secutors.
    #[inline]
    fn secutor_reach(
        _sq: Self::Square,
        _occ: Self::Bitboard,
    ) -> Option<(Self::Bitboard, Self::Bitboard)> {
        None
    }

    /// Whether a rook on `file` earns the open and semi-open file bonuses.
    #[inline]
    fn rook_file_counts(_file: u8) -> bool {
        true
    }

    /// The file whose pawns shelter a king on `sq`.
    #[inline]
    fn king_file(sq: Self::Square) -> u8 {
        sq.file()
    }
}

/// Static evaluation in centipawns from the point of view of `turn`, the side to move.
#[inline]
pub(crate) fn evaluate<B: EvalBoard>(board: &B, turn: Color, p: &Params) -> i32 {
    let (wm, we, wp) = evaluate_side(board, Color::White, p);
    let (bm, be, bp) = evaluate_side(board, Color::Black, p);
    let white = taper(wm - bm, we - be, wp + bp);
    let score = if turn == Color::White { white } else { -white };
    score + p.tempo
}

/// (mg, eg, phase) of `color`'s pieces from its own point of view.
fn evaluate_side<B: EvalBoard>(board: &B, color: Color, p: &Params) -> (i32, i32, i32) {
    let them = !color;
    let (mut mg, mut eg, mut phase) = (0, 0, 0);
    let own = board.color_bb(color);
    let occ = board.occupied();
    let own_pawns = board.pieces(color, Role::Pawn);
    let their_pawns = board.pieces(them, Role::Pawn);
    let their_pawn_attacks = B::pawn_attack_set(them, their_pawns);
    let safe = !own & !their_pawn_attacks;
    let their_king = board.king(them);
    let king_zone = B::king_attacks(their_king) | B::square_bb(their_king);
    let mut attackers = 0;
    let (mut pst_mg, mut pst_eg) = (0, 0);

    for sq in own {
        let Some(role) = board.role_at(sq) else {
            continue;
        };
        let (m, e) = material(role, p);
        mg += m;
        eg += e;
        phase += phase_weight(role);
        let (pm, pe) = B::pst(role, sq, color);
        pst_mg += pm;
        pst_eg += pe;
        if role == Role::Secutor {
            // Its quiet slides are its mobility; the enemy pieces it could capture by
            // collision right now are a threat of their own.
            let Some((slide, hits)) = B::secutor_reach(sq, occ) else {
                continue;
            };
            if (hits & king_zone).nonempty() {
                attackers += 1;
            }
            let n = (slide & !occ & !their_pawn_attacks).count() as i32;
            mg += p.secutor_mob_mg * (n - 7);
            eg += p.secutor_mob_eg * (n - 7);
            let victims = board.color_bb(them) & !board.pieces(them, Role::King);
            let c = (hits & victims).count() as i32;
            mg += p.secutor_capture_mg * c;
            eg += p.secutor_capture_eg * c;
            continue;
        }
        let reach = match role {
            Role::Knight => B::knight_attacks(sq),
            Role::Bishop => B::bishop_attacks(sq, occ),
            Role::Rook => B::rook_attacks(sq, occ),
            Role::Queen => B::queen_attacks(sq, occ),
            _ => continue,
        };
        if (reach & king_zone).nonempty() {
            attackers += 1;
        }
        let n = (reach & safe).count() as i32;
        let (wm, we, centre) = match role {
            Role::Knight => (p.knight_mob_mg, p.knight_mob_eg, 4),
            Role::Bishop => (p.bishop_mob_mg, p.bishop_mob_eg, 6),
            Role::Rook => (p.rook_mob_mg, p.rook_mob_eg, 7),
            _ => (p.queen_mob_mg, p.queen_mob_eg, 13),
        };
        mg += wm * (n - centre);
        eg += we * (n - centre);
        if role == Role::Rook && B::rook_file_counts(sq.file()) {
            let file = B::file_mask(sq.file());
            if (file & own_pawns).is_empty() {
                if (file & their_pawns).is_empty() {
                    mg += p.rook_open_mg;
                    eg += p.rook_open_eg;
                } else {
                    mg += p.rook_semi_mg;
                    eg += p.rook_semi_eg;
                }
            }
        }
    }
    mg += pst_mg * p.pst_scale / 100;
    eg += pst_eg * p.pst_scale / 100;
    if board.pieces(color, Role::Bishop).more_than_one() {
        mg += p.bishop_pair_mg;
        eg += p.bishop_pair_eg;
    }
    // Attacks on the enemy king's zone grow faster than linearly with the attackers.
    mg += p.king_attack_mg * attackers * attackers / 2;

    for sq in own_pawns {
        if (own_pawns & B::adjacent_files(sq.file())).is_empty() {
            mg -= p.isolated_mg;
            eg -= p.isolated_eg;
        }
        if (B::passed_span(color, sq) & their_pawns).is_empty() {
            let (bm, be) = match B::relative_rank(color, sq) {
                1 => (p.passed2_mg, p.passed2_eg),
                2 => (p.passed3_mg, p.passed3_eg),
                3 => (p.passed4_mg, p.passed4_eg),
                4 => (p.passed5_mg, p.passed5_eg),
                5 => (p.passed6_mg, p.passed6_eg),
                _ => (p.passed7_mg, p.passed7_eg),
            };
            mg += bm;
            eg += be;
        }
    }
    for f in 0..B::FILES {
        let n = (own_pawns & B::file_mask(f)).count() as i32;
        if n > 1 {
            mg -= p.doubled_mg * (n - 1);
            eg -= p.doubled_eg * (n - 1);
        }
    }

    // King safety: pawns in front of the king, an open king file, castling.
    let king = board.king(color);
    let near = B::king_attacks(king);
    let front = B::passed_span(color, king) & (near | B::forward(color, near));
    mg += p.shelter_mg * (front & own_pawns).count().min(3) as i32;
    if (B::file_mask(B::king_file(king)) & own_pawns).is_empty() {
        mg -= p.king_open_file_mg;
    }
    // The king starts on the e-file (8x8) or the f-file (Gustavian); castled means the back
    // rank away from the files d-f.
    if B::relative_rank(color, king) == 0 && !(3..=5).contains(&king.file()) {
        mg += p.castled_mg;
    }
    mg += p.castling_right_mg * board.castling_rights(color);
    (mg, eg, phase)
}
