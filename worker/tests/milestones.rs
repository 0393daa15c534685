//! Milestones (castling rights lost, a king in its corner) as the runner records them: from
//! crafted positions with scripted moves, and over real games checked against a replay.

mod common;

use common::Scripted;
use engine::board8::Board;
use engine::fen_fields::split_fields;
use engine::notation::parse_uci;
use engine::{Color, Piece, Position, Role, Rules, SquareName, Variant};
use stats::study::{Milestone, MilestoneKind, Side};
use worker::adjudication::Adjudication;
use worker::book::Book;
use worker::limits::TimeControl;
use worker::pair::{play_pair, PairSpec};
use worker::player::{Player, PlayerSpec};
use worker::record::GameRecord;
use worker::runner::{play_game, GameConfig};

use MilestoneKind::{KingCorner, RightsLostKingMoved, RightsLostRookCaptured, RightsLostRookMoved};

fn rules(variant: &str, ruleset: &str) -> Rules {
    Rules::parse(variant, Some(ruleset)).expect("rules")
}

/// Plays `white` and `black`'s moves from `fen`; the game ends when a script runs out.
fn scripted<P: engine::eval::SearchPosition>(
    rules: Rules,
    fen: &str,
    white: &[&'static str],
    black: &[&'static str],
) -> GameRecord {
    let mut w = Scripted::moves("w", white, Some(0));
    let mut b = Scripted::moves("b", black, Some(0));
    let config = GameConfig {
        adjudication: Adjudication::OFF,
        ..GameConfig::new(TimeControl::Nodes(1))
    };
    let r = play_game::<P>(rules, fen, [&mut w as &mut dyn Player<P>, &mut b], &config)
        .expect("legal start");
    assert_eq!(
        r.plies as usize,
        white.len() + black.len(),
        "every scripted move played: {r:?}"
    );
    r
}

fn m(side: Side, kind: MilestoneKind, move_number: u32) -> Milestone {
    Milestone {
        side,
        kind,
        move_number,
    }
}

#[test]
fn a_capture_of_the_last_rook_is_the_opponents_doing() {
    // The bishop takes a8: Black's last right goes with its rook, on move 17. White never
    // had a right, so nothing is White's.
    let r = scripted::<Board>(
        rules("chess", "normal"),
        "r3k3/p7/8/8/8/8/6B1/4K3 w q - 0 17",
        &["g2a8"],
        &["e8d7"],
    );
    assert_eq!(r.milestones, [m(Side::Black, RightsLostRookCaptured, 17)]);
    // And it is what the study record and the report carry.
    assert_eq!(r.study_record("normal").milestones, r.milestones);
}

#[test]
fn a_rook_taking_a_rook_costs_both_sides_their_last_right() {
    // Black to move: its rook leaves a8 (its own doing) and takes White's on a1 (the
    // opponent's), on Black's move 30.
    let r = scripted::<Board>(
        rules("chess", "normal"),
        "r3k3/8/8/8/8/8/8/R3K3 b Qq - 0 30",
        &["e1d2"],
        &["a8a1"],
    );
    assert_eq!(
        r.milestones,
        [
            m(Side::White, RightsLostRookCaptured, 30),
            m(Side::Black, RightsLostRookMoved, 30),
        ]
    );
}

#[test]
fn rights_are_lost_once_at_the_move_that_takes_the_last_one() {
    // White's king move takes both its rights at once; Black's h-rook takes one, and only
    // its a-rook's move, a move later, leaves it without any.
    let r = scripted::<Board>(
        rules("chess", "normal"),
        "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1",
        &["e1f1", "f1e1", "e1d1"],
        &["h8g8", "a8b8", "e8d8"],
    );
    assert_eq!(
        r.milestones,
        [
            m(Side::White, RightsLostKingMoved, 1),
            m(Side::Black, RightsLostRookMoved, 2),
        ]
    );
}

#[test]
fn castling_spends_the_rights_and_the_first_corner_counts() {
    // Both castle (no rights-lost for either), then both kings walk to the corner their
    // rook left; White's second arrival is not counted again.
    let r = scripted::<Board>(
        rules("chess", "normal"),
        "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1",
        &["e1g1", "g1h1", "h1g1", "g1h1"],
        &["e8c8", "c8b8", "b8a8", "a8b8"],
    );
    assert_eq!(r.castlings.len(), 2);
    assert_eq!(
        r.milestones,
        [m(Side::White, KingCorner, 2), m(Side::Black, KingCorner, 3)]
    );
}

#[test]
fn a_king_that_starts_in_a_corner_has_not_arrived_there() {
    let r = scripted::<Board>(
        rules("chess", "normal"),
        "k7/p7/8/8/8/8/P7/K7 w - - 0 1",
        &["a1b1", "b1a1"],
        &["a8b8", "b8a8"],
    );
    assert_eq!(
        r.milestones,
        [m(Side::White, KingCorner, 2), m(Side::Black, KingCorner, 2)]
    );
}

#[test]
fn a_king_on_the_far_side_of_a_corner_is_not_in_its_own() {
    // White's king on a8 and Black's on h1 stand in corners, but not on their back ranks.
    let r = scripted::<Board>(
        rules("chess", "normal"),
        "1K6/p7/8/8/8/8/P7/6k1 w - - 0 1",
        &["b8a8"],
        &["g1h1"],
    );
    assert!(r.milestones.is_empty(), "{:?}", r.milestones);
}

#[test]
fn gustavian_corners_are_the_j_file_ones_too() {
    let r = scripted::<engine::gustavian::Position>(
        rules("secutor", "extended"),
        "8k1/*pppppppp*/*8*/*8*/*8*/*8*/*PPPPPPPP*/8K1 w - - 0 1",
        &["i1j1"],
        &["i8j8"],
    );
    assert_eq!(
        r.milestones,
        [m(Side::White, KingCorner, 1), m(Side::Black, KingCorner, 1)]
    );
}

/// Per side (`Color::index`), whether a FEN's castling field gives it a right.
fn rights(fen: &str) -> [bool; 2] {
    let field = split_fields(fen).expect("fen").castling;
    [
        field.chars().any(|c| c.is_ascii_uppercase()),
        field.chars().any(|c| c.is_ascii_lowercase()),
    ]
}

fn king_square<P: Position>(pos: &P, color: Color) -> P::Square {
    *P::squares()
        .iter()
        .find(|&&sq| pos.piece_at(sq) == Some(Piece::new(color, Role::King)))
        .expect("a king")
}

fn side(c: Color) -> Side {
    match c {
        Color::White => Side::White,
        Color::Black => Side::Black,
    }
}

/// The milestones of a recorded game, found again by replaying its moves and looking at
/// the board (where the kings stand, which rights the FEN keeps) rather than at the moves.
fn replayed<P: Position>(rules: Rules, g: &GameRecord) -> Vec<Milestone> {
    let mut pos = P::from_fen(rules, &g.start_fen).expect("start");
    let last_file = P::squares()
        .iter()
        .map(|s| s.file())
        .max()
        .expect("squares");
    let last_rank = P::squares()
        .iter()
        .map(|s| s.rank())
        .max()
        .expect("squares");
    let start = rights(&pos.to_fen());
    let castled = |c: Color| g.castlings.iter().any(|f| f.side == side(c));
    let mut found = Vec::new();
    let mut lost = [false; 2];
    let mut cornered = [false; 2];
    for mv in &g.moves {
        let mover = pos.turn();
        let number = pos.fullmove_number();
        let before = (rights(&pos.to_fen()), king_square(&pos, mover));
        let parsed = parse_uci(&pos, &mv.uci).expect("recorded move is legal");
        pos.make_move(parsed);
        let after = (rights(&pos.to_fen()), king_square(&pos, mover));
        for c in [Color::White, Color::Black] {
            let i = c.index();
            if before.0[i] && !after.0[i] && start[i] && !castled(c) && !lost[i] {
                lost[i] = true;
                let kind = if c != mover {
                    RightsLostRookCaptured
                } else if before.1 != after.1 {
                    RightsLostKingMoved
                } else {
                    RightsLostRookMoved
                };
                found.push(m(side(c), kind, number));
            }
        }
        let home = if mover == Color::White { 0 } else { last_rank };
        let sq = after.1;
        let corner = sq.rank() == home && (sq.file() == 0 || sq.file() == last_file);
        if corner && before.1 != sq && !cornered[mover.index()] {
            cornered[mover.index()] = true;
            found.push(m(side(mover), KingCorner, number));
        }
    }
    found
}

fn sorted(mut v: Vec<Milestone>) -> Vec<Milestone> {
    v.sort_by_key(|m| (m.side, m.kind, m.move_number));
    v
}

/// What every recorded game must satisfy, whatever was played.
fn check_invariants(g: &GameRecord) {
    for s in [Side::White, Side::Black] {
        let lost = g
            .milestones
            .iter()
            .filter(|m| m.side == s && m.kind.is_rights_lost())
            .count();
        assert!(lost <= 1, "{s:?} lost its rights {lost} times: {g:?}");
        if g.castlings.iter().any(|c| c.side == s) {
            assert_eq!(lost, 0, "{s:?} castled and lost its rights: {g:?}");
        }
        let corners = g
            .milestones
            .iter()
            .filter(|m| m.side == s && m.kind == KingCorner)
            .count();
        assert!(corners <= 1, "{s:?} reached a corner {corners} times");
    }
    assert!(g.milestones.iter().all(|m| m.move_number >= 1));
}

/// Plays `pairs` pairs of `rules` at low nodes, long games (no resignation or draw
/// adjudication), and checks every game; returns how often each kind occurred.
fn play_and_check(rules: Rules, pairs: usize) -> [usize; 4] {
    let book = Book::builtin(rules).expect("book");
    let mut counts = [0; 4];
    for i in 0..pairs {
        let p = play_pair(&PairSpec {
            rules,
            opening_fen: book.positions[(i * 7) % book.positions.len()].clone(),
            players: [PlayerSpec::internal("one"), PlayerSpec::internal("two")],
            game: GameConfig {
                adjudication: Adjudication {
                    max_moves: Some(100),
                    ..Adjudication::OFF
                },
                ..GameConfig::new(TimeControl::Nodes(300))
            },
            pair_index: i as u64,
            seed: 11,
            pgn: None,
        })
        .expect("pair");
        for g in &p.games {
            check_invariants(g);
            let again = match rules.variant() {
                Variant::Secutor => replayed::<engine::gustavian::Position>(rules, g),
                _ => replayed::<Board>(rules, g),
            };
            assert_eq!(
                sorted(g.milestones.clone()),
                sorted(again),
                "{rules} pair {i}: recorded vs replayed ({:?})",
                g.moves.iter().map(|m| m.uci.as_str()).collect::<Vec<_>>()
            );
            for m in &g.milestones {
                let k = MilestoneKind::ALL.iter().position(|&k| k == m.kind);
                counts[k.expect("a kind")] += 1;
            }
        }
        for (g, s) in p.games.iter().zip(p.study_records()) {
            assert_eq!(s.milestones, g.milestones);
        }
    }
    counts
}

#[test]
fn played_games_keep_the_invariants_and_match_a_replay() {
    let mut total = [0; 4];
    // Latte's Luft rule-set adds the G/B letters to the rights a side can lose.
    for (r, pairs) in [
        (rules("latte", "normal"), 10),
        (rules("secutor", "extended"), 10),
        (rules("latte", "luft"), 4),
    ] {
        let counts = play_and_check(r, pairs);
        eprintln!("{r}: {counts:?} (king moved, rook moved, rook captured, corner)");
        for (t, c) in total.iter_mut().zip(counts) {
            *t += c;
        }
    }
    let rights_lost: usize = total[..3].iter().sum();
    assert!(rights_lost > 0, "no rights lost in 40 games: {total:?}");
    assert!(
        total[3] > 0,
        "no king reached a corner in 40 games: {total:?}"
    );
}
