//! Vocabulary shared by every geometry: colours, piece kinds, pieces, castling kinds.

use std::fmt;
use std::ops::{Index, IndexMut, Not};

/// A side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Color {
    /// Moves first.
    White = 0,
    /// Moves second.
    Black = 1,
}

impl Color {
    /// Both colours, White first.
    pub const ALL: [Color; 2] = [Color::White, Color::Black];

    /// 0 for White, 1 for Black: the index into [`ByColor`].
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The FEN side-to-move letter.
    pub const fn char(self) -> char {
        match self {
            Color::White => 'w',
            Color::Black => 'b',
        }
    }

    /// Lower-case name, as PGN results and logs use it.
    pub const fn name(self) -> &'static str {
        match self {
            Color::White => "white",
            Color::Black => "black",
        }
    }
}

impl Not for Color {
    type Output = Color;
    #[inline]
    fn not(self) -> Color {
        match self {
            Color::White => Color::Black,
            Color::Black => Color::White,
        }
    }
}

impl fmt::Display for Color {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One value per colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct ByColor<T> {
    /// White's value.
    pub white: T,
    /// Black's value.
    pub black: T,
}

impl<T> ByColor<T> {
    /// Builds the pair from a function of the colour.
    pub fn new_with(mut f: impl FnMut(Color) -> T) -> Self {
        ByColor {
            white: f(Color::White),
            black: f(Color::Black),
        }
    }
}

impl<T> Index<Color> for ByColor<T> {
    type Output = T;
    #[inline]
    fn index(&self, c: Color) -> &T {
        match c {
            Color::White => &self.white,
            Color::Black => &self.black,
        }
    }
}

impl<T> IndexMut<Color> for ByColor<T> {
    #[inline]
    fn index_mut(&mut self, c: Color) -> &mut T {
        match c {
            Color::White => &mut self.white,
            Color::Black => &mut self.black,
        }
    }
}

/// A kind of piece. The Secutor only exists in Secutor Chess.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// Pawn.
    Pawn = 0,
    /// Knight.
    Knight = 1,
    /// Bishop.
    Bishop = 2,
    /// Rook.
    Rook = 3,
    /// Queen.
    Queen = 4,
    /// King.
    King = 5,
    /// Secutor (Secutor Chess only): slides like a rook, captures by collision.
    Secutor = 6,
}

impl Role {
    /// Every role, in index order.
    pub const ALL: [Role; 7] = [
        Role::Pawn,
        Role::Knight,
        Role::Bishop,
        Role::Rook,
        Role::Queen,
        Role::King,
        Role::Secutor,
    ];

    /// Index for per-role tables.
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Lower-case letter, as in FEN for Black and in coordinate promotion suffixes.
    pub const fn char(self) -> char {
        match self {
            Role::Pawn => 'p',
            Role::Knight => 'n',
            Role::Bishop => 'b',
            Role::Rook => 'r',
            Role::Queen => 'q',
            Role::King => 'k',
            Role::Secutor => 's',
        }
    }

    /// The English name, for reports and generated comments.
    pub const fn name(self) -> &'static str {
        match self {
            Role::Pawn => "pawn",
            Role::Knight => "knight",
            Role::Bishop => "bishop",
            Role::Rook => "rook",
            Role::Queen => "queen",
            Role::King => "king",
            Role::Secutor => "secutor",
        }
    }

    /// Upper-case letter, as SAN writes pieces.
    pub const fn upper_char(self) -> char {
        self.char().to_ascii_uppercase()
    }

    /// The role of a letter of either case.
    pub const fn from_char(c: char) -> Option<Role> {
        Some(match c.to_ascii_lowercase() {
            'p' => Role::Pawn,
            'n' => Role::Knight,
            'b' => Role::Bishop,
            'r' => Role::Rook,
            'q' => Role::Queen,
            'k' => Role::King,
            's' => Role::Secutor,
            _ => return None,
        })
    }
}

/// A coloured piece.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Piece {
    /// Owner.
    pub color: Color,
    /// Kind.
    pub role: Role,
}

impl Piece {
    /// A piece of `color` and `role`.
    pub const fn new(color: Color, role: Role) -> Piece {
        Piece { color, role }
    }

    /// The FEN letter: upper case for White.
    pub const fn char(self) -> char {
        match self.color {
            Color::White => self.role.upper_char(),
            Color::Black => self.role.char(),
        }
    }

    /// The piece of a FEN letter.
    pub const fn from_char(c: char) -> Option<Piece> {
        let color = if c.is_ascii_uppercase() {
            Color::White
        } else {
            Color::Black
        };
        match Role::from_char(c) {
            Some(role) => Some(Piece { color, role }),
            None => None,
        }
    }
}

/// Towards which wing the king castles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CastleSide {
    /// Towards the h-file (the i-file on the Gustavian board).
    King,
    /// Towards the a-file (the b-file on the Gustavian board).
    Queen,
}

/// The kinds of castling the rule-sets of RULES.md allow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CastleStyle {
    /// Orthodox castling (the king moves two squares).
    Normal,
    /// Latte's Luft castling (the b/g rook steps forward).
    Luft,
    /// Latte's Two Rooks castling (both rooks land beside the king).
    TwoRooks,
    /// Secutor Chess's extended castling (the king moves three squares).
    Extended,
}

/// A castling move's kind: side and style.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Castle {
    /// The wing.
    pub side: CastleSide,
    /// The style.
    pub style: CastleStyle,
}

impl Castle {
    /// SAN of this castling kind, as RULES.md spells it.
    pub const fn san(self) -> &'static str {
        match (self.side, self.style) {
            (CastleSide::King, CastleStyle::Normal) => "O-O",
            (CastleSide::Queen, CastleStyle::Normal) => "O-O-O",
            (CastleSide::King, CastleStyle::Luft) => "O-O-L",
            (CastleSide::Queen, CastleStyle::Luft) => "O-O-O-L",
            (CastleSide::King, CastleStyle::TwoRooks) => "O-O-R",
            (CastleSide::Queen, CastleStyle::TwoRooks) => "O-O-O-R",
            (CastleSide::King, CastleStyle::Extended) => "O-O-3",
            (CastleSide::Queen, CastleStyle::Extended) => "O-O-O-3",
        }
    }

    /// The coordinate-notation suffix after the king's move (`l`, `t`, or none).
    pub const fn uci_suffix(self) -> &'static str {
        match self.style {
            CastleStyle::Luft => "l",
            CastleStyle::TwoRooks => "t",
            CastleStyle::Normal | CastleStyle::Extended => "",
        }
    }

    /// Short stable name for statistics ("O-O-L" etc. are awkward as keys).
    pub const fn id(self) -> &'static str {
        match (self.side, self.style) {
            (CastleSide::King, CastleStyle::Normal) => "king",
            (CastleSide::Queen, CastleStyle::Normal) => "queen",
            (CastleSide::King, CastleStyle::Luft) => "luft-king",
            (CastleSide::Queen, CastleStyle::Luft) => "luft-queen",
            (CastleSide::King, CastleStyle::TwoRooks) => "tworooks-king",
            (CastleSide::Queen, CastleStyle::TwoRooks) => "tworooks-queen",
            (CastleSide::King, CastleStyle::Extended) => "extended-king",
            (CastleSide::Queen, CastleStyle::Extended) => "extended-queen",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn piece_letters_round_trip() {
        for c in "PNBRQKSpnbrqks".chars() {
            let p = Piece::from_char(c).expect("known letter");
            assert_eq!(p.char(), c);
        }
        assert!(Piece::from_char('x').is_none());
    }
}
