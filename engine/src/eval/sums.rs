//! The evaluation's running sums, kept by the boards as pieces come and go.
//!
//! Summing material and piece-square values piece by piece at every node costs a loop over
//! every piece; the boards instead update an [`EvalSums`] in their `put` and `remove`, the
//! only places a piece appears or disappears (moves, captures, promotions, castling, en
//! passant, Secutor collision captures, FEN reading), so the sums follow make and unmake for
//! free and the evaluation reads them in a few loads.
//!
//! Only what does not depend on [`Params`](crate::params::Params) is kept: the weights are
//! tunable and may change between searches (a worker plays theta+ against theta- in one
//! process), so material is kept as per-role counts that the evaluation multiplies by the
//! current values, and the piece-square sums are kept unscaled (the tunable `PstScale` divides
//! the per-side sum, exactly as the from-scratch evaluation did). The piece-square tables
//! themselves are fixed.
//!
//! [`recount`] recomputes everything from the pieces, through the evaluation's own board
//! interface: the reference the tests compare the incremental sums with.

use super::phase_weight;
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
    /// Unscaled middle-game piece-square sum per colour, each from its own side.
    pst_mg: [i32; 2],
    /// Unscaled end-game piece-square sum per colour, each from its own side.
    pst_eg: [i32; 2],
    /// XOR of the Zobrist keys of every pawn (0 without pawns): the pawn cache's key.
    pawn_key: u64,
}

impl EvalSums {
    /// Records a `color` piece of `role` arriving on a square whose unscaled piece-square
    /// value (from `color`'s side) is `pst` and whose Zobrist key is `key`.
    #[inline(always)]
    pub(crate) fn place(&mut self, color: Color, role: Role, pst: (i32, i32), key: u64) {
        let c = color.index();
        self.counts[c][role.index()] += 1;
        self.pst_mg[c] += pst.0;
        self.pst_eg[c] += pst.1;
        if role == Role::Pawn {
            self.pawn_key ^= key;
        }
    }

    /// Records the piece [`place`](Self::place) recorded leaving its square again.
    #[inline(always)]
    pub(crate) fn lift(&mut self, color: Color, role: Role, pst: (i32, i32), key: u64) {
        let c = color.index();
        self.counts[c][role.index()] -= 1;
        self.pst_mg[c] -= pst.0;
        self.pst_eg[c] -= pst.1;
        if role == Role::Pawn {
            self.pawn_key ^= key;
        }
    }

    /// Records a piece moving from a square worth `from` to one worth `to`, the two squares'
    /// Zobrist keys XORed in `keys`: [`lift`](Self::lift) then [`place`](Self::place) in one
    /// step, for the common move that neither captures nor promotes the mover.
    #[inline(always)]
    pub(crate) fn shift(
        &mut self,
        color: Color,
        role: Role,
        from: (i32, i32),
        to: (i32, i32),
        keys: u64,
    ) {
        let c = color.index();
        self.pst_mg[c] += to.0 - from.0;
        self.pst_eg[c] += to.1 - from.1;
        if role == Role::Pawn {
            self.pawn_key ^= keys;
        }
    }

    /// How many `color` pieces of `role` stand on the board.
    #[inline]
    pub fn count(&self, color: Color, role: Role) -> i32 {
        i32::from(self.counts[color.index()][role.index()])
    }

    /// `color`'s unscaled (mg, eg) piece-square sum, from its own side.
    #[inline]
    pub fn pst(&self, color: Color) -> (i32, i32) {
        (self.pst_mg[color.index()], self.pst_eg[color.index()])
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
