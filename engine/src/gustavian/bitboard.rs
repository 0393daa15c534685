//! A set of grid cells as one `u128` (bit `rank * 10 + file`); only the 68 real squares are
//! ever set, so a bit scan always yields a [`Square`].

use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Not};

use super::square::{Square, CELLS};

/// A set of squares.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Bitboard(pub u128);

impl Bitboard {
    /// No square.
    pub const EMPTY: Bitboard = Bitboard(0);

    /// The set holding only `sq`.
    #[inline]
    pub const fn from_square(sq: Square) -> Bitboard {
        Bitboard(SQUARE_BITS[sq.index()])
    }

    /// Whether no square is set.
    #[inline]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether any square is set.
    #[inline]
    pub const fn nonempty(self) -> bool {
        self.0 != 0
    }

    /// Whether `sq` is in the set.
    #[inline]
    pub const fn has(self, sq: Square) -> bool {
        self.0 & SQUARE_BITS[sq.index()] != 0
    }

    /// How many squares are set.
    #[inline]
    pub const fn count(self) -> u32 {
        self.0.count_ones()
    }

    /// Whether more than one square is set.
    #[inline]
    pub const fn more_than_one(self) -> bool {
        self.0 & self.0.wrapping_sub(1) != 0
    }

    /// The lowest square, if any.
    #[inline]
    pub const fn first(self) -> Option<Square> {
        if self.0 == 0 {
            None
        } else {
            Some(Square::from_index_unchecked(self.0.trailing_zeros() as u8))
        }
    }

    /// The lowest square of a set known not to be empty.
    #[inline]
    pub(crate) const fn lowest(self) -> Square {
        Square::from_index_unchecked(self.0.trailing_zeros() as u8)
    }

    /// The highest square of a set known not to be empty.
    #[inline]
    pub(crate) const fn highest(self) -> Square {
        Square::from_index_unchecked((127 - self.0.leading_zeros()) as u8)
    }

    /// The set without `sq`.
    #[inline]
    pub const fn without(self, sq: Square) -> Bitboard {
        Bitboard(self.0 & !SQUARE_BITS[sq.index()])
    }

    /// The set with `sq`.
    #[inline]
    pub const fn with(self, sq: Square) -> Bitboard {
        Bitboard(self.0 | SQUARE_BITS[sq.index()])
    }
}

/// `1 << cell` for every cell: a 128-bit shift by a variable count is a handful of
/// instructions with a branch or two on x86-64, a table load is one.
static SQUARE_BITS: [u128; CELLS] = {
    let mut out = [0u128; CELLS];
    let mut i = 0;
    while i < CELLS {
        out[i] = 1u128 << i;
        i += 1;
    }
    out
};

/// Every real square.
pub const ALL: Bitboard = Bitboard(all_squares_mask());

const fn all_squares_mask() -> u128 {
    let mut m = 0u128;
    let mut i = 0;
    while i < CELLS {
        if Square::from_index(i).is_some() {
            m |= 1u128 << i;
        }
        i += 1;
    }
    m
}

impl BitAnd for Bitboard {
    type Output = Bitboard;
    #[inline]
    fn bitand(self, o: Bitboard) -> Bitboard {
        Bitboard(self.0 & o.0)
    }
}

impl BitOr for Bitboard {
    type Output = Bitboard;
    #[inline]
    fn bitor(self, o: Bitboard) -> Bitboard {
        Bitboard(self.0 | o.0)
    }
}

impl BitXor for Bitboard {
    type Output = Bitboard;
    #[inline]
    fn bitxor(self, o: Bitboard) -> Bitboard {
        Bitboard(self.0 ^ o.0)
    }
}

impl BitAndAssign for Bitboard {
    #[inline]
    fn bitand_assign(&mut self, o: Bitboard) {
        self.0 &= o.0;
    }
}

impl BitOrAssign for Bitboard {
    #[inline]
    fn bitor_assign(&mut self, o: Bitboard) {
        self.0 |= o.0;
    }
}

impl BitXorAssign for Bitboard {
    #[inline]
    fn bitxor_assign(&mut self, o: Bitboard) {
        self.0 ^= o.0;
    }
}

/// The complement within the real squares (holes never get set).
impl Not for Bitboard {
    type Output = Bitboard;
    #[inline]
    fn not(self) -> Bitboard {
        Bitboard(!self.0 & ALL.0)
    }
}

impl Iterator for Bitboard {
    type Item = Square;
    #[inline]
    fn next(&mut self) -> Option<Square> {
        // Half by half: each step is then one 64-bit scan and clear, where a 128-bit one
        // takes both halves and a select (squares are taken every move generated).
        let low = self.0 as u64;
        if low != 0 {
            self.0 ^= u128::from(low & low.wrapping_neg());
            return Some(Square::from_index_unchecked(low.trailing_zeros() as u8));
        }
        let high = (self.0 >> 64) as u64;
        if high == 0 {
            return None;
        }
        self.0 ^= u128::from(high & high.wrapping_neg()) << 64;
        Some(Square::from_index_unchecked(
            64 + high.trailing_zeros() as u8,
        ))
    }
}

impl std::fmt::Debug for Bitboard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(*self).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixty_eight_squares() {
        assert_eq!(ALL.count(), 68);
        assert_eq!((!Bitboard::EMPTY).count(), 68);
    }
}
