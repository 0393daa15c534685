//! Piece-square terms as tunable shapes of file and rank, so the same idea serves the 8x8 and
//! the 10x8 Gustavian board: centralisation for minor pieces and queens, advancement for pawns,
//! the seventh rank for rooks, a sheltered back-rank king in the middle game and a central king
//! in the end game.
//!
//! A square's value for a role is linear in a few features of the square (its rank from the
//! piece's side, its distance from the centre, and up to two features of the role's own), with
//! one tunable weight per feature and phase. The boards keep the per-role sums of the features
//! through make and unmake ([`EvalSums`](super::EvalSums)); the evaluation multiplies them by
//! the current weights. So the shapes are tuned by SPSA like any other weight, while the
//! incremental sums stay independent of [`Params`] (a worker plays theta+ against theta- in one
//! process). The whole sum is then scaled by the tunable `PstScale`.

use super::sums::{count_lane, feature_lane, LANES};
use crate::params::Params;
use crate::types::Role;

/// Feature slots per role.
pub const SLOTS: usize = 4;

/// The features of one square for one role, in the role's slots: 0 = rank from the piece's own
/// side (0..=7), 1 = distance from the centre (0 in the middle four cells, growing by one per
/// step outwards), 2 and 3 = the role's own (see [`features`]). Unused slots hold 0.
pub type Features = [i8; SLOTS];

/// Twice the distance from the board's centre along one axis of `n` cells (odd values 1, 3, ...).
const fn axis_distance(i: i32, n: i32) -> i32 {
    let d = 2 * i - (n - 1);
    if d < 0 {
        -d
    } else {
        d
    }
}

/// The features of `file` (0-based) on a board `files` wide, on `rank` counted from the
/// piece's side (0 = own back rank, 7 = the last rank), for a piece of `role`.
///
/// The roles' own features: a pawn's slot 2 is 1 on the central files of ranks 3 to 5 (where
/// pawns fight for the centre); a rook's slot 2 is 1 on the seventh rank and its slot 3 is twice
/// its file's distance from the centre; a king's slot 2 is 1 on its back rank and its slot 3 is
/// 1 on the wings (three or more files from the centre), where it castles to.
pub const fn features(role: Role, file: i32, rank: i32, files: i32) -> Features {
    let file_distance = axis_distance(file, files);
    let centre = (file_distance + axis_distance(rank, 8)) / 2 - 1;
    let (a, b) = match role {
        Role::Pawn => ((file_distance <= 1 && rank >= 2 && rank <= 4) as i32, 0),
        Role::Rook => ((rank == 6) as i32, file_distance),
        Role::King => ((rank == 0) as i32, (file_distance >= 3) as i32),
        Role::Knight | Role::Bishop | Role::Queen | Role::Secutor => (0, 0),
    };
    [rank as i8, centre as i8, a as i8, b as i8]
}

/// A role's piece-square weights: a fixed per-piece base and one weight per feature slot, for
/// the middle game and the end game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Weights {
    /// What every piece of the role adds, wherever it stands (mg, eg): the shapes' offsets,
    /// which only shift the role's material and so are not tuned.
    pub base: (i32, i32),
    /// Middle-game weight per feature slot.
    pub mg: [i32; SLOTS],
    /// End-game weight per feature slot.
    pub eg: [i32; SLOTS],
}

/// The piece-square weights of `role` under `p`.
#[inline]
pub fn weights(role: Role, p: &Params) -> Weights {
    match role {
        Role::Pawn => Weights {
            base: (-3, -6),
            mg: [
                p.pst_pawn_rank_mg,
                p.pst_pawn_centre_mg,
                p.pst_pawn_central_mg,
                0,
            ],
            eg: [
                p.pst_pawn_rank_eg,
                p.pst_pawn_centre_eg,
                p.pst_pawn_central_eg,
                0,
            ],
        },
        Role::Knight => Weights {
            base: (12, 10),
            mg: [p.pst_knight_rank_mg, p.pst_knight_centre_mg, 0, 0],
            eg: [p.pst_knight_rank_eg, p.pst_knight_centre_eg, 0, 0],
        },
        Role::Bishop => Weights {
            base: (6, 6),
            mg: [p.pst_bishop_rank_mg, p.pst_bishop_centre_mg, 0, 0],
            eg: [p.pst_bishop_rank_eg, p.pst_bishop_centre_eg, 0, 0],
        },
        Role::Rook => Weights {
            base: (0, 0),
            mg: [
                p.pst_rook_rank_mg,
                p.pst_rook_centre_mg,
                p.pst_rook_seventh_mg,
                p.pst_rook_file_mg,
            ],
            eg: [
                p.pst_rook_rank_eg,
                p.pst_rook_centre_eg,
                p.pst_rook_seventh_eg,
                p.pst_rook_file_eg,
            ],
        },
        Role::Queen => Weights {
            base: (0, 6),
            mg: [p.pst_queen_rank_mg, p.pst_queen_centre_mg, 0, 0],
            eg: [p.pst_queen_rank_eg, p.pst_queen_centre_eg, 0, 0],
        },
        Role::King => Weights {
            base: (0, 16),
            mg: [
                p.pst_king_rank_mg,
                p.pst_king_centre_mg,
                p.pst_king_back_mg,
                p.pst_king_wing_mg,
            ],
            eg: [
                p.pst_king_rank_eg,
                p.pst_king_centre_eg,
                p.pst_king_back_eg,
                p.pst_king_wing_eg,
            ],
        },
        Role::Secutor => Weights {
            base: (0, 0),
            mg: [p.pst_secutor_rank_mg, p.pst_secutor_centre_mg, 0, 0],
            eg: [p.pst_secutor_rank_eg, p.pst_secutor_centre_eg, 0, 0],
        },
    }
}

/// Every role's piece-square weights laid out as [`EvalSums`](super::EvalSums) lays out its
/// lanes (the feature slots of each role, then each role's piece count, which weighs the
/// role's base), so that a side's piece-square sum is two dot products the compiler vectorises.
/// Built once per search ([`Searcher`](crate::search::Searcher)), or per call of
/// [`evaluate`](super::SearchPosition::evaluate).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Table {
    /// Middle-game weight per lane.
    pub mg: [i16; LANES],
    /// End-game weight per lane.
    pub eg: [i16; LANES],
}

/// A weight as a lane: the declared bounds of every shape weight are far inside `i16`, and a
/// value set past them outside [`Params::set`] is held at the lane's limit rather than wrapped.
fn lane(w: i32) -> i16 {
    w.clamp(i32::from(i16::MIN), i32::from(i16::MAX)) as i16
}

impl Table {
    /// The weights of every role under `p`.
    pub fn new(p: &Params) -> Table {
        let mut t = Table {
            mg: [0; LANES],
            eg: [0; LANES],
        };
        for role in Role::ALL {
            let w = weights(role, p);
            for slot in 0..SLOTS {
                t.mg[feature_lane(role, slot)] = lane(w.mg[slot]);
                t.eg[feature_lane(role, slot)] = lane(w.eg[slot]);
            }
            t.mg[count_lane(role)] = lane(w.base.0);
            t.eg[count_lane(role)] = lane(w.base.1);
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::EvalSums;
    use crate::types::Color;

    /// The unscaled (mg, eg) value of one piece of `role` on a square with features `f`, the
    /// way the evaluation computes it: the piece placed in empty sums, whose lanes are
    /// multiplied by the laid-out weights of `p`.
    fn value(role: Role, f: Features, p: &Params) -> (i32, i32) {
        let mut sums = EvalSums::default();
        sums.place(Color::White, role, f, 0);
        sums.pst(Color::White, &Table::new(p))
    }

    /// The shapes the tables held before their weights became parameters, written out as they
    /// were.
    fn old_value(role: Role, file: i32, rank: i32, files: i32) -> (i32, i32) {
        let centre = (axis_distance(file, files) + axis_distance(rank, 8)) / 2 - 1;
        match role {
            Role::Pawn => {
                let central = if axis_distance(file, files) <= 1 && (2..=4).contains(&rank) {
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

    /// The weights that give the hand-written shapes.
    fn old_weights() -> Params {
        let mut p = Params::default();
        for (name, value) in [
            ("PstPawnRankMg", 3),
            ("PstPawnRankEg", 6),
            ("PstPawnCentreMg", 0),
            ("PstPawnCentreEg", 0),
            ("PstPawnCentralMg", 12),
            ("PstPawnCentralEg", 0),
            ("PstKnightRankMg", 0),
            ("PstKnightRankEg", 0),
            ("PstKnightCentreMg", -6),
            ("PstKnightCentreEg", -5),
            ("PstBishopRankMg", 0),
            ("PstBishopRankEg", 0),
            ("PstBishopCentreMg", -3),
            ("PstBishopCentreEg", -3),
            ("PstRookRankMg", 0),
            ("PstRookRankEg", 0),
            ("PstRookCentreMg", 0),
            ("PstRookCentreEg", 0),
            ("PstRookSeventhMg", 15),
            ("PstRookSeventhEg", 0),
            ("PstRookFileMg", -1),
            ("PstRookFileEg", 0),
            ("PstQueenRankMg", 0),
            ("PstQueenRankEg", 0),
            ("PstQueenCentreMg", -1),
            ("PstQueenCentreEg", -3),
            ("PstKingRankMg", -12),
            ("PstKingRankEg", 0),
            ("PstKingCentreMg", 0),
            ("PstKingCentreEg", -8),
            ("PstKingBackMg", 10),
            ("PstKingBackEg", 0),
            ("PstKingWingMg", 10),
            ("PstKingWingEg", 0),
            ("PstSecutorRankMg", 0),
            ("PstSecutorRankEg", 0),
            ("PstSecutorCentreMg", 0),
            ("PstSecutorCentreEg", 0),
        ] {
            p.set(name, value).expect("a shape weight in range");
        }
        p
    }

    #[test]
    fn the_features_reproduce_the_hand_written_shapes() {
        // The shapes were tables of hand-written formulas before their weights became
        // parameters; with those formulas' weights, the features give the same value on every
        // square of both boards.
        let p = old_weights();
        for files in [8, 10] {
            for role in Role::ALL {
                for rank in 0..8 {
                    for file in 0..files {
                        assert_eq!(
                            value(role, features(role, file, rank, files), &p),
                            old_value(role, file, rank, files),
                            "{role:?} on file {file}, rank {rank}, {files} files"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn features_fit_their_slots() {
        for files in [8, 10] {
            for role in Role::ALL {
                for rank in 0..8 {
                    for file in 0..files {
                        let f = features(role, file, rank, files);
                        assert_eq!(i32::from(f[0]), rank);
                        assert!((0..=8).contains(&f[1]), "centre distance {}", f[1]);
                    }
                }
            }
        }
    }

    #[test]
    fn every_shape_parameter_moves_some_square() {
        // A declared shape weight that no square of either board feels would be noise to SPSA.
        let base = Params::default();
        for spec in crate::params::SPECS
            .iter()
            .filter(|s| s.name.starts_with("Pst"))
        {
            if spec.name == "PstScale" {
                continue;
            }
            let mut p = base.clone();
            let bumped = if spec.default < spec.max {
                spec.default + 1
            } else {
                spec.default - 1
            };
            p.set(spec.name, i64::from(bumped)).expect("in range");
            let felt = Role::ALL.iter().any(|&role| {
                (0..8).any(|rank| {
                    (0..10).any(|file| {
                        let f = features(role, file, rank, 10);
                        value(role, f, &p) != value(role, f, &base)
                    })
                })
            });
            assert!(felt, "{} moves no square", spec.name);
        }
    }
}
