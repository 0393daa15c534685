//! What the learned tables (chess's and Latte's) read of a side beyond each piece's square
//! and king offsets: its passed pawns, each pawn's shape, the space behind the pawns, the
//! make-up of the material, each piece by the pawns on the board, the pawn lead by the kind of
//! ending and the whole lead by the pawns' wings. Written once here for the evaluation, which
//! sums the table's values, and for the fit, which lists the table entries: two copies could
//! read different features, and the fit would tune a table for an evaluation the engine does
//! not play.

use super::board::Board;
use super::square::Bitboard;
use crate::eval::squares::{king_cell, king_side, Ending, PawnShape, PawnWings};
use crate::eval::terms::EvalBoard;
use crate::types::{ByColor, Color, Role};

/// One feature of a side that the table values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Feature {
    /// A pawn of this shape on this square (its own side's index, read from its king's wing).
    Pawn(PawnShape, usize),
    /// Safe squares of space, with six or more pieces (king included, pawns not) or fewer.
    Space {
        /// Whether the side has six pieces or more.
        many: bool,
        /// Squares of files c..f, own ranks 2..4, free of own pawns and of enemy pawn attacks.
        safe: u32,
    },
    /// The side's minor pieces, rooks and queens, each less the enemy's.
    Imbalance(i32, i32, i32),
    /// A knight, bishop, rook or queen (`role_index` 1..=4) with `pawns` pawns on the board.
    BoardPawns {
        /// The piece's [`Role::index`].
        role_index: usize,
        /// Pawns of both sides.
        pawns: u32,
    },
    /// The side's pawns less the enemy's in the kind of game the pieces make.
    Ending(Ending, i32),
    /// The side's piece material less the enemy's, in pawns (knight and bishop 3, rook 5,
    /// queen 9), with `pawns` pawns on the board.
    PieceLead {
        /// The lead (negative: behind).
        lead: i32,
        /// Pawns of both sides.
        pawns: u32,
    },
    /// The side's whole material less the enemy's, in pawns (pawn 1, knight and bishop 3,
    /// rook 5, queen 9), with the pawns of both sides on `wings`.
    WholeLead {
        /// The lead (negative: behind).
        lead: i32,
        /// Where the pawns stand.
        wings: PawnWings,
    },
    /// A passed pawn: its square (read from its king's wing) and its king cells from the own
    /// and the enemy king.
    Passer {
        /// The square, as [`king_side`] orients it.
        relative: usize,
        /// Its cell from the own king.
        own: usize,
        /// Its cell from the enemy king.
        enemy: usize,
    },
}

/// The centre files (c..f) of each side's ranks 2..4: where space counts.
const SPACE_AREA: [Bitboard; 2] = [
    Bitboard(0x0000_0000_3c3c_3c00),
    Bitboard(0x003c_3c3c_0000_0000),
];

/// The queen's wing (files a..d): pawns there and on the king's wing are pawns on both wings.
const QUEEN_WING: Bitboard = Bitboard(0x0f0f_0f0f_0f0f_0f0f);

/// Where `pawns` stand (see [`PawnWings`]).
fn wings(pawns: Bitboard) -> PawnWings {
    match (
        (pawns & QUEEN_WING).nonempty(),
        (pawns & !QUEEN_WING).nonempty(),
    ) {
        (true, true) => PawnWings::Both,
        (false, false) => PawnWings::None,
        _ => PawnWings::One,
    }
}

/// Squares of one colour (a1's): two bishops on opposite colours are one here and one not.
const DARK_SQUARES: Bitboard = Bitboard(0xaa55_aa55_aa55_aa55);

/// Each side's knights, bishops, rooks and queens, as the board's running sums count them:
/// read once for the make-up, the ending and the piece lead.
fn piece_counts(board: &Board) -> ByColor<[i32; 4]> {
    ByColor::new_with(|c| {
        [Role::Knight, Role::Bishop, Role::Rook, Role::Queen].map(|role| board.sums.count(c, role))
    })
}

/// The kind of game the pieces beside the kings and pawns make (see [`Ending`]), from the
/// sides' [`piece_counts`].
fn ending(board: &Board, counts: &ByColor<[i32; 4]>) -> Ending {
    let (white, black) = (counts.white, counts.black);
    if white == [0; 4] && black == [0; 4] {
        Ending::Pawns
    } else if white == [0, 1, 0, 0] && black == [0, 1, 0, 0] {
        let dark = |c: Color| (board.pieces(c, Role::Bishop) & DARK_SQUARES).nonempty();
        if dark(Color::White) != dark(Color::Black) {
            Ending::OppositeBishops
        } else {
            Ending::NoQueens
        }
    } else if white == [0, 0, 1, 0] && black == [0, 0, 1, 0] {
        Ending::Rooks
    } else if white[3] + black[3] == 0 {
        Ending::NoQueens
    } else {
        Ending::Queens
    }
}

/// What takes the features one by one: the fit's closures, which list their table entries,
/// and the evaluation's [`FeatureSink`] that sums their values. The evaluation's is a type of
/// its own, not a closure, so that its method can be inlined at every call below, where the
/// feature's kind is known: a closure body that big was kept out of line and chose its table
/// by an indirect jump per feature (5% of chess's search time under `perf`).
pub(crate) trait FeatureSink {
    /// Takes one feature.
    fn feature(&mut self, feature: Feature);
}

impl<F: FnMut(Feature)> FeatureSink for F {
    #[inline(always)]
    fn feature(&mut self, feature: Feature) {
        self(feature)
    }
}

/// Calls `f` with each of `color`'s features: those of its pawns ([`pawn_features`]), then
/// those of its pieces ([`piece_features`]).
#[inline(always)]
pub(crate) fn features(board: &Board, color: Color, f: &mut impl FeatureSink) {
    pawn_features(board, color, f);
    piece_features(board, color, f);
}

/// Calls `f` with each of `color`'s passed pawns and pawn shapes: features of the pawns of
/// both sides and of the two kings' squares alone, which the evaluation keeps in its
/// pawn-and-king cache (see [`PawnCache`](crate::eval::PawnCache)).
#[inline(always)]
pub(crate) fn pawn_features(board: &Board, color: Color, f: &mut impl FeatureSink) {
    let them = !color;
    let own_pawns = board.pieces(color, Role::Pawn);
    let their_pawns = board.pieces(them, Role::Pawn);
    let own_attacks = <Board as EvalBoard>::pawn_attack_set(color, own_pawns);
    let their_attacks = <Board as EvalBoard>::pawn_attack_set(them, their_pawns);
    let king_file = board.king_of(color).file_index();
    let own_king = board.king_of(color).relative(color).index();
    let their_king = board.king_of(them).relative(color).index();
    for sq in own_pawns {
        let square = sq.relative(color).index();
        let relative = king_side(square, king_file);
        if (<Board as EvalBoard>::passed_span(color, sq) & their_pawns).is_empty() {
            f.feature(Feature::Passer {
                relative,
                own: king_cell(square, own_king),
                enemy: king_cell(square, their_king),
            });
        }
        let file = sq.file_index();
        let adjacent = <Board as EvalBoard>::adjacent_files(file);
        let own = sq.bb();
        let phalanx = (own_pawns & adjacent & Bitboard::rank(sq.rank_index())).nonempty();
        let connected = phalanx || (own_attacks & own).nonempty();
        if connected {
            f.feature(Feature::Pawn(PawnShape::Connected, relative));
        }
        if (own_pawns & adjacent).is_empty() {
            f.feature(Feature::Pawn(PawnShape::Isolated, relative));
        }
        if (own_pawns & Bitboard::file(file)).count() > 1 {
            f.feature(Feature::Pawn(PawnShape::Doubled, relative));
        }
        let helpers = own_pawns & adjacent & !<Board as EvalBoard>::passed_span(color, sq);
        if !connected && (own.forward(color) & their_attacks).nonempty() && helpers.is_empty() {
            f.feature(Feature::Pawn(PawnShape::Backward, relative));
        }
    }
}

/// Calls `f` with `color`'s features that its pieces make (space, make-up, the pieces by the
/// pawns on the board, the ending, the piece lead and the whole lead).
#[inline(always)]
pub(crate) fn piece_features(board: &Board, color: Color, f: &mut impl FeatureSink) {
    let them = !color;
    let own_pawns = board.pieces(color, Role::Pawn);
    let their_pawns = board.pieces(them, Role::Pawn);
    let their_attacks = <Board as EvalBoard>::pawn_attack_set(them, their_pawns);
    let area = SPACE_AREA[color.index()] & !own_pawns & !their_attacks;
    f.feature(Feature::Space {
        many: (board.color_bb(color) & !own_pawns).count() >= 6,
        safe: area.count(),
    });
    let counts = piece_counts(board);
    let ([n, b, r, q], [their_n, their_b, their_r, their_q]) = (counts[color], counts[them]);
    f.feature(Feature::Imbalance(
        n + b - their_n - their_b,
        r - their_r,
        q - their_q,
    ));
    let pawns = (own_pawns | their_pawns).count();
    for role in [Role::Knight, Role::Bishop, Role::Rook, Role::Queen] {
        for _ in board.pieces(color, role) {
            f.feature(Feature::BoardPawns {
                role_index: role.index(),
                pawns,
            });
        }
    }
    let pawn_lead = own_pawns.count() as i32 - their_pawns.count() as i32;
    f.feature(Feature::Ending(ending(board, &counts), pawn_lead));
    let worth = |[n, b, r, q]: [i32; 4]| 3 * (n + b) + 5 * r + 9 * q;
    let piece_lead = worth(counts[color]) - worth(counts[them]);
    f.feature(Feature::PieceLead {
        lead: piece_lead,
        pawns,
    });
    f.feature(Feature::WholeLead {
        lead: piece_lead + pawn_lead,
        wings: wings(own_pawns | their_pawns),
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variant::{Rules, Variant};

    fn features_of(fen: &str, color: Color) -> Vec<Feature> {
        let board = Board::from_fen(Rules::default_for(Variant::Chess), fen).expect("fen");
        let mut out = Vec::new();
        features(&board, color, &mut |f| out.push(f));
        out
    }

    /// White: a2 isolated, c2 and c3 doubled (c2 is not backward: no enemy pawn attacks c3),
    /// e4 and f4 a phalanx, h3 isolated and backward (Black's g5 pawn attacks h4 and no White
    /// pawn stands on the g-file to help). King on g1: the squares read as stored.
    #[test]
    fn pawns_are_read_by_shape_from_their_own_side() {
        let fen = "6k1/8/8/6p1/4PP2/2P4P/P1P5/6K1 w - - 0 30";
        let got = features_of(fen, Color::White);
        let pawn = |shape, sq: usize| Feature::Pawn(shape, sq);
        for want in [
            pawn(PawnShape::Isolated, 8),   // a2
            pawn(PawnShape::Doubled, 10),   // c2
            pawn(PawnShape::Doubled, 18),   // c3
            pawn(PawnShape::Connected, 28), // e4
            pawn(PawnShape::Connected, 29), // f4
            pawn(PawnShape::Isolated, 23),  // h3
            pawn(PawnShape::Backward, 23),  // h3: g5 attacks h4, no pawn on g2/g3
        ] {
            assert!(got.contains(&want), "{want:?} in {got:?}");
        }
        assert!(!got.contains(&pawn(PawnShape::Backward, 10)), "{got:?}");
        assert!(got.contains(&Feature::Imbalance(0, 0, 0)));
        // Black's g5 pawn from its own side is g4 (index 30); its king on g8 reads as stored.
        let black = features_of(fen, Color::Black);
        assert!(black.contains(&pawn(PawnShape::Isolated, 30)), "{black:?}");
    }

    /// A side whose king stands on the queen's wing reads its pawns mirrored by file, and the
    /// make-up is the side's counts less the enemy's.
    #[test]
    fn the_kings_wing_mirrors_pawns_and_the_make_up_is_a_difference() {
        let fen = "1k6/8/8/8/8/8/P7/1K1R1R2 w - - 0 30";
        let got = features_of(fen, Color::White);
        assert!(
            got.contains(&Feature::Pawn(PawnShape::Isolated, 15)),
            "{got:?}"
        );
        assert!(got.contains(&Feature::Imbalance(0, 2, 0)), "{got:?}");
        let black = features_of(fen, Color::Black);
        assert!(black.contains(&Feature::Imbalance(0, -2, 0)), "{black:?}");
        assert!(black.contains(&Feature::Space {
            many: false,
            safe: 12
        }));
    }

    /// The kinds of ending, each told from its neighbours: bishops on opposite colours from
    /// bishops on the same colour, one rook each from a rook and a minor piece, queens from
    /// none.
    #[test]
    fn endings_are_told_apart_by_the_pieces_left() {
        let kind = |fen: &str| {
            let board = Board::from_fen(Rules::default_for(Variant::Chess), fen).expect("fen");
            ending(&board, &piece_counts(&board))
        };
        for (fen, want) in [
            ("4k3/5p2/8/8/8/8/3PP3/4K3 w - - 0 40", Ending::Pawns),
            (
                "4k3/5p2/3b4/8/8/3B4/3PP3/4K3 w - - 0 40",
                Ending::OppositeBishops,
            ),
            ("4k3/5p2/3b4/8/8/2B5/3PP3/4K3 w - - 0 40", Ending::NoQueens),
            ("r3k3/5p2/8/8/8/8/3PP3/4K2R w - - 0 40", Ending::Rooks),
            ("r3k3/5p2/8/8/8/8/3PP3/3BK2R w - - 0 40", Ending::NoQueens),
            ("4k3/5p2/8/8/8/8/3PP3/3QK3 w - - 0 40", Ending::Queens),
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                Ending::Queens,
            ),
        ] {
            assert_eq!(kind(fen), want, "{fen}");
        }
    }

    /// Each knight to queen is read by the pawns of both sides on the board, and the pawn lead
    /// is the side's own, with the opposite sign for the other side.
    #[test]
    fn pieces_are_read_by_the_pawns_on_the_board_and_the_lead_by_the_ending() {
        let fen = "4k3/5p2/3b4/8/8/3B4/3PP3/4K3 w - - 0 40";
        let white = features_of(fen, Color::White);
        let board_pawns = |role: Role| Feature::BoardPawns {
            role_index: role.index(),
            pawns: 3,
        };
        assert!(white.contains(&board_pawns(Role::Bishop)), "{white:?}");
        assert!(white.contains(&Feature::Ending(Ending::OppositeBishops, 1)));
        let black = features_of(fen, Color::Black);
        assert!(black.contains(&board_pawns(Role::Bishop)), "{black:?}");
        assert!(black.contains(&Feature::Ending(Ending::OppositeBishops, -1)));
        let of = |list: &[Feature]| {
            list.iter()
                .filter(|f| matches!(f, Feature::BoardPawns { .. } | Feature::Ending(..)))
                .count()
        };
        assert_eq!((of(&white), of(&black)), (2, 2));
        // A rook and a knight (8) against a queen (9): a pawn's worth behind, and ahead.
        let fen = "3qk3/5p2/8/8/8/8/3PP3/1N2K2R w - - 0 40";
        let lead = |lead| Feature::PieceLead { lead, pawns: 3 };
        assert!(features_of(fen, Color::White).contains(&lead(-1)));
        assert!(features_of(fen, Color::Black).contains(&lead(1)));
    }

    /// A passer's front is told from the stop square: a piece on it, else who attacks it.
    #[test]
    fn passers_are_read_by_what_stands_before_them() {
        use crate::eval::squares::PasserFront;
        use crate::eval::terms::{attack_classes, passer_fronts};
        let fronts = |fen: &str, color: Color| {
            let board = Board::from_fen(Rules::default_for(Variant::Chess), fen).expect("fen");
            let all = |c| {
                attack_classes(&board, c)
                    .into_iter()
                    .fold(Bitboard::EMPTY, |a, b| a | b)
            };
            let mut out = Vec::new();
            passer_fronts(&board, color, all(color), all(!color), |front, rank| {
                out.push((front, rank))
            });
            out
        };
        // White: a7 blocked by Black's rook on a8, c5 free, g4's stop square g5 attacked by
        // Black's king and not defended. Black has no pawn.
        let fen = "r7/P7/5k2/2P5/6P1/8/8/4R1K1 w - - 0 50";
        let mut white = fronts(fen, Color::White);
        white.sort_by_key(|&(_, rank)| rank);
        assert_eq!(
            white,
            [
                (PasserFront::Stopped, 3),
                (PasserFront::Free, 4),
                (PasserFront::Blocked, 6),
            ]
        );
        assert_eq!(fronts(fen, Color::Black), []);
        // e6's stop square e7 attacked by Black's king, defended by White's rook on a7.
        let fen = "8/R7/4Pk2/8/8/8/8/6K1 w - - 0 50";
        assert_eq!(fronts(fen, Color::White), [(PasserFront::Contested, 5)]);
    }

    /// The whole lead counts pawns with the pieces, and the wings are both sides' pawns'.
    #[test]
    fn the_whole_lead_counts_pawns_and_reads_the_wings() {
        let whole = |fen: &str, color| {
            features_of(fen, color)
                .into_iter()
                .filter(|f| matches!(f, Feature::WholeLead { .. }))
                .collect::<Vec<_>>()
        };
        let lead = |lead, wings| vec![Feature::WholeLead { lead, wings }];
        // A rook and two pawns (7) against a bishop and a pawn (4), pawns on e, f and h only.
        let fen = "4k3/5p2/3b4/8/8/8/4P2P/4K2R w - - 0 40";
        assert_eq!(whole(fen, Color::White), lead(3, PawnWings::One));
        assert_eq!(whole(fen, Color::Black), lead(-3, PawnWings::One));
        // Black's a-pawn puts pawns on both wings; the lead is then 2.
        let fen = "4k3/p4p2/3b4/8/8/8/4P2P/4K2R w - - 0 40";
        assert_eq!(whole(fen, Color::White), lead(2, PawnWings::Both));
        // Kings and a rook each: level, no pawns.
        let fen = "r3k3/8/8/8/8/8/8/4K2R w - - 0 40";
        assert_eq!(whole(fen, Color::Black), lead(0, PawnWings::None));
    }
}
