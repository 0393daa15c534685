//! The compact move of the 8x8 board.

use std::fmt;

use super::castling::{CastleGeometry, KINDS};
use super::square::Square;
use crate::types::Role;

/// A move in 16 bits: from (6), to (6), kind (4). For castling, `to` is the king's destination
/// and the kind names which castling (orthodox, Luft or Two Rooks, on which wing).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Move(u16);

/// What kind of move a [`Move`] is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum MoveKind {
    /// A plain move or capture.
    Normal,
    /// A pawn's two-square step.
    DoublePush,
    /// An en-passant capture.
    EnPassant,
    /// A castling of one of the six kinds (index into the castling table).
    Castle(u8),
    /// A promotion to the given piece.
    Promotion(Role),
}

const DOUBLE: u16 = 1;
const EP: u16 = 2;
const CASTLE0: u16 = 3;
const PROMO0: u16 = 9;
const PROMOS: [Role; 4] = [Role::Knight, Role::Bishop, Role::Rook, Role::Queen];

impl Move {
    #[inline]
    const fn with(from: Square, to: Square, flag: u16) -> Move {
        Move(from.index() as u16 | (to.index() as u16) << 6 | flag << 12)
    }

    /// A plain move or capture.
    #[inline]
    pub const fn normal(from: Square, to: Square) -> Move {
        Move::with(from, to, 0)
    }

    /// A pawn double step.
    #[inline]
    pub const fn double_push(from: Square, to: Square) -> Move {
        Move::with(from, to, DOUBLE)
    }

    /// An en-passant capture onto `to`.
    #[inline]
    pub const fn en_passant(from: Square, to: Square) -> Move {
        Move::with(from, to, EP)
    }

    /// Castling of kind `kind` (index into the castling table).
    #[inline]
    pub(crate) const fn castle(from: Square, to: Square, kind: usize) -> Move {
        Move::with(from, to, CASTLE0 + kind as u16)
    }

    /// The four promotions of a pawn move, knight first.
    #[inline]
    pub const fn promotions(from: Square, to: Square) -> [Move; 4] {
        [
            Move::with(from, to, PROMO0),
            Move::with(from, to, PROMO0 + 1),
            Move::with(from, to, PROMO0 + 2),
            Move::with(from, to, PROMO0 + 3),
        ]
    }

    /// The raw 16 bits.
    #[inline]
    pub const fn bits(self) -> u16 {
        self.0
    }

    /// The origin square.
    #[inline]
    pub const fn from(self) -> Square {
        Square::new_masked(self.0 as u32)
    }

    /// The destination square (the king's, for castling).
    #[inline]
    pub const fn to(self) -> Square {
        Square::new_masked((self.0 >> 6) as u32)
    }

    #[inline]
    const fn flag(self) -> u16 {
        self.0 >> 12
    }

    /// The move's kind.
    #[inline]
    pub fn kind(self) -> MoveKind {
        match self.flag() {
            0 => MoveKind::Normal,
            DOUBLE => MoveKind::DoublePush,
            EP => MoveKind::EnPassant,
            f @ CASTLE0..PROMO0 => MoveKind::Castle((f - CASTLE0) as u8),
            f => MoveKind::Promotion(PROMOS[((f - PROMO0) & 3) as usize]),
        }
    }

    /// The castling table entry, for castling moves.
    #[inline]
    pub(crate) fn castle_geometry(self) -> Option<&'static CastleGeometry> {
        match self.kind() {
            MoveKind::Castle(i) => KINDS.get(i as usize),
            _ => None,
        }
    }
}

impl fmt::Debug for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}:{:?}", self.from(), self.to(), self.kind())
    }
}
