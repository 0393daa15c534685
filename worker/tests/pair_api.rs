//! The cluster's entry point: one pair from a tokio task through `spawn_blocking`, returning a
//! plain serialisable result.

use engine::Rules;
use worker::limits::TimeControl;
use worker::pair::{play_pair, PairSpec};
use worker::player::PlayerSpec;
use worker::record::PairResult;
use worker::runner::GameConfig;

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn a_pair_from_spawn_blocking_serialises() {
    let rules = Rules::parse("latte", Some("tworooks")).expect("rules");
    let mut tuned = PlayerSpec::internal("tuned");
    if let PlayerSpec::Internal(i) = &mut tuned {
        i.params.set("Tempo", 30).expect("in range");
    }
    let spec = PairSpec {
        rules,
        opening_fen: worker::book::Book::builtin(rules).expect("book").positions[7].clone(),
        players: [tuned, PlayerSpec::internal("base")],
        game: GameConfig::new(TimeControl::Nodes(300)),
        pair_index: 42,
        seed: 9,
        pgn: None,
    };
    let first = tokio::task::spawn_blocking({
        let spec = spec.clone();
        move || play_pair(&spec)
    })
    .await
    .expect("no panic")
    .expect("pair");
    assert_eq!((first.pair_index, first.seed), (42, 9));
    assert_eq!(
        (first.variant.as_str(), first.ruleset.as_str()),
        ("latte", "tworooks")
    );
    assert_eq!(first.games[0].white, "tuned");
    assert_eq!(first.games[1].black, "tuned");
    let json = serde_json::to_string(&first).expect("serialises");
    let back: PairResult = serde_json::from_str(&json).expect("deserialises");
    assert_eq!(back, first);
    assert!(first.score().half_points() <= 4);
    let study = first.study_records();
    assert_eq!(study[0].ruleset, "tworooks");
    // Deterministic at fixed nodes: the same pair again gives the same games.
    let again = tokio::task::spawn_blocking(move || play_pair(&spec))
        .await
        .expect("no panic")
        .expect("pair");
    let untimed = |mut p: PairResult| {
        for g in &mut p.games {
            g.moves.iter_mut().for_each(|m| m.time_ms = 0);
        }
        p
    };
    assert!(
        untimed(again) == untimed(first),
        "the same pair twice differs"
    );
}
