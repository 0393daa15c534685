//! Writing a fitted table as the Rust source that `board8::tables` includes.

use std::fmt::Write as _;

#[cfg(test)]
use crate::eval::squares::CELLS;
use crate::eval::squares::{KingCells, SquareTable, KING_ROLES, ROLES, SQUARES};
use crate::types::Role;

/// The source of `table` as an expression, preceded by `header` as `//` comment lines (how it
/// was fitted). Each role's squares are laid out as a board seen from the piece's side, the
/// eighth rank on top, so the file reads like the diagrams it encodes; each role's king cells
/// as 15 rows of 8, the piece seven ranks ahead of the king first, its file distance across.
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
    for (phase, cells) in [("king_mg", &table.king_mg), ("king_eg", &table.king_eg)] {
        let _ = writeln!(out, "    {phase}: [");
        write_king_cells(&mut out, cells);
        out.push_str("    ],\n");
    }
    out.push_str("}\n");
    out
}

fn write_king_cells(out: &mut String, cells: &KingCells) {
    for (king, roles) in ["own king", "enemy king"].iter().zip(cells) {
        let _ = writeln!(out, "        // from the {king}");
        out.push_str("        [\n");
        for (role, row) in Role::ALL[..KING_ROLES].iter().zip(roles) {
            let name = role.name();
            let _ = writeln!(
                out,
                "            // {name}: +7 ranks ahead first, 0..7 files aside"
            );
            out.push_str("            [\n");
            for ahead in row.chunks(8) {
                out.push_str("               ");
                for v in ahead {
                    let _ = write!(out, " {v:>4},");
                }
                out.push('\n');
            }
            out.push_str("            ],\n");
        }
        out.push_str("        ],\n");
    }
}

/// The numbers of a table's source in the order an array literal reads them (what
/// `include!` of the file gives), comments skipped.
#[cfg(test)]
pub(crate) fn literal_order(src: &str) -> SquareTable {
    let numbers: Vec<i16> = src
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .flat_map(|l| l.split(|c: char| !(c.is_ascii_digit() || c == '-')))
        .filter(|t| !t.is_empty())
        .map(|t| t.parse().expect("a number"))
        .collect();
    let squares = 2 * ROLES * SQUARES;
    let cells = 2 * KING_ROLES * CELLS;
    assert_eq!(numbers.len(), squares + 2 * cells, "every value once");
    let mut t = SquareTable::ZERO;
    for (i, &v) in numbers[squares..].iter().enumerate() {
        let (phase, rest) = (i / cells, i % cells);
        let (king, role, cell) = (
            rest / (KING_ROLES * CELLS),
            rest / CELLS % KING_ROLES,
            rest % CELLS,
        );
        if phase == 0 {
            t.king_mg[king][role][cell] = v;
        } else {
            t.king_eg[king][role][cell] = v;
        }
    }
    for (i, v) in numbers.into_iter().take(squares).enumerate() {
        let (phase, rest) = (i / (ROLES * SQUARES), i % (ROLES * SQUARES));
        let (role, sq) = (rest / SQUARES, rest % SQUARES);
        if phase == 0 {
            t.mg[role][sq] = v;
        } else {
            t.eg[role][sq] = v;
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the engine includes is what was fitted: the source read as an array literal and
    /// turned back by `from_diagram` gives every value on its own square. It fails when the
    /// include reads the diagrams as index order (the bug that mirrored the fitted chess table).
    #[test]
    fn an_emitted_table_included_back_is_the_table_fitted() {
        let mut t = SquareTable::ZERO;
        for r in 0..ROLES {
            for sq in 0..SQUARES {
                t.mg[r][sq] = (r * 100 + sq) as i16;
                t.eg[r][sq] = -((r * 100 + sq) as i16);
            }
        }
        for k in 0..2 {
            for r in 0..KING_ROLES {
                for c in 0..CELLS {
                    t.king_mg[k][r][c] = (1000 + k * 1000 + r * 150 + c) as i16;
                    t.king_eg[k][r][c] = -((1000 + k * 1000 + r * 150 + c) as i16);
                }
            }
        }
        let src = table_source(&t, &["a test".into()]);
        let read = literal_order(&src);
        assert_ne!(
            read, t,
            "the file is laid out as diagrams, not in index order"
        );
        assert_eq!(SquareTable::from_diagram(read), t);
    }

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
        // The king cells: a queen seven ranks ahead of the enemy king on its file, in the end
        // game, opens the last block; one three files aside and seven behind ends it.
        let mut t = SquareTable::ZERO;
        t.king_eg[1][4][0] = 9;
        t.king_eg[1][4][CELLS - 5] = -3;
        let src = table_source(&t, &[]);
        let queen = src.rfind("// queen:").expect("queen's cells");
        let lines: Vec<&str> = src[queen..].lines().collect();
        assert!(lines[2].trim_start().starts_with("9,"), "{}", lines[2]);
        let last: Vec<&str> = lines[16].split(',').map(str::trim).collect();
        assert_eq!(last[3], "-3", "{}", lines[16]);
    }
}
