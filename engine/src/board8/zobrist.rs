//! Zobrist keys of the 8x8 board, fixed at compile time from a constant seed so that keys (and
//! anything derived from them, like opening-book hashes) are the same in every build.

use crate::types::{Color, Piece};

const fn splitmix(state: u64) -> (u64, u64) {
    let state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (state, z ^ (z >> 31))
}

/// All random numbers of the scheme.
pub(crate) struct Keys {
    /// Per colour, role (pawn..king) and square.
    pub(crate) pieces: [[[u64; 64]; 6]; 2],
    /// Per castling-rights byte (already a combination, so one XOR per change).
    pub(crate) castling: [u64; 256],
    /// Per en-passant file.
    pub(crate) ep_file: [u64; 8],
    /// XORed in when Black is to move.
    pub(crate) black: u64,
}

const fn build() -> Keys {
    let mut state = 0x5eed_1a77_e000_0001u64;
    let mut pieces = [[[0u64; 64]; 6]; 2];
    let mut c = 0;
    while c < 2 {
        let mut r = 0;
        while r < 6 {
            let mut s = 0;
            while s < 64 {
                let (st, v) = splitmix(state);
                state = st;
                pieces[c][r][s] = v;
                s += 1;
            }
            r += 1;
        }
        c += 1;
    }
    let mut single = [0u64; 8];
    let mut i = 0;
    while i < 8 {
        let (st, v) = splitmix(state);
        state = st;
        single[i] = v;
        i += 1;
    }
    let mut castling = [0u64; 256];
    let mut rights = 0;
    while rights < 256 {
        let mut bit = 0;
        while bit < 8 {
            if rights & (1 << bit) != 0 {
                castling[rights] ^= single[bit];
            }
            bit += 1;
        }
        rights += 1;
    }
    let mut ep_file = [0u64; 8];
    let mut f = 0;
    while f < 8 {
        let (st, v) = splitmix(state);
        state = st;
        ep_file[f] = v;
        f += 1;
    }
    let (_, black) = splitmix(state);
    Keys {
        pieces,
        castling,
        ep_file,
        black,
    }
}

pub(crate) static KEYS: Keys = build();

/// The key of `piece` on square index `sq`.
#[inline]
pub(crate) fn piece(piece: Piece, sq: usize) -> u64 {
    KEYS.pieces[piece.color.index()][piece.role.index()][sq]
}

/// XORed in when `color` is to move.
#[inline]
pub(crate) fn side(color: Color) -> u64 {
    match color {
        Color::White => 0,
        Color::Black => KEYS.black,
    }
}
