//! Attack tables and slider/Secutor attack sets of the Gustavian board.
//!
//! Rays are precomputed per square and direction and already stop at a hole or the edge, so a
//! hole needs no run-time handling: it is simply where a ray ends. Sliders use the classical
//! "first blocker on the ray" method, which works for any board shape and needs no magic
//! numbers for a 128-bit board.

use super::bitboard::{Bitboard, ALL};
use super::square::{is_square_coord, Square, CELLS, FILES};
use crate::types::Color;

/// North (towards rank 8).
pub(crate) const N: usize = 0;
/// East (towards the j-file).
pub(crate) const E: usize = 1;
/// North-east.
pub(crate) const NE: usize = 2;
/// North-west.
pub(crate) const NW: usize = 3;
/// South.
pub(crate) const S: usize = 4;
/// West.
pub(crate) const W: usize = 5;
/// South-west.
pub(crate) const SW: usize = 6;
/// South-east.
pub(crate) const SE: usize = 7;

/// (file, rank) step of each direction; the first four increase the grid index.
const DELTAS: [(i32, i32); 8] = [
    (0, 1),
    (1, 0),
    (1, 1),
    (-1, 1),
    (0, -1),
    (-1, 0),
    (-1, -1),
    (1, -1),
];

/// Grid-index step of each direction.
pub(crate) const STEP: [i8; 8] = build_steps();

const fn build_steps() -> [i8; 8] {
    let mut out = [0i8; 8];
    let mut d = 0;
    while d < 8 {
        out[d] = (DELTAS[d].1 * FILES as i32 + DELTAS[d].0) as i8;
        d += 1;
    }
    out
}

/// `RAYS[d][sq]`: the squares from `sq` (exclusive) in direction `d` up to the edge or a hole.
static RAYS: [[u128; CELLS]; 8] = build_rays();

/// `RAY_END[d][sq]` for the orthogonal directions: the last square of the ray, or `sq` itself
/// when the ray is empty. This is the Secutor's collision point P on an empty line.
static RAY_END: [[u8; CELLS]; 8] = build_ray_ends();

/// `DIAGONALS[sq]`: the four diagonal rays of `sq` together (the squares a diagonal leg can
/// reach `sq` from; no hole can lie between two squares of one diagonal).
static DIAGONALS: [u128; CELLS] = build_diagonals();

/// `ORTHOGONALS[sq]`: the four orthogonal rays of `sq` together.
static ORTHOGONALS: [u128; CELLS] = build_lines([N, E, S, W]);

const fn build_diagonals() -> [u128; CELLS] {
    build_lines([NE, NW, SE, SW])
}

const fn build_lines(dirs: [usize; 4]) -> [u128; CELLS] {
    let mut out = [0u128; CELLS];
    let mut i = 0;
    while i < CELLS {
        out[i] = RAYS[dirs[0]][i] | RAYS[dirs[1]][i] | RAYS[dirs[2]][i] | RAYS[dirs[3]][i];
        i += 1;
    }
    out
}

/// Every square a bishop on `sq` could reach on an empty board.
#[inline(always)]
pub(crate) fn diagonal_lines(sq: Square) -> Bitboard {
    Bitboard(DIAGONALS[sq.index()])
}

/// Every square a rook on `sq` could reach on an empty board.
#[inline(always)]
pub(crate) fn orthogonal_lines(sq: Square) -> Bitboard {
    Bitboard(ORTHOGONALS[sq.index()])
}

/// `SECUTOR_THREATS[sq]`: every square from which a Secutor could attack `sq` under some
/// occupancy. A Secutor's attack runs from a collision point on one of its orthogonal lines
/// (or its own square) along the two diagonals that continue that line; which collision point
/// depends on the occupancy, the lines do not. Most Secutors cannot reach the enemy king by
/// any collision at all, so legality need not look at them (the table is the reverse of the
/// union of those diagonals over every possible collision point).
static SECUTOR_THREATS: [u128; CELLS] = build_secutor_threats();

/// Each orthogonal slide direction of a Secutor with the two diagonals that continue it
/// (its capture legs), in the order north, south, east, west.
const LEGS: [(usize, usize, usize); 4] = [(N, NE, NW), (S, SE, SW), (E, NE, SE), (W, NW, SW)];

/// The squares a Secutor on cell `s` could attack under some occupancy.
const fn secutor_potential(s: usize) -> u128 {
    let mut out = 0u128;
    let mut l = 0;
    while l < 4 {
        let (d, a, b) = LEGS[l];
        let mut points = RAYS[d][s] | 1u128 << s;
        while points != 0 {
            let p = points.trailing_zeros() as usize;
            out |= RAYS[a][p] | RAYS[b][p];
            points &= points - 1;
        }
        l += 1;
    }
    out
}

const fn build_secutor_threats() -> [u128; CELLS] {
    let mut out = [0u128; CELLS];
    let mut s = 0;
    while s < CELLS {
        if ALL.0 >> s & 1 != 0 {
            let mut targets = secutor_potential(s);
            while targets != 0 {
                let t = targets.trailing_zeros() as usize;
                out[t] |= 1u128 << s;
                targets &= targets - 1;
            }
        }
        s += 1;
    }
    out
}

/// The squares from which a Secutor could attack `sq` under some occupancy: a Secutor off
/// this set never attacks `sq`, whatever moves.
#[inline(always)]
pub(crate) fn secutor_threats(sq: Square) -> Bitboard {
    Bitboard(SECUTOR_THREATS[sq.index()])
}

/// Knight targets.
static KNIGHT: [u128; CELLS] = build_leaper(&[
    (1, 2),
    (2, 1),
    (2, -1),
    (1, -2),
    (-1, -2),
    (-2, -1),
    (-2, 1),
    (-1, 2),
]);
/// King targets.
static KING: [u128; CELLS] = build_leaper(&[
    (0, 1),
    (1, 1),
    (1, 0),
    (1, -1),
    (0, -1),
    (-1, -1),
    (-1, 0),
    (-1, 1),
]);
/// `PAWN[color][sq]`: the squares a pawn of `color` on `sq` attacks.
static PAWN: [[u128; CELLS]; 2] = [
    build_leaper(&[(-1, 1), (1, 1)]),
    build_leaper(&[(-1, -1), (1, -1)]),
];

const fn build_rays() -> [[u128; CELLS]; 8] {
    let mut out = [[0u128; CELLS]; 8];
    let mut d = 0;
    while d < 8 {
        let mut i = 0;
        while i < CELLS {
            let (f0, r0) = ((i % FILES as usize) as i32, (i / FILES as usize) as i32);
            if is_square_coord(f0, r0) {
                let (mut f, mut r) = (f0 + DELTAS[d].0, r0 + DELTAS[d].1);
                while is_square_coord(f, r) {
                    out[d][i] |= 1u128 << (r * FILES as i32 + f);
                    f += DELTAS[d].0;
                    r += DELTAS[d].1;
                }
            }
            i += 1;
        }
        d += 1;
    }
    out
}

const fn build_ray_ends() -> [[u8; CELLS]; 8] {
    let mut out = [[0u8; CELLS]; 8];
    let mut d = 0;
    while d < 8 {
        let mut i = 0;
        while i < CELLS {
            let (f0, r0) = ((i % FILES as usize) as i32, (i / FILES as usize) as i32);
            let (mut f, mut r) = (f0, r0);
            if is_square_coord(f0, r0) {
                while is_square_coord(f + DELTAS[d].0, r + DELTAS[d].1) {
                    f += DELTAS[d].0;
                    r += DELTAS[d].1;
                }
            }
            out[d][i] = (r * FILES as i32 + f) as u8;
            i += 1;
        }
        d += 1;
    }
    out
}

const fn build_leaper(steps: &[(i32, i32)]) -> [u128; CELLS] {
    let mut out = [0u128; CELLS];
    let mut i = 0;
    while i < CELLS {
        let (f0, r0) = ((i % FILES as usize) as i32, (i / FILES as usize) as i32);
        if is_square_coord(f0, r0) {
            let mut k = 0;
            while k < steps.len() {
                let (f, r) = (f0 + steps[k].0, r0 + steps[k].1);
                if is_square_coord(f, r) {
                    out[i] |= 1u128 << (r * FILES as i32 + f);
                }
                k += 1;
            }
        }
        i += 1;
    }
    out
}

/// The ray from `sq` in direction `D` (exclusive of `sq`).
#[inline(always)]
pub(crate) fn ray<const D: usize>(sq: Square) -> Bitboard {
    Bitboard(RAYS[D][sq.index()])
}

/// The nearest square of `set` (a subset of the `D` ray from some square) along direction `D`.
#[inline(always)]
pub(crate) fn nearest<const D: usize>(set: Bitboard) -> Square {
    if D < 4 {
        set.lowest()
    } else {
        set.highest()
    }
}

/// Slider attacks from `sq` in direction `D`: every square up to and including the first
/// occupied one. Branch-free, because whether a ray is blocked is data the branch predictor
/// cannot learn: towards higher indices `x ^ (x - 1)` keeps every bit up to the lowest
/// blocker (all of them when there is none); towards lower ones the highest blocker of
/// `x | 1` is found, and the empty rays of cell 0 make "no blocker" come out as the whole ray.
#[inline(always)]
pub(crate) fn ray_attacks<const D: usize>(sq: Square, occ: Bitboard) -> Bitboard {
    let r = RAYS[D][sq.index()];
    let x = r & occ.0;
    if D < 4 {
        Bitboard(r & (x ^ x.wrapping_sub(1)))
    } else {
        let f = 127 - (x | 1).leading_zeros() as usize;
        Bitboard(r ^ RAYS[D][f])
    }
}

/// The negative rays of cell 0 are empty: what `ray_attacks` relies on for an unblocked ray.
const _: () = {
    let mut d = 4;
    while d < 8 {
        assert!(RAYS[d][0] == 0);
        d += 1;
    }
};

/// Bishop attacks.
#[inline]
pub(crate) fn bishop_attacks(sq: Square, occ: Bitboard) -> Bitboard {
    ray_attacks::<NE>(sq, occ)
        | ray_attacks::<NW>(sq, occ)
        | ray_attacks::<SE>(sq, occ)
        | ray_attacks::<SW>(sq, occ)
}

/// Rook attacks (also the Secutor's non-capturing reach, after masking out occupied squares).
#[inline]
pub(crate) fn rook_attacks(sq: Square, occ: Bitboard) -> Bitboard {
    ray_attacks::<N>(sq, occ)
        | ray_attacks::<S>(sq, occ)
        | ray_attacks::<E>(sq, occ)
        | ray_attacks::<W>(sq, occ)
}

/// Knight targets.
#[inline(always)]
pub(crate) fn knight_attacks(sq: Square) -> Bitboard {
    Bitboard(KNIGHT[sq.index()])
}

/// King targets.
#[inline(always)]
pub(crate) fn king_attacks(sq: Square) -> Bitboard {
    Bitboard(KING[sq.index()])
}

/// Squares a pawn of `color` on `sq` attacks.
#[inline(always)]
pub(crate) fn pawn_attacks(color: Color, sq: Square) -> Bitboard {
    Bitboard(PAWN[color.index()][sq.index()])
}

/// The Secutor's collision point P for orthogonal direction `D`: the last square it reaches
/// sliding from `sq` over empty squares (possibly `sq` itself).
#[inline(always)]
pub(crate) fn collision_point<const D: usize>(sq: Square, occ: Bitboard) -> Square {
    slide_and_collision::<D>(sq, occ).1
}

/// The squares a Secutor on `sq` attacks: for each orthogonal direction, the two diagonals
/// that continue that direction from the collision point, each up to and including its first
/// occupied square. An empty square on such a diagonal counts as attacked because a piece put
/// there would be captured (it cannot lie on the slide, so it would not move P).
#[inline]
pub(crate) fn secutor_attacks(sq: Square, occ: Bitboard) -> Bitboard {
    let pn = collision_point::<N>(sq, occ);
    let ps = collision_point::<S>(sq, occ);
    let pe = collision_point::<E>(sq, occ);
    let pw = collision_point::<W>(sq, occ);
    ray_attacks::<NE>(pn, occ)
        | ray_attacks::<NW>(pn, occ)
        | ray_attacks::<SE>(ps, occ)
        | ray_attacks::<SW>(ps, occ)
        | ray_attacks::<NE>(pe, occ)
        | ray_attacks::<SE>(pe, occ)
        | ray_attacks::<NW>(pw, occ)
        | ray_attacks::<SW>(pw, occ)
}

/// The Secutor's orthogonal slide from `sq` in direction `D` (every square up to and including
/// the first occupied one, as a rook's) and its collision point P, in one ray lookup.
#[inline(always)]
fn slide_and_collision<const D: usize>(sq: Square, occ: Bitboard) -> (Bitboard, Square) {
    let slide = ray_attacks::<D>(sq, occ);
    // P is the last empty square of the slide (the slide's far end when nothing blocks it),
    // or `sq` itself when the first square is occupied.
    let x = slide.0 & occ.0;
    let end = RAY_END[D][sq.index()];
    let p = if x == 0 {
        end
    } else {
        (nearest::<D>(Bitboard(x)).index() as i32 - STEP[D] as i32) as u8
    };
    (slide, Square::from_index_unchecked(p))
}

/// A Secutor's rook reach (its quiet moves are the empty squares of it) together with its
/// attack set, sharing the four orthogonal ray lookups. Both together are also exactly the
/// squares whose occupancy the attack set depends on (besides the Secutor's own square).
#[inline]
pub(crate) fn secutor_reach(sq: Square, occ: Bitboard) -> (Bitboard, Bitboard) {
    let (sn, pn) = slide_and_collision::<N>(sq, occ);
    let (ss, ps) = slide_and_collision::<S>(sq, occ);
    let (se, pe) = slide_and_collision::<E>(sq, occ);
    let (sw, pw) = slide_and_collision::<W>(sq, occ);
    let attacks = ray_attacks::<NE>(pn, occ)
        | ray_attacks::<NW>(pn, occ)
        | ray_attacks::<SE>(ps, occ)
        | ray_attacks::<SW>(ps, occ)
        | ray_attacks::<NE>(pe, occ)
        | ray_attacks::<SE>(pe, occ)
        | ray_attacks::<NW>(pw, occ)
        | ray_attacks::<SW>(pw, occ);
    (sn | ss | se | sw, attacks)
}

/// The squares of `watch` a diagonal leg from `p` in direction `D` attacks; no ray lookup when
/// its line holds none of them.
#[inline(always)]
fn leg_watch<const D: usize>(p: Square, occ: Bitboard, watch: Bitboard) -> Bitboard {
    if RAYS[D][p.index()] & watch.0 == 0 {
        return Bitboard::EMPTY;
    }
    ray_attacks::<D>(p, occ) & watch
}

/// A Secutor's rook reach and the squares of `watch` it attacks: [`secutor_reach`] with its
/// attack set cut to `watch`, cheaper because the legs whose lines miss `watch` are skipped.
#[inline]
pub(crate) fn secutor_watch(sq: Square, occ: Bitboard, watch: Bitboard) -> (Bitboard, Bitboard) {
    let (sn, pn) = slide_and_collision::<N>(sq, occ);
    let (ss, ps) = slide_and_collision::<S>(sq, occ);
    let (se, pe) = slide_and_collision::<E>(sq, occ);
    let (sw, pw) = slide_and_collision::<W>(sq, occ);
    let hits = leg_watch::<NE>(pn, occ, watch)
        | leg_watch::<NW>(pn, occ, watch)
        | leg_watch::<SE>(ps, occ, watch)
        | leg_watch::<SW>(ps, occ, watch)
        | leg_watch::<NE>(pe, occ, watch)
        | leg_watch::<SE>(pe, occ, watch)
        | leg_watch::<NW>(pw, occ, watch)
        | leg_watch::<SW>(pw, occ, watch);
    (sn | ss | se | sw, hits)
}

/// The piece of `targets` a diagonal leg from `p` in direction `D` captures: the leg's first
/// occupied square, if it is one of `targets`. No bit scan when the line holds no target.
#[inline(always)]
fn leg_capture<const D: usize>(p: Square, occ: Bitboard, targets: Bitboard) -> Bitboard {
    let b = RAYS[D][p.index()] & occ.0;
    if b & targets.0 == 0 {
        return Bitboard::EMPTY;
    }
    Bitboard::from_square(nearest::<D>(Bitboard(b))) & targets
}

/// `LEG_PAIRS[i][p]`: the lines of the two capture legs of `LEGS[i]` from collision point
/// `p`.
static LEG_PAIRS: [[u128; CELLS]; 4] = {
    let mut out = [[0u128; CELLS]; 4];
    let mut i = 0;
    while i < 4 {
        let (_, a, b) = LEGS[i];
        let mut c = 0;
        while c < CELLS {
            out[i][c] = RAYS[a][c] | RAYS[b][c];
            c += 1;
        }
        i += 1;
    }
    out
};

/// The captures of `targets` by the two legs `A` and `B` of `LEGS[I]` from collision point
/// `p`: one test skips both when neither line holds a target, as most do.
#[inline(always)]
fn leg_pair_captures<const I: usize, const A: usize, const B: usize>(
    p: Square,
    occ: Bitboard,
    targets: Bitboard,
) -> Bitboard {
    // A and B must be the legs of LEGS[I] (const generics cannot read them from the table).
    const { assert!(LEGS[I].1 == A && LEGS[I].2 == B) };
    if LEG_PAIRS[I][p.index()] & targets.0 == 0 {
        return Bitboard::EMPTY;
    }
    leg_capture::<A>(p, occ, targets) | leg_capture::<B>(p, occ, targets)
}

/// A Secutor's rook reach and the pieces of `targets` (the enemy) it can capture: what move
/// generation needs, cheaper than [`secutor_reach`] because legs with no target on their
/// lines cost no bit scan.
#[inline]
pub(crate) fn secutor_moves(sq: Square, occ: Bitboard, targets: Bitboard) -> (Bitboard, Bitboard) {
    let (sn, pn) = slide_and_collision::<N>(sq, occ);
    let (ss, ps) = slide_and_collision::<S>(sq, occ);
    let (se, pe) = slide_and_collision::<E>(sq, occ);
    let (sw, pw) = slide_and_collision::<W>(sq, occ);
    let captures = leg_pair_captures::<0, NE, NW>(pn, occ, targets)
        | leg_pair_captures::<1, SE, SW>(ps, occ, targets)
        | leg_pair_captures::<2, NE, SE>(pe, occ, targets)
        | leg_pair_captures::<3, NW, SW>(pw, occ, targets);
    (sn | ss | se | sw, captures)
}

/// One diagonal leg from collision point `p` in direction `D`, seen from king square `k`: the
/// squares whose occupancy decides whether the leg hits `k` (empty when `k` is not on the
/// leg's line at all), and whether it hits `k` under `occ`.
#[inline(always)]
fn leg_to<const D: usize>(p: Square, k: Square, occ: Bitboard) -> (Bitboard, bool) {
    let r = RAYS[D][p.index()];
    if r >> k.index() & 1 == 0 {
        return (Bitboard::EMPTY, false);
    }
    let between = r & !RAYS[D][k.index()];
    let blockers = between & occ.0 & !(1u128 << k.index());
    (Bitboard(between), blockers == 0)
}

/// One orthogonal direction `D` of a Secutor on `sq` and its two capture legs `A` and `B`:
/// whether they hit `k` under `occ`. The slide is not even computed when no square it could
/// stop on shares a diagonal with `k`.
#[inline(always)]
fn leg_pair_hits<const D: usize, const A: usize, const B: usize>(
    sq: Square,
    k: Square,
    occ: Bitboard,
    diagonals: u128,
) -> bool {
    if (RAYS[D][sq.index()] | 1u128 << sq.index()) & diagonals == 0 {
        return false;
    }
    let p = collision_point::<D>(sq, occ);
    diagonals >> p.index() & 1 != 0 && (leg_to::<A>(p, k, occ).1 || leg_to::<B>(p, k, occ).1)
}

/// Whether a Secutor on `sq` attacks `k` under `occ`: [`secutor_check_lines`]'s answer without
/// its dependency set, for SEE, which asks it of every Secutor near each exchange square.
#[inline]
pub(crate) fn secutor_hits(sq: Square, k: Square, occ: Bitboard) -> bool {
    let diagonals = DIAGONALS[k.index()];
    leg_pair_hits::<N, NE, NW>(sq, k, occ, diagonals)
        || leg_pair_hits::<S, SE, SW>(sq, k, occ, diagonals)
        || leg_pair_hits::<E, NE, SE>(sq, k, occ, diagonals)
        || leg_pair_hits::<W, NW, SW>(sq, k, occ, diagonals)
}

/// Whether a Secutor on `sq` attacks `k` under `occ`, and the squares whose occupancy that
/// answer depends on: `sq`, its rook reach (which fixes the collision points) and, of the
/// diagonal legs, only the stretches that lead to `k`. A move that neither vacates nor fills
/// any of them leaves the answer unchanged; this set is much smaller than the full attack set,
/// so legality tests against enemy Secutors rarely need recomputing.
#[inline]
pub(crate) fn secutor_check_lines(sq: Square, k: Square, occ: Bitboard) -> (Bitboard, bool) {
    let (sn, pn) = slide_and_collision::<N>(sq, occ);
    let (ss, ps) = slide_and_collision::<S>(sq, occ);
    let (se, pe) = slide_and_collision::<E>(sq, occ);
    let (sw, pw) = slide_and_collision::<W>(sq, occ);
    let mut deps = sn | ss | se | sw | Bitboard::from_square(sq);
    let mut hits = false;
    // Most collision points share no diagonal with the king: their legs are skipped whole.
    let diagonals = DIAGONALS[k.index()];
    let mut add = |(line, hit): (Bitboard, bool)| {
        deps |= line;
        hits |= hit;
    };
    if diagonals >> pn.index() & 1 != 0 {
        add(leg_to::<NE>(pn, k, occ));
        add(leg_to::<NW>(pn, k, occ));
    }
    if diagonals >> ps.index() & 1 != 0 {
        add(leg_to::<SE>(ps, k, occ));
        add(leg_to::<SW>(ps, k, occ));
    }
    if diagonals >> pe.index() & 1 != 0 {
        add(leg_to::<NE>(pe, k, occ));
        add(leg_to::<SE>(pe, k, occ));
    }
    if diagonals >> pw.index() & 1 != 0 {
        add(leg_to::<NW>(pw, k, occ));
        add(leg_to::<SW>(pw, k, occ));
    }
    (deps, hits)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sq(name: &str) -> Square {
        Square::parse(name).expect("square")
    }

    #[test]
    fn holes_stop_rays() {
        // b3 west: a3 is a hole.
        assert!(ray::<W>(sq("b3")).is_empty());
        // c3 south-west reaches b2 and a1.
        let r: Vec<String> = ray::<SW>(sq("c3")).map(|s| s.to_string()).collect();
        assert_eq!(r, ["a1", "b2"]);
        // b1 west reaches a1.
        assert!(ray::<W>(sq("b1")).has(sq("a1")));
        // a1 north is a hole.
        assert!(ray::<N>(sq("a1")).is_empty());
    }

    #[test]
    fn leapers_reach_corners() {
        assert!(knight_attacks(sq("c2")).has(sq("a1")));
        assert!(king_attacks(sq("b2")).has(sq("a1")));
        assert!(king_attacks(sq("b1")).has(sq("a1")));
        assert!(!king_attacks(sq("b3")).has(sq("a1")));
        assert!(pawn_attacks(Color::White, sq("b7")).has(sq("a8")));
        assert_eq!(pawn_attacks(Color::White, sq("b6")).count(), 1);
    }

    /// `secutor_moves`, `secutor_watch` and `secutor_check_lines` against `secutor_reach` and
    /// `secutor_attacks` on random occupancies; and the check-line dependencies really are
    /// all that matters: toggling any other square keeps the answer.
    #[test]
    fn secutor_helpers_agree_with_the_reference() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let squares: Vec<Square> = super::super::square::ALL_SQUARES.to_vec();
        for _ in 0..4000 {
            let mut occ = Bitboard::EMPTY;
            for &q in &squares {
                if next() % 3 == 0 {
                    occ = occ.with(q);
                }
            }
            let s = squares[next() as usize % squares.len()];
            let k = squares[next() as usize % squares.len()];
            if s == k {
                continue;
            }
            let (occ, enemy) = (occ.with(s).with(k), Bitboard(occ.0 & next() as u128));
            let (reach, attacks) = secutor_reach(s, occ);
            assert_eq!(secutor_moves(s, occ, enemy), (reach, attacks & enemy));
            let watch = Bitboard((next() as u128 | (next() as u128) << 64) & ALL.0);
            assert_eq!(secutor_watch(s, occ, watch), (reach, attacks & watch));
            for t in attacks {
                assert!(secutor_threats(t).has(s), "{s} attacks {t} under {occ:?}");
            }
            let (deps, hits) = secutor_check_lines(s, k, occ);
            assert_eq!(hits, attacks.has(k));
            assert_eq!(
                secutor_hits(s, k, occ),
                hits,
                "{s} attacks {k} under {occ:?}"
            );
            for &q in &squares {
                if !deps.has(q) && q != k {
                    let toggled = Bitboard(occ.0 ^ Bitboard::from_square(q).0);
                    assert_eq!(secutor_attacks(s, toggled).has(k), hits, "{s} {k} {q}");
                }
            }
        }
    }

    /// The Secutor in the corner a8 can only ever strike along the south-east diagonals from
    /// the eighth rank: h1 (from a8 itself) but never f1, wherever the pieces stand.
    #[test]
    fn secutor_threats_leave_out_what_no_collision_reaches() {
        assert!(secutor_threats(sq("h1")).has(sq("a8")));
        assert!(!secutor_threats(sq("f1")).has(sq("a8")));
        let everywhere = super::super::square::ALL_SQUARES
            .iter()
            .filter(|&&t| secutor_threats(t).count() == 68)
            .count();
        assert!(everywhere < 68, "the table excludes nothing");
    }

    #[test]
    fn secutor_bounce_from_second_rank() {
        // Secutor on e2 with d2, c2, b2 empty; a1 occupied: bounce at b2 onto a1.
        let occ = Bitboard::from_square(sq("e2")) | Bitboard::from_square(sq("a1"));
        assert!(secutor_attacks(sq("e2"), occ).has(sq("a1")));
        let (reach, attacks) = secutor_reach(sq("e2"), occ);
        assert_eq!(attacks, secutor_attacks(sq("e2"), occ));
        assert_eq!(reach, rook_attacks(sq("e2"), occ));
    }
}
