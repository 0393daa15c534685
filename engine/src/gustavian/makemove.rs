//! Playing and taking back moves, with the position key and the evaluation sums kept
//! incrementally by `play` and restored by `unplay`.

use super::board::{Position, CASTLE_KEEP, NO_PIECE};
use super::moves::{Move, MoveKind};
use super::square::Square;
use super::zobrist;
use crate::eval::EvalSums;
use crate::types::{Color, Piece, Role};

/// What `make_move` saves for `unmake_move`: the parts of the state a move cannot recompute
/// backwards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Undo {
    captured: u8,
    castling: u8,
    ep: Option<Square>,
    halfmove: u32,
    key: u64,
    /// The evaluation sums before the move: `unplay` restores them as it restores the key.
    sums: EvalSums,
}

/// The rook's squares (from, to) for a castling move whose king lands on `king_to`.
#[inline]
fn castle_rook_squares(king_to: Square) -> (Square, Square) {
    let base = king_to.index() - king_to.file_of() as usize;
    let (from, to) = if king_to.file_of() >= 7 {
        (8, 6)
    } else {
        (1, 4)
    };
    (
        Square::from_index_unchecked((base + from) as u8),
        Square::from_index_unchecked((base + to) as u8),
    )
}

/// The square of the pawn an en-passant capture onto `to` by `us` removes.
#[inline]
fn ep_victim(us: Color, to: Square) -> Square {
    match us {
        Color::White => Square::from_index_unchecked(to.index() as u8 - 10),
        Color::Black => Square::from_index_unchecked(to.index() as u8 + 10),
    }
}

#[inline(always)]
fn code(color: Color, role: Role) -> u8 {
    zobrist::piece_code(Piece::new(color, role))
}

impl Position {
    /// Plays a legal move.
    pub(crate) fn play(&mut self, mv: Move) -> Undo {
        let mut undo = Undo {
            captured: NO_PIECE,
            castling: self.castling,
            ep: self.ep,
            halfmove: self.halfmove,
            key: self.key,
            sums: self.sums,
        };
        let us = self.turn;
        let from = mv.from();
        let to = mv.to();
        let moving = self.code_at(from);
        let mut key = self.key;
        if let Some(ep) = self.ep.take() {
            key ^= zobrist::ep(ep);
        }
        // Saturating/wrapping: clocks come from FEN text and may be at `u32::MAX`.
        self.halfmove = self.halfmove.saturating_add(1);
        match mv.kind() {
            MoveKind::Castle => {
                let (rook_from, rook_to) = castle_rook_squares(to);
                let rook = code(us, Role::Rook);
                self.remove(moving, from);
                self.remove(rook, rook_from);
                self.put(moving, to);
                self.put(rook, rook_to);
                key ^= zobrist::piece(moving, from)
                    ^ zobrist::piece(moving, to)
                    ^ zobrist::piece(rook, rook_from)
                    ^ zobrist::piece(rook, rook_to);
                self.king[us.index()] = to;
            }
            MoveKind::EnPassant => {
                let victim_sq = ep_victim(us, to);
                let victim = self.code_at(victim_sq);
                self.remove(victim, victim_sq);
                self.remove(moving, from);
                self.put(moving, to);
                key ^= zobrist::piece(victim, victim_sq)
                    ^ zobrist::piece(moving, from)
                    ^ zobrist::piece(moving, to);
                undo.captured = victim;
                self.halfmove = 0;
            }
            _ => {
                let captured = self.code_at(to);
                if captured != NO_PIECE {
                    self.remove(captured, to);
                    key ^= zobrist::piece(captured, to);
                    undo.captured = captured;
                    self.halfmove = 0;
                }
                let placed = match mv.promotion() {
                    Some(role) => code(us, role),
                    None => moving,
                };
                self.remove(moving, from);
                self.put(placed, to);
                key ^= zobrist::piece(moving, from) ^ zobrist::piece(placed, to);
                match moving & 7 {
                    0 => self.halfmove = 0,
                    5 => self.king[us.index()] = to,
                    _ => {}
                }
            }
        }
        let rights = self.castling & CASTLE_KEEP[from.index()] & CASTLE_KEEP[to.index()];
        key ^= zobrist::castling(self.castling) ^ zobrist::castling(rights);
        self.castling = rights;
        if us == Color::Black {
            self.fullmove = self.fullmove.wrapping_add(1);
        }
        self.turn = !us;
        key ^= zobrist::side();
        if mv.kind() == MoveKind::DoublePush {
            let ep = Square::from_index_unchecked(((from.index() + to.index()) / 2) as u8);
            if self.any_legal_en_passant(ep) {
                self.ep = Some(ep);
                key ^= zobrist::ep(ep);
            }
        }
        self.key = key;
        undo
    }

    /// Takes back the move `play` played.
    pub(crate) fn unplay(&mut self, mv: Move, undo: Undo) {
        let us = !self.turn;
        self.turn = us;
        if us == Color::Black {
            self.fullmove = self.fullmove.wrapping_sub(1);
        }
        let from = mv.from();
        let to = mv.to();
        match mv.kind() {
            MoveKind::Castle => {
                let (rook_from, rook_to) = castle_rook_squares(to);
                let rook = code(us, Role::Rook);
                let king = code(us, Role::King);
                self.remove_bits(king, to);
                self.remove_bits(rook, rook_to);
                self.put_bits(king, from);
                self.put_bits(rook, rook_from);
                self.king[us.index()] = from;
            }
            MoveKind::EnPassant => {
                let moving = self.code_at(to);
                self.remove_bits(moving, to);
                self.put_bits(moving, from);
                self.put_bits(undo.captured, ep_victim(us, to));
            }
            _ => {
                let placed = self.code_at(to);
                self.remove_bits(placed, to);
                let moving = if mv.promotion().is_some() {
                    code(us, Role::Pawn)
                } else {
                    placed
                };
                self.put_bits(moving, from);
                if undo.captured != NO_PIECE {
                    self.put_bits(undo.captured, to);
                }
                if moving & 7 == 5 {
                    self.king[us.index()] = from;
                }
            }
        }
        self.castling = undo.castling;
        self.ep = undo.ep;
        self.halfmove = undo.halfmove;
        self.key = undo.key;
        self.sums = undo.sums;
    }
}
