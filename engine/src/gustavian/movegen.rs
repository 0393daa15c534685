//! Legal move generation.
//!
//! Ordinary pieces are handled the classical way: checkers, a check mask and pins along the
//! eight rays from the king. Enemy Secutors need more, because their capture path bends: a
//! move can expose the king by vacating a square (as with a pin) but also by *filling* one,
//! which gives a Secutor a new collision point. So each enemy Secutor's "dependency set" is
//! computed once per node: its square, its rook reach (which fixes the collision points) and
//! its attack set (the diagonal legs). A move touching none of those squares cannot change
//! what the Secutor attacks; only a move that does is re-tested with the occupancy after it.

use super::attacks::{
    bishop_attacks, king_attacks, knight_attacks, nearest, pawn_attacks, ray, rook_attacks,
    secutor_attacks, secutor_reach, E, N, NE, NW, S, SE, SW, W,
};
use super::bitboard::{Bitboard, ALL};
use super::board::{csq, Position, BK, BQ, WK, WQ};
use super::moves::{Move, MoveKind, PROMOTIONS};
use super::square::Square;
use crate::position::MoveList;
use crate::types::{Color, Role};

/// Pinned pieces and the line each may still move along.
struct Pins {
    pinned: Bitboard,
    lines: [(Square, Bitboard); 8],
    n: usize,
}

impl Pins {
    /// The squares the pinned piece on `sq` may move to.
    #[inline]
    fn line(&self, sq: Square) -> Bitboard {
        let mut i = 0;
        while i < self.n {
            if self.lines[i].0 == sq {
                return self.lines[i].1;
            }
            i += 1;
        }
        ALL
    }
}

/// What the ordinary pieces of the enemy do to our king.
struct KingSafety {
    checkers: Bitboard,
    check_mask: Bitboard,
    pins: Pins,
}

impl KingSafety {
    #[inline(always)]
    fn scan<const D: usize>(&mut self, k: Square, occ: Bitboard, own: Bitboard, sliders: Bitboard) {
        let r = ray::<D>(k);
        let b = r & occ;
        if b.is_empty() {
            return;
        }
        let f = nearest::<D>(b);
        if sliders.has(f) {
            self.checkers |= Bitboard::from_square(f);
            self.check_mask |= r ^ ray::<D>(f);
        } else if own.has(f) {
            let b2 = ray::<D>(f) & occ;
            if b2.nonempty() {
                let g = nearest::<D>(b2);
                if sliders.has(g) {
                    self.pins.pinned |= Bitboard::from_square(f);
                    self.pins.lines[self.pins.n] = (f, r ^ ray::<D>(g));
                    self.pins.n += 1;
                }
            }
        }
    }
}

/// The enemy Secutors' influence, as described in the module documentation.
struct SecutorGuard {
    secutors: Bitboard,
    dependencies: Bitboard,
    check: bool,
}

impl Position {
    /// Appends every legal move.
    pub(crate) fn generate_legal(&self, list: &mut MoveList<Move>) {
        let us = self.turn;
        let them = !us;
        let occ = self.occupied();
        let own = self.by_color[us.index()];
        let enemy = self.by_color[them.index()];
        let k = self.king[us.index()];
        let r = &self.by_role;
        let queens = r[Role::Queen.index()];
        let rq = enemy & (r[Role::Rook.index()] | queens);
        let bq = enemy & (r[Role::Bishop.index()] | queens);

        let leapers = (pawn_attacks(us, k) & enemy & r[Role::Pawn.index()])
            | (knight_attacks(k) & enemy & r[Role::Knight.index()]);
        let mut ks = KingSafety {
            checkers: leapers,
            check_mask: leapers,
            pins: Pins {
                pinned: Bitboard::EMPTY,
                lines: [(k, Bitboard::EMPTY); 8],
                n: 0,
            },
        };
        ks.scan::<N>(k, occ, own, rq);
        ks.scan::<S>(k, occ, own, rq);
        ks.scan::<E>(k, occ, own, rq);
        ks.scan::<W>(k, occ, own, rq);
        ks.scan::<NE>(k, occ, own, bq);
        ks.scan::<NW>(k, occ, own, bq);
        ks.scan::<SE>(k, occ, own, bq);
        ks.scan::<SW>(k, occ, own, bq);

        let mut guard = SecutorGuard {
            secutors: enemy & r[Role::Secutor.index()],
            dependencies: Bitboard::EMPTY,
            check: false,
        };
        for s in guard.secutors {
            let (reach, a) = secutor_reach(s, occ);
            guard.dependencies |= a | reach | Bitboard::from_square(s);
            guard.check |= a.has(k);
        }

        // King steps: tested with the king lifted off its square, so that it cannot hide
        // behind itself from a slider or change a Secutor's collision by its own presence.
        let occ_no_king = occ.without(k);
        for to in king_attacks(k) & !own {
            if !self.attacked_by(to, them, occ_no_king.with(to), Bitboard::from_square(to)) {
                list.push(Move::new(k, to, MoveKind::Normal));
            }
        }
        if ks.checkers.more_than_one() {
            return;
        }
        let target = if ks.checkers.nonempty() {
            ks.check_mask
        } else {
            ALL
        };

        // Whether moving a (non-king) piece from `from` to `to` keeps the king safe from
        // every enemy Secutor.
        let secutor_safe = |from: Square, to: Square| -> bool {
            if guard.secutors.is_empty() {
                return true;
            }
            let changed = Bitboard::from_square(from) | Bitboard::from_square(to);
            if (changed & guard.dependencies).is_empty() {
                return !guard.check;
            }
            let occ2 = occ.without(from).with(to);
            let mut secutors = guard.secutors;
            !secutors.any(|s| s != to && secutor_attacks(s, occ2).has(k))
        };
        let push_all = |list: &mut MoveList<Move>, from: Square, targets: Bitboard| {
            let targets = if ks.pins.pinned.has(from) {
                targets & ks.pins.line(from)
            } else {
                targets
            };
            for to in targets {
                if secutor_safe(from, to) {
                    list.push(Move::new(from, to, MoveKind::Normal));
                }
            }
        };

        let not_own_target = !own & target;
        for from in own & r[Role::Knight.index()] & !ks.pins.pinned {
            push_all(list, from, knight_attacks(from) & not_own_target);
        }
        for from in own & (r[Role::Bishop.index()] | queens) {
            push_all(list, from, bishop_attacks(from, occ) & not_own_target);
        }
        for from in own & (r[Role::Rook.index()] | queens) {
            push_all(list, from, rook_attacks(from, occ) & not_own_target);
        }
        for from in own & r[Role::Secutor.index()] {
            let (reach, attacks) = secutor_reach(from, occ);
            push_all(list, from, ((reach & !occ) | (attacks & enemy)) & target);
        }

        self.generate_pawn_moves(list, &ks, target, &secutor_safe);
        if let Some(ep) = self.ep {
            self.generate_en_passant(list, ep, k);
        }
        if ks.checkers.is_empty() && !guard.check {
            self.generate_castling(list, occ);
        }
    }

    /// Pawn pushes and captures, computed set-wise by shifting the pawn set (pawns stand on
    /// files b-i only, so no shift wraps; holes are never in `empty` or `enemy`, which is what
    /// keeps a b-/i-file pawn's diagonal off the holes and onto a corner square on its last
    /// rank).
    fn generate_pawn_moves(
        &self,
        list: &mut MoveList<Move>,
        ks: &KingSafety,
        target: Bitboard,
        secutor_safe: &impl Fn(Square, Square) -> bool,
    ) {
        let us = self.turn;
        let empty = !self.occupied();
        let enemy = self.by_color[(!us).index()];
        let pawns = self.pieces(us, Role::Pawn).0;
        let rank = |r: u32| Bitboard((0x3FFu128 << (10 * r)) & ALL.0);
        // (targets, index distance back to the pawn, kind); then the promotion rank.
        let (sets, last) = match us {
            Color::White => {
                let single = Bitboard(pawns << 10) & empty;
                let double = Bitboard((single & rank(2)).0 << 10) & empty;
                let west = Bitboard(pawns << 9) & enemy;
                let east = Bitboard(pawns << 11) & enemy;
                (
                    [
                        (single, 10, MoveKind::Normal),
                        (double, 20, MoveKind::DoublePush),
                        (west, 9, MoveKind::Normal),
                        (east, 11, MoveKind::Normal),
                    ],
                    rank(7),
                )
            }
            Color::Black => {
                let single = Bitboard(pawns >> 10) & empty;
                let double = Bitboard((single & rank(5)).0 >> 10) & empty;
                let east = Bitboard(pawns >> 9) & enemy;
                let west = Bitboard(pawns >> 11) & enemy;
                (
                    [
                        (single, -10, MoveKind::Normal),
                        (double, -20, MoveKind::DoublePush),
                        (east, -9, MoveKind::Normal),
                        (west, -11, MoveKind::Normal),
                    ],
                    rank(0),
                )
            }
        };
        for (set, back, kind) in sets {
            for to in set & target {
                let from = Square::from_index_unchecked((to.index() as i32 - back) as u8);
                if ks.pins.pinned.has(from) && !ks.pins.line(from).has(to) {
                    continue;
                }
                if !secutor_safe(from, to) {
                    continue;
                }
                if last.has(to) {
                    for p in PROMOTIONS {
                        list.push(Move::new(from, to, p));
                    }
                } else {
                    list.push(Move::new(from, to, kind));
                }
            }
        }
    }

    /// En-passant captures, each tested in full: the capture empties two squares of a rank
    /// and fills one, which no pin logic covers.
    fn generate_en_passant(&self, list: &mut MoveList<Move>, ep: Square, k: Square) {
        let us = self.turn;
        for from in pawn_attacks(!us, ep) & self.pieces(us, Role::Pawn) {
            if self.en_passant_is_legal(from, ep, k) {
                list.push(Move::new(from, ep, MoveKind::EnPassant));
            }
        }
    }

    /// Whether the pawn on `from` may capture en passant onto `ep` without exposing king `k`.
    pub(crate) fn en_passant_is_legal(&self, from: Square, ep: Square, k: Square) -> bool {
        let us = self.turn;
        let victim = match us {
            Color::White => ep.index() - 10,
            Color::Black => ep.index() + 10,
        };
        let Some(victim) = Square::from_index(victim) else {
            return false;
        };
        let occ = self.occupied().without(from).without(victim).with(ep);
        !self.attacked_by(k, !us, occ, Bitboard::from_square(victim))
    }

    /// Whether any en-passant capture onto `ep` is legal for the side to move.
    pub(crate) fn any_legal_en_passant(&self, ep: Square) -> bool {
        let us = self.turn;
        let k = self.king[us.index()];
        (pawn_attacks(!us, ep) & self.pieces(us, Role::Pawn))
            .any(|from| self.en_passant_is_legal(from, ep, k))
    }

    /// Castling per the table of RULES.md; the caller has checked that the king is not in
    /// check. The "not attacked" squares are judged on the board before the move, then the
    /// ordinary legality test is applied to the board after it.
    fn generate_castling(&self, list: &mut MoveList<Move>, occ: Bitboard) {
        let us = self.turn;
        let them = !us;
        let (base, kbit, qbit) = match us {
            Color::White => (0usize, WK, WQ),
            Color::Black => (70usize, BK, BQ),
        };
        let sq = |file: usize| Square::from_index_unchecked((base + file) as u8);
        let bb = |file: usize| Bitboard::from_square(sq(file));
        let attacked = |file: usize| self.attacked_by(sq(file), them, occ, Bitboard::EMPTY);
        let safe_after = |king_to: usize, occ_after: Bitboard| {
            !self.attacked_by(sq(king_to), them, occ_after, Bitboard::EMPTY)
        };
        let extended = self.rules.ruleset().extended();
        let king_from = sq(csq::F);

        if self.castling & kbit != 0
            && (occ & (bb(csq::G) | bb(csq::H))).is_empty()
            && !attacked(csq::G)
            && !attacked(csq::H)
        {
            let normal = (occ ^ bb(csq::F) ^ bb(csq::I)) | bb(csq::G) | bb(csq::H);
            if safe_after(csq::H, normal) {
                list.push(Move::new(king_from, sq(csq::H), MoveKind::Castle));
            }
            if extended && !attacked(csq::I) {
                let ext = (occ ^ bb(csq::F)) | bb(csq::G);
                if safe_after(csq::I, ext) {
                    list.push(Move::new(king_from, sq(csq::I), MoveKind::Castle));
                }
            }
        }
        if self.castling & qbit != 0
            && (occ & (bb(csq::C) | bb(csq::D) | bb(csq::E))).is_empty()
            && !attacked(csq::E)
            && !attacked(csq::D)
        {
            let normal = (occ ^ bb(csq::F) ^ bb(csq::B)) | bb(csq::D) | bb(csq::E);
            if safe_after(csq::D, normal) {
                list.push(Move::new(king_from, sq(csq::D), MoveKind::Castle));
            }
            if extended && !attacked(csq::C) {
                let ext = (occ ^ bb(csq::F) ^ bb(csq::B)) | bb(csq::C) | bb(csq::E);
                if safe_after(csq::C, ext) {
                    list.push(Move::new(king_from, sq(csq::C), MoveKind::Castle));
                }
            }
        }
    }
}
