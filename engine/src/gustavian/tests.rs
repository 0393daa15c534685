//! Unit tests of the Gustavian position: FEN reading and its errors, the Secutor's moves,
//! castling kinds, and make/unmake/key/evaluation-sum consistency over random playouts.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::{Position, Square};
use crate::error::{FenError, RulesError};
use crate::eval::SearchPosition as _;
use crate::position::Position as _;
use crate::types::{CastleSide, CastleStyle, Color, Role};
use crate::variant::{Rules, Ruleset, Variant};

fn extended() -> Rules {
    Rules::default_for(Variant::Secutor)
}

fn orthodox() -> Rules {
    Rules::new(Variant::Secutor, Ruleset::Orthodox).expect("secutor/orthodox")
}

fn pos(fen: &str) -> Position {
    Position::from_fen(extended(), fen).unwrap_or_else(|e| panic!("{fen}: {e}"))
}

fn err(fen: &str) -> FenError {
    match Position::from_fen(extended(), fen) {
        Ok(_) => panic!("{fen} was accepted"),
        Err(e) => e,
    }
}

fn uci_moves(p: &Position) -> Vec<String> {
    let mut v: Vec<String> = p
        .legal_move_list()
        .iter()
        .map(|&m| p.move_info(m).uci())
        .collect();
    v.sort();
    v
}

fn ep_field(p: &Position) -> String {
    p.to_fen().split(' ').nth(3).unwrap_or_default().to_string()
}

fn perft_fens() -> Vec<String> {
    let text = include_str!("../../tests/data/perft/secutor.jsonl");
    let mut fens: Vec<String> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["fen"].as_str().map(str::to_string))
        .collect();
    fens.dedup();
    fens
}

const START: &str = "srnbqkbnrs/*pppppppp*/*8*/*8*/*8*/*8*/*PPPPPPPP*/SRNBQKBNRS w KQkq - 0 1";

#[test]
fn every_perft_fen_round_trips() {
    let fens = perft_fens();
    assert!(fens.len() >= 26);
    for fen in fens {
        for rules in [extended(), orthodox()] {
            let p = Position::from_fen(rules, &fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
            assert_eq!(p.to_fen(), fen);
            assert_eq!(p.key(), p.recompute_key());
            assert_eq!(p.eval_sums(), p.recount_eval_sums());
        }
    }
}

#[test]
fn start_position() {
    let p = Position::startpos(extended()).expect("start");
    assert_eq!(p.to_fen(), START);
    assert_eq!(p.legal_move_list().len(), 20);
    assert_eq!(Position::squares().len(), 68);
    let a1 = Square::parse("a1").expect("a1");
    assert_eq!(
        p.piece_at(a1).map(|p| (p.color, p.role)),
        Some((Color::White, Role::Secutor))
    );
}

#[test]
fn four_field_fen_defaults_clocks() {
    let p = pos("srnbqkbnrs/*pppppppp*/*8*/*8*/*8*/*8*/*PPPPPPPP*/SRNBQKBNRS w KQkq -");
    assert_eq!((p.halfmove_clock(), p.fullmove_number()), (0, 1));
}

#[test]
fn fen_error_other_geometry() {
    let chess = Rules::default_for(Variant::Chess);
    assert_eq!(
        Position::from_fen(chess, START),
        Err(FenError::Rules(RulesError::WrongGeometry(Variant::Chess)))
    );
}

#[test]
fn fen_error_field_count() {
    assert_eq!(
        err("srnbqkbnrs/*pppppppp*/*8*/*8*/*8*/*8*/*PPPPPPPP*/SRNBQKBNRS w KQkq"),
        FenError::FieldCount(3)
    );
}

#[test]
fn fen_error_rank_count() {
    assert_eq!(
        err("srnbqkbnrs/*pppppppp*/*8*/*8*/*8*/*PPPPPPPP*/SRNBQKBNRS w KQkq - 0 1"),
        FenError::RankCount {
            found: 7,
            expected: 8
        }
    );
}

#[test]
fn fen_error_cell_count() {
    // An orthodox-style "8" on a rank with holes describes only 8 cells.
    let e = err("srnbqkbnrs/*pppppppp*/8/*8*/*8*/*8*/*PPPPPPPP*/SRNBQKBNRS w KQkq - 0 1");
    assert_eq!(
        e,
        FenError::CellCount {
            rank: 6,
            text: "8".into(),
            found: 8,
            expected: 10
        }
    );
    let e = err("srnbqkbnrs/*pppppppp*/*8*/*8*/*8*/*8*/*PPPPPPPP*/SRNBQKBNRS1 w KQkq - 0 1");
    assert!(matches!(
        e,
        FenError::CellCount {
            rank: 1,
            found: 11,
            ..
        }
    ));
    // Absurd digit runs are counted, not allocated.
    let e = err("srnbqkbnrs/*pppppppp*/*8*/*99999999999999999999999*/*8*/*8*/*PPPPPPPP*/SRNBQKBNRS w KQkq - 0 1");
    assert!(matches!(e, FenError::CellCount { rank: 5, .. }));
}

#[test]
fn fen_error_unknown_piece() {
    assert_eq!(
        err("srnbqkbnrs/*pppppppp*/*8*/*3x4*/*8*/*8*/*PPPPPPPP*/SRNBQKBNRS w KQkq - 0 1"),
        FenError::UnknownPiece('x')
    );
}

#[test]
fn fen_error_piece_on_hole() {
    let e = err("srnbqkbnrs/*pppppppp*/*8*/*8*/*8*/N8*/*PPPPPPPP*/SRNBQKBNRS w KQkq - 0 1");
    assert_eq!(
        e,
        FenError::PieceOnHole {
            what: "a piece 'N'".into(),
            square: "a3".into()
        }
    );
}

#[test]
fn fen_error_empty_run_over_hole() {
    let e = err("srnbqkbnrs/*pppppppp*/*8*/*8*/*8*/*9/*PPPPPPPP*/SRNBQKBNRS w KQkq - 0 1");
    assert_eq!(
        e,
        FenError::PieceOnHole {
            what: "an empty square".into(),
            square: "j3".into()
        }
    );
}

#[test]
fn fen_error_hole_on_square() {
    let e = err("*rnbqkbnrs/*pppppppp*/*8*/*8*/*8*/*8*/*PPPPPPPP*/SRNBQKBNRS w KQkq - 0 1");
    assert_eq!(e, FenError::HoleOnSquare("a8".into()));
}

#[test]
fn fen_error_missing_king() {
    let e = err("srnbq1bnrs/*pppppppp*/*8*/*8*/*8*/*8*/*PPPPPPPP*/SRNBQKBNRS w - - 0 1");
    assert_eq!(e, FenError::MissingKing(Color::Black));
}

#[test]
fn fen_error_extra_king() {
    let e = err("srnbqkbnrs/*pppppppp*/*8*/*8*/*8*/*2K5*/*PPPPPPPP*/SRNBQKBNRS w - - 0 1");
    assert_eq!(
        e,
        FenError::ExtraKing {
            color: Color::White,
            count: 2
        }
    );
}

#[test]
fn fen_error_castling_letter_without_pieces() {
    // White's i1 rook is gone, yet K is claimed.
    let e = err("srnbqkbnrs/*pppppppp*/*8*/*8*/*8*/*8*/*PPPPPPPP*/SRNBQKBN1S w KQkq - 0 1");
    assert!(
        matches!(e, FenError::CastlingPieces { letter: 'K', .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("i1"));
}

#[test]
fn fen_error_unknown_castling_letter() {
    let e = err("srnbqkbnrs/*pppppppp*/*8*/*8*/*8*/*8*/*PPPPPPPP*/SRNBQKBNRS w KQGkq - 0 1");
    assert_eq!(e, FenError::CastlingLetter('G'));
}

#[test]
fn fen_error_impossible_en_passant() {
    // No black pawn on e5 that could just have double-stepped.
    let e = err("srnbqkbnrs/*pppppppp*/*8*/*8*/*8*/*8*/*PPPPPPPP*/SRNBQKBNRS w KQkq e6 0 1");
    assert!(
        matches!(e, FenError::EnPassantImpossible { ref square, .. } if square == "e6"),
        "{e:?}"
    );
    // A hole can never be an en-passant square.
    let e = err("srnbqkbnrs/*pppppppp*/*8*/*8*/*8*/*8*/*PPPPPPPP*/SRNBQKBNRS w KQkq a6 0 1");
    assert!(matches!(e, FenError::EnPassantImpossible { .. }), "{e:?}");
}

#[test]
fn fen_error_en_passant_syntax() {
    let e = err("srnbqkbnrs/*pppppppp*/*8*/*8*/*8*/*8*/*PPPPPPPP*/SRNBQKBNRS w KQkq e9 0 1");
    assert_eq!(e, FenError::EnPassantSyntax("e9".into()));
}

#[test]
fn en_passant_kept_only_when_legal() {
    // A double step no pawn can answer: the field is read, then dropped.
    let p = pos("srnbqkbnrs/*pppppppp*/*8*/*8*/*4P3*/*8*/*PPPP1PPP*/SRNBQKBNRS b KQkq f3 0 1");
    assert_eq!(ep_field(&p), "-");
    // The perft file's en-passant positions keep it.
    let p =
        pos("srnbqk1nrs/*p1pppp1p*/*8*/*Pp4p1*/*3b4*/*6P1*/*1PPPPP1P*/SRNBQKBNRS w KQkq c6 0 5");
    assert!(uci_moves(&p).contains(&"b5c6".to_string()));
}

#[test]
fn fen_error_side_to_move() {
    let e = err("srnbqkbnrs/*pppppppp*/*8*/*8*/*8*/*8*/*PPPPPPPP*/SRNBQKBNRS x KQkq - 0 1");
    assert_eq!(e, FenError::SideToMove("x".into()));
}

#[test]
fn fen_error_clocks() {
    let e = err("srnbqkbnrs/*pppppppp*/*8*/*8*/*8*/*8*/*PPPPPPPP*/SRNBQKBNRS w KQkq - -3 1");
    assert!(matches!(
        e,
        FenError::Clock {
            field: "halfmove clock",
            ..
        }
    ));
    let e = err("srnbqkbnrs/*pppppppp*/*8*/*8*/*8*/*8*/*PPPPPPPP*/SRNBQKBNRS w KQkq - 0 one");
    assert!(matches!(
        e,
        FenError::Clock {
            field: "fullmove number",
            ..
        }
    ));
}

#[test]
fn extreme_clocks_are_refused_and_the_largest_accepted_ones_round_trip() {
    let huge = "srnbqkbnrs/*pppppppp*/*8*/*8*/*8*/*8*/*PPPPPPPP*/SRNBQKBNRS b KQkq - 4294967295 4294967295";
    assert!(matches!(err(huge), FenError::Clock { .. }));
    let fen = "srnbqkbnrs/*pppppppp*/*8*/*8*/*8*/*8*/*PPPPPPPP*/SRNBQKBNRS b KQkq - 10000 100000";
    let mut p = pos(fen);
    let before = p.clone();
    let mv = p.legal_move_list()[0];
    let undo = p.make_move(mv);
    p.unmake_move(mv, undo);
    assert_eq!(p, before);
    assert_eq!(p.to_fen(), fen);
}

#[test]
fn fen_error_opponent_in_check() {
    // White to move, but the black king on f8 stands in the white rook's line.
    let e = err("5k4/*8*/*8*/*8*/*8*/*8*/*4R3*/5K4 w - - 0 1");
    assert_eq!(e, FenError::OpponentInCheck(Color::Black));
}

#[test]
fn fen_error_opponent_in_check_by_secutor() {
    // White to move; the white Secutor on e3 slides north to e7, collides with the knight on
    // e8 and turns north-east onto the black king on f8.
    let e = err("4nk4/*8*/*8*/*8*/*8*/*3S4*/*8*/5K4 w - - 0 1");
    assert_eq!(e, FenError::OpponentInCheck(Color::Black));
}

#[test]
fn fen_error_pawn_on_back_rank() {
    let e = err("srnbqkbnrP/*pppppppp*/*8*/*8*/*8*/*8*/*PPPPPPP1*/SRNBQKBNRS w KQkq - 0 1");
    assert_eq!(e, FenError::PawnOnBackRank("j8".into()));
}

#[test]
fn no_fen_input_panics() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    let alphabet: Vec<char> = "srnbqkpSRNBQKP*/0123456789 -wbKQkqe3x".chars().collect();
    for _ in 0..20_000 {
        let mut s: String = START.to_string();
        // Mutate a few characters of a valid FEN, or build random text.
        if rng.gen_bool(0.5) {
            let mut chars: Vec<char> = s.chars().collect();
            for _ in 0..rng.gen_range(1..4) {
                let i = rng.gen_range(0..chars.len());
                chars[i] = alphabet[rng.gen_range(0..alphabet.len())];
            }
            s = chars.into_iter().collect();
        } else {
            let n = rng.gen_range(0..80);
            s = (0..n)
                .map(|_| alphabet[rng.gen_range(0..alphabet.len())])
                .collect();
        }
        if let Ok(p) = Position::from_fen(extended(), &s) {
            let again = Position::from_fen(extended(), &p.to_fen()).expect("own FEN reads back");
            assert_eq!(again, p);
        }
    }
}

#[test]
fn secutor_bounces_off_the_hole_a2_onto_a1() {
    // RULES.md's example: e2 slides west over d2, c2, b2, collides with the hole a2 and turns
    // south-west from b2 onto a1.
    let p = pos("5k4/*8*/*8*/*8*/*8*/*8*/*3S4*/n4K4 w - - 0 1");
    let moves = p.legal_move_list();
    let capture: Vec<_> = moves
        .iter()
        .filter(|&&m| p.move_info(m).uci() == "e2a1")
        .collect();
    assert_eq!(capture.len(), 1);
    let info = p.move_info(*capture[0]);
    assert_eq!(
        (info.role, info.capture),
        (Role::Secutor, Some(Role::Knight))
    );
    // The Secutor never captures by its rook slide and never lands on an empty square by the
    // diagonal leg: its only capture is a1.
    let secutor_captures = moves
        .iter()
        .map(|&m| p.move_info(m))
        .filter(|i| i.role == Role::Secutor && i.capture.is_some())
        .count();
    assert_eq!(secutor_captures, 1);
}

#[test]
fn two_collision_paths_are_one_move() {
    // Secutor d4 with own pieces on d5 and e4: north and east both collide at once and turn
    // north-east onto e5.
    let p = pos("5k4/*8*/*8*/*2Np4*/*2SP4*/*8*/*8*/5K4 w - - 0 1");
    let n = p
        .legal_move_list()
        .iter()
        .filter(|&&m| p.move_info(m).uci() == "d4e5")
        .count();
    assert_eq!(n, 1);
}

#[test]
fn secutor_does_not_capture_own_pieces_or_by_sliding() {
    let p = pos("5k4/*8*/*8*/*8*/*3S1p2*/*8*/*8*/5K4 w - - 0 1");
    // e4 east: f4 empty, g4 black pawn: P = f4; legs f4-g5.., f4-g3..: empty to the edge.
    let moves = uci_moves(&p);
    assert!(!moves.contains(&"e4g4".to_string()));
    assert!(moves.contains(&"e4f4".to_string()));
}

#[test]
fn castling_kinds_and_rule_sets() {
    let fen = "sr3k2rs/*S4p2*/*Bp1p3p*/*2pn3P*/*b3P3*/*PP3Np1*/*1BPQ1PP1*/SR3K2R1 w KQkq - 0 18";
    let ext = pos(fen);
    let orth = Position::from_fen(orthodox(), fen).expect("orthodox");
    let ext_moves = uci_moves(&ext);
    let orth_moves = uci_moves(&orth);
    assert!(ext_moves.contains(&"f1h1".into()) && ext_moves.contains(&"f1i1".into()));
    assert!(orth_moves.contains(&"f1h1".into()) && !orth_moves.contains(&"f1i1".into()));
    for mv in ext.legal_move_list() {
        let info = ext.move_info(mv);
        if info.uci() == "f1i1" {
            let c = info.castle.expect("castle");
            assert_eq!(
                (c.side, c.style, info.role),
                (CastleSide::King, CastleStyle::Extended, Role::King)
            );
            let mut after = ext.clone();
            let undo = after.make_move(mv);
            let i1 = Square::parse("i1").expect("i1");
            let g1 = Square::parse("g1").expect("g1");
            assert_eq!(after.piece_at(i1).map(|p| p.role), Some(Role::King));
            assert_eq!(after.piece_at(g1).map(|p| p.role), Some(Role::Rook));
            assert!(after.to_fen().contains(" kq "), "{}", after.to_fen());
            after.unmake_move(mv, undo);
            assert_eq!(after, ext);
        }
    }
}

#[test]
fn insufficient_material() {
    assert!(pos("5k4/*8*/*8*/*8*/*8*/*8*/*8*/5K4 w - - 0 1").is_insufficient_material());
    assert!(pos("5k4/*8*/*8*/*8*/*8*/*8*/*8*/4NK4 w - - 0 1").is_insufficient_material());
    assert!(!pos("5k4/*8*/*8*/*8*/*8*/*8*/*8*/4SK4 w - - 0 1").is_insufficient_material());
    assert!(!pos("5k4/*8*/*8*/*8*/*8*/*8*/*8*/3BNK4 w - - 0 1").is_insufficient_material());
}

/// Random playouts from every perft position: make/unmake restores the position, the
/// incremental key matches the from-scratch key, the fast and slow check tests agree, no move
/// leaves the own king attacked, FENs round-trip, and an en-passant square is written exactly
/// when an en-passant capture is among the legal moves.
#[test]
fn random_playouts_are_consistent() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2024);
    for fen in perft_fens() {
        for _ in 0..20 {
            let mut p = pos(&fen);
            for _ in 0..60 {
                let moves = p.legal_move_list();
                assert_eq!(
                    p.in_check(),
                    p.king_attacked_slow(p.turn()),
                    "{}",
                    p.to_fen()
                );
                assert!(!p.king_attacked_slow(!p.turn()), "{}", p.to_fen());
                assert_eq!(Position::from_fen(p.rules(), &p.to_fen()).as_ref(), Ok(&p));
                let has_ep = moves.iter().any(|&m| p.move_info(m).en_passant);
                assert_eq!(has_ep, ep_field(&p) != "-", "{}", p.to_fen());
                for &mv in &moves {
                    let before = p.clone();
                    let undo = p.make_move(mv);
                    assert!(
                        !p.king_attacked_slow(!p.turn()),
                        "{:?} left the king attacked in {}",
                        mv,
                        before.to_fen()
                    );
                    assert_eq!(p.key(), p.recompute_key());
                    assert_eq!(p.eval_sums(), p.recount_eval_sums(), "{}", p.to_fen());
                    p.unmake_move(mv, undo);
                    assert_eq!(p, before);
                }
                if moves.is_empty() {
                    break;
                }
                let mv = moves[rng.gen_range(0..moves.len())];
                p.make_move(mv);
            }
        }
    }
}

/// The FEN of `p` with colours swapped (board flipped top to bottom) and, when `files` is set,
/// also mirrored a-j (only meaningful without castling rights, whose squares are asymmetric).
fn mirrored_fen(p: &Position, files: bool) -> String {
    let mut board = Vec::new();
    for rank in 0..8u8 {
        // Rank `rank` of the original becomes rank `7 - rank`; FEN lists rank 8 first.
        let mut text = String::new();
        let mut run = 0;
        for file in 0..10u8 {
            let src_file = if files { 9 - file } else { file };
            let cell = match Square::new(src_file, rank) {
                None => Some('*'),
                Some(sq) => p.piece_at(sq).map(|pc| {
                    let c = pc.char();
                    if c.is_ascii_uppercase() {
                        c.to_ascii_lowercase()
                    } else {
                        c.to_ascii_uppercase()
                    }
                }),
            };
            match cell {
                None => run += 1,
                Some(c) => {
                    if run > 0 {
                        text.push_str(&run.to_string());
                        run = 0;
                    }
                    text.push(c);
                }
            }
        }
        if run > 0 {
            text.push_str(&run.to_string());
        }
        board.push(text);
    }
    let fen = p.to_fen();
    let fields: Vec<&str> = fen.split(' ').collect();
    let side = if p.turn() == Color::White { "b" } else { "w" };
    let mut castling: String = "KQkq"
        .chars()
        .filter(|c| {
            let swapped = if c.is_ascii_uppercase() {
                c.to_ascii_lowercase()
            } else {
                c.to_ascii_uppercase()
            };
            fields[2].contains(swapped)
        })
        .collect();
    if castling.is_empty() {
        castling = "-".into();
    }
    let ep = match Square::parse(fields[3]) {
        None => "-".to_string(),
        Some(sq) => {
            let file = if files {
                9 - sq.file_of()
            } else {
                sq.file_of()
            };
            Square::new(file, 7 - sq.rank_of()).map_or("-".to_string(), |s| s.to_string())
        }
    };
    format!(
        "{} {side} {castling} {ep} {} {}",
        board.join("/"),
        fields[4],
        fields[5]
    )
}

/// The colour-flipped (and, without castling rights, the file-mirrored) position has the same
/// perft: catches any direction- or colour-asymmetric slip in move generation.
#[test]
fn mirrored_positions_have_equal_perft() {
    let start = pos(START);
    assert_eq!(mirrored_fen(&start, false), START.replace(" w ", " b "));
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(99);
    for fen in perft_fens() {
        for _ in 0..6 {
            let mut p = pos(&fen);
            for _ in 0..rng.gen_range(0..40) {
                let moves = p.legal_move_list();
                if moves.is_empty() {
                    break;
                }
                p.make_move(moves[rng.gen_range(0..moves.len())]);
            }
            let n = crate::perft::perft(&mut p.clone(), 2);
            let flipped = mirrored_fen(&p, false);
            let mut q = Position::from_fen(p.rules(), &flipped)
                .unwrap_or_else(|e| panic!("{flipped}: {e}"));
            assert_eq!(
                crate::perft::perft(&mut q, 2),
                n,
                "{} vs {flipped}",
                p.to_fen()
            );
            if p.to_fen().split(' ').nth(2) == Some("-") {
                let both = mirrored_fen(&p, true);
                let mut q =
                    Position::from_fen(p.rules(), &both).unwrap_or_else(|e| panic!("{both}: {e}"));
                assert_eq!(
                    crate::perft::perft(&mut q, 2),
                    n,
                    "{} vs {both}",
                    p.to_fen()
                );
            }
        }
    }
}
