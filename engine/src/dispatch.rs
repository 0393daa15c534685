//! The one place where a runtime variant id picks a monomorphised position type (by its board,
//! [`Variant::geometry`](crate::Variant::geometry)): per command or per game, never per node.

use crate::board8::Board;
use crate::eval::SearchPosition;
use crate::gustavian;
use crate::position::Position;
use crate::variant::{Geometry, Rules};

/// Code generic over the position type, run for the type a variant is played with.
pub trait WithPosition {
    /// What the code returns.
    type Output;
    /// Runs with `P` as the position type.
    fn run<P: Position>(self, rules: Rules) -> Self::Output;
}

/// Calls `f` with the position type of `rules`' variant.
pub fn with_position<F: WithPosition>(rules: Rules, f: F) -> F::Output {
    match rules.variant().geometry() {
        Geometry::Square8 => f.run::<Board>(rules),
        Geometry::Gustavian => f.run::<gustavian::Position>(rules),
    }
}

/// Code generic over a searchable position type.
pub trait WithSearchPosition {
    /// What the code returns.
    type Output;
    /// Runs with `P` as the position type.
    fn run<P: SearchPosition>(self, rules: Rules) -> Self::Output;
}

/// Calls `f` with the searchable position type of `rules`' variant.
pub fn with_search_position<F: WithSearchPosition>(rules: Rules, f: F) -> F::Output {
    match rules.variant().geometry() {
        Geometry::Square8 => f.run::<Board>(rules),
        Geometry::Gustavian => f.run::<gustavian::Position>(rules),
    }
}

#[cfg(test)]
mod tests {
    use crate::board8::Board;
    use crate::gustavian;
    use crate::position::Position;
    use crate::variant::{Geometry, Rules, Variant};

    /// Each variant's geometry is the board whose FEN reader takes its positions, and only
    /// that one: the dispatch above and the readers agree.
    #[test]
    fn a_variants_geometry_is_the_board_that_reads_it() {
        for v in Variant::ALL {
            for &r in v.rulesets() {
                let rules = Rules::new(v, r).expect("its own rule-set");
                let fen = rules.start_fen();
                let square8 = Board::from_fen(rules, fen).is_ok();
                let gustavian = gustavian::Position::from_fen(rules, fen).is_ok();
                assert_eq!(
                    (square8, gustavian),
                    match v.geometry() {
                        Geometry::Square8 => (true, false),
                        Geometry::Gustavian => (false, true),
                    },
                    "{rules}"
                );
            }
        }
    }
}
