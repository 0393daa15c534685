//! The position of the Gustavian board: piece sets, mailbox, state, and the attack test that
//! legality, check detection and castling share.

use super::attacks::{
    bishop_attacks, diagonal_lines, king_attacks, knight_attacks, orthogonal_lines, pawn_attacks,
    rook_attacks, secutor_attacks, secutor_threats,
};
use super::bitboard::Bitboard;
use super::eval::piece_square;
use super::square::{Square, CELLS};
use super::zobrist;
use crate::eval::EvalSums;
use crate::types::{Color, Piece, Role};
use crate::variant::Rules;

/// Mailbox code of an empty square.
pub(crate) const NO_PIECE: u8 = 0xFF;

/// Castling right bits: White king side, White queen side, Black king side, Black queen side.
pub(crate) const WK: u8 = 1;
pub(crate) const WQ: u8 = 2;
pub(crate) const BK: u8 = 4;
pub(crate) const BQ: u8 = 8;

/// Rights kept when a move leaves from or lands on each grid cell: a king move clears its
/// side's rights, a move from or onto a rook's start square clears that rook's right.
pub(crate) static CASTLE_KEEP: [u8; CELLS] = build_castle_keep();

const fn build_castle_keep() -> [u8; CELLS] {
    let mut t = [0x0Fu8; CELLS];
    t[5] = !(WK | WQ) & 0x0F; // f1
    t[8] = !WK & 0x0F; // i1
    t[1] = !WQ & 0x0F; // b1
    t[75] = !(BK | BQ) & 0x0F; // f8
    t[78] = !BK & 0x0F; // i8
    t[71] = !BQ & 0x0F; // b8
    t
}

/// Squares of the castling table, by grid index (White's; Black's are 70 higher).
pub(crate) mod csq {
    pub(crate) const B: usize = 1;
    pub(crate) const C: usize = 2;
    pub(crate) const D: usize = 3;
    pub(crate) const E: usize = 4;
    pub(crate) const F: usize = 5;
    pub(crate) const G: usize = 6;
    pub(crate) const H: usize = 7;
    pub(crate) const I: usize = 8;
}

/// A position of Secutor Chess on the Gustavian board.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Position {
    pub(crate) rules: Rules,
    pub(crate) by_color: [Bitboard; 2],
    pub(crate) by_role: [Bitboard; 7],
    /// Piece code (`colour * 8 + role`) per grid cell, [`NO_PIECE`] when empty.
    pub(crate) mailbox: [u8; CELLS],
    pub(crate) king: [Square; 2],
    pub(crate) turn: Color,
    /// [`WK`] | [`WQ`] | [`BK`] | [`BQ`].
    pub(crate) castling: u8,
    /// Held only while an en-passant capture is legal.
    pub(crate) ep: Option<Square>,
    pub(crate) halfmove: u32,
    pub(crate) fullmove: u32,
    pub(crate) key: u64,
    /// Material counts, piece-square sums and pawn key: kept by `put` and `remove`, restored by
    /// `unplay`; equal to `recount_eval_sums()`.
    pub(crate) sums: EvalSums,
}

/// Decodes a mailbox code.
#[inline(always)]
pub(crate) fn decode(code: u8) -> Option<Piece> {
    if code == NO_PIECE {
        return None;
    }
    let color = if code >= 8 {
        Color::Black
    } else {
        Color::White
    };
    let role = Role::ALL.get((code & 7) as usize).copied()?;
    Some(Piece::new(color, role))
}

impl Position {
    /// An empty board with no king yet; FEN reading fills it.
    pub(crate) fn empty(rules: Rules) -> Position {
        let no_king = Square::from_index_unchecked(0);
        Position {
            rules,
            by_color: [Bitboard::EMPTY; 2],
            by_role: [Bitboard::EMPTY; 7],
            mailbox: [NO_PIECE; CELLS],
            king: [no_king; 2],
            turn: Color::White,
            castling: 0,
            ep: None,
            halfmove: 0,
            fullmove: 1,
            key: 0,
            sums: EvalSums::default(),
        }
    }

    /// All occupied squares.
    #[inline(always)]
    pub(crate) fn occupied(&self) -> Bitboard {
        self.by_color[0] | self.by_color[1]
    }

    /// Pieces of `color` and `role`.
    #[inline(always)]
    pub(crate) fn pieces(&self, color: Color, role: Role) -> Bitboard {
        self.by_color[color.index()] & self.by_role[role.index()]
    }

    /// Puts a piece (by code) on an empty square, keeping the evaluation sums but not the
    /// key.
    #[inline(always)]
    pub(crate) fn put(&mut self, code: u8, sq: Square) {
        self.put_bits(code, sq);
        if let Some(p) = decode(code) {
            let key = zobrist::piece(code, sq);
            self.sums
                .place(p.color, p.role, piece_square(code, sq), key);
        }
    }

    /// Removes the piece (by code) from its square, keeping the evaluation sums but not the
    /// key.
    #[inline(always)]
    pub(crate) fn remove(&mut self, code: u8, sq: Square) {
        self.remove_bits(code, sq);
        if let Some(p) = decode(code) {
            let key = zobrist::piece(code, sq);
            self.sums.lift(p.color, p.role, piece_square(code, sq), key);
        }
    }

    /// [`put`](Self::put) for `unplay`, which restores the sums it saved: the piece sets and
    /// the mailbox only.
    #[inline(always)]
    pub(crate) fn put_bits(&mut self, code: u8, sq: Square) {
        let b = Bitboard::from_square(sq);
        self.by_color[(code >> 3) as usize] |= b;
        self.by_role[(code & 7) as usize] |= b;
        self.mailbox[sq.index()] = code;
    }

    /// [`remove`](Self::remove) for `unplay`: the piece sets and the mailbox only.
    #[inline(always)]
    pub(crate) fn remove_bits(&mut self, code: u8, sq: Square) {
        let b = Bitboard::from_square(sq);
        self.by_color[(code >> 3) as usize] ^= b;
        self.by_role[(code & 7) as usize] ^= b;
        self.mailbox[sq.index()] = NO_PIECE;
    }

    /// The piece code on a square.
    #[inline(always)]
    pub(crate) fn code_at(&self, sq: Square) -> u8 {
        self.mailbox[sq.index()]
    }

    /// Whether `sq` is attacked by `by`'s pieces under occupancy `occ`, ignoring `by`'s pieces
    /// on `exclude` (pieces a hypothetical move captures). `occ` may differ from the board's
    /// occupancy: callers pass the occupancy after a move to test its legality.
    #[inline]
    pub(crate) fn attacked_by(
        &self,
        sq: Square,
        by: Color,
        occ: Bitboard,
        exclude: Bitboard,
    ) -> bool {
        self.attacked_by_ordinary(sq, by, occ, exclude)
            || (self.pieces(by, Role::Secutor) & !exclude & secutor_threats(sq))
                .any(|s| secutor_attacks(s, occ).has(sq))
    }

    /// [`attacked_by`](Self::attacked_by) for every piece but the Secutors: the part that
    /// does not depend on the occupancy of `sq` itself.
    #[inline]
    pub(crate) fn attacked_by_ordinary(
        &self,
        sq: Square,
        by: Color,
        occ: Bitboard,
        exclude: Bitboard,
    ) -> bool {
        let them = self.by_color[by.index()] & !exclude;
        let r = &self.by_role;
        if (pawn_attacks(!by, sq) & them & r[Role::Pawn.index()]).nonempty()
            || (knight_attacks(sq) & them & r[Role::Knight.index()]).nonempty()
            || (king_attacks(sq) & them & r[Role::King.index()]).nonempty()
        {
            return true;
        }
        let queens = r[Role::Queen.index()];
        // The ray walks are skipped when no slider of the kind stands on any line of `sq`.
        let bq = them & (r[Role::Bishop.index()] | queens);
        let rq = them & (r[Role::Rook.index()] | queens);
        ((diagonal_lines(sq) & bq).nonempty() && (bishop_attacks(sq, occ) & bq).nonempty())
            || ((orthogonal_lines(sq) & rq).nonempty() && (rook_attacks(sq, occ) & rq).nonempty())
    }

    /// Whether `color`'s king is attacked on the current board.
    #[inline]
    pub(crate) fn king_attacked(&self, color: Color) -> bool {
        self.attacked_by(
            self.king[color.index()],
            !color,
            self.occupied(),
            Bitboard::EMPTY,
        )
    }

    /// The position key from scratch.
    pub(crate) fn compute_key(&self) -> u64 {
        let mut k = zobrist::turn(self.turn) ^ zobrist::castling(self.castling);
        for sq in self.occupied() {
            k ^= zobrist::piece(self.code_at(sq), sq);
        }
        if let Some(ep) = self.ep {
            k ^= zobrist::ep(ep);
        }
        k
    }
}
