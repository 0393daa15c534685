//! The 8x8 position: piece placement, side to move, castling rights, en passant, clocks, key.

use super::attacks;
use super::castling::Rights;
use super::eval::piece_square;
use super::net::Accumulator;
use super::net_file::NetRef;
use super::square::{Bitboard, Square};
use super::zobrist;
use crate::eval::EvalSums;
use crate::types::{Color, Piece, Role};
use crate::variant::Rules;

/// A position of `chess` or `latte`.
///
/// Invariants (kept by the FEN reader and `make_move`): one king per side; `castling` holds
/// only rights whose pieces stand on their squares (and no G/B without its K/Q, and none under
/// `normal`); `ep` is set only when an en-passant capture is legal; `key` equals
/// `recompute_key()`; `sums` equals `recount_eval_sums()`; `net` equals `Accumulator::fresh`
/// of `network` when there is one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Board {
    pub(crate) by_role: [Bitboard; 6],
    pub(crate) by_color: [Bitboard; 2],
    pub(crate) occupied: Bitboard,
    pub(crate) mailbox: [Option<Piece>; 64],
    pub(crate) turn: Color,
    pub(crate) castling: Rights,
    pub(crate) ep: Option<Square>,
    pub(crate) halfmove: u32,
    pub(crate) fullmove: u32,
    pub(crate) key: u64,
    /// Material counts, piece-square sums and pawn key: kept by `put`, `remove` and `shift`,
    /// restored by `unmake`.
    pub(crate) sums: EvalSums,
    /// The network's hidden sums of each side's view ([`super::net`]), under rules with a
    /// network: kept by `make`, restored by `unmake`, equal to `Accumulator::fresh`.
    pub(crate) net: Accumulator,
    /// The network the evaluation reads: its rules' built-in one (none for rules without),
    /// or one loaded from a file ([`Board::use_network`]).
    pub(crate) network: Option<NetRef>,
    pub(crate) rules: Rules,
}

impl Board {
    pub(crate) fn empty(rules: Rules) -> Board {
        Board {
            by_role: [Bitboard::EMPTY; 6],
            by_color: [Bitboard::EMPTY; 2],
            occupied: Bitboard::EMPTY,
            mailbox: [None; 64],
            turn: Color::White,
            castling: Rights::NONE,
            ep: None,
            halfmove: 0,
            fullmove: 1,
            key: 0,
            sums: EvalSums::default(),
            net: Accumulator::default(),
            network: None,
            rules,
        }
    }

    /// Evaluates with `network` from now on (its hidden sums made afresh): a network loaded
    /// from a file, which [`LoadedNet::for_rules`](super::net_file::LoadedNet::for_rules) has
    /// checked is for these rules.
    pub fn use_network(&mut self, network: NetRef) {
        self.net = Accumulator::fresh(network.net(), self);
        self.network = Some(network);
    }

    /// The squares of `color`'s pieces.
    #[inline]
    pub fn color_bb(&self, color: Color) -> Bitboard {
        self.by_color[color.index()]
    }

    /// The squares of pieces of `role` (either colour).
    #[inline]
    pub fn role_bb(&self, role: Role) -> Bitboard {
        self.by_role[role.index()]
    }

    /// The squares of `color`'s pieces of `role`.
    #[inline]
    pub fn pieces(&self, color: Color, role: Role) -> Bitboard {
        self.by_role[role.index()] & self.by_color[color.index()]
    }

    /// Every occupied square.
    #[inline]
    pub fn occupied(&self) -> Bitboard {
        self.occupied
    }

    /// `color`'s king square. The invariant guarantees exactly one king.
    #[inline]
    pub fn king_of(&self, color: Color) -> Square {
        self.pieces(color, Role::King).lsb()
    }

    /// The piece on `sq`.
    #[inline]
    pub fn at(&self, sq: Square) -> Option<Piece> {
        self.mailbox[sq.index()]
    }

    /// Puts `piece` on the empty square `sq`, keeping the key and the evaluation sums.
    #[inline]
    pub(crate) fn put(&mut self, sq: Square, piece: Piece) {
        self.put_bits(sq, piece);
        let key = zobrist::piece(piece, sq.index());
        self.key ^= key;
        self.sums
            .place(piece.color, piece.role, piece_square(piece, sq), key);
    }

    /// Removes `piece` from `sq`, keeping the key and the evaluation sums.
    #[inline]
    pub(crate) fn remove(&mut self, sq: Square, piece: Piece) {
        self.remove_bits(sq, piece);
        let key = zobrist::piece(piece, sq.index());
        self.key ^= key;
        self.sums
            .lift(piece.color, piece.role, piece_square(piece, sq), key);
    }

    /// Moves `piece` from `from` to the empty square `to`, keeping the key and the evaluation
    /// sums: [`remove`](Self::remove) then [`put`](Self::put) in one step.
    #[inline]
    pub(crate) fn shift(&mut self, from: Square, to: Square, piece: Piece) {
        let bb = from.bb() | to.bb();
        self.by_role[piece.role.index()] ^= bb;
        self.by_color[piece.color.index()] ^= bb;
        self.occupied ^= bb;
        self.mailbox[from.index()] = None;
        self.mailbox[to.index()] = Some(piece);
        let keys = zobrist::piece(piece, from.index()) ^ zobrist::piece(piece, to.index());
        self.key ^= keys;
        let (a, b) = (piece_square(piece, from), piece_square(piece, to));
        self.sums.shift(piece.color, piece.role, a, b, keys);
    }

    /// [`put`](Self::put) for `unmake`, which restores the key and the sums it saved instead
    /// of updating them piece by piece: the piece sets and the mailbox only.
    #[inline]
    pub(crate) fn put_bits(&mut self, sq: Square, piece: Piece) {
        let bb = sq.bb();
        self.by_role[piece.role.index()] |= bb;
        self.by_color[piece.color.index()] |= bb;
        self.occupied |= bb;
        self.mailbox[sq.index()] = Some(piece);
    }

    /// [`remove`](Self::remove) for `unmake`: the piece sets and the mailbox only.
    #[inline]
    pub(crate) fn remove_bits(&mut self, sq: Square, piece: Piece) {
        let bb = sq.bb();
        self.by_role[piece.role.index()] ^= bb;
        self.by_color[piece.color.index()] ^= bb;
        self.occupied ^= bb;
        self.mailbox[sq.index()] = None;
    }

    /// Pieces of `by` attacking `sq` when the board's occupancy is `occupied`.
    #[inline]
    pub fn attackers_to(&self, sq: Square, by: Color, occupied: Bitboard) -> Bitboard {
        let them = self.color_bb(by);
        let rooks = self.by_role[Role::Rook.index()] | self.by_role[Role::Queen.index()];
        let bishops = self.by_role[Role::Bishop.index()] | self.by_role[Role::Queen.index()];
        ((attacks::rook(sq, occupied) & rooks)
            | (attacks::bishop(sq, occupied) & bishops)
            | (attacks::knight(sq) & self.by_role[Role::Knight.index()])
            | (attacks::king(sq) & self.by_role[Role::King.index()])
            | (attacks::pawn(!by, sq) & self.by_role[Role::Pawn.index()]))
            & them
    }

    /// Whether `by` attacks `sq` on the current board.
    #[inline]
    pub fn is_attacked(&self, sq: Square, by: Color) -> bool {
        self.attackers_to(sq, by, self.occupied).nonempty()
    }

    /// The pieces giving check to the side to move.
    #[inline]
    pub fn checkers(&self) -> Bitboard {
        self.attackers_to(self.king_of(self.turn), !self.turn, self.occupied)
    }

    /// The key from scratch: pieces, side, castling rights and the (legal-only) ep file.
    pub fn compute_key(&self) -> u64 {
        let mut key =
            zobrist::side(self.turn) ^ zobrist::KEYS.castling[self.castling.bits() as usize];
        for sq in self.occupied {
            if let Some(p) = self.mailbox[sq.index()] {
                key ^= zobrist::piece(p, sq.index());
            }
        }
        if let Some(ep) = self.ep {
            key ^= zobrist::KEYS.ep_file[ep.file_index() as usize];
        }
        key
    }

    /// Whether the side to move could capture en passant on `ep` without exposing its king.
    /// `ep` is the square behind a pawn of the other side that just double-stepped.
    pub(crate) fn ep_capture_legal(&self, ep: Square) -> bool {
        let us = self.turn;
        let them = !us;
        let capturers = attacks::pawn(them, ep) & self.pieces(us, Role::Pawn);
        if capturers.is_empty() {
            return false;
        }
        let victim = ep.forward_of(them);
        let king = self.king_of(us);
        capturers.into_iter().any(|from| {
            let occ = (self.occupied ^ from.bb() ^ victim.bb()) | ep.bb();
            (self.attackers_to(king, them, occ) & !victim.bb()).is_empty()
        })
    }

    /// The slow, independent attack test: walks every enemy piece's moves on the mailbox.
    pub(crate) fn king_attacked_brute_force(&self, color: Color) -> bool {
        let Some(king) = Square::ALL
            .into_iter()
            .find(|&s| self.at(s) == Some(Piece::new(color, Role::King)))
        else {
            return false;
        };
        let (kf, kr) = (king.file_index() as i32, king.rank_index() as i32);
        let enemy = !color;
        for sq in Square::ALL {
            let Some(p) = self.at(sq) else { continue };
            if p.color != enemy {
                continue;
            }
            let (f, r) = (sq.file_index() as i32, sq.rank_index() as i32);
            let (df, dr) = (kf - f, kr - r);
            let hits = match p.role {
                Role::Pawn => {
                    let dir = if enemy == Color::White { 1 } else { -1 };
                    dr == dir && df.abs() == 1
                }
                Role::Knight => {
                    (df.abs() == 1 && dr.abs() == 2) || (df.abs() == 2 && dr.abs() == 1)
                }
                Role::King => df.abs() <= 1 && dr.abs() <= 1,
                Role::Bishop => df.abs() == dr.abs() && self.ray_clear(f, r, df, dr),
                Role::Rook => (df == 0 || dr == 0) && self.ray_clear(f, r, df, dr),
                Role::Queen => {
                    (df.abs() == dr.abs() || df == 0 || dr == 0) && self.ray_clear(f, r, df, dr)
                }
                Role::Secutor => false,
            };
            if hits {
                return true;
            }
        }
        false
    }

    /// Whether every square strictly between (f, r) and (f+df, r+dr) is empty.
    fn ray_clear(&self, f: i32, r: i32, df: i32, dr: i32) -> bool {
        let steps = df.abs().max(dr.abs());
        (1..steps).all(|i| {
            Square::from_coords(f + df.signum() * i, r + dr.signum() * i)
                .is_some_and(|s| self.at(s).is_none())
        })
    }

    /// Only kings, or king and one knight or bishop against a lone king.
    pub fn insufficient_material(&self) -> bool {
        let kings = self.by_role[Role::King.index()];
        let others = self.occupied & !kings;
        let minors = self.by_role[Role::Knight.index()] | self.by_role[Role::Bishop.index()];
        others.is_empty() || (others.count() == 1 && (others & minors).nonempty())
    }
}

impl Square {
    /// The square one rank ahead from `color`'s point of view; callers only use it away from
    /// the last rank.
    #[inline]
    pub(crate) const fn forward_of(self, color: Color) -> Square {
        match color {
            Color::White => self.offset(8),
            Color::Black => self.offset(-8),
        }
    }
}
