//! Learned piece-square tables: one value per role, square and phase, on top of the tunable
//! shapes of [`pst`](super::pst).
//!
//! The shapes are a handful of weights per role so that SPSA can tune them by games and the
//! same idea serves both boards; they cannot say that a knight on f3 is worth more than one on
//! d3, or a king on g1 more than on h1. A full table per role can, but its 768 values are far
//! more than games can tune: they are fitted instead to the results of many games' quiet
//! positions (Texel's method, `engine tune-squares`), holding every other term fixed, and
//! stored as data beside the board they were fitted on. One parameter, `SquareTableScale`,
//! weighs the whole table, so UCI and SPSA can still switch it off or scale it.
//!
//! Beside the squares, the table holds each piece's worth by where it stands from either king
//! ([`king_cell`]): a pawn one rank ahead of its own king and a file aside shelters it, a
//! queen two ranks from the enemy king attacks it, a king that walks up to the pawns in an
//! end game is worth it. One table by square cannot say any of that once the kings move; a
//! table by king square and piece square (as the networks have it) is 40,000 values per role,
//! more than labelled positions can fit; the offset from a king is 120 cells per role and
//! king. Fitted with the squares on 443,473 labelled chess positions, held out 0.019555 ->
//! 0.018841 (a table by king distance alone: 0.019219).

use crate::types::Role;

/// Squares of the 8x8 board, the only board with learned tables.
pub const SQUARES: usize = 64;

/// Roles of the 8x8 board (pawn..king, in [`Role::index`] order).
pub const ROLES: usize = 6;

/// Roles that read the king table (pawn..queen: a king is no piece beside itself).
pub const KING_ROLES: usize = 5;

/// Cells of the king table per role and king: 15 rank offsets (+7..-7) by 8 file distances.
pub const CELLS: usize = 120;

/// The two kings a piece is read from, as the king table's first index.
pub const OWN_KING: usize = 0;
/// See [`OWN_KING`].
pub const ENEMY_KING: usize = 1;

/// One role's values by king offset, `[king][role][cell]` (see [`king_cell`]).
pub type KingCells = [[[i16; CELLS]; KING_ROLES]; 2];

/// One learned value per role and square (from the piece's own side: a1 is index 0 for both
/// colours once Black's squares are mirrored by rank), and per role and offset from each king,
/// for the middle and the end game, in centipawns before `SquareTableScale`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SquareTable {
    /// Middle-game values, `[role][square]`.
    pub mg: [[i16; SQUARES]; ROLES],
    /// End-game values, `[role][square]`.
    pub eg: [[i16; SQUARES]; ROLES],
    /// Middle-game values by offset from the own and the enemy king.
    pub king_mg: KingCells,
    /// End-game values by offset from the own and the enemy king.
    pub king_eg: KingCells,
}

impl SquareTable {
    /// The table that adds nothing: where a fit starts when a board has none yet.
    pub const ZERO: SquareTable = SquareTable {
        mg: [[0; SQUARES]; ROLES],
        eg: [[0; SQUARES]; ROLES],
        king_mg: [[[0; CELLS]; KING_ROLES]; 2],
        king_eg: [[[0; CELLS]; KING_ROLES]; 2],
    };

    /// The table whose source reads `diagram`: each role's squares in the order
    /// [`table_source`](crate::tune::table_source) writes them, a board seen from the piece's
    /// side with the eighth rank first, turned back into index order (a1 first). An included
    /// table file must go through this: read as written, its index 0 would be a8, and every
    /// value would sit on the square mirrored by rank (the fitted chess table lost 300 and then
    /// 400 Elo that way: a king rewarded for the eighth rank, pawns for the second).
    pub const fn from_diagram(diagram: SquareTable) -> SquareTable {
        // The king cells are written in index order already (the highest rank offset first).
        let mut t = SquareTable {
            king_mg: diagram.king_mg,
            king_eg: diagram.king_eg,
            ..SquareTable::ZERO
        };
        let mut r = 0;
        while r < ROLES {
            let mut sq = 0;
            while sq < SQUARES {
                let mirrored = sq ^ 56;
                t.mg[r][sq] = diagram.mg[r][mirrored];
                t.eg[r][sq] = diagram.eg[r][mirrored];
                sq += 1;
            }
            r += 1;
        }
        t
    }

    /// Whether every value is zero (a table not fitted yet, which the evaluation skips).
    pub const fn is_zero(&self) -> bool {
        let mut r = 0;
        while r < ROLES {
            let mut sq = 0;
            while sq < SQUARES {
                if self.mg[r][sq] != 0 || self.eg[r][sq] != 0 {
                    return false;
                }
                sq += 1;
            }
            r += 1;
        }
        let mut k = 0;
        while k < 2 {
            let mut r = 0;
            while r < KING_ROLES {
                let mut c = 0;
                while c < CELLS {
                    if self.king_mg[k][r][c] != 0 || self.king_eg[k][r][c] != 0 {
                        return false;
                    }
                    c += 1;
                }
                r += 1;
            }
            k += 1;
        }
        true
    }

    /// The (mg, eg) value of a piece of `role` on the square with index `relative` from its
    /// own side, read as [`king_side`] orients it; nothing for a role the 8x8 board does not
    /// have.
    #[inline(always)]
    pub fn value(&self, role: Role, relative: usize) -> (i32, i32) {
        match (self.mg.get(role.index()), self.eg.get(role.index())) {
            (Some(mg), Some(eg)) => (i32::from(mg[relative]), i32::from(eg[relative])),
            _ => (0, 0),
        }
    }

    /// The (mg, eg) value of a piece of `role` (below the king) in `cell` from `king`
    /// ([`OWN_KING`] or [`ENEMY_KING`]).
    #[inline(always)]
    pub fn king_value(&self, king: usize, role_index: usize, cell: usize) -> (i32, i32) {
        (
            i32::from(self.king_mg[king][role_index][cell]),
            i32::from(self.king_eg[king][role_index][cell]),
        )
    }
}

/// The king table's cell of a piece on `piece` from a king on `king`, both squares as indices
/// from the piece's own side (a1 = 0, Black's mirrored by rank): the rows are the ranks the
/// piece stands ahead of the king, +7 first, the columns how many files it stands aside. The
/// file distance has no sign, so a position and its mirror by file read the same cells, as
/// they read the same squares through [`king_side`].
#[inline(always)]
pub const fn king_cell(piece: usize, king: usize) -> usize {
    let ahead = (piece / 8) as isize - (king / 8) as isize;
    let aside = ((piece % 8) as isize - (king % 8) as isize).unsigned_abs();
    (7 - ahead) as usize * 8 + aside
}

/// The index a piece's square reads in the table, given the file (0 = a) of its own king:
/// the table holds the values of a side whose king stands on the e..h files, and a side whose
/// king stands on a..d reads it mirrored by file. A square's worth depends on which wing the
/// king lives on (pawns before a castled king, pieces that guard it or attack the other one):
/// one table for both wings would average a king's shelter on g2 with the open flank of one
/// castled long. Mirrored, a king on b1 and one on g1 share what the data says of them,
/// where a second table would learn the long-castled wing from a few positions alone (on
/// 443,473 labelled chess positions the mirrored fit held out 0.019555, one table 0.019728).
#[inline(always)]
pub const fn king_side(relative: usize, king_file: u8) -> usize {
    if king_file < 4 {
        relative ^ 7
    } else {
        relative
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_king_on_the_queen_side_reads_the_table_mirrored_by_file() {
        // a1 and h1, d4 and e4: the e-file king reads as stored, the d-file one mirrored.
        assert_eq!(king_side(0, 4), 0);
        assert_eq!(king_side(0, 3), 7);
        assert_eq!(king_side(27, 7), 27);
        assert_eq!(king_side(27, 0), 28);
        for sq in 0..SQUARES {
            for file in 0..8 {
                assert_eq!(king_side(king_side(sq, file), file), sq);
            }
        }
    }

    #[test]
    fn king_cells_are_rank_offset_then_file_distance() {
        // A pawn on g2 before a king on g1: one rank ahead, no file aside.
        assert_eq!(king_cell(14, 6), 6 * 8);
        // Seven ranks ahead and seven files aside (h8 from a1), seven behind (a1 from h8).
        assert_eq!(king_cell(63, 0), 7);
        assert_eq!(king_cell(0, 63), 14 * 8 + 7);
        // The mirror by file reads the same cell.
        for piece in 0..SQUARES {
            for king in 0..SQUARES {
                let cell = king_cell(piece, king);
                assert!(cell < CELLS);
                assert_eq!(king_cell(piece ^ 7, king ^ 7), cell);
            }
        }
    }

    #[test]
    fn a_table_is_zero_until_one_value_is_not() {
        assert!(SquareTable::ZERO.is_zero());
        for (role, sq) in [(0, 0), (ROLES - 1, SQUARES - 1)] {
            let mut t = SquareTable::ZERO;
            t.eg[role][sq] = -1;
            assert!(!t.is_zero());
            let mut t = SquareTable::ZERO;
            t.mg[role][sq] = 1;
            assert!(!t.is_zero());
        }
        for (king, role, cell) in [(OWN_KING, 0, 0), (ENEMY_KING, KING_ROLES - 1, CELLS - 1)] {
            let mut t = SquareTable::ZERO;
            t.king_eg[king][role][cell] = 2;
            assert!(!t.is_zero());
            let mut t = SquareTable::ZERO;
            t.king_mg[king][role][cell] = -2;
            assert!(!t.is_zero());
        }
    }
}
