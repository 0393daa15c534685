//! Legal move generation for the 8x8 board: check and pin masks, so no move is made and taken
//! back to test legality (except en passant and castling's final check, which are rare).

use super::attacks;
use super::board::Board;
use super::castling::{relative_bb, KINDS, KING_FROM};
use super::moves::Move;
use super::square::{Bitboard, Square};
use crate::position::MoveList;
use crate::types::{Color, Role};

const FILE_A: Bitboard = Bitboard::file(0);
const FILE_H: Bitboard = Bitboard::file(7);

#[inline]
fn shift(b: Bitboard, delta: i8) -> Bitboard {
    if delta >= 0 {
        Bitboard(b.0 << delta)
    } else {
        Bitboard(b.0 >> -delta)
    }
}

impl Board {
    /// Our pieces that stand alone between our king and an enemy slider.
    #[inline]
    fn pinned(&self, us: Color, king: Square) -> Bitboard {
        let them = !us;
        let theirs = self.color_bb(them);
        let queens = self.pieces(them, Role::Queen);
        let snipers = (attacks::rook(king, theirs) & (self.pieces(them, Role::Rook) | queens))
            | (attacks::bishop(king, theirs) & (self.pieces(them, Role::Bishop) | queens));
        let mut pinned = Bitboard::EMPTY;
        for s in snipers {
            let blockers = attacks::between(king, s) & self.occupied;
            if !blockers.more_than_one() {
                pinned |= blockers & self.color_bb(us);
            }
        }
        pinned
    }

    /// Appends every legal move.
    pub fn generate(&self, moves: &mut MoveList<Move>) {
        self.generate_with::<false>(moves)
    }

    /// Appends the legal captures and promotions (for quiescence search).
    pub fn generate_tactical(&self, moves: &mut MoveList<Move>) {
        self.generate_with::<true>(moves)
    }

    /// `TACTICAL`: only captures, en passant and promotions; the branches vanish at compile
    /// time.
    fn generate_with<const TACTICAL: bool>(&self, moves: &mut MoveList<Move>) {
        let us = self.turn;
        let them = !us;
        let king = self.king_of(us);
        let ours = self.color_bb(us);
        let occ = self.occupied;
        let checkers = self.checkers();
        let wanted = if TACTICAL {
            self.color_bb(them)
        } else {
            Bitboard::FULL
        };

        let without_king = occ ^ king.bb();
        for to in attacks::king(king) & !ours & wanted {
            if self.attackers_to(to, them, without_king).is_empty() {
                moves.push(Move::normal(king, to));
            }
        }
        if checkers.more_than_one() {
            return;
        }
        let target = match checkers.first() {
            Some(c) => attacks::between(king, c) | c.bb(),
            None => Bitboard::FULL,
        } & !ours;
        let pinned = self.pinned(us, king);
        let pawn_target = target;
        let target = target & wanted;

        for from in self.pieces(us, Role::Knight) & !pinned {
            for to in attacks::knight(from) & target {
                moves.push(Move::normal(from, to));
            }
        }
        let queens = self.pieces(us, Role::Queen);
        for from in self.pieces(us, Role::Bishop) | queens {
            let mut t = attacks::bishop(from, occ) & target;
            if pinned.has(from) {
                t &= attacks::line(king, from);
            }
            for to in t {
                moves.push(Move::normal(from, to));
            }
        }
        for from in self.pieces(us, Role::Rook) | queens {
            let mut t = attacks::rook(from, occ) & target;
            if pinned.has(from) {
                t &= attacks::line(king, from);
            }
            for to in t {
                moves.push(Move::normal(from, to));
            }
        }
        self.generate_pawns::<TACTICAL>(moves, king, pawn_target, pinned);
        if !TACTICAL && checkers.is_empty() && self.castling.any(us) {
            self.generate_castling(moves);
        }
    }

    fn generate_pawns<const TACTICAL: bool>(
        &self,
        moves: &mut MoveList<Move>,
        king: Square,
        target: Bitboard,
        pinned: Bitboard,
    ) {
        let us = self.turn;
        let theirs = self.color_bb(!us);
        let empty = !self.occupied;
        let up: i8 = if us == Color::White { 8 } else { -8 };
        let last = Bitboard::rank(if us == Color::White { 7 } else { 0 });
        let third = Bitboard::rank(if us == Color::White { 2 } else { 5 });
        let pawns = self.pieces(us, Role::Pawn);
        // Quiet pushes only to promote, when only tactical moves are wanted.
        let push_target = if TACTICAL { target & last } else { target };

        // Pinned pawns one by one, kept on their pin line.
        for from in pawns & pinned {
            let keep = attacks::line(king, from) & target;
            let one = from.bb().forward(us) & empty & push_target;
            let two = (one & third).forward(us) & empty & push_target;
            for to in (one | attacks::pawn(us, from) & theirs) & keep {
                push_pawn(moves, from, to, last);
            }
            for to in two & keep {
                moves.push(Move::double_push(from, to));
            }
        }

        let free = pawns & !pinned;
        let one = free.forward(us) & empty;
        let two = (one & third).forward(us) & empty & push_target;
        for to in one & push_target {
            push_pawn(moves, to.offset(-up), to, last);
        }
        for to in two {
            moves.push(Move::double_push(to.offset(-2 * up), to));
        }
        // Captures towards the a-file and towards the h-file.
        let (west, east) = if us == Color::White { (7, 9) } else { (-9, -7) };
        for to in shift(free & !FILE_A, west) & theirs & target {
            push_pawn(moves, to.offset(-west), to, last);
        }
        for to in shift(free & !FILE_H, east) & theirs & target {
            push_pawn(moves, to.offset(-east), to, last);
        }

        if let Some(ep) = self.ep {
            self.generate_en_passant(moves, ep);
        }
    }

    /// En passant is tested by playing it on the occupancy: it removes two pieces from a line
    /// at once, which pin masks do not capture.
    fn generate_en_passant(&self, moves: &mut MoveList<Move>, ep: Square) {
        let us = self.turn;
        let them = !us;
        let victim = ep.forward_of(them);
        let king = self.king_of(us);
        for from in attacks::pawn(them, ep) & self.pieces(us, Role::Pawn) {
            let occ = (self.occupied ^ from.bb() ^ victim.bb()) | ep.bb();
            if (self.attackers_to(king, them, occ) & !victim.bb()).is_empty() {
                moves.push(Move::en_passant(from, ep));
            }
        }
    }

    fn generate_castling(&self, moves: &mut MoveList<Move>) {
        let us = self.turn;
        let them = !us;
        let ruleset = self.rules.ruleset();
        let king_from = KING_FROM.relative(us);
        for (i, kind) in KINDS.iter().enumerate() {
            let allowed = match i {
                0 | 1 => true,
                2 | 3 => ruleset.luft(),
                _ => ruleset.two_rooks(),
            };
            if !allowed
                || !kind.needs.iter().all(|&l| self.castling.has(us, l))
                || (relative_bb(kind.empty, us) & self.occupied).nonempty()
                || kind
                    .safe
                    .iter()
                    .any(|&s| self.is_attacked(s.relative(us), them))
            {
                continue;
            }
            let king_to = kind.king_to.relative(us);
            let mut occ = self.occupied ^ king_from.bb();
            for &r in kind.rooks_from {
                occ ^= r.relative(us).bb();
            }
            for &r in kind.rooks_to {
                occ |= r.relative(us).bb();
            }
            occ |= king_to.bb();
            if self.attackers_to(king_to, them, occ).is_empty() {
                moves.push(Move::castle(king_from, king_to, i));
            }
        }
    }
}

#[inline]
fn push_pawn(moves: &mut MoveList<Move>, from: Square, to: Square, last: Bitboard) {
    if last.has(to) {
        moves.extend(Move::promotions(from, to));
    } else {
        moves.push(Move::normal(from, to));
    }
}
