//! The learned piece-square tables of the 8x8 board's rules ([`SquareTable`]), as
//! `engine tune-squares` wrote them: each file in `tables/` says how it was fitted.

use crate::eval::squares::SquareTable;
use crate::variant::{Rules, Variant};

/// Orthodox chess's table.
static CHESS: SquareTable = include!("tables/chess.rs");

/// The table of `rules`, if it has one.
#[inline]
pub fn for_rules(rules: Rules) -> Option<&'static SquareTable> {
    match rules.variant() {
        Variant::Chess => Some(&CHESS),
        Variant::Latte | Variant::Secutor => None,
    }
}
