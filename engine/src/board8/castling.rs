//! Castling rights and the geometry of every castling kind on the 8x8 board (orthodox, Luft,
//! Two Rooks), described once as data so generation, making and unmaking share it.

use super::square::{Bitboard, Square};
use crate::types::{Castle, CastleSide, CastleStyle, Color};

/// Castling rights: per colour the letters K, Q (king and a/h rook unmoved) and Latte's G, B
/// (g/b rook unmoved). Bits: White K, Q, G, B = 1, 2, 4, 8; Black's are the same shifted by 4.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Rights(u8);

/// One castling letter of one side.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Letter {
    /// King and h-file rook.
    K,
    /// King and a-file rook.
    Q,
    /// g-file rook (Latte).
    G,
    /// b-file rook (Latte).
    B,
}

impl Letter {
    /// In the order FEN writes them.
    pub const ALL: [Letter; 4] = [Letter::K, Letter::Q, Letter::G, Letter::B];

    const fn bit(self, color: Color) -> u8 {
        let base = match self {
            Letter::K => 1,
            Letter::Q => 2,
            Letter::G => 4,
            Letter::B => 8,
        };
        match color {
            Color::White => base,
            Color::Black => base << 4,
        }
    }

    /// The FEN letter for `color`.
    pub const fn char(self, color: Color) -> char {
        let c = match self {
            Letter::K => 'K',
            Letter::Q => 'Q',
            Letter::G => 'G',
            Letter::B => 'B',
        };
        match color {
            Color::White => c,
            Color::Black => c.to_ascii_lowercase(),
        }
    }

    /// The letter and colour of a FEN character.
    pub const fn from_char(c: char) -> Option<(Letter, Color)> {
        let color = if c.is_ascii_uppercase() {
            Color::White
        } else {
            Color::Black
        };
        let letter = match c.to_ascii_uppercase() {
            'K' => Letter::K,
            'Q' => Letter::Q,
            'G' => Letter::G,
            'B' => Letter::B,
            _ => return None,
        };
        Some((letter, color))
    }

    /// The rook's start square for `color` (a1, b1, g1, h1 mirrored).
    pub const fn rook_square(self, color: Color) -> Square {
        let file = match self {
            Letter::K => 7,
            Letter::Q => 0,
            Letter::G => 6,
            Letter::B => 1,
        };
        match Square::from_coords(file, 0) {
            Some(s) => s.relative(color),
            None => unreachable!(),
        }
    }
}

impl Rights {
    /// No rights.
    pub const NONE: Rights = Rights(0);

    /// The raw byte (an index into the key table).
    #[inline]
    pub const fn bits(self) -> u8 {
        self.0
    }

    /// Whether `color` holds `letter`.
    #[inline]
    pub const fn has(self, color: Color, letter: Letter) -> bool {
        self.0 & letter.bit(color) != 0
    }

    /// Adds a letter.
    pub fn add(&mut self, color: Color, letter: Letter) {
        self.0 |= letter.bit(color);
    }

    /// Whether `color` has any right left.
    #[inline]
    pub const fn any(self, color: Color) -> bool {
        self.0 & (0x0f << (4 * color as u8)) != 0
    }

    /// Drops every G (B) whose K (Q) is gone: such a letter can never matter again.
    #[inline]
    pub const fn normalized(self) -> Rights {
        let missing_kq = !self.0 & 0b0011_0011;
        Rights(self.0 & !(missing_kq << 2))
    }

    /// The rights left after a piece moves from `from` to `to`.
    #[inline]
    pub fn after_move(self, from: Square, to: Square) -> Rights {
        Rights(self.0 & KEEP[from.index()] & KEEP[to.index()]).normalized()
    }
}

/// Per square, the rights that survive a move from or onto it.
static KEEP: [u8; 64] = {
    let mut keep = [0xffu8; 64];
    keep[4] = !0x0f; // e1: the white king
    keep[60] = !0xf0; // e8
    keep[7] &= !0x01; // h1
    keep[0] &= !0x02; // a1
    keep[6] &= !0x04; // g1
    keep[1] &= !0x08; // b1
    keep[63] &= !0x10;
    keep[56] &= !0x20;
    keep[62] &= !0x40;
    keep[57] &= !0x80;
    keep
};

/// Everything about one castling kind for White (Black mirrors it).
#[derive(Clone, Copy, Debug)]
pub(crate) struct CastleGeometry {
    pub(crate) castle: Castle,
    /// Letters that must be held.
    pub(crate) needs: &'static [Letter],
    pub(crate) king_to: Square,
    /// Rooks that leave, in order, paired with `rooks_to`.
    pub(crate) rooks_from: &'static [Square],
    pub(crate) rooks_to: &'static [Square],
    /// Squares that must be empty before the move.
    pub(crate) empty: Bitboard,
    /// Squares that must not be attacked before the move (the king's square included).
    pub(crate) safe: &'static [Square],
}

const fn sq(name: &str) -> Square {
    let b = name.as_bytes();
    match Square::from_coords((b[0] - b'a') as i32, (b[1] - b'1') as i32) {
        Some(s) => s,
        None => unreachable!(),
    }
}

const fn bb(squares: &[Square]) -> Bitboard {
    let mut out = 0u64;
    let mut i = 0;
    while i < squares.len() {
        out |= 1 << squares[i].index();
        i += 1;
    }
    Bitboard(out)
}

const KS: [Square; 3] = [sq("e1"), sq("f1"), sq("g1")];
const QS: [Square; 3] = [sq("e1"), sq("d1"), sq("c1")];

/// The king's start square (White).
pub(crate) const KING_FROM: Square = sq("e1");

/// Every castling kind, White's squares. Index order is the move-flag order of `Move`.
pub(crate) static KINDS: [CastleGeometry; 6] = [
    CastleGeometry {
        castle: Castle {
            side: CastleSide::King,
            style: CastleStyle::Normal,
        },
        needs: &[Letter::K],
        king_to: sq("g1"),
        rooks_from: &[sq("h1")],
        rooks_to: &[sq("f1")],
        empty: bb(&[sq("f1"), sq("g1")]),
        safe: &KS,
    },
    CastleGeometry {
        castle: Castle {
            side: CastleSide::Queen,
            style: CastleStyle::Normal,
        },
        needs: &[Letter::Q],
        king_to: sq("c1"),
        rooks_from: &[sq("a1")],
        rooks_to: &[sq("d1")],
        empty: bb(&[sq("b1"), sq("c1"), sq("d1")]),
        safe: &QS,
    },
    CastleGeometry {
        castle: Castle {
            side: CastleSide::King,
            style: CastleStyle::Luft,
        },
        needs: &[Letter::K, Letter::G],
        king_to: sq("g1"),
        rooks_from: &[sq("g1"), sq("h1")],
        rooks_to: &[sq("g2"), sq("f1")],
        empty: bb(&[sq("f1"), sq("g2")]),
        safe: &KS,
    },
    CastleGeometry {
        castle: Castle {
            side: CastleSide::Queen,
            style: CastleStyle::Luft,
        },
        needs: &[Letter::Q, Letter::B],
        king_to: sq("c1"),
        rooks_from: &[sq("b1"), sq("a1")],
        rooks_to: &[sq("b2"), sq("d1")],
        empty: bb(&[sq("b2"), sq("c1"), sq("d1")]),
        safe: &QS,
    },
    CastleGeometry {
        castle: Castle {
            side: CastleSide::King,
            style: CastleStyle::TwoRooks,
        },
        needs: &[Letter::K, Letter::G],
        king_to: sq("g1"),
        rooks_from: &[sq("g1"), sq("h1")],
        rooks_to: &[sq("f1"), sq("e1")],
        empty: bb(&[sq("f1")]),
        safe: &KS,
    },
    CastleGeometry {
        castle: Castle {
            side: CastleSide::Queen,
            style: CastleStyle::TwoRooks,
        },
        needs: &[Letter::Q, Letter::B],
        king_to: sq("c1"),
        rooks_from: &[sq("b1"), sq("a1")],
        rooks_to: &[sq("d1"), sq("e1")],
        empty: bb(&[sq("c1"), sq("d1")]),
        safe: &QS,
    },
];

/// Mirrors a White bitboard to `color`'s side.
#[inline]
pub(crate) const fn relative_bb(b: Bitboard, color: Color) -> Bitboard {
    match color {
        Color::White => b,
        Color::Black => Bitboard(b.0.swap_bytes()),
    }
}
