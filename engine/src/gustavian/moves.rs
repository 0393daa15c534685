//! The compact move of the Gustavian board: from- and to-square plus a kind, in one `u32`.
//! Captures are not flagged; the board tells what stands on the target square.

use super::square::Square;
use crate::types::{Castle, CastleSide, CastleStyle, Role};

/// What kind of move a [`Move`] is, beyond its two squares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum MoveKind {
    /// Any move that is none of the below (captures included).
    Normal = 0,
    /// A pawn's two-square step.
    DoublePush = 1,
    /// An en-passant capture.
    EnPassant = 2,
    /// Castling; the squares are the king's.
    Castle = 3,
    /// Promotion to a knight.
    PromoteKnight = 4,
    /// Promotion to a bishop.
    PromoteBishop = 5,
    /// Promotion to a rook.
    PromoteRook = 6,
    /// Promotion to a queen.
    PromoteQueen = 7,
    /// Promotion to a Secutor.
    PromoteSecutor = 8,
}

/// The promotion kinds, in the order moves are generated.
pub(crate) const PROMOTIONS: [MoveKind; 5] = [
    MoveKind::PromoteQueen,
    MoveKind::PromoteRook,
    MoveKind::PromoteBishop,
    MoveKind::PromoteKnight,
    MoveKind::PromoteSecutor,
];

/// A move: bits 0-6 from, 7-13 to, 14-17 kind.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Move(u32);

impl Move {
    /// A move of `kind` from `from` to `to` (the king's squares for castling).
    #[inline(always)]
    pub const fn new(from: Square, to: Square, kind: MoveKind) -> Move {
        Move(from.index() as u32 | (to.index() as u32) << 7 | (kind as u32) << 14)
    }

    /// The moving piece's square.
    #[inline(always)]
    pub const fn from(self) -> Square {
        Square::from_index_unchecked((self.0 & 127) as u8)
    }

    /// Where the moving piece (the king, for castling) lands.
    #[inline(always)]
    pub const fn to(self) -> Square {
        Square::from_index_unchecked((self.0 >> 7 & 127) as u8)
    }

    /// The kind.
    #[inline(always)]
    pub const fn kind(self) -> MoveKind {
        match self.0 >> 14 {
            1 => MoveKind::DoublePush,
            2 => MoveKind::EnPassant,
            3 => MoveKind::Castle,
            4 => MoveKind::PromoteKnight,
            5 => MoveKind::PromoteBishop,
            6 => MoveKind::PromoteRook,
            7 => MoveKind::PromoteQueen,
            8 => MoveKind::PromoteSecutor,
            _ => MoveKind::Normal,
        }
    }

    /// The promotion piece, if any.
    #[inline]
    pub const fn promotion(self) -> Option<Role> {
        match self.kind() {
            MoveKind::PromoteKnight => Some(Role::Knight),
            MoveKind::PromoteBishop => Some(Role::Bishop),
            MoveKind::PromoteRook => Some(Role::Rook),
            MoveKind::PromoteQueen => Some(Role::Queen),
            MoveKind::PromoteSecutor => Some(Role::Secutor),
            _ => None,
        }
    }

    /// For a castling move, its side and style, read off the king's target file
    /// (h: O-O, i: O-O-3, d: O-O-O, c: O-O-O-3).
    #[inline]
    pub const fn castle(self) -> Option<Castle> {
        if !matches!(self.kind(), MoveKind::Castle) {
            return None;
        }
        let (side, style) = match self.to().file_of() {
            7 => (CastleSide::King, CastleStyle::Normal),
            8 => (CastleSide::King, CastleStyle::Extended),
            3 => (CastleSide::Queen, CastleStyle::Normal),
            _ => (CastleSide::Queen, CastleStyle::Extended),
        };
        Some(Castle { side, style })
    }
}

impl std::fmt::Debug for Move {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.from(), self.to())?;
        if let Some(p) = self.promotion() {
            write!(f, "{}", p.char())?;
        }
        if matches!(self.kind(), MoveKind::Castle) {
            f.write_str("(castle)")?;
        }
        Ok(())
    }
}
