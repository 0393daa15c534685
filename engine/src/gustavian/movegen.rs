//! Legal move generation.
//!
//! Ordinary pieces are handled the classical way: checkers, a check mask and pins along the
//! eight rays from the king. Enemy Secutors need more, because their capture path bends: a
//! move can expose the king by vacating a square (as with a pin) but also by *filling* one,
//! which gives a Secutor a new collision point. So each enemy Secutor's "dependency set" is
//! computed once per node: its square, its rook reach (which fixes the collision points) and
//! the stretches of its diagonal legs that lead to our king. A move touching none of those
//! squares cannot change whether the Secutor attacks the king, so whole target sets are
//! accepted (or, when it gives check, refused) at once; only a move that touches one is
//! re-tested with the occupancy after it.

use super::attacks::{
    bishop_attacks, king_attacks, knight_attacks, nearest, pawn_attacks, ray, rook_attacks,
    secutor_attacks, secutor_check_lines, secutor_moves, secutor_reach, secutor_threats, E, N, NE,
    NW, S, SE, SW, W,
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
        // Most rays hold no enemy slider of the right kind at all: nothing to check or pin.
        if (r & sliders).is_empty() {
            return;
        }
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
    /// The squares whose occupancy decides whether some enemy Secutor attacks our king.
    dependencies: Bitboard,
    check: bool,
}

impl SecutorGuard {
    /// Whether moving a (non-king) piece from `from` to `to` keeps king `k` safe from every
    /// enemy Secutor: only a move touching a dependency is re-tested in full.
    #[inline]
    fn safe(&self, occ: Bitboard, k: Square, from: Square, to: Square) -> bool {
        let changed = Bitboard::from_square(from) | Bitboard::from_square(to);
        if (changed & self.dependencies).is_empty() {
            return !self.check;
        }
        let occ2 = occ.without(from).with(to);
        !self
            .secutors
            .without(to)
            .any(|s| secutor_attacks(s, occ2).has(k))
    }

    /// The squares of `targets` the piece on `from` may move to as far as enemy Secutors are
    /// concerned, decided set-wise for every target off the dependencies.
    #[inline]
    fn safe_targets(&self, occ: Bitboard, k: Square, from: Square, targets: Bitboard) -> Bitboard {
        if self.secutors.is_empty() {
            return targets;
        }
        let (mut safe, slow) = if self.dependencies.has(from) {
            (Bitboard::EMPTY, targets)
        } else if self.check {
            (Bitboard::EMPTY, targets & self.dependencies)
        } else {
            (targets & !self.dependencies, targets & self.dependencies)
        };
        for to in slow {
            if self.safe(occ, k, from, to) {
                safe |= Bitboard::from_square(to);
            }
        }
        safe
    }
}

/// Appends the moves of the (non-king, non-pawn) piece on `from` to those of `targets` that
/// its pin and the enemy Secutors allow. Inlined into every caller: it runs once per piece of
/// every node, and as a call its prologue cost as much as its work.
#[inline(always)]
fn push_targets(
    list: &mut MoveList<Move>,
    pins: &Pins,
    guard: &SecutorGuard,
    occ: Bitboard,
    k: Square,
    from: Square,
    targets: Bitboard,
) {
    let targets = if pins.pinned.has(from) {
        targets & pins.line(from)
    } else {
        targets
    };
    for to in guard.safe_targets(occ, k, from, targets) {
        list.push(Move::new(from, to, MoveKind::Normal));
    }
}

impl Position {
    /// Appends every legal move.
    #[inline]
    pub(crate) fn generate_legal(&self, list: &mut MoveList<Move>) {
        self.generate::<false>(list);
    }

    /// Appends the legal captures (en passant and Secutor collisions included) and
    /// promotions, quiet ones too: exactly the moves `generate_legal` yields that capture or
    /// promote, in the same relative order, so the search sees the list it saw when it
    /// filtered the full one.
    #[inline]
    pub(crate) fn generate_tactical(&self, list: &mut MoveList<Move>) {
        self.generate::<true>(list);
    }

    /// The shared generator; `TACTICAL` restricts every target set to captures and
    /// promotions rather than filtering afterwards.
    fn generate<const TACTICAL: bool>(&self, list: &mut MoveList<Move>) {
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

        // Only the enemy Secutors that could reach our king by some collision matter here.
        let enemy_secutors = enemy & r[Role::Secutor.index()];
        let mut guard = SecutorGuard {
            secutors: enemy_secutors & secutor_threats(k),
            dependencies: Bitboard::EMPTY,
            check: false,
        };
        for s in guard.secutors {
            let (deps, hits) = secutor_check_lines(s, k, occ);
            guard.dependencies |= deps;
            guard.check |= hits;
        }

        let king_targets = if TACTICAL { enemy } else { !own };
        let steps = king_attacks(k) & king_targets;
        let step_threats = if enemy_secutors.is_empty() {
            Bitboard::EMPTY
        } else {
            steps.fold(Bitboard::EMPTY, |acc, to| acc | secutor_threats(to)) & enemy_secutors
        };
        self.generate_king_steps(list, k, steps, step_threats);
        if ks.checkers.more_than_one() {
            return;
        }
        let target = if ks.checkers.nonempty() {
            ks.check_mask
        } else {
            ALL
        };

        let push_all = |list: &mut MoveList<Move>, from: Square, targets: Bitboard| {
            push_targets(list, &ks.pins, &guard, occ, k, from, targets);
        };

        let not_own_target = if TACTICAL { enemy } else { !own } & target;
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
            let (reach, captures) = secutor_moves(from, occ, enemy);
            let quiet = if TACTICAL {
                Bitboard::EMPTY
            } else {
                reach & !occ
            };
            push_all(list, from, (quiet | captures) & target);
        }

        self.generate_pawn_moves::<TACTICAL>(list, &ks, &guard, target);
        if let Some(ep) = self.ep {
            self.generate_en_passant(list, ep, k);
        }
        if !TACTICAL && ks.checkers.is_empty() && !guard.check {
            self.generate_castling(list, occ);
        }
    }

    /// King steps onto `targets`, each judged with the king lifted off its square, so that it
    /// cannot hide behind itself from a slider or change a Secutor's collision by its own
    /// presence. The enemy Secutors' attacks are computed once; only a step onto one of their
    /// empty slide squares, which moves a collision point, is tested in full.
    fn generate_king_steps(
        &self,
        list: &mut MoveList<Move>,
        k: Square,
        targets: Bitboard,
        secutors: Bitboard,
    ) {
        if targets.is_empty() {
            return;
        }
        let them = !self.turn;
        let occ = self.occupied().without(k);
        // (attacked, empty slide squares) of the enemy Secutors, computed on first need.
        let mut secutor_view: Option<(Bitboard, Bitboard)> = None;
        for to in targets {
            let captured = Bitboard::from_square(to);
            if self.attacked_by_ordinary(to, them, occ, captured) {
                continue;
            }
            if secutors.nonempty() {
                let (attacked, slides) = *secutor_view.get_or_insert_with(|| {
                    let (mut attacked, mut slides) = (Bitboard::EMPTY, Bitboard::EMPTY);
                    for s in secutors {
                        let (reach, attacks) = secutor_reach(s, occ);
                        attacked |= attacks;
                        slides |= reach;
                    }
                    (attacked, slides & !occ)
                });
                let hit = if slides.has(to) {
                    (secutors & !captured).any(|s| secutor_attacks(s, occ.with(to)).has(to))
                } else {
                    attacked.has(to)
                };
                if hit {
                    continue;
                }
            }
            list.push(Move::new(k, to, MoveKind::Normal));
        }
    }

    /// Pawn pushes and captures, computed set-wise by shifting the pawn set (pawns stand on
    /// files b-i only, so no shift wraps; holes are never in `empty` or `enemy`, which is what
    /// keeps a b-/i-file pawn's diagonal off the holes and onto a corner square on its last
    /// rank). `TACTICAL` keeps only captures and pushes onto the last rank.
    fn generate_pawn_moves<const TACTICAL: bool>(
        &self,
        list: &mut MoveList<Move>,
        ks: &KingSafety,
        guard: &SecutorGuard,
        target: Bitboard,
    ) {
        let us = self.turn;
        let occ = self.occupied();
        let k = self.king[us.index()];
        let empty = !occ;
        let enemy = self.by_color[(!us).index()];
        let pawns = self.pieces(us, Role::Pawn).0;
        let rank = |r: u32| Bitboard((0x3FFu128 << (10 * r)) & ALL.0);
        // Pushes are quiet unless they promote (a double push never does).
        let pushes = |set: Bitboard, last: Bitboard| if TACTICAL { set & last } else { set };
        // (targets, index distance back to the pawn, kind); then the promotion rank.
        let (sets, last) = match us {
            Color::White => {
                let single = Bitboard(pawns << 10) & empty;
                let double = Bitboard((single & rank(2)).0 << 10) & empty;
                let (single, double) = (pushes(single, rank(7)), pushes(double, rank(7)));
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
                let (single, double) = (pushes(single, rank(0)), pushes(double, rank(0)));
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
        // The squares `back` ahead of those of `b`: where the pawns of `b` would land.
        let ahead = |b: Bitboard, back: i32| {
            if back > 0 {
                Bitboard(b.0 << back)
            } else {
                Bitboard(b.0 >> -back)
            }
        };
        let secutors = guard.secutors.nonempty();
        for (set, back, kind) in sets {
            let set = set & target;
            // Only a pinned pawn or a move touching a Secutor dependency needs a test of its
            // own; the rest of the set is decided at once.
            let pinned = ahead(ks.pins.pinned, back);
            let touched = if secutors {
                guard.dependencies | ahead(guard.dependencies, back)
            } else {
                Bitboard::EMPTY
            };
            let slow = set & (pinned | touched);
            let mut legal = if secutors && guard.check {
                Bitboard::EMPTY
            } else {
                set & !slow
            };
            // The pawn that lands on `to`.
            let from = |to: Square| Square::from_index_unchecked((to.index() as i32 - back) as u8);
            for to in slow {
                let from = from(to);
                if ks.pins.pinned.has(from) && !ks.pins.line(from).has(to) {
                    continue;
                }
                if secutors && !guard.safe(occ, k, from, to) {
                    continue;
                }
                legal |= Bitboard::from_square(to);
            }
            for to in legal & !last {
                list.push(Move::new(from(to), to, kind));
            }
            for to in legal & last {
                for p in PROMOTIONS {
                    list.push(Move::new(from(to), to, p));
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
