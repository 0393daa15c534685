//! The 8x8 board shared by `chess` and `latte`: u64 bitboards, magic slider attacks, legal
//! generation by check and pin masks. The two variants differ only in their start position and
//! in the castling kinds their rule-set allows, both runtime data here.

pub mod attacks;
mod board;
pub mod castling;
mod eval;
mod fen;
pub(crate) mod learned;
mod makemove;
mod movegen;
mod moves;
pub mod net;
pub mod net_file;
pub mod square;
mod tables;
mod zobrist;

pub use board::Board;
pub use makemove::Undo;
pub use moves::{Move, MoveKind};
pub use square::{Bitboard, Square};
pub use tables::for_rules as square_table;

/// Whether `rules` are the 8x8 board's, whose evaluation can carry a network ([`net`]):
/// `engine tune-net` fits one for them, whether or not the engine ships one yet.
pub fn can_have_net(rules: crate::variant::Rules) -> bool {
    rules.variant().geometry() == crate::variant::Geometry::Square8
}

/// The built-in network of `rules`, if they have one.
pub fn builtin_net(rules: crate::variant::Rules) -> Option<&'static net::Net> {
    tables::net(rules).map(net_file::NetRef::net)
}
#[cfg(test)]
pub(crate) use tables::testing as square_table_testing;

use crate::error::FenError;
use crate::position::{MoveInfo, MoveList, Position};
use crate::types::{Color, Piece, Role};
use crate::variant::Rules;

impl Position for Board {
    type Square = Square;
    type Move = Move;
    type Undo = Undo;

    fn from_fen(rules: Rules, fen: &str) -> Result<Self, FenError> {
        Board::from_fen(rules, fen)
    }
    fn to_fen(&self) -> String {
        Board::to_fen(self)
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
        self.checkers().nonempty()
    }
    fn piece_at(&self, sq: Square) -> Option<Piece> {
        self.at(sq)
    }
    fn squares() -> &'static [Square] {
        &Square::ALL
    }
    #[inline]
    fn legal_moves(&self, moves: &mut MoveList<Move>) {
        self.generate(moves)
    }
    #[inline]
    fn tactical_moves(&self, moves: &mut MoveList<Move>) {
        self.generate_tactical(moves)
    }
    #[inline]
    fn make_move(&mut self, mv: Move) -> Undo {
        self.make(mv)
    }
    #[inline]
    fn unmake_move(&mut self, mv: Move, undo: Undo) {
        self.unmake(mv, undo)
    }
    fn move_info(&self, mv: Move) -> MoveInfo<Square> {
        let (from, to) = (mv.from(), mv.to());
        let role = self.at(from).map_or(Role::Pawn, |p| p.role);
        let (capture, promotion, en_passant) = match mv.kind() {
            MoveKind::EnPassant => (Some(Role::Pawn), None, true),
            MoveKind::Castle(_) => (None, None, false),
            MoveKind::Promotion(r) => (self.at(to).map(|p| p.role), Some(r), false),
            MoveKind::Normal | MoveKind::DoublePush => (self.at(to).map(|p| p.role), None, false),
        };
        MoveInfo {
            from,
            to,
            role,
            capture,
            promotion,
            castle: mv.castle_geometry().map(|g| g.castle),
            en_passant,
        }
    }
    fn is_insufficient_material(&self) -> bool {
        self.insufficient_material()
    }
    fn king_attacked_slow(&self, color: Color) -> bool {
        self.king_attacked_brute_force(color)
    }
}
