//! Splitting a FEN into its fields and reading its clocks: the parts every geometry shares.

use crate::error::FenError;

/// The six fields of a FEN; the clocks default to `0 1` when a FEN has only four.
#[derive(Debug, Clone, Copy)]
pub struct FenFields<'a> {
    /// Piece placement.
    pub board: &'a str,
    /// `w` or `b`.
    pub side: &'a str,
    /// Castling letters or `-`.
    pub castling: &'a str,
    /// En-passant square or `-`.
    pub ep: &'a str,
    /// Half-move clock.
    pub halfmove: &'a str,
    /// Full-move number.
    pub fullmove: &'a str,
}

/// Splits on whitespace; 4 or 6 fields.
pub fn split_fields(fen: &str) -> Result<FenFields<'_>, FenError> {
    let f: Vec<&str> = fen.split_whitespace().collect();
    match f.len() {
        4 => Ok(FenFields {
            board: f[0],
            side: f[1],
            castling: f[2],
            ep: f[3],
            halfmove: "0",
            fullmove: "1",
        }),
        6 => Ok(FenFields {
            board: f[0],
            side: f[1],
            castling: f[2],
            ep: f[3],
            halfmove: f[4],
            fullmove: f[5],
        }),
        n => Err(FenError::FieldCount(n)),
    }
}

/// Reads the half-move clock and the full-move number (which starts at 1; a 0, written by
/// some tools, is read as 1, as python-chess reads it). Values beyond any real game are
/// refused rather than wrapped.
pub fn parse_clocks(halfmove: &str, fullmove: &str) -> Result<(u32, u32), FenError> {
    let half = halfmove
        .parse::<u32>()
        .ok()
        .filter(|&h| h <= 10_000)
        .ok_or_else(|| FenError::Clock {
            field: "halfmove clock",
            value: halfmove.to_string(),
        })?;
    let full = fullmove
        .parse::<u32>()
        .ok()
        .filter(|&f| f <= 100_000)
        .map(|f| f.max(1))
        .ok_or_else(|| FenError::Clock {
            field: "fullmove number",
            value: fullmove.to_string(),
        })?;
    Ok((half, full))
}
