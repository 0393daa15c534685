//! Piece-square terms as simple shapes of file and rank, so the same idea serves the 8x8 and
//! the 10x8 Gustavian board: centralisation for minor pieces and queens, advancement for pawns,
//! the seventh rank for rooks, a sheltered back-rank king in the middle game and a central king
//! in the end game. The weights are scaled by the tunable `PstScale`.

use crate::types::Role;

/// Twice the distance from the board's centre along one axis of `n` cells (odd values 1, 3, ...).
const fn axis_distance(i: i32, n: i32) -> i32 {
    let d = 2 * i - (n - 1);
    if d < 0 {
        -d
    } else {
        d
    }
}

/// (mg, eg) piece-square value for a piece of `role` on `file` (0-based) of a board `files`
/// wide, on `rank` counted from its own side (0 = own back rank, 7 = the last rank).
pub const fn value(role: Role, file: i32, rank: i32, files: i32) -> (i32, i32) {
    // 0 in the centre, growing by 1 per step outwards on each axis.
    let centre = (axis_distance(file, files) + axis_distance(rank, 8)) / 2 - 1;
    match role {
        Role::Pawn => {
            let central = if axis_distance(file, files) <= 1 && rank >= 2 && rank <= 4 {
                12
            } else {
                0
            };
            (rank * 3 + central - 3, rank * 6 - 6)
        }
        Role::Knight => (-6 * centre + 12, -5 * centre + 10),
        Role::Bishop => (-3 * centre + 6, -3 * centre + 6),
        Role::Rook => (
            if rank == 6 { 15 } else { 0 } - axis_distance(file, files),
            0,
        ),
        Role::Queen => (-centre, -3 * centre + 6),
        Role::King => {
            let back = if rank == 0 { 10 } else { -12 * rank };
            let wing = if axis_distance(file, files) >= 3 {
                10
            } else {
                0
            };
            (back + wing, -8 * centre + 16)
        }
        Role::Secutor => (0, 0),
    }
}
