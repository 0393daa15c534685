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

/// Per-role slots of the counts: every role of every board (pawn..secutor).
const ROLES: usize = Role::ALL.len();

/// The Params-free sums the evaluation needs, kept incrementally by a board.
///
/// Every field is a function of the piece placement alone, so two boards with the same
/// placement hold equal sums (and FEN round trips compare equal).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct EvalSums {
    /// Pieces per colour and role. A board has at most 68 squares, so a `u8` never wraps.
    counts: [[u8; ROLES]; 2],
    /// Per colour and role, the sums of the piece-square features of the squares its pieces
    /// stand on, each from its own side. At most 68 pieces of one role with features below 10:
    /// an `i16` never wraps.
    features: [[i16; ROLES * SLOTS]; 2],
    /// XOR of the Zobrist keys of every pawn (0 without pawns): the pawn cache's key.
    pawn_key: u64,
}

impl EvalSums {
    /// Records a `color` piece of `role` arriving on a square whose piece-square features
    /// (from `color`'s side) are `pst` and whose Zobrist key is `key`.
    #[inline(always)]
    pub(crate) fn place(&mut self, color: Color, role: Role, pst: Features, key: u64) {
        let c = color.index();
        self.counts[c][role.index()] += 1;
        let at = role.index() * SLOTS;
        for i in 0..SLOTS {
            self.features[c][at + i] += i16::from(pst[i]);
        }
        if role == Role::Pawn {
            self.pawn_key ^= key;
        }
    }

    /// Records the piece [`place`](Self::place) recorded leaving its square again.
    #[inline(always)]
    pub(crate) fn lift(&mut self, color: Color, role: Role, pst: Features, key: u64) {
        let c = color.index();
        self.counts[c][role.index()] -= 1;
        let at = role.index() * SLOTS;
        for i in 0..SLOTS {
            self.features[c][at + i] -= i16::from(pst[i]);
        }
        if role == Role::Pawn {
            self.pawn_key ^= key;
        }
    }

    /// Records a piece moving from a square with features `from` to one with `to`, the two squares'
    /// Zobrist keys XORed in `keys`: [`lift`](Self::lift) then [`place`](Self::place) in one
    /// step, for the common move that neither captures nor promotes the mover.
    #[inline(always)]
    pub(crate) fn shift(
        &mut self,
        color: Color,
        role: Role,
        from: Features,
        to: Features,
        keys: u64,
    ) {
        let (c, at) = (color.index(), role.index() * SLOTS);
        for i in 0..SLOTS {
            self.features[c][at + i] += i16::from(to[i]) - i16::from(from[i]);
        }
        if role == Role::Pawn {
            self.pawn_key ^= keys;
        }
    }

    /// How many `color` pieces of `role` stand on the board.
    #[inline]
    pub fn count(&self, color: Color, role: Role) -> i32 {
        i32::from(self.counts[color.index()][role.index()])
    }

    /// `color`'s unscaled (mg, eg) piece-square sum under the shape weights `table`, from its
    /// own side: the sum of [`pst::value`] over its pieces.
    #[inline]
    pub fn pst(&self, color: Color, table: &pst::Table) -> (i32, i32) {
        let c = color.index();
        let (mut mg, mut eg) = (0, 0);
        for (n, base) in self.counts[c].iter().zip(&table.base) {
            mg += i32::from(*n) * base.0;
            eg += i32::from(*n) * base.1;
        }
        for ((f, wm), we) in self.features[c].iter().zip(&table.mg).zip(&table.eg) {
            mg += i32::from(*f) * wm;
            eg += i32::from(*f) * we;
        }
        (mg, eg)
    }

    /// The game phase of both sides' pieces together (unclamped; `taper` clamps it).
    #[inline]
    pub fn phase(&self) -> i32 {
        let mut phase = 0;
        for counts in &self.counts {
            for role in Role::ALL {
                phase += i32::from(counts[role.index()]) * phase_weight(role);
            }
        }
        phase
    }

    /// The pawn key: identifies the placement of both sides' pawns.
    #[inline]
    pub fn pawn_key(&self) -> u64 {
        self.pawn_key
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
