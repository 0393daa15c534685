//! Squares of the Gustavian board, named on a 10x8 grid (files `a`-`j`, ranks `1`-`8`).
//!
//! The grid has 80 cells; twelve of them (`a2`-`a7`, `j2`-`j7`) are holes and never become a
//! [`Square`], so every `Square` value names one of the 68 real squares.

use std::fmt;

use crate::position::SquareName;

/// Files of the grid.
pub const FILES: u8 = 10;
/// Ranks of the grid.
pub const RANKS: u8 = 8;
/// Cells of the grid, holes included.
pub const CELLS: usize = (FILES as usize) * (RANKS as usize);

/// Whether the grid cell (`file`, `rank`) (0-based, may be out of range) is a real square.
/// Holes are the a- and j-file cells strictly between the first and last rank.
#[inline]
pub const fn is_square_coord(file: i32, rank: i32) -> bool {
    if file < 0 || file >= FILES as i32 || rank < 0 || rank >= RANKS as i32 {
        return false;
    }
    let edge_file = file == 0 || file == FILES as i32 - 1;
    let back_rank = rank == 0 || rank == RANKS as i32 - 1;
    !edge_file || back_rank
}

/// A real square of the Gustavian board; the index is `rank * 10 + file`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Square(u8);

impl Square {
    /// The square at 0-based `file` and `rank`, or `None` for a hole or off the grid.
    #[inline]
    pub const fn new(file: u8, rank: u8) -> Option<Square> {
        if is_square_coord(file as i32, rank as i32) {
            Some(Square(rank * FILES + file))
        } else {
            None
        }
    }

    /// The square with grid index `index`, or `None` for a hole or out of range.
    #[inline]
    pub const fn from_index(index: usize) -> Option<Square> {
        if index >= CELLS {
            return None;
        }
        Square::new(
            (index % FILES as usize) as u8,
            (index / FILES as usize) as u8,
        )
    }

    /// Builds a square from an index the caller knows to be a real square (table lookups,
    /// bit scans of masks that only ever hold squares).
    #[inline]
    pub(crate) const fn from_index_unchecked(index: u8) -> Square {
        Square(index)
    }

    /// The grid index `rank * 10 + file`.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// 0-based file.
    #[inline]
    pub const fn file_of(self) -> u8 {
        self.0 % FILES
    }

    /// 0-based rank.
    #[inline]
    pub const fn rank_of(self) -> u8 {
        self.0 / FILES
    }

    /// Parses a name such as `e4` or `j8`; holes and malformed text give `None`.
    pub fn parse(name: &str) -> Option<Square> {
        let b = name.as_bytes();
        if b.len() != 2 {
            return None;
        }
        let file = b[0].checked_sub(b'a')?;
        let rank = b[1].checked_sub(b'1')?;
        if file >= FILES || rank >= RANKS {
            return None;
        }
        Square::new(file, rank)
    }

    /// Whether a `file`/`rank` name (in range) is one of the twelve holes.
    pub fn is_hole_name(name: &str) -> bool {
        let b = name.as_bytes();
        if b.len() != 2 {
            return false;
        }
        match (b[0].checked_sub(b'a'), b[1].checked_sub(b'1')) {
            (Some(f), Some(r)) if f < FILES && r < RANKS => !is_square_coord(f as i32, r as i32),
            _ => false,
        }
    }
}

/// The name of grid cell (`file`, `rank`), hole or not: for error messages about holes.
pub fn cell_name(file: u8, rank: u8) -> String {
    format!("{}{}", (b'a' + file) as char, rank + 1)
}

impl SquareName for Square {
    #[inline]
    fn file(self) -> u8 {
        self.file_of()
    }
    #[inline]
    fn rank(self) -> u8 {
        self.rank_of()
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{}",
            (b'a' + self.file_of()) as char,
            self.rank_of() + 1
        )
    }
}

impl fmt::Debug for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The 68 real squares in index order (a1 first, j8 last).
pub static ALL_SQUARES: [Square; 68] = build_all_squares();

const fn build_all_squares() -> [Square; 68] {
    let mut out = [Square(0); 68];
    let mut n = 0;
    let mut i = 0;
    while i < CELLS {
        if let Some(sq) = Square::from_index(i) {
            out[n] = sq;
            n += 1;
        }
        i += 1;
    }
    assert!(n == 68);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_holes() {
        assert_eq!(ALL_SQUARES.len(), 68);
        assert_eq!(
            Square::parse("a1").map(|s| s.to_string()),
            Some("a1".into())
        );
        assert_eq!(
            Square::parse("j8").map(|s| s.to_string()),
            Some("j8".into())
        );
        for hole in ["a2", "a7", "j2", "j7"] {
            assert!(Square::parse(hole).is_none());
            assert!(Square::is_hole_name(hole));
        }
        assert!(Square::parse("k1").is_none());
        assert!(Square::parse("a9").is_none());
        assert!(!Square::is_hole_name("b2"));
    }
}
