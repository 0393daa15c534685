//! The evaluation's running sums, kept by the boards as pieces come and go.
//!
//! Summing material and piece-square values piece by piece at every node costs a loop over
//! every piece; the boards instead update an [`EvalSums`] in their `put` and `remove`, the
//! only places a piece appears or disappears (moves, captures, promotions, castling, en
//! passant, Secutor collision captures, FEN reading), so the sums follow make and unmake for
//! free and the evaluation reads them in a few loads.
//!
//! Only what does not depend on [`Params`] is kept: the weights are tunable and may change
//! between searches (a worker plays theta+ against theta- in one process), so material is kept
//! as per-role counts that the evaluation multiplies by the current values, and the
//! piece-square terms as per-role sums of the squares' shape features ([`pst::features`]),
//! which the evaluation multiplies by the current shape weights and then scales by the tunable
//! `PstScale`, exactly as the from-scratch evaluation did.
//!
//! [`recount`] recomputes everything from the pieces, through the evaluation's own board
//! interface: the reference the tests compare the incremental sums with.

use super::phase_weight;
use super::pst::{self, Features, SLOTS};
use super::terms::EvalBoard;
use crate::types::{Color, Role};

/// Roles of every board (pawn..secutor).
const ROLES: usize = Role::ALL.len();

/// Lane of a role's piece count in a colour's lanes: the shape-feature sums come first, `SLOTS`
/// per role, then one count per role.
const COUNT_LANE: usize = ROLES * SLOTS;

/// Lanes per colour: the feature sums and the counts, padded to a multiple of eight so that a
/// dot product with the weights is whole 128-bit vectors of `i16`.
pub(crate) const LANES: usize = (COUNT_LANE + ROLES).div_ceil(8) * 8;

/// Where the shape-feature sum of `role`'s `slot` lives.
#[inline(always)]
pub(crate) const fn feature_lane(role: Role, slot: usize) -> usize {
    role.index() * SLOTS + slot
}

/// Where the count of `role` lives.
#[inline(always)]
pub(crate) const fn count_lane(role: Role) -> usize {
    COUNT_LANE + role.index()
}

/// The Params-free sums the evaluation needs, kept incrementally by a board.
///
/// Every field is a function of the piece placement alone, so two boards with the same
/// placement hold equal sums (and FEN round trips compare equal).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EvalSums {
    /// Per colour, in lanes: for each role the sums of the piece-square features of the squares
    /// its pieces stand on (from the colour's own side), then each role's piece count. A board
    /// has at most 68 squares and every feature is below 10, so an `i16` never wraps.
    lanes: [[i16; LANES]; 2],
    /// XOR of the Zobrist keys of every pawn (0 without pawns): the pawn cache's key.
    pawn_key: u64,
    /// Per colour, XOR of the Zobrist keys of its pieces other than pawns (king included):
    /// the keys of the search's non-pawn correction histories.
    non_pawn_keys: [u64; 2],
}

/// The keys the search's correction histories are indexed by: the pawn structure, and each
/// side's placement of its other pieces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CorrectionKeys {
    /// Both sides' pawns.
    pub pawns: u64,
    /// White's and Black's other pieces, by [`Color::index`].
    pub non_pawn: [u64; 2],
}

impl Default for EvalSums {
    fn default() -> Self {
        EvalSums {
            lanes: [[0; LANES]; 2],
            pawn_key: 0,
            non_pawn_keys: [0; 2],
        }
    }
}

impl EvalSums {
    /// Records a `color` piece of `role` arriving on a square whose piece-square features
    /// (from `color`'s side) are `pst` and whose Zobrist key is `key`.
    #[inline(always)]
    pub(crate) fn place(&mut self, color: Color, role: Role, pst: Features, key: u64) {
        let lanes = &mut self.lanes[color.index()];
        lanes[count_lane(role)] += 1;
        for (i, f) in pst.iter().enumerate() {
            lanes[feature_lane(role, i)] += i16::from(*f);
        }
        self.toggle_key(color, role, key);
    }

    /// Records the piece [`place`](Self::place) recorded leaving its square again.
    #[inline(always)]
    pub(crate) fn lift(&mut self, color: Color, role: Role, pst: Features, key: u64) {
        let lanes = &mut self.lanes[color.index()];
        lanes[count_lane(role)] -= 1;
        for (i, f) in pst.iter().enumerate() {
            lanes[feature_lane(role, i)] -= i16::from(*f);
        }
        self.toggle_key(color, role, key);
    }

    /// Adds or removes (XOR) a `color` `role`'s Zobrist key in the key it belongs to.
    #[inline(always)]
    fn toggle_key(&mut self, color: Color, role: Role, key: u64) {
        if role == Role::Pawn {
            self.pawn_key ^= key;
        } else {
            self.non_pawn_keys[color.index()] ^= key;
        }
    }

    /// Records a piece moving from a square with features `from` to one with `to`, the two
    /// squares' Zobrist keys XORed in `keys`: [`lift`](Self::lift) then [`place`](Self::place)
    /// in one step, for the common move that neither captures nor promotes the mover.
    #[inline(always)]
    pub(crate) fn shift(
        &mut self,
        color: Color,
        role: Role,
        from: Features,
        to: Features,
        keys: u64,
    ) {
        let lanes = &mut self.lanes[color.index()];
        for (i, (t, f)) in to.iter().zip(from).enumerate() {
            lanes[feature_lane(role, i)] += i16::from(*t) - i16::from(f);
        }
        self.toggle_key(color, role, keys);
    }

    /// How many `color` pieces of `role` stand on the board.
    #[inline]
    pub fn count(&self, color: Color, role: Role) -> i32 {
        i32::from(self.lanes[color.index()][count_lane(role)])
    }

    /// `color`'s unscaled (mg, eg) piece-square sum under the shape weights `table`, from its
    /// own side: each piece's role base plus its square's features times their weights, summed
    /// over its pieces. Two dot products of `i16` lanes.
    #[inline]
    pub fn pst(&self, color: Color, table: &pst::Table) -> (i32, i32) {
        let lanes = &self.lanes[color.index()];
        let dot = |w: &[i16; LANES]| -> i32 {
            lanes
                .iter()
                .zip(w)
                .map(|(a, b)| i32::from(*a) * i32::from(*b))
                .sum()
        };
        (dot(&table.mg), dot(&table.eg))
    }

    /// The game phase of both sides' pieces together (unclamped; `taper` clamps it).
    #[inline]
    pub fn phase(&self) -> i32 {
        let mut phase = 0;
        for lanes in &self.lanes {
            for role in Role::ALL {
                phase += i32::from(lanes[count_lane(role)]) * phase_weight(role);
            }
        }
        phase
    }

    /// The pawn key: identifies the placement of both sides' pawns.
    #[inline]
    pub fn pawn_key(&self) -> u64 {
        self.pawn_key
    }

    /// The keys of the search's correction histories.
    #[inline]
    pub fn correction_keys(&self) -> CorrectionKeys {
        CorrectionKeys {
            pawns: self.pawn_key,
            non_pawn: self.non_pawn_keys,
        }
    }
}

/// The sums of `board` recomputed from its pieces.
pub(crate) fn recount<B: EvalBoard>(board: &B) -> EvalSums {
    let mut sums = EvalSums::default();
    for color in Color::ALL {
        for sq in board.color_bb(color) {
            if let Some(role) = board.role_at(sq) {
                sums.place(
                    color,
                    role,
                    B::pst(role, sq, color),
                    B::zobrist(color, role, sq),
                );
            }
        }
    }
    sums
}
