//! Writing a fitted table as the Rust source that `board8::tables` includes.

use std::fmt::Write as _;

use crate::eval::squares::{SquareTable, ROLES, SQUARES};
use crate::types::Role;

/// The source of `table` as an expression, preceded by `header` as `//` comment lines (how it
/// was fitted). Each role's squares are laid out as a board seen from the piece's side, the
/// eighth rank on top, so the file reads like the diagrams it encodes.
pub fn table_source(table: &SquareTable, header: &[String]) -> String {
    let mut out = String::new();
    for line in header {
        let _ = writeln!(out, "// {line}");
    }
    out.push_str("SquareTable {\n");
    for (phase, rows) in [("mg", &table.mg), ("eg", &table.eg)] {
        let _ = writeln!(out, "    {phase}: [");
        for (role, row) in Role::ALL[..ROLES].iter().zip(rows.iter()) {
            let name = role.name();
            let _ = writeln!(out, "        // {name}");
            out.push_str("        [\n");
            for rank in (0..SQUARES / 8).rev() {
                out.push_str("           ");
                for v in &row[rank * 8..rank * 8 + 8] {
                    let _ = write!(out, " {v:>4},");
                }
                out.push('\n');
            }
            out.push_str("        ],\n");
        }
        out.push_str("    ],\n");
    }
    out.push_str("}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_source_lays_squares_out_rank_eight_first() {
        let mut t = SquareTable::ZERO;
        t.mg[0][8] = 5; // a pawn on a2
        t.eg[5][63] = -7; // a king on h8
        let src = table_source(&t, &["fitted by a test".into()]);
        assert!(src.starts_with("// fitted by a test\nSquareTable {\n"));
        let pawn = src.find("// pawn").expect("pawn block");
        let lines: Vec<&str> = src[pawn..].lines().collect();
        // lines[1] is `[`, then ranks 8..1: a2 is on the seventh line of the block.
        assert!(lines[8].trim_start().starts_with("5,"), "{}", lines[8]);
        let king = src.rfind("// king").expect("king block");
        let first = src[king..].lines().nth(2).expect("rank 8");
        assert!(first.trim_end().ends_with("-7,"), "{first}");
    }
}
