//! Writing a fitted table as the Rust source that `board8::tables` includes.

use std::fmt::Write as _;

#[cfg(test)]
use crate::eval::squares::CELLS;
use crate::eval::squares::{
    KingCells, SquareTable, Threats, BOARD_PAWNS, DANGER_UNITS, KING_ROLES, MOBILITY,
    MOBILITY_ROLES, PAWN_LEADS, PAWN_PAIRS, PAWN_WINGS, PIECE_LEADS, RANKS, ROLES, SPACE, SQUARES,
    WHOLE_LEADS,
};
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
            write_diagram(&mut out, row, 11);
            out.push_str("        ],\n");
        }
        out.push_str("    ],\n");
    }
    for (phase, cells) in [("king_mg", &table.king_mg), ("king_eg", &table.king_eg)] {
        let _ = writeln!(out, "    {phase}: [");
        write_king_cells(&mut out, cells);
        out.push_str("    ],\n");
    }
    for (phase, rows) in [
        ("mobility_mg", &table.mobility_mg),
        ("mobility_eg", &table.mobility_eg),
    ] {
        let labels = Role::ALL[1..=MOBILITY_ROLES]
            .iter()
            .map(|role| format!("{}: 0..{} safe squares", role.name(), MOBILITY - 1));
        write_labelled_part(&mut out, phase, rows, labels, 14);
    }
    for (phase, rows) in [
        ("danger_mg", &table.danger_mg),
        ("danger_eg", &table.danger_eg),
    ] {
        let labels = (0..rows.len()).map(|attackers| {
            format!(
                "{attackers} attackers: 0..{} units (zone squares hit + 2 a safe check)",
                DANGER_UNITS - 1
            )
        });
        write_labelled_part(&mut out, phase, rows, labels, 16);
    }
    for (phase, row) in [
        ("passer_mg", &table.passer_mg),
        ("passer_eg", &table.passer_eg),
    ] {
        let _ = writeln!(out, "    {phase}: [");
        write_diagram(&mut out, row, 7);
        out.push_str("    ],\n");
    }
    for (phase, cells) in [
        ("passer_king_mg", &table.passer_king_mg),
        ("passer_king_eg", &table.passer_king_eg),
    ] {
        let _ = writeln!(out, "    {phase}: [");
        for (king, row) in ["own king", "enemy king"].iter().zip(cells) {
            let _ = writeln!(
                out,
                "        // from the {king}: +7 ranks ahead first, 0..7 files aside"
            );
            write_rows(&mut out, row, 8, 8);
        }
        out.push_str("    ],\n");
    }
    for (phase, table) in [
        ("threat_mg", &table.threat_mg),
        ("threat_eg", &table.threat_eg),
    ] {
        write_threats(&mut out, phase, table, "");
    }
    for (phase, shapes) in [("pawn_mg", &table.pawn_mg), ("pawn_eg", &table.pawn_eg)] {
        let _ = writeln!(out, "    {phase}: [");
        for (shape, row) in ["connected", "isolated", "doubled", "backward"]
            .iter()
            .zip(shapes)
        {
            let _ = writeln!(out, "        // {shape}");
            out.push_str("        [\n");
            write_diagram(&mut out, row, 11);
            out.push_str("        ],\n");
        }
        out.push_str("    ],\n");
    }
    for (phase, rows) in [("space_mg", &table.space_mg), ("space_eg", &table.space_eg)] {
        let labels = ["fewer than six pieces", "six pieces or more"]
            .iter()
            .map(|pieces| format!("{pieces}: 0..{} safe squares", SPACE - 1));
        write_labelled_part(&mut out, phase, rows, labels, 16);
    }
    for (phase, table) in [
        ("imbalance_mg", &table.imbalance_mg),
        ("imbalance_eg", &table.imbalance_eg),
    ] {
        let _ = writeln!(out, "    {phase}: [");
        for (minors, rooks) in ["fewer", "as many", "more"].iter().zip(table) {
            let _ = writeln!(
                out,
                "        // {minors} minor pieces; rows: fewer, as many, more rooks; columns: queens"
            );
            out.push_str("        [\n");
            for queens in rooks {
                let _ = writeln!(
                    out,
                    "            [{:>4}, {:>4}, {:>4}],",
                    queens[0], queens[1], queens[2]
                );
            }
            out.push_str("        ],\n");
        }
        out.push_str("    ],\n");
    }
    for (phase, rows) in [
        ("board_pawns_mg", &table.board_pawns_mg),
        ("board_pawns_eg", &table.board_pawns_eg),
    ] {
        let labels = Role::ALL[1..=MOBILITY_ROLES]
            .iter()
            .map(|role| format!("{}: 0..{} pawns on the board", role.name(), BOARD_PAWNS - 1));
        write_labelled_part(&mut out, phase, rows, labels, BOARD_PAWNS);
    }
    for (phase, rows) in [
        ("ending_mg", &table.ending_mg),
        ("ending_eg", &table.ending_eg),
    ] {
        let half = PAWN_LEADS / 2;
        let labels = [
            "kings and pawns",
            "opposite bishops",
            "one rook each",
            "other, no queens",
            "other, queens",
        ]
        .iter()
        .map(|ending| format!("{ending}: pawn lead -{half}..+{half}"));
        write_labelled_part(&mut out, phase, rows, labels, PAWN_LEADS);
    }
    for (phase, rows) in [
        ("piece_lead_mg", &table.piece_lead_mg),
        ("piece_lead_eg", &table.piece_lead_eg),
    ] {
        let half = (PIECE_LEADS / 2) as i32;
        let labels = (-half..=half).map(|lead| {
            format!(
                "{lead:+} in pieces (pawns' worth): 0..{} pairs of pawns on the board",
                PAWN_PAIRS - 1
            )
        });
        write_labelled_part(&mut out, phase, rows, labels, PAWN_PAIRS);
    }
    for (phase, table) in [
        ("threat_stm_mg", &table.threat_stm_mg),
        ("threat_stm_eg", &table.threat_stm_eg),
    ] {
        write_threats(&mut out, phase, table, "by the side to move, ");
    }
    for (phase, rows) in [
        ("passer_front_mg", &table.passer_front_mg),
        ("passer_front_eg", &table.passer_front_eg),
    ] {
        let labels = [
            "free",
            "attacked and defended",
            "attacked, not defended",
            "blocked",
        ]
        .iter()
        .map(|front| format!("passed pawn, its stop square {front}: ranks 1..{RANKS}"));
        write_labelled_part(&mut out, phase, rows, labels, RANKS);
    }
    for (phase, rows) in [
        ("whole_lead_mg", &table.whole_lead_mg),
        ("whole_lead_eg", &table.whole_lead_eg),
    ] {
        let half = (WHOLE_LEADS / 2) as i32;
        let labels = (-half..=half).map(|lead| {
            format!("{lead:+} in material (pawns' worth): no pawns, pawns on one wing, on both")
        });
        write_labelled_part(&mut out, phase, rows, labels, PAWN_WINGS);
    }
    out.push_str("}\n");
    out
}

/// A threat part (`name: [` ... `],`): each attacker class's victims, undefended and
/// defended, under a comment that starts with `whose`.
fn write_threats(out: &mut String, name: &str, table: &Threats, whose: &str) {
    let _ = writeln!(out, "    {name}: [");
    for (class, victims) in ["pawn", "minor piece", "rook", "queen", "king"]
        .iter()
        .zip(table)
    {
        let _ = writeln!(
            out,
            "        // {whose}by a {class}: knight, bishop, rook, queen; each undefended, defended"
        );
        out.push_str("        [\n");
        for pair in victims {
            let _ = writeln!(out, "            [{:>4}, {:>4}],", pair[0], pair[1]);
        }
        out.push_str("        ],\n");
    }
    out.push_str("    ],\n");
}

/// A table by square as a board seen from the piece's side, the eighth rank first, each rank
/// a line indented by `indent` spaces (the reader, `SquareTable::from_diagram`, turns it back).
fn write_diagram(out: &mut String, row: &[i16; SQUARES], indent: usize) {
    for rank in (0..SQUARES / 8).rev() {
        out.push_str(&" ".repeat(indent));
        for v in &row[rank * 8..rank * 8 + 8] {
            let _ = write!(out, " {v:>4},");
        }
        out.push('\n');
    }
}

/// A part of rows (`name: [` ... `],`), each row under its `// label` comment and written by
/// [`write_rows`], `per_line` values a line: how the mobility, danger, space, board-pawns,
/// ending and piece-lead parts are laid out.
fn write_labelled_part<const N: usize>(
    out: &mut String,
    name: &str,
    rows: &[[i16; N]],
    labels: impl IntoIterator<Item = String>,
    per_line: usize,
) {
    let _ = writeln!(out, "    {name}: [");
    for (label, row) in labels.into_iter().zip(rows) {
        let _ = writeln!(out, "        // {label}");
        write_rows(out, row, per_line, 8);
    }
    out.push_str("    ],\n");
}

/// `row` as a bracketed array, `per_line` values a line, indented by `indent` spaces.
fn write_rows(out: &mut String, row: &[i16], per_line: usize, indent: usize) {
    let pad = " ".repeat(indent);
    let _ = writeln!(out, "{pad}[");
    for line in row.chunks(per_line) {
        let _ = write!(out, "{pad}   ");
        for v in line {
            let _ = write!(out, " {v:>4},");
        }
        out.push('\n');
    }
    let _ = writeln!(out, "{pad}],");
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
    use crate::eval::squares::{Phase, PART_SIZES};
    let numbers: Vec<i16> = src
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .flat_map(|l| l.split(|c: char| !(c.is_ascii_digit() || c == '-')))
        .filter(|t| !t.is_empty())
        .map(|t| t.parse().expect("a number"))
        .collect();
    assert_eq!(
        numbers.len(),
        2 * PART_SIZES.iter().sum::<usize>(),
        "every value once"
    );
    // The file lists each part's middle-game values, then its end-game ones.
    let mut t = SquareTable::ZERO;
    let mut rest = &numbers[..];
    for (part, &size) in PART_SIZES.iter().enumerate() {
        for phase in [Phase::Mg, Phase::Eg] {
            let (these, after) = rest.split_at(size);
            t.parts_mut(phase)[part].copy_from_slice(these);
            rest = after;
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
        use crate::eval::squares::Phase;
        // A value of its own on every entry of every part, positive middle game, negative
        // end game.
        let mut t = SquareTable::ZERO;
        for (phase, sign) in [(Phase::Mg, 1), (Phase::Eg, -1)] {
            for (p, part) in t.parts_mut(phase).into_iter().enumerate() {
                for (i, v) in part.iter_mut().enumerate() {
                    *v = sign * (p * 1000 + i + 1) as i16;
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
        let king = src.rfind("// king\n").expect("king block");
        let first = src[king..].lines().nth(2).expect("rank 8");
        assert!(first.trim_end().ends_with("-7,"), "{first}");
        // The king cells: a queen seven ranks ahead of the enemy king on its file, in the end
        // game, opens the last block; one three files aside and seven behind ends it.
        let mut t = SquareTable::ZERO;
        t.king_eg[1][4][0] = 9;
        t.king_eg[1][4][CELLS - 5] = -3;
        let src = table_source(&t, &[]);
        let queen = src.rfind("// queen: +7").expect("queen's cells");
        let lines: Vec<&str> = src[queen..].lines().collect();
        assert!(lines[2].trim_start().starts_with("9,"), "{}", lines[2]);
        let last: Vec<&str> = lines[16].split(',').map(str::trim).collect();
        assert_eq!(last[3], "-3", "{}", lines[16]);
    }
}
