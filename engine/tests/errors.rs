//! Bad input: every kind of malformed FEN, id and move gets its own error value whose message
//! names the problem; the CLI prints it and exits with status 2.

use std::process::Command;

use engine::board8::Board;
use engine::notation::parse_uci;
use engine::san::parse_san;
use engine::{Color, FenError, MoveError, Rules, RulesError, Variant};

fn chess() -> Rules {
    Rules::default_for(Variant::Chess)
}

fn latte(ruleset: &str) -> Rules {
    Rules::parse("latte", Some(ruleset)).expect("rules")
}

fn fen_err(rules: Rules, fen: &str) -> FenError {
    match Board::from_fen(rules, fen) {
        Ok(b) => panic!("accepted {fen}: {}", b.to_fen()),
        Err(e) => e,
    }
}

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

#[test]
fn field_count() {
    assert_eq!(
        fen_err(chess(), "8/8/8/8/8/8/8/8 w"),
        FenError::FieldCount(2)
    );
    assert_eq!(
        fen_err(
            chess(),
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0"
        ),
        FenError::FieldCount(5)
    );
}

#[test]
fn rank_count() {
    let e = fen_err(
        chess(),
        "rnbqkbnr/pppppppp/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    );
    assert_eq!(
        e,
        FenError::RankCount {
            found: 7,
            expected: 8
        }
    );
    assert!(e.to_string().contains("7 ranks"));
}

#[test]
fn cell_count() {
    let e = fen_err(
        chess(),
        "rnbqkbnr/ppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    );
    assert!(
        matches!(
            e,
            FenError::CellCount {
                rank: 7,
                found: 7,
                expected: 8,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("ppppppp"));
    let e = fen_err(
        chess(),
        "rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    );
    assert!(matches!(e, FenError::CellCount { rank: 6, .. }), "{e:?}");
}

#[test]
fn unknown_piece_letter() {
    assert_eq!(
        fen_err(
            chess(),
            "rnbqkbnr/ppppxppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
        ),
        FenError::UnknownPiece('x')
    );
    // The Secutor does not exist on the 8x8 board, nor do holes.
    assert_eq!(
        fen_err(
            chess(),
            "rnbqkbns/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
        ),
        FenError::UnknownPiece('s')
    );
    assert_eq!(
        fen_err(
            chess(),
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPP*/RNBQKBNR w KQkq - 0 1"
        ),
        FenError::UnknownPiece('*')
    );
}

#[test]
fn missing_and_extra_kings() {
    assert_eq!(
        fen_err(
            chess(),
            "rnbq1bnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQ - 0 1"
        ),
        FenError::MissingKing(Color::Black)
    );
    let e = fen_err(
        chess(),
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBKKBNR w kq - 0 1",
    );
    assert_eq!(
        e,
        FenError::ExtraKing {
            color: Color::White,
            count: 2
        }
    );
    assert!(e.to_string().contains("2 white kings"));
}

#[test]
fn castling_letter_without_its_pieces() {
    let e = fen_err(
        chess(),
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN1 w KQkq - 0 1",
    );
    assert!(
        matches!(e, FenError::CastlingPieces { letter: 'K', .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("h1"));
    let e = fen_err(
        chess(),
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQ1BNR w Qkq - 0 1",
    );
    assert!(matches!(e, FenError::MissingKing(Color::White)), "{e:?}");
    // Latte's G needs the g1 rook under the rule-sets where it matters.
    let e = fen_err(
        latte("luft"),
        "rrnqknr1/nbbppbbn/ppp2ppp/8/8/PPP2PPP/NBBPPBBN/RRNQKNR1 w KQGBkqgb - 0 1",
    );
    assert!(
        matches!(e, FenError::CastlingPieces { letter: 'K', .. }),
        "{e:?}"
    );
    let e = fen_err(
        latte("both"),
        "rrnqkn1r/nbbppbbn/ppp2ppp/8/8/PPP2PPP/NBBPPBBN/RRNQKN1R w KQGBkqgb - 0 1",
    );
    assert!(
        matches!(e, FenError::CastlingPieces { letter: 'G', .. }),
        "{e:?}"
    );
}

#[test]
fn unknown_castling_letter() {
    assert_eq!(
        fen_err(
            chess(),
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkx - 0 1"
        ),
        FenError::CastlingLetter('x')
    );
    // G/B are Latte's letters only.
    assert_eq!(
        fen_err(
            chess(),
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQGkq - 0 1"
        ),
        FenError::CastlingLetter('G')
    );
}

#[test]
fn latte_letters_are_ignored_under_normal_and_dropped_without_their_partner() {
    let normal = Board::from_fen(latte("normal"), latte("both").start_fen()).expect("accepted");
    assert_eq!(normal.to_fen(), latte("normal").start_fen());
    let b = Board::from_fen(
        latte("luft"),
        "rrnqknrr/nbbppbbn/ppp2ppp/8/8/PPP2PPP/NBBPPBBN/RRNQKNRR w QGBkqgb - 0 1",
    )
    .expect("G without K is accepted");
    assert_eq!(
        b.to_fen(),
        "rrnqknrr/nbbppbbn/ppp2ppp/8/8/PPP2PPP/NBBPPBBN/RRNQKNRR w QBkqgb - 0 1"
    );
}

#[test]
fn en_passant_syntax_and_impossible_squares() {
    assert_eq!(
        fen_err(
            chess(),
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e9 0 1"
        ),
        FenError::EnPassantSyntax("e9".into())
    );
    for (fen, why) in [
        (
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e6 0 1",
            "rank",
        ),
        (
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq e3 0 1",
            "pawn",
        ),
        (
            "rnbqkbnr/pppppppp/8/8/4P3/4N3/PPPP1PPP/RNBQKB1R b KQkq e3 0 1",
            "occupied",
        ),
    ] {
        let e = fen_err(chess(), fen);
        assert!(
            matches!(e, FenError::EnPassantImpossible { .. }),
            "{fen}: {e:?}"
        );
        assert!(e.to_string().contains(why), "{e}");
    }
    // Possible but not capturable: accepted, and not written back.
    let b = Board::from_fen(
        chess(),
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1",
    )
    .expect("accepted");
    assert!(b.to_fen().contains(" - 0 1"));
}

#[test]
fn side_to_move_and_clocks() {
    assert_eq!(
        fen_err(
            chess(),
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1"
        ),
        FenError::SideToMove("x".into())
    );
    assert!(matches!(
        fen_err(
            chess(),
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - -3 1"
        ),
        FenError::Clock {
            field: "halfmove clock",
            ..
        }
    ));
    assert!(matches!(
        fen_err(
            chess(),
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 -2"
        ),
        FenError::Clock {
            field: "fullmove number",
            ..
        }
    ));
    // A full-move number of 0, as some tools write it, is read as 1 (as python-chess does).
    let b = Board::from_fen(
        chess(),
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 0",
    )
    .expect("accepted");
    assert!(b.to_fen().ends_with(" 0 1"));
}

#[test]
fn side_not_to_move_in_check() {
    assert_eq!(
        fen_err(chess(), "4k3/8/8/8/8/8/4R3/4K3 w - - 0 1"),
        FenError::OpponentInCheck(Color::Black)
    );
}

#[test]
fn pawn_on_back_rank() {
    assert_eq!(
        fen_err(chess(), "4k2P/8/8/8/8/8/8/4K3 w - - 0 1"),
        FenError::PawnOnBackRank("h8".into())
    );
}

#[test]
fn secutor_fen_on_the_8x8_reader_names_the_geometry() {
    let e = fen_err(Rules::default_for(Variant::Secutor), START);
    assert_eq!(
        e,
        FenError::Rules(RulesError::WrongGeometry(Variant::Secutor))
    );
}

#[test]
fn no_panic_on_garbage() {
    for fen in [
        "",
        " ",
        "////////",
        "8/8/8/8/8/8/8/8 w - - 0 1",
        "kkkkkkkk/8/8/8/8/8/8/KKKKKKKK w - - 0 1",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 99999999999 1",
        "\u{1F600}/8/8/8/8/8/8/8 w - - 0 1",
        "12345678/8/8/8/8/8/8/8 w - - 0 1",
        "k7/8/8/8/8/8/8/7K w - a9 0 1",
    ] {
        assert!(Board::from_fen(chess(), fen).is_err(), "{fen}");
    }
}

#[test]
fn moves_unparsable_illegal_and_ambiguous() {
    let b = Board::from_fen(chess(), START).expect("start");
    assert_eq!(
        parse_uci(&b, "e2e5"),
        Err(MoveError::Illegal {
            mv: "e2e5".into(),
            fen: START.into()
        })
    );
    assert_eq!(
        parse_uci(&b, "hello"),
        Err(MoveError::Unparsable("hello".into()))
    );
    assert_eq!(
        parse_uci(&b, "e1g1l"),
        Err(MoveError::Illegal {
            mv: "e1g1l".into(),
            fen: START.into()
        })
    );
    assert!(matches!(
        parse_san(&b, "Ke2"),
        Err(MoveError::Illegal { .. })
    ));
    assert!(matches!(
        parse_san(&b, "Zz9"),
        Err(MoveError::UnparsableSan(_))
    ));
    assert!(matches!(
        parse_san(&b, "O-O-X"),
        Err(MoveError::UnparsableSan(_))
    ));
    let two_knights = Board::from_fen(chess(), "4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1").expect("valid");
    assert!(matches!(
        parse_san(&two_knights, "Nd2"),
        Err(MoveError::Ambiguous { .. })
    ));
    assert!(parse_san(&two_knights, "Nbd2").is_ok());
}

fn engine_cmd(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(args)
        .output()
        .expect("engine runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn cli_reports_bad_input_with_status_2() {
    let cases: [(&[&str], &str); 5] = [
        (&["perft", "--variant", "shogi", "--depth", "1"], "shogi"),
        (
            &[
                "perft",
                "--variant",
                "latte",
                "--ruleset",
                "extended",
                "--depth",
                "1",
            ],
            "extended",
        ),
        (
            &[
                "perft",
                "--variant",
                "chess",
                "--fen",
                "8/8/8 w - - 0 1",
                "--depth",
                "1",
            ],
            "ranks",
        ),
        (
            &[
                "perft",
                "--variant",
                "latte",
                "--fen",
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN1 w KQkq - 0 1",
                "--depth",
                "1",
            ],
            "castling letter 'K'",
        ),
        (&["perft-suite", "/nonexistent/suite.jsonl"], "cannot read"),
    ];
    for (args, needle) in cases {
        let (code, stderr) = engine_cmd(args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
}

#[test]
fn cli_reports_a_malformed_suite_line_with_its_number() {
    let dir = std::env::temp_dir().join(format!("engine-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("bad.jsonl");
    std::fs::write(&file, "{\"id\": \"x\", \"variant\": \"chess\", \"ruleset\": \"normal\", \"fen\": \"8/8/8/8/8/8/8/8 w - - 0 1\", \"depth\": 1, \"nodes\": 1}\n{not json\n")
        .expect("write");
    let path = file.to_string_lossy().into_owned();
    let (code, stderr) = engine_cmd(&["perft-suite", &path]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("line 2"), "{stderr}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn cli_exits_1_on_a_perft_mismatch() {
    let dir = std::env::temp_dir().join(format!("engine-mismatch-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("wrong.jsonl");
    std::fs::write(&file, format!("{{\"id\": \"start\", \"variant\": \"chess\", \"ruleset\": \"normal\", \"fen\": \"{START}\", \"depth\": 1, \"nodes\": 21}}\n"))
        .expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(["perft-suite", &file.to_string_lossy()])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("0 passed, 1 failed"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn tune_commands_refuse_bad_positions_files_naming_the_problem() {
    let dir = std::env::temp_dir().join(format!("engine-tune-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let write = |name: &str, text: &str| {
        let file = dir.join(name);
        std::fs::write(&file, text).expect("write");
        file.to_string_lossy().into_owned()
    };
    let good = format!("{START} [0.5]\n");
    let few = write("few.txt", &good.repeat(3));
    let label = write("label.txt", &format!("{good}{START} [2]\n"));
    let fen = write("fen.txt", &format!("{good}{good}8/8/8 w - - 0 1 [1.0]\n"));
    let unknown = write("unknown.txt", "Tempo=20\nNoSuchWeight=1\n");
    let range = write("range.txt", "{\"Tempo\": 100000}");
    let mut cases: Vec<(Vec<&str>, String)> = vec![];
    // The weights a fit starts from (`--params`): unreadable, unknown or out of range, each
    // refused by either fit before any position is read.
    for command in ["tune-squares", "tune-weights"] {
        cases.push((
            vec![
                command,
                "--positions",
                &few,
                "--params",
                "/nonexistent/w.txt",
            ],
            "cannot read /nonexistent/w.txt".into(),
        ));
        cases.push((
            vec![command, "--positions", &few, "--params", &unknown],
            format!("parameters file {unknown}: line 2: unknown parameter"),
        ));
        cases.push((
            vec![command, "--positions", &few, "--params", &range],
            format!("parameters file {range}: parameter Tempo: value 100000 is outside its range"),
        ));
    }
    cases.extend(vec![
        (
            vec!["tune-squares", "--positions", "/nonexistent/p.txt"],
            "cannot read /nonexistent/p.txt".into(),
        ),
        (
            vec!["tune-squares", "--positions", &label],
            "positions line 2: result \"2\"".into(),
        ),
        (
            vec!["tune-squares", "--positions", &fen],
            "positions line 3".into(),
        ),
        (
            vec!["tune-squares", "--positions", &few],
            "only 3 quiet positions".into(),
        ),
        (
            vec!["tune-squares", "--positions", &few, "--variant", "secutor"],
            "secutor/extended has no learned square table".into(),
        ),
        (
            vec!["tune-weights", "--positions", "/nonexistent/p.txt"],
            "cannot read /nonexistent/p.txt".into(),
        ),
        (
            vec!["tune-weights", "--positions", &label],
            "positions line 2: result \"2\"".into(),
        ),
        (
            vec!["tune-weights", "--positions", &few],
            "only 3 quiet positions".into(),
        ),
        (
            // Secutor's positions are read on their own board: a chess FEN is not one.
            vec!["tune-weights", "--positions", &few, "--variant", "secutor"],
            "positions line 1".into(),
        ),
        (
            vec![
                "tune-weights",
                "--positions",
                &few,
                "--only",
                "RookValueEg,NoSuchWeight",
            ],
            "no parameter named \"NoSuchWeight\"".into(),
        ),
        (
            vec![
                "tune-weights",
                "--positions",
                &few,
                "--only",
                "SecutorValueMg",
            ],
            "SecutorValueMg does not apply to chess/normal".into(),
        ),
        (
            vec![
                "tune-weights",
                "--positions",
                &few,
                "--exclude",
                "Tempo,NoSuchWeight",
            ],
            "no parameter named \"NoSuchWeight\"".into(),
        ),
        (
            vec![
                "tune-weights",
                "--positions",
                &few,
                "--learning-rate",
                "NaN",
            ],
            "--learning-rate must be a positive number".into(),
        ),
        (
            vec!["tune-squares", "--positions", &few, "--learning-rate=-1"],
            "--learning-rate must be a positive number".into(),
        ),
        (
            vec!["tune-net", "--positions", "/nonexistent/p.txt"],
            "cannot read /nonexistent/p.txt".into(),
        ),
        (
            vec!["tune-net", "--positions", &label],
            "positions line 2: result \"2\"".into(),
        ),
        (
            vec!["tune-net", "--positions", &few],
            "only 3 quiet positions".into(),
        ),
        (
            vec!["tune-net", "--positions", &few, "--variant", "secutor"],
            "secutor/extended has no evaluation network".into(),
        ),
        (
            vec!["tune-net", "--positions", &few, "--batch", "0"],
            "--batch must be at least 1".into(),
        ),
        (
            vec!["tune-net", "--positions", &few, "--learning-rate", "inf"],
            "--learning-rate must be a positive number".into(),
        ),
        (
            vec!["tune-net", "--positions", &few, "--hidden", "48"],
            "--hidden 48: the network's width must be one of [8, 16, 32, 64, 128, 256]".into(),
        ),
        (
            vec!["tune-net", "--positions", &few, "--hidden", "0"],
            "--hidden 0: the network's width must be one of".into(),
        ),
        (
            vec!["tune-net", "--positions", &few, "--threads", "0"],
            "--threads".into(),
        ),
        (vec!["bench", "--threads", "0"], "--threads".into()),
        (vec!["bench", "--threads", "257"], "--threads".into()),
        (
            vec!["tune-weights", "--positions", &few, "--threads", "0"],
            "--threads".into(),
        ),
        (
            vec!["tune-weights", "--positions", &few, "--threads", "100000"],
            "--threads".into(),
        ),
        (
            vec![
                "export-net",
                "--variant",
                "latte",
                "--output-scale",
                "100",
                "--out",
                "/tmp/never.net",
            ],
            "--output-scale 100: the largest output weight would leave the limit".into(),
        ),
        (
            vec![
                "export-net",
                "--variant",
                "latte",
                "--output-scale=0",
                "--out",
                "/tmp/never.net",
            ],
            "--output-scale 0 is not a positive number".into(),
        ),
        (
            vec!["import-net", "/nonexistent/n.net", "--out", "/tmp/never.rs"],
            "cannot read network file /nonexistent/n.net".into(),
        ),
        (
            vec![
                "export-net",
                "--variant",
                "secutor",
                "--out",
                "/tmp/never.net",
            ],
            "secutor/extended has no evaluation network".into(),
        ),
        (
            vec![
                "export-net",
                "--variant",
                "chess",
                "--out",
                "/nonexistent/dir/c.net",
            ],
            "cannot write network file /nonexistent/dir/c.net".into(),
        ),
        (
            vec![
                "tune-net",
                "--positions",
                &few,
                "--epochs",
                "0",
                "--out-net",
                "x.net",
            ],
            "--epochs 0 fits nothing; there is no network for --out-net to write".into(),
        ),
    ]);
    for (args, needle) in cases {
        let (code, stderr) = engine_cmd(&args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(&needle), "{args:?}: {stderr}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
