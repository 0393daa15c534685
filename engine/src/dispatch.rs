//! The one place where a runtime variant id picks a monomorphised position type: per command
//! or per game, never per node.

use crate::board8::Board;
use crate::eval::SearchPosition;
use crate::gustavian;
use crate::position::Position;
use crate::variant::{Rules, Variant};

/// Code generic over the position type, run for the type a variant is played with.
pub trait WithPosition {
    /// What the code returns.
    type Output;
    /// Runs with `P` as the position type.
    fn run<P: Position>(self, rules: Rules) -> Self::Output;
}

/// Calls `f` with the position type of `rules`' variant.
pub fn with_position<F: WithPosition>(rules: Rules, f: F) -> F::Output {
    match rules.variant() {
        Variant::Chess | Variant::Latte => f.run::<Board>(rules),
        Variant::Secutor => f.run::<gustavian::Position>(rules),
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
    match rules.variant() {
        Variant::Chess | Variant::Latte => f.run::<Board>(rules),
        Variant::Secutor => f.run::<gustavian::Position>(rules),
    }
}
