//! Zobrist keys of the Gustavian board, generated at compile time from a fixed seed, so keys
//! are the same in every build and on every machine (opening books and logs stay comparable).

use super::square::{Square, CELLS};
use crate::types::{Color, Piece};

const fn splitmix64(state: u64) -> (u64, u64) {
    let state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (state, z ^ (z >> 31))
}

/// Piece slots: colour * 8 + role.
const PIECE_SLOTS: usize = 16;

struct Keys {
    pieces: [[u64; CELLS]; PIECE_SLOTS],
    side: u64,
    castling: [u64; 16],
    ep_file: [u64; 10],
}

const fn build() -> Keys {
    let mut st = 0x5EC0_7012_6A57_A71Au64;
    let mut keys = Keys {
        pieces: [[0; CELLS]; PIECE_SLOTS],
        side: 0,
        castling: [0; 16],
        ep_file: [0; 10],
    };
    let mut p = 0;
    while p < PIECE_SLOTS {
        let mut s = 0;
        while s < CELLS {
            let (n, v) = splitmix64(st);
            st = n;
            keys.pieces[p][s] = v;
            s += 1;
        }
        p += 1;
    }
    let (n, v) = splitmix64(st);
    st = n;
    keys.side = v;
    // Castling: one key per right, combined by XOR so that the table of all 16 subsets is
    // consistent with updating one right at a time.
    let mut bits = [0u64; 4];
    let mut i = 0;
    while i < 4 {
        let (n, v) = splitmix64(st);
        st = n;
        bits[i] = v;
        i += 1;
    }
    let mut m = 0;
    while m < 16 {
        let mut k = 0u64;
        let mut b = 0;
        while b < 4 {
            if m >> b & 1 != 0 {
                k ^= bits[b];
            }
            b += 1;
        }
        keys.castling[m] = k;
        m += 1;
    }
    let mut f = 0;
    while f < 10 {
        let (n, v) = splitmix64(st);
        st = n;
        keys.ep_file[f] = v;
        f += 1;
    }
    keys
}

static KEYS: Keys = build();

/// The slot of a piece in the key table (also the mailbox code of the position).
#[inline(always)]
pub(crate) const fn piece_code(piece: Piece) -> u8 {
    (piece.color as u8) * 8 + piece.role as u8
}

/// Key of a piece (by mailbox code) on a square.
#[inline(always)]
pub(crate) fn piece(code: u8, sq: Square) -> u64 {
    KEYS.pieces[code as usize & 15][sq.index()]
}

/// Key of Black to move.
#[inline(always)]
pub(crate) fn side() -> u64 {
    KEYS.side
}

/// Key of a set of castling rights (4 bits).
#[inline(always)]
pub(crate) fn castling(rights: u8) -> u64 {
    KEYS.castling[rights as usize & 15]
}

/// Key of a (legal) en-passant square, by its file.
#[inline(always)]
pub(crate) fn ep(sq: Square) -> u64 {
    KEYS.ep_file[sq.file_of() as usize]
}

/// Key contribution of the side to move.
#[inline(always)]
pub(crate) fn turn(c: Color) -> u64 {
    match c {
        Color::White => 0,
        Color::Black => KEYS.side,
    }
}
