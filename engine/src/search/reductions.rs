//! Late-move reductions: how much shallower a late move is searched, by the remaining depth and
//! the move's number, `base + ln(depth) * ln(moves) / divisor` plies with the two constants
//! tunable parameters (`LmrBase`, `LmrDivisor`, in hundredths).
//!
//! The logarithms are looked up instead of computed: two `ln` calls per late move were a
//! measurable share of a node. The table holds exactly the values `f64::ln` gives, so the
//! reductions are the same to the bit as computing them.

use crate::params::Params;
use crate::position::MAX_MOVES;

/// Arguments above this are looked up as this: no move list is longer, and the depth never
/// comes near it (it is bounded by the search's maximum ply).
const LARGEST: usize = MAX_MOVES;

/// The reduction formula under one set of parameters.
#[derive(Clone, Debug)]
pub(super) struct Reductions {
    /// `ln(n)` for n in 0..=LARGEST (entry 0 is ln 1: both arguments count from one).
    ln: Vec<f64>,
    base: f64,
    divisor: f64,
}

impl Reductions {
    /// The formula with `p`'s constants.
    pub(super) fn new(p: &Params) -> Self {
        let ln = (0..=LARGEST).map(|n| (n.max(1) as f64).ln()).collect();
        let mut r = Reductions {
            ln,
            base: 0.0,
            divisor: 1.0,
        };
        r.set(p);
        r
    }

    /// Takes `p`'s constants (the logarithms stay: they do not depend on them).
    pub(super) fn set(&mut self, p: &Params) {
        self.base = f64::from(p.lmr_base) / 100.0;
        // The parameter's range keeps it positive; a field set out of range stays finite.
        self.divisor = f64::from(p.lmr_divisor.max(1)) / 100.0;
    }

    /// Plies of reduction for the `moves`-th move searched at `depth`.
    #[inline]
    pub(super) fn of(&self, depth: i32, moves: usize) -> i32 {
        let d = self.ln[(depth.max(1) as usize).min(LARGEST)];
        let m = self.ln[moves.clamp(1, LARGEST)];
        (self.base + d * m / self.divisor) as i32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table gives what the formula computed with `ln` at every call gave.
    #[test]
    fn the_table_matches_the_formula() {
        let p = Params::default();
        let r = Reductions::new(&p);
        let base = f64::from(p.lmr_base) / 100.0;
        let divisor = f64::from(p.lmr_divisor) / 100.0;
        for depth in -2..130 {
            for moves in 0..=MAX_MOVES {
                let d = (depth.max(1) as f64).ln();
                let m = (moves.max(1) as f64).ln();
                let formula = (base + d * m / divisor) as i32;
                assert_eq!(r.of(depth, moves), formula, "{depth} {moves}");
            }
        }
    }

    #[test]
    fn the_constants_are_parameters() {
        let mut p = Params::default();
        p.set("LmrBase", 175).expect("in range");
        let base = Reductions::new(&Params::default());
        let mut more = base.clone();
        more.set(&p);
        assert_eq!(more.of(10, 10), base.of(10, 10) + 1);
        more.set(&Params::default());
        assert_eq!(more.of(10, 10), base.of(10, 10));
    }
}
