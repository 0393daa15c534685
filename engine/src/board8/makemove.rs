//! Making and unmaking moves on the 8x8 board, with the key, the evaluation sums and the
//! network's sums kept incrementally by `make` and restored by `unmake`.

use super::board::Board;
use super::castling::{Rights, KING_FROM};
use super::moves::{Move, MoveKind};
use super::net::{Accumulator, Placed};
use super::net_file::NetRef;
use super::square::Square;
use super::zobrist;
use crate::eval::EvalSums;
use crate::types::{Color, Piece, Role};

/// The state a move destroys, handed back to `unmake`.
#[derive(Clone, Copy, Debug)]
pub struct Undo {
    captured: Option<Piece>,
    castling: Rights,
    ep: Option<Square>,
    halfmove: u32,
    key: u64,
    /// The evaluation sums before the move: `unmake` restores them as it restores the key.
    sums: EvalSums,
    /// The network's sums before the move, restored likewise.
    net: Accumulator,
}

impl Board {
    /// Plays a legal move.
    pub fn make(&mut self, mv: Move) -> Undo {
        let mut undo = Undo {
            captured: None,
            castling: self.castling,
            ep: self.ep,
            halfmove: self.halfmove,
            key: self.key,
            sums: self.sums,
            net: self.net,
        };
        let us = self.turn;
        let mut moved = Placed::NONE;
        let (from, to) = (mv.from(), mv.to());
        if let Some(ep) = self.ep.take() {
            self.key ^= zobrist::KEYS.ep_file[ep.file_index() as usize];
        }
        self.halfmove += 1;
        let mut captured = None;
        let kind = mv.kind();
        match kind {
            MoveKind::Castle(_) => {
                if let Some(g) = mv.castle_geometry() {
                    let king = Piece::new(us, Role::King);
                    let rook = Piece::new(us, Role::Rook);
                    self.remove(from, king);
                    moved.lift(king, from);
                    for &r in g.rooks_from {
                        self.remove(r.relative(us), rook);
                        moved.lift(rook, r.relative(us));
                    }
                    for &r in g.rooks_to {
                        self.put(r.relative(us), rook);
                        moved.place(rook, r.relative(us));
                    }
                    self.put(to, king);
                    moved.place(king, to);
                }
            }
            _ => {
                let Some(piece) = self.mailbox[from.index()] else {
                    debug_assert!(false, "no piece on {from} for {mv:?}");
                    return undo;
                };
                moved.lift(piece, from);
                if kind == MoveKind::EnPassant {
                    let victim = to.forward_of(!us);
                    captured = self.mailbox[victim.index()];
                    if let Some(v) = captured {
                        self.remove(victim, v);
                        moved.lift(v, victim);
                    }
                } else if let Some(v) = self.mailbox[to.index()] {
                    captured = Some(v);
                    self.remove(to, v);
                    moved.lift(v, to);
                }
                match kind {
                    MoveKind::Promotion(role) => {
                        self.remove(from, piece);
                        self.put(to, Piece::new(us, role));
                        moved.place(Piece::new(us, role), to);
                    }
                    _ => {
                        self.shift(from, to, piece);
                        moved.place(piece, to);
                    }
                }
                if piece.role == Role::Pawn || captured.is_some() {
                    self.halfmove = 0;
                }
            }
        }
        let rights = self.castling.after_move(from, to);
        if rights != self.castling {
            self.key ^= zobrist::KEYS.castling[self.castling.bits() as usize]
                ^ zobrist::KEYS.castling[rights.bits() as usize];
            self.castling = rights;
        }
        self.turn = !us;
        self.key ^= zobrist::KEYS.black;
        if us == Color::Black {
            self.fullmove += 1;
        }
        if kind == MoveKind::DoublePush {
            let ep = from.forward_of(us);
            if self.ep_capture_legal(ep) {
                self.ep = Some(ep);
                self.key ^= zobrist::KEYS.ep_file[ep.file_index() as usize];
            }
        }
        if let Some(net) = self.network.map(NetRef::net) {
            let kings = Color::ALL.map(|c| self.king_of(c).file_index());
            if let Some(view) = self.net.play(net, kings, us, &moved) {
                let mut sums = self.net;
                sums.refresh(net, self, view);
                self.net = sums;
            }
        }
        undo.captured = captured;
        undo
    }

    /// Takes back `mv`, which `make` played and answered with `undo`.
    pub fn unmake(&mut self, mv: Move, undo: Undo) {
        self.turn = !self.turn;
        let us = self.turn;
        if us == Color::Black {
            self.fullmove -= 1;
        }
        let (from, to) = (mv.from(), mv.to());
        let kind = mv.kind();
        match kind {
            MoveKind::Castle(_) => {
                if let Some(g) = mv.castle_geometry() {
                    let king = Piece::new(us, Role::King);
                    let rook = Piece::new(us, Role::Rook);
                    self.remove_bits(to, king);
                    for &r in g.rooks_to {
                        self.remove_bits(r.relative(us), rook);
                    }
                    for &r in g.rooks_from {
                        self.put_bits(r.relative(us), rook);
                    }
                    self.put_bits(KING_FROM.relative(us), king);
                }
            }
            _ => {
                if let Some(placed) = self.mailbox[to.index()] {
                    self.remove_bits(to, placed);
                    let piece = match kind {
                        MoveKind::Promotion(_) => Piece::new(us, Role::Pawn),
                        _ => placed,
                    };
                    self.put_bits(from, piece);
                }
                if let Some(v) = undo.captured {
                    let at = if kind == MoveKind::EnPassant {
                        to.forward_of(!us)
                    } else {
                        to
                    };
                    self.put_bits(at, v);
                }
            }
        }
        self.castling = undo.castling;
        self.ep = undo.ep;
        self.halfmove = undo.halfmove;
        self.key = undo.key;
        self.sums = undo.sums;
        self.net = undo.net;
    }
}
