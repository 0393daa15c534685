//! Coordinate notation (`e2e4`, `e7e8q`, `e1g1l`) read against a position's legal moves.

use crate::error::MoveError;
use crate::position::Position;

/// Whether `s` has the shape of a coordinate move on a board of up to 10 files:
/// two square names and an optional one-letter suffix (promotion piece, `l` or `t`).
fn looks_like_coordinate_move(s: &str) -> bool {
    let b = s.as_bytes();
    let square = |f: u8, r: u8| (b'a'..=b'j').contains(&f) && (b'1'..=b'8').contains(&r);
    match b.len() {
        4 => square(b[0], b[1]) && square(b[2], b[3]),
        5 => square(b[0], b[1]) && square(b[2], b[3]) && b"qrbnslt".contains(&b[4]),
        _ => false,
    }
}

/// Finds the legal move written `text` in coordinate notation.
pub fn parse_uci<P: Position>(pos: &P, text: &str) -> Result<P::Move, MoveError> {
    let text = text.trim();
    if !looks_like_coordinate_move(text) {
        return Err(MoveError::Unparsable(text.to_string()));
    }
    pos.legal_move_list()
        .into_iter()
        .find(|&mv| pos.move_info(mv).uci() == text)
        .ok_or_else(|| MoveError::Illegal {
            mv: text.to_string(),
            fen: pos.to_fen(),
        })
}

/// Writes a legal move of `pos` in coordinate notation.
pub fn to_uci<P: Position>(pos: &P, mv: P::Move) -> String {
    pos.move_info(mv).uci()
}
