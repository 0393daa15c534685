//! FEN reading and writing for the 8x8 variants, with Latte's G/B castling letters.

use super::board::Board;
use super::castling::{Letter, Rights};
use super::square::Square;
use crate::error::{FenError, RulesError};
use crate::fen_fields::{parse_clocks, split_fields};
use crate::types::{Color, Piece, Role};
use crate::variant::{Geometry, Rules, Variant};

impl Board {
    /// Reads a FEN under `rules` (which must be `chess` or `latte`), checking every rule of
    /// RULES.md's "FEN details".
    pub fn from_fen(rules: Rules, fen: &str) -> Result<Board, FenError> {
        if rules.variant().geometry() != Geometry::Square8 {
            return Err(RulesError::WrongGeometry(rules.variant()).into());
        }
        let fields = split_fields(fen)?;
        let mut board = Board::empty(rules);
        read_placement(&mut board, fields.board)?;
        board.turn = match fields.side {
            "w" => Color::White,
            "b" => Color::Black,
            other => return Err(FenError::SideToMove(other.to_string())),
        };
        board.castling = read_castling(&board, fields.castling)?;
        let ep = read_en_passant(&board, fields.ep)?;
        (board.halfmove, board.fullmove) = parse_clocks(fields.halfmove, fields.fullmove)?;

        if board.is_attacked(board.king_of(!board.turn), board.turn) {
            return Err(FenError::OpponentInCheck(!board.turn));
        }
        board.ep = ep.filter(|&sq| board.ep_capture_legal(sq));
        board.key = board.compute_key();
        if let Some(net) = super::tables::net(rules) {
            board.use_network(net);
        }
        Ok(board)
    }

    /// Writes the FEN: castling letters in the order `KQGBkqgb`, the en-passant square only
    /// when a capture there is legal.
    pub fn to_fen(&self) -> String {
        let mut out = String::with_capacity(90);
        for rank in (0..8).rev() {
            let mut empty = 0;
            for file in 0..8 {
                match Square::from_coords(file, rank).and_then(|s| self.at(s)) {
                    Some(p) => {
                        if empty > 0 {
                            out.push_str(&empty.to_string());
                            empty = 0;
                        }
                        out.push(p.char());
                    }
                    None => empty += 1,
                }
            }
            if empty > 0 {
                out.push_str(&empty.to_string());
            }
            if rank > 0 {
                out.push('/');
            }
        }
        out.push(' ');
        out.push(self.turn.char());
        out.push(' ');
        let mut any = false;
        for color in Color::ALL {
            for letter in Letter::ALL {
                if self.castling.has(color, letter) {
                    out.push(letter.char(color));
                    any = true;
                }
            }
        }
        if !any {
            out.push('-');
        }
        out.push(' ');
        match self.ep {
            Some(sq) => out.push_str(&sq.to_string()),
            None => out.push('-'),
        }
        out.push_str(&format!(" {} {}", self.halfmove, self.fullmove));
        out
    }
}

fn read_placement(board: &mut Board, text: &str) -> Result<(), FenError> {
    let ranks: Vec<&str> = text.split('/').collect();
    if ranks.len() != 8 {
        return Err(FenError::RankCount {
            found: ranks.len(),
            expected: 8,
        });
    }
    for (i, rank_text) in ranks.iter().enumerate() {
        let rank = 7 - i as i32;
        let mut file = 0usize;
        for c in rank_text.chars() {
            if let Some(d) = c.to_digit(10) {
                file += d as usize;
                continue;
            }
            let piece = Piece::from_char(c)
                .filter(|p| p.role != Role::Secutor)
                .ok_or(FenError::UnknownPiece(c))?;
            if let Some(sq) = Square::from_coords(file as i32, rank) {
                board.put(sq, piece);
            }
            file += 1;
        }
        if file != 8 || rank_text.chars().any(|c| c == '0' || c == '9') {
            return Err(FenError::CellCount {
                rank: rank as u8 + 1,
                text: rank_text.to_string(),
                found: file,
                expected: 8,
            });
        }
    }
    for color in Color::ALL {
        match board.pieces(color, Role::King).count() {
            0 => return Err(FenError::MissingKing(color)),
            1 => {}
            n => {
                return Err(FenError::ExtraKing {
                    color,
                    count: n as usize,
                })
            }
        }
    }
    let back_ranks = super::square::Bitboard::rank(0) | super::square::Bitboard::rank(7);
    if let Some(sq) = (board.role_bb(Role::Pawn) & back_ranks).first() {
        return Err(FenError::PawnOnBackRank(sq.to_string()));
    }
    Ok(())
}

fn read_castling(board: &Board, text: &str) -> Result<Rights, FenError> {
    let mut rights = Rights::NONE;
    if text == "-" {
        return Ok(rights);
    }
    let latte = board.rules.variant() == Variant::Latte;
    let optional = board.rules.ruleset().optional_castling();
    for c in text.chars() {
        let (letter, color) = Letter::from_char(c).ok_or(FenError::CastlingLetter(c))?;
        let is_optional = matches!(letter, Letter::G | Letter::B);
        if is_optional && !latte {
            return Err(FenError::CastlingLetter(c));
        }
        let king_sq = super::castling::KING_FROM.relative(color);
        let rook_sq = letter.rook_square(color);
        let king_ok = board.at(king_sq) == Some(Piece::new(color, Role::King));
        let rook_ok = board.at(rook_sq) == Some(Piece::new(color, Role::Rook));
        if is_optional && !optional {
            // Accepted and ignored under `normal`, as RULES.md says.
            continue;
        }
        if !(king_ok && rook_ok) {
            return Err(FenError::CastlingPieces {
                letter: c,
                needs: format!("the {color} king on {king_sq} and a {color} rook on {rook_sq}"),
            });
        }
        rights.add(color, letter);
    }
    Ok(rights.normalized())
}

/// Accepts a square a double step could have produced: the right rank for the side to move,
/// the pawn in front of it, the square itself and the one behind empty.
fn read_en_passant(board: &Board, text: &str) -> Result<Option<Square>, FenError> {
    if text == "-" {
        return Ok(None);
    }
    let sq = Square::parse(text).ok_or_else(|| FenError::EnPassantSyntax(text.to_string()))?;
    let mover = !board.turn;
    let impossible = |reason| {
        Err(FenError::EnPassantImpossible {
            square: text.to_string(),
            reason,
        })
    };
    let expected_rank = if mover == Color::White { 2 } else { 5 };
    if sq.rank_index() != expected_rank {
        return impossible(
            "it is not on the rank a double step of the side that just moved passes",
        );
    }
    let pawn_sq = sq.forward_of(mover);
    let origin = sq.forward_of(!mover);
    if board.at(pawn_sq) != Some(Piece::new(mover, Role::Pawn)) {
        return impossible("no pawn of the side that just moved stands in front of it");
    }
    if board.at(sq).is_some() || board.at(origin).is_some() {
        return impossible("the square or the pawn's start square is occupied");
    }
    Ok(Some(sq))
}
