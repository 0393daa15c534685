//! Every way a game ends, from crafted positions and scripted players.

mod common;

use std::time::Duration;

use common::{Scripted, Step};
use engine::board8::Board;
use engine::Rules;
use stats::study::Side;
use worker::adjudication::{Adjudication, DrawRule, ResignRule};
use worker::limits::TimeControl;
use worker::player::internal::InternalPlayer;
use worker::player::spec::InternalSpec;
use worker::player::{Player, PlayerError, PlayerSpec};
use worker::record::{GameRecord, GameResult, Termination};
use worker::runner::{play_game, GameConfig};

fn chess() -> Rules {
    Rules::parse("chess", None).expect("rules")
}

fn off(tc: TimeControl) -> GameConfig {
    GameConfig {
        adjudication: Adjudication::OFF,
        ..GameConfig::new(tc)
    }
}

fn scripted(
    rules: Rules,
    fen: &str,
    white: Scripted,
    black: Scripted,
    config: &GameConfig,
) -> GameRecord {
    let (mut w, mut b) = (white, black);
    play_game::<Board>(
        rules,
        fen,
        [&mut w as &mut dyn Player<Board>, &mut b],
        config,
    )
    .expect("legal start")
}

fn internal(name: &str) -> InternalPlayer<Board> {
    let PlayerSpec::Internal(spec) = PlayerSpec::internal(name) else {
        unreachable!()
    };
    InternalPlayer::new(
        &InternalSpec {
            hash_mib: 1,
            ..*spec
        },
        Rules::default_for(engine::Variant::Chess),
    )
    .expect("no network to refuse")
}

#[test]
fn engine_finds_mate_in_one() {
    let (mut w, mut b) = (internal("w"), internal("b"));
    let r = play_game::<Board>(
        chess(),
        "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1",
        [&mut w as &mut dyn Player<Board>, &mut b],
        &off(TimeControl::Nodes(2000)),
    )
    .expect("legal");
    assert_eq!(
        (r.result, r.termination, r.plies),
        (GameResult::WhiteWins, Termination::Checkmate, 1)
    );
    assert_eq!(r.moves[0].san, "Ra8#");
    assert_eq!(r.moves[0].uci, "a1a8");
}

#[test]
fn stalemate() {
    let r = scripted(
        chess(),
        "7k/8/5K2/8/8/8/8/6Q1 w - - 0 1",
        Scripted::moves("w", &["g1g6"], Some(900)),
        Scripted::moves("b", &[], None),
        &off(TimeControl::Nodes(1)),
    );
    assert_eq!(
        (r.result, r.termination, r.plies),
        (GameResult::Draw, Termination::Stalemate, 1)
    );
}

#[test]
fn fifty_moves_and_mate_on_the_hundredth_ply() {
    let r = scripted(
        chess(),
        "7k/8/8/8/8/8/8/R5K1 w - - 99 80",
        Scripted::moves("w", &["a1a2"], Some(500)),
        Scripted::moves("b", &[], None),
        &off(TimeControl::Nodes(1)),
    );
    assert_eq!(
        (r.result, r.termination),
        (GameResult::Draw, Termination::FiftyMoves)
    );
    let r = scripted(
        chess(),
        "6k1/5ppp/8/8/8/8/8/R5K1 w - - 99 80",
        Scripted::moves("w", &["a1a8"], Some(500)),
        Scripted::moves("b", &[], None),
        &off(TimeControl::Nodes(1)),
    );
    assert_eq!(
        (r.result, r.termination),
        (GameResult::WhiteWins, Termination::Checkmate)
    );
}

#[test]
fn threefold_repetition() {
    let r = scripted(
        chess(),
        chess().start_fen(),
        Scripted::moves("w", &["g1f3", "f3g1", "g1f3", "f3g1"], Some(0)),
        Scripted::moves("b", &["g8f6", "f6g8", "g8f6", "f6g8"], Some(0)),
        &off(TimeControl::Nodes(1)),
    );
    assert_eq!(
        (r.result, r.termination, r.plies),
        (GameResult::Draw, Termination::Threefold, 8)
    );
}

#[test]
fn insufficient_material() {
    let r = scripted(
        chess(),
        "8/8/8/4k3/8/8/3r4/3K4 w - - 0 1",
        Scripted::moves("w", &["d1d2"], Some(0)),
        Scripted::moves("b", &[], None),
        &off(TimeControl::Nodes(1)),
    );
    assert_eq!(
        (r.result, r.termination, r.plies),
        (GameResult::Draw, Termination::InsufficientMaterial, 1)
    );
    assert_eq!(r.moves[0].san, "Kxd2");
}

#[test]
fn resign_adjudication_fires_at_its_threshold() {
    let mut config = off(TimeControl::Nodes(1));
    config.adjudication.resign = Some(ResignRule {
        move_count: 2,
        score: 300,
    });
    let w = Scripted::new(
        "w",
        vec![
            Step::Move("e2e3", Some(0), Duration::ZERO),
            Step::Move("d2d3", Some(300), Duration::ZERO),
            Step::Move("g1f3", Some(300), Duration::ZERO),
            Step::Move("b1c3", Some(300), Duration::ZERO),
        ],
    );
    let b = Scripted::new(
        "b",
        vec![
            Step::Move("e7e6", Some(0), Duration::ZERO),
            Step::Move("d7d6", Some(-300), Duration::ZERO),
            Step::Move("g8f6", Some(-300), Duration::ZERO),
        ],
    );
    let r = scripted(chess(), chess().start_fen(), w, b, &config);
    assert_eq!(
        (r.result, r.termination, r.plies),
        (GameResult::WhiteWins, Termination::ResignAdjudication, 6)
    );

    // One centipawn short: no resignation; the script runs out and the white player fails.
    let w = Scripted::new(
        "w",
        vec![
            Step::Move("e2e3", Some(299), Duration::ZERO),
            Step::Move("d2d3", Some(299), Duration::ZERO),
            Step::Move("g1f3", Some(299), Duration::ZERO),
        ],
    );
    let b = Scripted::moves("b", &["e7e6", "d7d6", "g8f6"], Some(-299));
    let r = scripted(chess(), chess().start_fen(), w, b, &config);
    assert_eq!((r.termination, r.plies), (Termination::Crash, 6));
}

#[test]
fn draw_adjudication_waits_for_its_move_number() {
    let mut config = off(TimeControl::Nodes(1));
    config.adjudication.draw = Some(DrawRule {
        move_number: 3,
        move_count: 1,
        score: 10,
    });
    let r = scripted(
        chess(),
        chess().start_fen(),
        Scripted::moves("w", &["g1f3", "b1c3", "a1b1"], Some(10)),
        Scripted::moves("b", &["g8f6", "b8c6", "a8b8"], Some(-10)),
        &config,
    );
    // Two plies within 10 cp after ply 2 already, but move 3 is reached only after ply 4.
    assert_eq!(
        (r.result, r.termination, r.plies),
        (GameResult::Draw, Termination::DrawAdjudication, 4)
    );
}

#[test]
fn maximum_length() {
    let mut config = off(TimeControl::Nodes(1));
    config.adjudication.max_moves = Some(2);
    let r = scripted(
        chess(),
        chess().start_fen(),
        Scripted::moves("w", &["g1f3", "b1c3", "a1b1"], None),
        Scripted::moves("b", &["g8f6", "b8c6", "a8b8"], None),
        &config,
    );
    assert_eq!(
        (r.result, r.termination, r.plies),
        (GameResult::Draw, Termination::MaxMoves, 4)
    );
}

#[test]
fn player_failures_lose() {
    let config = off(TimeControl::Nodes(1));
    for (error, termination) in [
        (PlayerError::Crash("gone".into()), Termination::Crash),
        (
            PlayerError::Timeout(Duration::from_secs(1)),
            Termination::Timeout,
        ),
        (
            PlayerError::IllegalMove("e2e5".into()),
            Termination::IllegalMove,
        ),
    ] {
        let w = Scripted::moves("w", &["e2e4"], None);
        let b = Scripted::new("b", vec![Step::Fail(error)]);
        let r = scripted(chess(), chess().start_fen(), w, b, &config);
        assert_eq!(
            (r.result, r.termination, r.plies),
            (GameResult::WhiteWins, termination, 1)
        );
    }
    // An illegal move in the script's own text is refused the same way.
    let r = scripted(
        chess(),
        chess().start_fen(),
        Scripted::moves("w", &["e2e5"], None),
        Scripted::moves("b", &[], None),
        &config,
    );
    assert_eq!(
        (r.result, r.termination),
        (GameResult::BlackWins, Termination::IllegalMove)
    );
    // Failing before the first move.
    let mut w = Scripted::moves("w", &["e2e4"], None);
    w.new_game_error = Some(PlayerError::Timeout(Duration::from_secs(1)));
    let r = scripted(
        chess(),
        chess().start_fen(),
        w,
        Scripted::moves("b", &[], None),
        &config,
    );
    assert_eq!(
        (r.result, r.termination, r.plies),
        (GameResult::BlackWins, Termination::Timeout, 0)
    );
}

#[test]
fn flag_fall_loses_unless_the_opponent_cannot_mate() {
    let config = off(TimeControl::Clock {
        base: Duration::from_secs(1),
        inc: Duration::ZERO,
    });
    let slow = || Scripted::new("w", vec![Step::Move("e2e4", None, Duration::from_secs(2))]);
    let r = scripted(
        chess(),
        chess().start_fen(),
        slow(),
        Scripted::moves("b", &[], None),
        &config,
    );
    assert_eq!(
        (r.result, r.termination, r.plies),
        (GameResult::BlackWins, Termination::TimeForfeit, 0)
    );
    // Black has a lone king: White's flag fall is a draw.
    let r = scripted(
        chess(),
        "8/8/8/4k3/8/8/3P4/3K4 w - - 0 1",
        Scripted::new("w", vec![Step::Move("d2d4", None, Duration::from_secs(2))]),
        Scripted::moves("b", &[], None),
        &config,
    );
    assert_eq!(
        (r.result, r.termination),
        (GameResult::Draw, Termination::TimeForfeit)
    );
    // A player that gives up waiting under a clock has lost on time too.
    let r = scripted(
        chess(),
        chess().start_fen(),
        Scripted::new(
            "w",
            vec![Step::Fail(PlayerError::Timeout(Duration::from_secs(1)))],
        ),
        Scripted::moves("b", &[], None),
        &config,
    );
    assert_eq!(
        (r.result, r.termination),
        (GameResult::BlackWins, Termination::TimeForfeit)
    );
    // Time within the clock is spent and the increment added.
    let config = off(TimeControl::Clock {
        base: Duration::from_millis(1000),
        inc: Duration::from_millis(100),
    });
    let w = Scripted::new(
        "w",
        vec![
            Step::Move("g1f3", None, Duration::from_millis(600)),
            Step::Move("f3g1", None, Duration::from_millis(600)),
        ],
    );
    let r = scripted(
        chess(),
        chess().start_fen(),
        w,
        Scripted::moves("b", &["g8f6"], None),
        &config,
    );
    // 1000 - 600 + 100 = 500 ms left: the second 600 ms move oversteps it (margin 50 ms).
    assert_eq!(
        (r.result, r.termination, r.plies),
        (GameResult::BlackWins, Termination::TimeForfeit, 2)
    );
}

#[test]
fn castling_facts_and_san_in_latte() {
    let rules = Rules::parse("latte", Some("both")).expect("rules");
    let mut config = off(TimeControl::Nodes(1));
    config.adjudication.max_moves = Some(1);
    let r = scripted(
        rules,
        "rr2k1rr/pppppppp/8/8/8/8/PPPPPP1P/RR2K1RR w KQGBkqgb - 0 1",
        Scripted::moves("w", &["e1g1l"], Some(0)),
        Scripted::moves("b", &["e8c8t"], Some(0)),
        &config,
    );
    assert_eq!(r.moves[0].san, "O-O-L");
    assert_eq!(r.moves[1].san, "O-O-O-R");
    assert_eq!(r.castlings.len(), 2);
    assert_eq!(
        (
            r.castlings[0].side,
            r.castlings[0].kind.as_str(),
            r.castlings[0].ply
        ),
        (Side::White, "luft-king", 1)
    );
    assert_eq!(
        (
            r.castlings[1].side,
            r.castlings[1].kind.as_str(),
            r.castlings[1].ply,
            r.castlings[1].move_number
        ),
        (Side::Black, "tworooks-queen", 2, 1)
    );
    let study = r.study_record("both");
    assert_eq!(study.castlings.len(), 2);
    assert_eq!(study.termination, "max-moves");
}

#[test]
fn secutor_games_run_in_process() {
    let rules = Rules::parse("secutor", None).expect("rules");
    let spec = worker::pair::PairSpec {
        rules,
        opening_fen: rules.start_fen().to_string(),
        players: [PlayerSpec::internal("a"), PlayerSpec::internal("b")],
        game: GameConfig {
            adjudication: Adjudication {
                max_moves: Some(15),
                ..Adjudication::default()
            },
            ..GameConfig::new(TimeControl::Nodes(300))
        },
        pair_index: 0,
        seed: 1,
        pgn: Some(worker::pgn::PgnOptions::default()),
    };
    let pair = worker::pair::play_pair(&spec).expect("pair");
    for g in &pair.games {
        assert!(g.plies <= 30 && g.plies > 0);
        assert!(!g.termination.is_failure());
    }
    // Both games replay from the PGN under Secutor's rules.
    let games = worker::pgn::read(pair.pgn.as_deref().expect("pgn")).expect("readable");
    assert_eq!(games.len(), 2);
    for (i, g) in games.iter().enumerate() {
        let replay = g.replay(i + 1).expect("replays");
        let ours: Vec<&str> = pair.games[i].moves.iter().map(|m| m.uci.as_str()).collect();
        assert_eq!(replay.uci, ours);
    }
}
