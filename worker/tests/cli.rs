//! The `worker` command line: bad input exits with status 2 and names the problem; a small
//! match runs and reports.

use std::process::{Command, Output};

fn worker(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_worker"))
        .args(args)
        .output()
        .expect("runs")
}

fn refused(args: &[&str], needle: &str) {
    let out = worker(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(stderr.contains(needle), "{args:?}: {stderr}");
}

const SMALL: [&str; 6] = ["match", "--games", "2", "--nodes", "100", "--quiet"];

fn small(extra: &[&str]) -> Vec<String> {
    SMALL.iter().chain(extra).map(|s| s.to_string()).collect()
}

fn refused_match(extra: &[&str], needle: &str) {
    let args = small(extra);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    refused(&args, needle);
}

#[test]
fn unknown_variant_and_ruleset() {
    refused_match(&["--variant", "shogi"], "shogi");
    refused_match(&["--variant", "secutor", "--ruleset", "luft"], "luft");
    refused(&["book", "--variant", "latte", "--ruleset", "wild"], "wild");
}

#[test]
fn bad_params_files() {
    let dir = tempfile::tempdir().expect("dir");
    let bad = dir.path().join("bad.txt");
    std::fs::write(&bad, "Tempo=10\nNoSuchParam=3\n").expect("write");
    refused_match(&["--params1", bad.to_str().expect("utf8")], "NoSuchParam");
    refused_match(&["--params1", bad.to_str().expect("utf8")], "line 2");
    let range = dir.path().join("range.json");
    std::fs::write(&range, r#"{"Tempo": 1000}"#).expect("write");
    refused_match(&["--params2", range.to_str().expect("utf8")], "Tempo");
    refused_match(
        &["--params1", "/nonexistent/params.txt"],
        "/nonexistent/params.txt",
    );
}

#[test]
fn bad_engine_specs() {
    refused_match(&["--engine2", "colour=white"], "colour");
    refused_match(
        &["--engine2", "cmd=/nonexistent/engine"],
        "/nonexistent/engine",
    );
    refused(&["match", "--tc", "fast"], "fast");
    refused_match(&["--resign", "movecount=x"], "movecount");
}

#[test]
fn missing_or_bad_book() {
    refused_match(
        &["--book", "/nonexistent/book.epd"],
        "/nonexistent/book.epd",
    );
    let dir = tempfile::tempdir().expect("dir");
    let bad = dir.path().join("bad.epd");
    std::fs::write(&bad, "not a fen at all\n").expect("write");
    refused_match(&["--book", bad.to_str().expect("utf8")], "line 1");
}

#[test]
fn a_small_match_reports_and_writes_pgn() {
    let dir = tempfile::tempdir().expect("dir");
    let pgn = dir.path().join("out.pgn");
    let results = dir.path().join("out.jsonl");
    let params = dir.path().join("p.json");
    std::fs::write(&params, r#"{"Tempo": 20}"#).expect("write");
    let out = worker(&[
        "match",
        "--variant",
        "latte",
        "--ruleset",
        "both",
        "--games",
        "4",
        "--nodes",
        "200",
        "--concurrency",
        "2",
        "--quiet",
        "--params1",
        params.to_str().expect("utf8"),
        "--pgn",
        pgn.to_str().expect("utf8"),
        "--results",
        results.to_str().expect("utf8"),
        "--engine2",
        &format!("cmd={},option.Hash=1", env!("CARGO_BIN_EXE_fake-uci")),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("W/D/L:") && stdout.contains("Ptnml(0-2):") && stdout.contains("Elo:"),
        "{stdout}"
    );
    assert!(stdout.contains("p vs fake-uci"), "{stdout}");
    // Each player's clock and search a move, the engine's own and the UCI engine's.
    assert!(
        stdout.contains("Per move (over each side's first 10 moves"),
        "{stdout}"
    );
    for name in ["p ", "fake-uci "] {
        assert!(
            stdout
                .lines()
                .any(|l| l.trim_start().starts_with(name) && l.contains(" s (")),
            "{name}: {stdout}"
        );
    }
    let games = worker::pgn::read(&std::fs::read_to_string(&pgn).expect("pgn")).expect("pgn");
    assert_eq!(games.len(), 4);
    assert_eq!(games[0].tag("Round"), Some("1.1"));
    assert_eq!(games[3].tag("Round"), Some("2.2"));
    let lines = std::fs::read_to_string(&results).expect("results");
    let pairs: Vec<worker::record::PairResult> = lines
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(pairs.len(), 2);
}

/// The games written, skipped and repeated, as `worker positions` reports them.
fn positions_counts(stdout: &str) -> (usize, usize, usize) {
    let number_before = |needle: &str| -> usize {
        let at = stdout
            .find(needle)
            .unwrap_or_else(|| panic!("no {needle:?} in {stdout}"));
        // The run of digits that ends where the needle starts.
        let digits = stdout[..at]
            .rsplit(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap_or_default();
        digits
            .parse()
            .unwrap_or_else(|e| panic!("{needle:?} in {stdout}: {e}"))
    };
    (
        number_before(" games ("),
        number_before(" skipped"),
        number_before(" repeating an earlier game"),
    )
}

/// Games to labelled positions: every kept position is a quiet one of a game played, with its
/// game's result, and `engine tune-squares` reads them all back.
#[test]
fn positions_command_labels_the_positions_of_played_games() {
    let dir = tempfile::tempdir().expect("dir");
    let pgn = dir.path().join("games.pgn");
    let positions = dir.path().join("positions.txt");
    let path = |p: &std::path::Path| p.to_str().expect("utf8").to_string();
    let out = worker(&[
        "match",
        "--variant",
        "chess",
        "--games",
        "4",
        "--nodes",
        "200",
        "--quiet",
        "--pgn",
        &path(&pgn),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = worker(&[
        "positions",
        "--variant",
        "chess",
        "--pgn",
        &path(&pgn),
        "--out",
        &path(&positions),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The engine is deterministic at a fixed node count, so a pair's second game may repeat
    // its first move for move: such a game is counted as a repeat, not written again.
    let (games_kept, skipped, repeated) = positions_counts(&stdout);
    assert_eq!(skipped, 0, "{stdout}");
    assert_eq!(games_kept + repeated, 4, "{stdout}");
    assert!(games_kept >= 2, "one game of each pair at least: {stdout}");
    assert_eq!(
        repeated > 0,
        stdout.contains("for distinct games make the players differ"),
        "the hint comes exactly when games repeat: {stdout}"
    );
    let text = std::fs::read_to_string(&positions).expect("positions");
    let games = worker::pgn::read(&std::fs::read_to_string(&pgn).expect("pgn")).expect("pgn");
    let labels: Vec<&str> = games
        .iter()
        .map(|g| match g.result.as_str() {
            "1-0" => "[1.0]",
            "0-1" => "[0.0]",
            _ => "[0.5]",
        })
        .collect();
    assert!(text.lines().count() > 20, "{text}");
    assert!(
        text.lines()
            .all(|l| labels.iter().any(|label| l.ends_with(label))),
        "{text}"
    );
    let rules = engine::Rules::default_for(engine::Variant::Chess);
    let samples = engine::tune::Samples::read(&text, rules, &engine::params::Params::default())
        .expect("the tuner reads every line");
    assert_eq!(samples.read, text.lines().count());
    // Under other rules every game is skipped, and says so.
    let out = worker(&[
        "positions",
        "--variant",
        "latte",
        "--pgn",
        &path(&pgn),
        "--out",
        &path(&positions),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("0 positions from 0 games (4 skipped"),
        "{stdout}"
    );
    assert_eq!(positions_counts(&stdout), (0, 4, 0), "{stdout}");
    assert!(
        !stdout.contains("for distinct games make the players differ"),
        "no repeats, no hint: {stdout}"
    );
}

#[test]
fn positions_command_refuses_bad_input() {
    let dir = tempfile::tempdir().expect("dir");
    let bad = dir.path().join("bad.pgn");
    std::fs::write(&bad, "[Result \"1-0\"]\n\n1. e4 e5 2. Ke3 1-0\n\n").expect("write");
    let bad = bad.to_str().expect("utf8");
    let out = dir.path().join("out.txt");
    let out = out.to_str().expect("utf8");
    refused(
        &[
            "positions",
            "--variant",
            "chess",
            "--pgn",
            "/nonexistent.pgn",
            "--out",
            out,
        ],
        "cannot read /nonexistent.pgn",
    );
    refused(
        &[
            "positions",
            "--variant",
            "chess",
            "--pgn",
            bad,
            "--out",
            out,
        ],
        "game 1, ply 3 (Ke3)",
    );
    refused(
        &[
            "positions",
            "--variant",
            "chess",
            "--pgn",
            bad,
            "--out",
            "/nonexistent/dir/out.txt",
        ],
        "cannot write /nonexistent/dir/out.txt",
    );
    // A walk of no plies, one beyond the cap, and a walk seed without a walk.
    for (extra, needle) in [
        (&["--walk", "0"][..], "--walk"),
        (&["--walk", "41"][..], "--walk"),
        (&["--walk-seed", "3"][..], "--walk"),
    ] {
        let mut args = vec![
            "positions",
            "--variant",
            "chess",
            "--pgn",
            bad,
            "--out",
            out,
        ];
        args.extend_from_slice(extra);
        refused(&args, needle);
    }
}

#[test]
fn book_command_writes_a_valid_book() {
    let dir = tempfile::tempdir().expect("dir");
    let out = dir.path().join("b.epd");
    let o = worker(&[
        "book",
        "--variant",
        "secutor",
        "--count",
        "3",
        "--nodes",
        "300",
        "--out",
        out.to_str().expect("utf8"),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rules = engine::Rules::parse("secutor", None).expect("rules");
    let book = worker::book::Book::load(&out, rules).expect("valid");
    assert_eq!(book.positions.len(), 3);
}

/// Positions relabelled by an engine: every line comes back in order with the engine's
/// expected score from White's side, the tuner reads them, and Stockfish (the real peer, when
/// installed) labels through the UCI player the same way.
#[test]
fn label_command_relabels_positions_by_an_engine() {
    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    // Black to move, a queen down.
    const QUEEN_UP: &str = "rnb1kbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 3";
    let dir = tempfile::tempdir().expect("dir");
    let path = |p: &std::path::Path| p.to_str().expect("utf8").to_string();
    let input = dir.path().join("positions.txt");
    let mut text = String::new();
    for i in 0..10 {
        let fen = if i % 2 == 0 { START } else { QUEEN_UP };
        text.push_str(&format!("{fen} [0.0]\n"));
    }
    std::fs::write(&input, &text).expect("write");
    let output = dir.path().join("labelled.txt");
    let label = |engine: &str, nodes: &str| {
        worker(&[
            "label",
            "--variant",
            "chess",
            "--positions",
            &path(&input),
            "--out",
            &path(&output),
            "--engine",
            engine,
            "--nodes",
            nodes,
            "--concurrency",
            "2",
        ])
    };
    let check = |out: Output| {
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains("10 positions labelled"), "{stdout}");
        let labelled = std::fs::read_to_string(&output).expect("output");
        let lines: Vec<&str> = labelled.lines().collect();
        assert_eq!(lines.len(), 10, "{labelled}");
        for (i, l) in lines.iter().enumerate() {
            let p = engine::tune::parse_line(i + 1, l)
                .expect("readable")
                .expect("a position");
            if i % 2 == 1 {
                assert_eq!(p.fen, QUEEN_UP);
                assert!(p.result > 0.9, "White's side: {l}");
            } else {
                assert_eq!(p.fen, START);
                assert!((0.3..0.7).contains(&p.result), "{l}");
            }
        }
        let rules = engine::Rules::default_for(engine::Variant::Chess);
        let samples =
            engine::tune::Samples::read(&labelled, rules, &engine::params::Params::default())
                .expect("the tuner reads every line");
        assert_eq!(samples.read, 10);
    };
    check(label("internal", "300"));
    let stockfish = ["/usr/games/stockfish", "/usr/bin/stockfish"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists());
    match stockfish {
        Some(sf) => check(label(&format!("cmd={sf},option.Hash=4"), "2000")),
        None => eprintln!("Stockfish is not installed: its labels are not checked"),
    }
}

#[test]
fn label_command_refuses_bad_input() {
    let dir = tempfile::tempdir().expect("dir");
    let good = dir.path().join("good.txt");
    std::fs::write(
        &good,
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 [0.5]\n",
    )
    .expect("write");
    let bad = dir.path().join("bad.txt");
    std::fs::write(
        &bad,
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 [0.5]\nnot a position [1.0]\n",
    )
    .expect("write");
    let (good, bad) = (good.to_str().expect("utf8"), bad.to_str().expect("utf8"));
    let out = dir.path().join("out.txt");
    let out = out.to_str().expect("utf8");
    let with = |positions: &str, out: &str, extra: &[&str]| {
        let mut v = vec![
            "label",
            "--variant",
            "chess",
            "--nodes",
            "100",
            "--positions",
        ];
        v.push(positions);
        v.extend(["--out", out]);
        v.extend(extra);
        v.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let refused_with = |positions: &str, out: &str, extra: &[&str], needle: &str| {
        let v = with(positions, out, extra);
        let v: Vec<&str> = v.iter().map(String::as_str).collect();
        refused(&v, needle);
    };
    // A finished game (fool's mate) on the last line: named before any engine starts (the
    // engine here cannot start) and before the output is made.
    let finished = dir.path().join("finished.txt");
    std::fs::write(
        &finished,
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 [0.5]\n\
         rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3 [0.0]\n",
    )
    .expect("write");
    let fresh = dir.path().join("fresh.txt");
    refused_with(
        finished.to_str().expect("utf8"),
        fresh.to_str().expect("utf8"),
        &["--engine", "cmd=/nonexistent/engine"],
        "positions line 2: the game is over in this position",
    );
    assert!(
        !fresh.exists(),
        "nothing is written for a file that fails its check"
    );
    refused_with("/nonexistent.txt", out, &[], "cannot read /nonexistent.txt");
    refused_with(bad, out, &[], "positions line 2");
    refused_with(good, "/nonexistent/dir/out.txt", &[], "cannot write");
    refused_with(good, out, &["--lambda", "1.5"], "lambda 1.5");
    refused_with(good, out, &["--scale=-3"], "scale -3");
    refused_with(good, out, &["--concurrency", "0"], "concurrency");
    refused_with(good, out, &["--engine", "cmd="], "bad engine spec");
    refused_with(
        good,
        out,
        &["--engine", "cmd=/nonexistent/engine"],
        "failed to start",
    );
    refused(
        &[
            "label",
            "--variant",
            "chess",
            "--nodes",
            "0",
            "--positions",
            good,
            "--out",
            out,
        ],
        "nodes=0",
    );
}

/// Our engine against itself at a fixed node count replays each pair's first game in its
/// second: the match says so, and the games bear it out; a parameter set for one side (or a
/// clock) lifts the note.
#[test]
fn a_match_of_one_engine_against_itself_at_fixed_nodes_says_its_pairs_repeat() {
    let dir = tempfile::tempdir().expect("dir");
    let pgn = dir.path().join("self.pgn");
    let args = small(&["--pgn", pgn.to_str().expect("utf8")]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = worker(&args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("each pair's second game repeats its first move for move"),
        "{stderr}"
    );
    let games = worker::pgn::read(&std::fs::read_to_string(&pgn).expect("pgn")).expect("pgn");
    assert_eq!(games.len(), 2);
    assert_eq!(games[0].moves, games[1].moves, "the note would be wrong");

    let params = dir.path().join("t.txt");
    std::fs::write(&params, "Tempo=36\n").expect("write");
    let with_params = small(&["--params2", params.to_str().expect("utf8")]);
    let clock: Vec<String> = ["match", "--games", "2", "--tc", "0.3+0.01", "--quiet"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for extra in [with_params, clock] {
        let args: Vec<&str> = extra.iter().map(String::as_str).collect();
        let out = worker(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{extra:?}: {stderr}");
        assert!(
            !stderr.contains("repeats its first move"),
            "{extra:?}: {stderr}"
        );
    }
}
