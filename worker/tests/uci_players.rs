//! UCI engine processes: a fake engine that crashes, hangs, sends illegal moves or garbage is
//! handled (the game is lost with the right termination, the engine restarted, the process
//! group killed), and a well-behaved UCI engine plays exactly the games of the in-process one.

mod common;

use std::time::Duration;

use common::{fake_uci, process_gone, wait_until};
use engine::board8::Board;
use engine::Rules;
use worker::adjudication::Adjudication;
use worker::limits::TimeControl;
use worker::pair::PairSession;
use worker::player::internal::InternalPlayer;
use worker::player::spec::InternalSpec;
use worker::player::uci::UciPlayer;
use worker::player::{Player, PlayerSpec, UciSpec};
use worker::record::{GameResult, Termination};
use worker::runner::{play_game, GameConfig};
use worker::WorkerError;

fn latte() -> Rules {
    Rules::parse("latte", Some("both")).expect("rules")
}

fn fake_spec(args: &[&str]) -> UciSpec {
    let mut u = UciSpec::new("fake", fake_uci());
    u.args = args.iter().map(|s| s.to_string()).collect();
    u.startup_timeout = Duration::from_secs(3);
    u.move_timeout = Duration::from_millis(400);
    u.options.push(("Hash".into(), "1".into()));
    u
}

fn fake(args: &[&str]) -> PlayerSpec {
    PlayerSpec::Uci(fake_spec(args))
}

fn internal() -> PlayerSpec {
    let PlayerSpec::Internal(i) = PlayerSpec::internal("internal") else {
        unreachable!()
    };
    PlayerSpec::Internal(Box::new(InternalSpec { hash_mib: 1, ..*i }))
}

fn config(nodes: u64) -> GameConfig {
    GameConfig {
        adjudication: Adjudication::OFF,
        ..GameConfig::new(TimeControl::Nodes(nodes))
    }
}

fn opening() -> String {
    latte().start_fen().to_string()
}

#[test]
fn uci_engine_plays_the_same_games_as_in_process() {
    let mut config = config(300);
    config.adjudication = Adjudication::default();
    config.adjudication.max_moves = Some(30);
    let fen = worker::book::Book::builtin(latte())
        .expect("book")
        .positions[3]
        .clone();
    let mut a = PairSession::new(latte(), &[fake(&[]), internal()]).expect("starts");
    let mut b = PairSession::new(latte(), &[internal(), internal()]).expect("starts");
    let x = a.play_pair(0, 1, &fen, &config, None).expect("pair");
    let y = b.play_pair(0, 1, &fen, &config, None).expect("pair");
    for (g, h) in x.games.iter().zip(&y.games) {
        let moves = |r: &worker::record::GameRecord| -> Vec<String> {
            r.moves.iter().map(|m| m.uci.clone()).collect()
        };
        assert_eq!(moves(g), moves(h));
        assert_eq!((g.result, g.termination), (h.result, h.termination));
        assert!(g
            .moves
            .iter()
            .all(|m| m.score.is_some() && m.depth.is_some()));
        // Scores reported over UCI are the in-process scores.
        let scores = |r: &worker::record::GameRecord| -> Vec<Option<i32>> {
            r.moves.iter().map(|m| m.score).collect()
        };
        assert_eq!(scores(g), scores(h));
    }
}

#[test]
fn crashed_engine_loses_and_is_restarted() {
    let mut s =
        PairSession::new(latte(), &[fake(&["--crash-after", "3"]), internal()]).expect("starts");
    for i in 0..2 {
        let pair = s
            .play_pair(i, 1, &opening(), &config(200), None)
            .expect("pair");
        assert_eq!(pair.games[0].termination, Termination::Crash);
        assert_eq!(pair.games[0].result, GameResult::BlackWins);
        assert_eq!(pair.games[0].plies, 6, "three moves each, then the crash");
        assert_eq!(pair.games[1].termination, Termination::Crash);
        assert_eq!(pair.games[1].result, GameResult::WhiteWins);
        assert_eq!(pair.score().half_points(), 0);
    }
}

fn one_game(
    fake_args: &[&str],
    tc: TimeControl,
) -> (worker::record::GameRecord, UciPlayer<Board>, u32) {
    let mut f = UciPlayer::<Board>::start(fake_spec(fake_args), latte()).expect("starts");
    let pid = f.pid().expect("running");
    let PlayerSpec::Internal(spec) = internal() else {
        unreachable!()
    };
    let mut i = InternalPlayer::<Board>::new(&spec, latte()).expect("no network to refuse");
    let mut cfg = config(200);
    cfg.tc = tc;
    let r = play_game::<Board>(
        latte(),
        &opening(),
        [&mut f as &mut dyn Player<Board>, &mut i],
        &cfg,
    )
    .expect("legal");
    (r, f, pid)
}

#[test]
fn hung_engine_times_out_and_is_killed() {
    let start = std::time::Instant::now();
    let (r, f, pid) = one_game(&["--hang-after", "2"], TimeControl::Nodes(200));
    assert_eq!(
        (r.result, r.termination, r.plies),
        (GameResult::BlackWins, Termination::Timeout, 4)
    );
    assert!(start.elapsed() < Duration::from_secs(5));
    assert_eq!(f.pid(), None, "the hung process is gone");
    assert!(wait_until(Duration::from_secs(2), || process_gone(pid)));
}

#[test]
fn illegal_moves_and_garbage_lose() {
    for args in [["--illegal-after", "1"], ["--garbage-after", "1"]] {
        let (r, _f, _) = one_game(&args, TimeControl::Nodes(200));
        assert_eq!(
            (r.result, r.termination, r.plies),
            (GameResult::BlackWins, Termination::IllegalMove, 2),
            "{args:?}"
        );
    }
}

#[test]
fn junk_lines_between_answers_are_ignored() {
    let mut f = UciPlayer::<Board>::start(fake_spec(&["--noise"]), latte()).expect("starts");
    let PlayerSpec::Internal(spec) = internal() else {
        unreachable!()
    };
    let mut i = InternalPlayer::<Board>::new(&spec, latte()).expect("no network to refuse");
    let mut cfg = config(200);
    cfg.adjudication.max_moves = Some(5);
    let r = play_game::<Board>(
        latte(),
        &opening(),
        [&mut f as &mut dyn Player<Board>, &mut i],
        &cfg,
    )
    .expect("legal");
    assert!(!r.termination.is_failure(), "{:?}", r.termination);
}

#[test]
fn slow_engine_loses_on_time() {
    let (r, _f, _) = one_game(
        &["--delay-ms", "400"],
        TimeControl::Clock {
            base: Duration::from_millis(200),
            inc: Duration::ZERO,
        },
    );
    assert_eq!(
        (r.result, r.termination, r.plies),
        (GameResult::BlackWins, Termination::TimeForfeit, 0)
    );
}

#[test]
fn engines_that_do_not_start_are_named_errors() {
    for (args, expect) in [
        (vec!["--no-uciok"], "uciok"),
        (vec!["--exit-at-start"], "exited"),
    ] {
        let mut spec = fake_spec(&args);
        spec.startup_timeout = Duration::from_millis(300);
        let err = PairSession::new(latte(), &[PlayerSpec::Uci(spec), internal()])
            .err()
            .expect("refused");
        assert!(matches!(err, WorkerError::EngineStart { .. }), "{err}");
        assert!(err.to_string().contains(expect), "{err}");
    }
    let spec = UciSpec::new("nothing", "/nonexistent/engine");
    let err = PairSession::new(latte(), &[PlayerSpec::Uci(spec), internal()])
        .err()
        .expect("refused");
    assert!(err.to_string().contains("/nonexistent/engine"), "{err}");
}

#[test]
fn crash_at_game_start_loses_that_game() {
    let mut s = PairSession::new(latte(), &[fake(&["--crash-on-newgame", "1"]), internal()])
        .expect("starts");
    let mut cfg = config(200);
    cfg.adjudication.max_moves = Some(3);
    let pair = s.play_pair(0, 1, &opening(), &cfg, None).expect("pair");
    assert_eq!(pair.games[0].termination, Termination::MaxMoves);
    assert_eq!(
        (
            pair.games[1].termination,
            pair.games[1].plies,
            pair.games[1].result
        ),
        (Termination::Crash, 0, GameResult::WhiteWins)
    );
}

#[test]
fn dropping_a_player_kills_its_process_group() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("child.pid");
    let path = file.to_string_lossy().into_owned();
    let f = UciPlayer::<Board>::start(
        fake_spec(&["--spawn-child", "--child-pid-file", &path]),
        latte(),
    )
    .expect("starts");
    let engine_pid = f.pid().expect("running");
    assert!(wait_until(Duration::from_secs(2), || file.exists()));
    let child: u32 = std::fs::read_to_string(&file)
        .expect("pid file")
        .trim()
        .parse()
        .expect("pid");
    assert!(!process_gone(child));
    drop(f);
    assert!(wait_until(Duration::from_secs(2), || process_gone(
        engine_pid
    )));
    assert!(
        wait_until(Duration::from_secs(2), || process_gone(child)),
        "grandchild {child} survived"
    );
}

#[test]
fn unsupported_rules_are_refused_for_orthodox_engines() {
    // A shell script that speaks just enough UCI and declares no variant options.
    let dir = tempfile::tempdir().expect("temp dir");
    let script = dir.path().join("orthodox.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\nwhile read -r l; do case \"$l\" in uci) echo uciok;; isready) echo readyok;; quit) exit 0;; esac; done\n",
    )
    .expect("write");
    let mut spec = UciSpec::new("orthodox", "/bin/sh");
    spec.args = vec![script.to_string_lossy().into_owned()];
    spec.startup_timeout = Duration::from_secs(2);
    let ok = UciPlayer::<Board>::start(
        spec.clone(),
        Rules::parse("latte", Some("normal")).expect("rules"),
    );
    assert!(
        ok.is_ok(),
        "latte/normal is orthodox chess from another start"
    );
    let err = UciPlayer::<Board>::start(spec, latte())
        .err()
        .expect("refused");
    assert!(err.to_string().contains("latte/both"), "{err}");
}
