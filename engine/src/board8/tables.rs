//! The learned piece-square tables of the 8x8 board's rules ([`SquareTable`]), as
//! `engine tune-squares` wrote them: each file in `tables/` says how it was fitted.

use super::net::Net;
use super::net_file::NetRef;
use crate::eval::squares::SquareTable;
use crate::variant::{Rules, Variant};

// Orthodox chess's network, `CHESS_NET`, and its width, `CHESS_NET_HIDDEN` (which the engine's
// `net::HIDDEN` reads), and Latte's, `LATTE_NET` (one for its four rule-sets, as its table):
// `engine tune-net` wrote the files.
include!("tables/chess_net.rs");
include!("tables/latte_net.rs");

// The board keeps one width of sums whichever game it plays: the networks share it.
const _: () = assert!(
    LATTE_NET_HIDDEN == CHESS_NET_HIDDEN,
    "Latte's network and chess's must have one width (engine tune-net --hidden)"
);

/// The built-in network of `rules`, if it has one: the 8x8 board's games have one each.
#[inline]
pub(crate) fn net(rules: Rules) -> Option<NetRef> {
    match rules.variant() {
        Variant::Chess => Some(NetRef::builtin(&CHESS_NET)),
        Variant::Latte => Some(NetRef::builtin(&LATTE_NET)),
        Variant::Secutor => None,
    }
}

/// Every built-in network: a file holding one of them loads as that one.
pub(crate) fn builtin_nets() -> impl Iterator<Item = NetRef> {
    [&CHESS_NET, &LATTE_NET].into_iter().map(NetRef::builtin)
}

/// Orthodox chess's table (its file is laid out as diagrams, the eighth rank first).
const CHESS_TABLE: SquareTable = SquareTable::from_diagram(include!("tables/chess.rs"));
static CHESS: SquareTable = CHESS_TABLE;
/// Whether chess's table adds anything: a table of zeros (none fitted, or a fit rejected) is
/// not summed over the pieces at every evaluation.
const CHESS_FITTED: bool = !CHESS_TABLE.is_zero();

/// Latte's table, one for its four rule-sets (they differ only in how a side may castle).
const LATTE_TABLE: SquareTable = SquareTable::from_diagram(include!("tables/latte.rs"));
static LATTE: SquareTable = LATTE_TABLE;
/// Whether Latte's table adds anything (see [`CHESS_FITTED`]).
const LATTE_FITTED: bool = !LATTE_TABLE.is_zero();

/// The table of `rules`, if it has one: the 8x8 board's games have one each.
#[inline]
pub fn for_rules(rules: Rules) -> Option<&'static SquareTable> {
    match rules.variant() {
        Variant::Chess => Some(&CHESS),
        Variant::Latte => Some(&LATTE),
        Variant::Secutor => None,
    }
}

/// The table of `rules` if it has one with a value other than zero: what the evaluation sums.
#[inline]
pub(super) fn fitted(rules: Rules) -> Option<&'static SquareTable> {
    #[cfg(test)]
    if let (Some(table), Variant::Chess) = (testing::TABLE.get(), rules.variant()) {
        return Some(table);
    }
    match rules.variant() {
        Variant::Chess if CHESS_FITTED => Some(&CHESS),
        Variant::Latte if LATTE_FITTED => Some(&LATTE),
        Variant::Chess | Variant::Latte | Variant::Secutor => None,
    }
}

/// Tests evaluate with a table other than the shipped one (which is all zeros until a fit is
/// kept), so that what they check of the table's use cannot pass by adding nothing.
#[cfg(test)]
pub(crate) mod testing {
    use std::cell::Cell;

    use crate::eval::squares::{Phase, SquareTable};

    thread_local! {
        pub(super) static TABLE: Cell<Option<&'static SquareTable>> = const { Cell::new(None) };
    }

    /// A table with a different value on nearly every entry of every part and phase,
    /// so that a test reading it from the wrong square cannot pass.
    pub(crate) fn patterned_table() -> &'static SquareTable {
        let mut t = SquareTable::ZERO;
        let mut x: u32 = 12345;
        let mut next = || {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            ((x >> 16) % 121) as i16 - 60
        };
        // Every value of every part, both phases.
        for phase in [Phase::Mg, Phase::Eg] {
            for part in t.parts_mut(phase) {
                part.iter_mut().for_each(|v| *v = next());
            }
        }
        Box::leak(Box::new(t))
    }

    /// Runs `f` with `table` as chess's table on this thread.
    pub(crate) fn with_table<R>(table: &'static SquareTable, f: impl FnOnce() -> R) -> R {
        let before = TABLE.replace(Some(table));
        let out = f();
        TABLE.set(before);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shipped file, read as `tune-squares` wrote it, is the table the evaluation uses.
    #[test]
    fn the_shipped_tables_are_their_files_read_as_diagrams() {
        for (file, table) in shipped() {
            let read = crate::tune::emit::literal_order(file);
            assert_eq!(&SquareTable::from_diagram(read), table);
        }
    }

    /// The shipped networks' files below their headers are what `tune-net` writes of them.
    #[test]
    fn the_shipped_network_files_are_what_the_fit_writes() {
        let files = [
            (
                include_str!("tables/chess_net.rs"),
                Variant::Chess,
                &CHESS_NET,
            ),
            (
                include_str!("tables/latte_net.rs"),
                Variant::Latte,
                &LATTE_NET,
            ),
        ];
        for (file, variant, net) in files {
            assert_eq!(below_header(file), net.source(variant, &[]), "{variant}");
        }
    }

    /// The shipped files below their headers are what `tune-squares` writes of the tables:
    /// the emitter and the files agree to the byte, so a change to how a part is written
    /// shows here rather than at the next fit.
    #[test]
    fn the_shipped_files_are_what_the_fit_writes() {
        for (file, table) in shipped() {
            assert_eq!(below_header(file), crate::tune::table_source(table, &[]));
        }
    }

    /// Latte's table is its own (fitted to Latte's positions), not chess's under another name,
    /// and Secutor's board has none.
    #[test]
    fn each_game_of_the_8x8_board_reads_its_own_table() {
        let latte = Rules::default_for(Variant::Latte);
        let chess = Rules::default_for(Variant::Chess);
        let (Some(l), Some(c)) = (for_rules(latte), for_rules(chess)) else {
            panic!("chess and Latte have tables");
        };
        assert_ne!(l, c);
        assert!(for_rules(Rules::default_for(Variant::Secutor)).is_none());
    }

    /// Each shipped table's file, as `tune-squares` wrote it, and the table the engine reads.
    fn shipped() -> [(&'static str, &'static SquareTable); 2] {
        [
            (include_str!("tables/chess.rs"), &CHESS),
            (include_str!("tables/latte.rs"), &LATTE),
        ]
    }

    /// A shipped file's lines below its `//` header, each ending in a newline: what a fit's
    /// writer makes of the same value with no header.
    fn below_header(src: &str) -> String {
        src.lines()
            .skip_while(|l| l.starts_with("//"))
            .map(|l| format!("{l}\n"))
            .collect()
    }
}
