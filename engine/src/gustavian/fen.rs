//! FEN reading and writing for the Gustavian board (RULES.md, "Secutor Chess" / "FEN").
//!
//! A rank has ten cells: `*` exactly on the holes, digits for runs of empty squares (`10` for a
//! wholly empty first or last rank), piece letters including `S`/`s` for the Secutor. Every
//! problem becomes a [`FenError`] naming the offending token; nothing here panics on any input.

use super::board::{Position, BK, BQ, WK, WQ};
use super::square::{cell_name, is_square_coord, Square, FILES, RANKS};
use super::zobrist::piece_code;
use crate::error::{FenError, RulesError};
use crate::fen_fields::{parse_clocks, split_fields};
use crate::types::{Color, Piece, Role};
use crate::variant::{Geometry, Rules};

/// One cell of a FEN rank.
#[derive(Clone, Copy)]
enum Cell {
    Empty,
    Hole,
    Piece(Piece),
}

/// More cells than this in one rank are only counted, not stored.
const MAX_STORED_CELLS: usize = FILES as usize;

/// Splits a rank's text into cells; returns the cells stored and the total count.
fn read_rank(text: &str) -> Result<([Option<Cell>; MAX_STORED_CELLS], usize), FenError> {
    let mut cells = [None; MAX_STORED_CELLS];
    let mut count = 0usize;
    let mut push = |cell: Cell, count: &mut usize| {
        if let Some(slot) = cells.get_mut(*count) {
            *slot = Some(cell);
        }
        *count = count.saturating_add(1);
    };
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if let Some(d) = c.to_digit(10) {
            if d == 0 {
                return Err(FenError::UnknownPiece('0'));
            }
            let mut run = d as usize;
            while let Some(n) = chars.peek().and_then(|c| c.to_digit(10)) {
                run = run.saturating_mul(10).saturating_add(n as usize);
                chars.next();
            }
            // Only the first cells are stored; the rest just add to the count.
            for _ in 0..run.min(MAX_STORED_CELLS + 1) {
                push(Cell::Empty, &mut count);
            }
            count = count.saturating_add(run.saturating_sub(MAX_STORED_CELLS + 1));
        } else if c == '*' {
            push(Cell::Hole, &mut count);
        } else {
            let piece = Piece::from_char(c).ok_or(FenError::UnknownPiece(c))?;
            push(Cell::Piece(piece), &mut count);
        }
    }
    Ok((cells, count))
}

/// Parses the board field into `pos`.
fn read_board(pos: &mut Position, board: &str) -> Result<(), FenError> {
    let ranks: Vec<&str> = board.split('/').collect();
    if ranks.len() != RANKS as usize {
        return Err(FenError::RankCount {
            found: ranks.len(),
            expected: RANKS as usize,
        });
    }
    for (i, text) in ranks.iter().enumerate() {
        let rank = RANKS - 1 - i as u8;
        let (cells, count) = read_rank(text)?;
        if count != FILES as usize {
            return Err(FenError::CellCount {
                rank: rank + 1,
                text: (*text).to_string(),
                found: count,
                expected: FILES as usize,
            });
        }
        for (file, cell) in cells.iter().enumerate() {
            let file = file as u8;
            let cell = cell.unwrap_or(Cell::Empty);
            let on_square = is_square_coord(file as i32, rank as i32);
            match (cell, on_square) {
                (Cell::Hole, true) => return Err(FenError::HoleOnSquare(cell_name(file, rank))),
                (Cell::Hole, false) => {}
                (Cell::Empty, false) => {
                    return Err(FenError::PieceOnHole {
                        what: "an empty square".to_string(),
                        square: cell_name(file, rank),
                    })
                }
                (Cell::Piece(p), false) => {
                    return Err(FenError::PieceOnHole {
                        what: format!("a piece '{}'", p.char()),
                        square: cell_name(file, rank),
                    })
                }
                (Cell::Empty, true) => {}
                (Cell::Piece(p), true) => {
                    if p.role == Role::Pawn && (rank == 0 || rank == RANKS - 1) {
                        return Err(FenError::PawnOnBackRank(cell_name(file, rank)));
                    }
                    if let Some(sq) = Square::new(file, rank) {
                        pos.put(piece_code(p), sq);
                    }
                }
            }
        }
    }
    for color in Color::ALL {
        let kings = pos.pieces(color, Role::King);
        match kings.count() {
            0 => return Err(FenError::MissingKing(color)),
            1 => pos.king[color.index()] = kings.lowest(),
            count => {
                return Err(FenError::ExtraKing {
                    color,
                    count: count as usize,
                })
            }
        }
    }
    Ok(())
}

/// Parses the castling field; each letter needs its king and rook in place.
fn read_castling(pos: &Position, field: &str) -> Result<u8, FenError> {
    if field == "-" {
        return Ok(0);
    }
    let mut rights = 0;
    for letter in field.chars() {
        let (bit, color, rook_file, needs) = match letter {
            'K' => (
                WK,
                Color::White,
                8,
                "the white king on f1 and a white rook on i1",
            ),
            'Q' => (
                WQ,
                Color::White,
                1,
                "the white king on f1 and a white rook on b1",
            ),
            'k' => (
                BK,
                Color::Black,
                8,
                "the black king on f8 and a black rook on i8",
            ),
            'q' => (
                BQ,
                Color::Black,
                1,
                "the black king on f8 and a black rook on b8",
            ),
            other => return Err(FenError::CastlingLetter(other)),
        };
        let rank = match color {
            Color::White => 0,
            Color::Black => RANKS - 1,
        };
        let king_ok = Square::new(5, rank).is_some_and(|sq| pos.pieces(color, Role::King).has(sq));
        let rook_ok =
            Square::new(rook_file, rank).is_some_and(|sq| pos.pieces(color, Role::Rook).has(sq));
        if !king_ok || !rook_ok {
            return Err(FenError::CastlingPieces {
                letter,
                needs: needs.to_string(),
            });
        }
        rights |= bit;
    }
    Ok(rights)
}

/// Parses and validates the en-passant field: a square a double step could just have passed.
fn read_en_passant(pos: &Position, field: &str) -> Result<Option<Square>, FenError> {
    if field == "-" {
        return Ok(None);
    }
    let Some(sq) = Square::parse(field) else {
        if Square::is_hole_name(field) {
            return Err(FenError::EnPassantImpossible {
                square: field.to_string(),
                reason: "it is a hole of the board",
            });
        }
        return Err(FenError::EnPassantSyntax(field.to_string()));
    };
    let impossible = |reason| {
        Err(FenError::EnPassantImpossible {
            square: field.to_string(),
            reason,
        })
    };
    // Rank of the ep square, of the pawn that double-stepped, and of its start.
    let (ep_rank, pawn_rank, start_rank) = match pos.turn {
        Color::White => (5, 4, 6),
        Color::Black => (2, 3, 1),
    };
    if sq.rank_of() != ep_rank {
        return impossible(
            "it is not on the rank a double step passes for the side that just moved",
        );
    }
    let file = sq.file_of();
    let mover = !pos.turn;
    let pawn_there =
        Square::new(file, pawn_rank).is_some_and(|s| pos.pieces(mover, Role::Pawn).has(s));
    if !pawn_there {
        return impossible("no pawn of the side that just moved stands in front of it");
    }
    let occ = pos.occupied();
    let start_empty = Square::new(file, start_rank).is_some_and(|s| !occ.has(s));
    if occ.has(sq) || !start_empty {
        return impossible("the squares the double step passed are not empty");
    }
    Ok(Some(sq))
}

/// Reads a FEN under `rules`, validating it fully.
pub(crate) fn read(rules: Rules, fen: &str) -> Result<Position, FenError> {
    if rules.variant().geometry() != Geometry::Gustavian {
        return Err(FenError::Rules(RulesError::WrongGeometry(rules.variant())));
    }
    let fields = split_fields(fen)?;
    let mut pos = Position::empty(rules);
    read_board(&mut pos, fields.board)?;
    pos.turn = match fields.side {
        "w" => Color::White,
        "b" => Color::Black,
        other => return Err(FenError::SideToMove(other.to_string())),
    };
    pos.castling = read_castling(&pos, fields.castling)?;
    let ep = read_en_passant(&pos, fields.ep)?;
    (pos.halfmove, pos.fullmove) = parse_clocks(fields.halfmove, fields.fullmove)?;
    if pos.king_attacked(!pos.turn) {
        return Err(FenError::OpponentInCheck(!pos.turn));
    }
    // Held only when a capture is legal, so that FEN output and the key follow it.
    pos.ep = ep.filter(|&sq| pos.any_legal_en_passant(sq));
    pos.key = pos.compute_key();
    Ok(pos)
}

/// Writes the FEN.
pub(crate) fn write(pos: &Position) -> String {
    let mut out = String::with_capacity(96);
    for rank in (0..RANKS).rev() {
        let mut run = 0;
        for file in 0..FILES {
            let cell = Square::new(file, rank);
            let code = cell.map(|sq| pos.code_at(sq));
            let letter = match (cell, code.and_then(super::board::decode)) {
                (None, _) => Some('*'),
                (Some(_), Some(p)) => Some(p.char()),
                (Some(_), None) => None,
            };
            match letter {
                None => run += 1,
                Some(c) => {
                    if run > 0 {
                        out.push_str(&run.to_string());
                        run = 0;
                    }
                    out.push(c);
                }
            }
        }
        if run > 0 {
            out.push_str(&run.to_string());
        }
        if rank > 0 {
            out.push('/');
        }
    }
    out.push(' ');
    out.push(pos.turn.char());
    out.push(' ');
    if pos.castling == 0 {
        out.push('-');
    }
    for (bit, c) in [(WK, 'K'), (WQ, 'Q'), (BK, 'k'), (BQ, 'q')] {
        if pos.castling & bit != 0 {
            out.push(c);
        }
    }
    out.push(' ');
    match pos.ep {
        Some(sq) => out.push_str(&sq.to_string()),
        None => out.push('-'),
    }
    out.push_str(&format!(" {} {}", pos.halfmove, pos.fullmove));
    out
}
