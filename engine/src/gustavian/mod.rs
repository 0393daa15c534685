//! The Gustavian 68-square board of Secutor Chess: a 10x8 grid (files `a`-`j`) whose a- and
//! j-file cells between the first and last rank are holes.
//!
//! Submodules each do one job: [`square`] names squares, [`bitboard`] holds sets of them,
//! `attacks` precomputes rays and leaper targets and the Secutor's collision attacks, `zobrist`
//! the key randoms, `fen` reads and writes FEN, `movegen` generates legal moves, `makemove`
//! plays and takes them back, and `slow` is the independent brute-force check test.

mod attacks;
pub mod bitboard;
mod board;
mod eval;
mod fen;
mod makemove;
mod movegen;
mod moves;
mod slow;
pub mod square;
mod zobrist;

#[cfg(test)]
mod tests;

pub use bitboard::Bitboard;
pub use board::Position;
pub use makemove::Undo;
pub use moves::{Move, MoveKind};
pub use square::Square;

use crate::error::FenError;
use crate::position::{MoveInfo, MoveList, Position as PositionTrait};
use crate::types::{Color, Piece, Role};
use crate::variant::Rules;

impl PositionTrait for Position {
    type Square = Square;
    type Move = Move;
    type Undo = Undo;

    fn from_fen(rules: Rules, fen: &str) -> Result<Self, FenError> {
        fen::read(rules, fen)
    }

    fn to_fen(&self) -> String {
        fen::write(self)
    }

    fn rules(&self) -> Rules {
        self.rules
    }

    fn turn(&self) -> Color {
        self.turn
    }

    fn key(&self) -> u64 {
        self.key
    }

    fn recompute_key(&self) -> u64 {
        self.compute_key()
    }

    fn halfmove_clock(&self) -> u32 {
        self.halfmove
    }

    fn fullmove_number(&self) -> u32 {
        self.fullmove
    }

    fn in_check(&self) -> bool {
        self.king_attacked(self.turn)
    }

    fn piece_at(&self, sq: Square) -> Option<Piece> {
        board::decode(self.code_at(sq))
    }

    fn squares() -> &'static [Square] {
        &square::ALL_SQUARES
    }

    #[inline]
    fn legal_moves(&self, moves: &mut MoveList<Move>) {
        self.generate_legal(moves);
    }

    #[inline]
    fn tactical_moves(&self, moves: &mut MoveList<Move>) {
        self.generate_tactical(moves);
    }

    #[inline]
    fn make_move(&mut self, mv: Move) -> Undo {
        self.play(mv)
    }

    #[inline]
    fn unmake_move(&mut self, mv: Move, undo: Undo) {
        self.unplay(mv, undo);
    }

    fn move_info(&self, mv: Move) -> MoveInfo<Square> {
        let en_passant = mv.kind() == MoveKind::EnPassant;
        let castle = mv.castle();
        let capture = if en_passant {
            Some(Role::Pawn)
        } else if castle.is_some() {
            None
        } else {
            board::decode(self.code_at(mv.to())).map(|p| p.role)
        };
        MoveInfo {
            from: mv.from(),
            to: mv.to(),
            role: board::decode(self.code_at(mv.from())).map_or(Role::Pawn, |p| p.role),
            capture,
            promotion: mv.promotion(),
            castle,
            en_passant,
        }
    }

    fn is_insufficient_material(&self) -> bool {
        let others = self.occupied() & !self.by_role[Role::King.index()];
        if others.is_empty() {
            return true;
        }
        let minors = self.by_role[Role::Knight.index()] | self.by_role[Role::Bishop.index()];
        others.count() == 1 && (others & minors).nonempty()
    }

    fn king_attacked_slow(&self, color: Color) -> bool {
        self.slow_king_attacked(color)
    }
}
