//! Search behaviour: mates are found and scored, results are deterministic at fixed nodes and
//! depth, draws are recognised, every variant searches legal moves.

use engine::board8::Board;
use engine::dispatch::{with_search_position, WithSearchPosition};
use engine::eval::SearchPosition;
use engine::params::Params;
use engine::search::{Features, Limits, Score, SearchResult, Searcher};
use engine::{Game, Position, Rules, Variant};

fn chess() -> Rules {
    Rules::default_for(Variant::Chess)
}

fn search_fen(fen: &str, limits: Limits) -> (Board, SearchResult<engine::board8::Move>) {
    let pos = Board::from_fen(chess(), fen).expect("valid");
    let mut s = Searcher::<Board>::new(8, Params::default());
    let r = s.search(&pos, &[], &limits, |_| {});
    (pos, r)
}

fn depth(d: u32) -> Limits {
    Limits {
        depth: Some(d),
        ..Limits::default()
    }
}

#[test]
fn finds_mate_in_one_and_scores_it() {
    let (pos, r) = search_fen("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", depth(4));
    assert_eq!(pos.move_info(r.best.expect("a move")).uci(), "a1a8");
    assert_eq!(Score::from_internal(r.score), Score::Mate(1));
}

#[test]
fn finds_mate_in_two() {
    // 1.Kc7 Ka7 2.Ra1# or 1.Kb6 Kb8 2.Rh8# mate in two; no mate in one (a7 is free).
    // Once alpha is a mate score nothing is pruned: futility and late-move pruning would skip
    // the quiet mating rook checks, and the search would settle for a longer mate.
    let (_, r) = search_fen("k7/8/2K5/8/8/8/8/7R w - - 0 1", depth(12));
    assert_eq!(Score::from_internal(r.score), Score::Mate(2), "{r:?}");
}

#[test]
fn wins_material_in_a_simple_tactic() {
    // The knight fork Nc7+ wins the rook on a8.
    let (pos, r) = search_fen("r3k3/8/8/1N6/8/8/8/4K3 w - - 0 1", depth(5));
    assert_eq!(pos.move_info(r.best.expect("move")).uci(), "b5c7");
}

#[test]
fn stalemate_and_repetition_are_draws() {
    let (_, r) = search_fen("7k/5Q2/8/8/8/8/8/K7 w - - 0 1", depth(4));
    // White must avoid Qg6?? / Qf8+ traps: the score stays a big plus, not a draw or loss.
    assert!(r.score > 500, "{}", r.score);
    // Repetition: Black is a queen down, but the shuffle Rb8 Qe1 Ra8 Qd1 has just returned to
    // the starting position, so Rb8 repeats a position of the game: the search must score that
    // as a draw (exactly 0). The same position searched without its history is lost.
    let fen = "r5k1/5ppp/8/8/8/8/2R2PPP/3Q2K1 b - - 0 1";
    let (_, fresh) = search_fen(fen, depth(4));
    assert!(fresh.score < -500, "no history: {}", fresh.score);
    let mut g: Game<Board> = Game::from_fen(chess(), fen).expect("valid");
    for m in ["a8b8", "d1e1", "b8a8", "e1d1"] {
        g.play_uci(m).expect("legal");
    }
    assert_eq!(
        g.position().key(),
        Board::from_fen(chess(), fen).expect("valid").key()
    );
    let mut s = Searcher::<Board>::new(8, Params::default());
    let r = s.search(g.position(), g.history_keys(), &depth(4), |_| {});
    assert_eq!(Score::from_internal(r.score), Score::Cp(0), "{r:?}");
}

#[test]
fn fixed_nodes_and_depth_are_deterministic() {
    let fen = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
    for limits in [
        depth(7),
        Limits {
            nodes: Some(30_000),
            ..Limits::default()
        },
    ] {
        let (_, a) = search_fen(fen, limits.clone());
        let (_, b) = search_fen(fen, limits.clone());
        assert_eq!(a.best, b.best);
        assert_eq!(a.nodes, b.nodes);
        assert_eq!(a.score, b.score);
    }
    // A node limit is honoured up to the last check interval.
    let (_, r) = search_fen(
        fen,
        Limits {
            nodes: Some(5_000),
            ..Limits::default()
        },
    );
    assert!(r.nodes <= 5_000 + 2, "{}", r.nodes);
}

#[test]
fn plain_alpha_beta_agrees_on_a_forced_line() {
    let pos = Board::from_fen(chess(), "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1").expect("valid");
    let mut s = Searcher::<Board>::new(1, Params::default());
    s.features = Features::PLAIN;
    let r = s.search(&pos, &[], &depth(3), |_| {});
    assert_eq!(Score::from_internal(r.score), Score::Mate(1));
}

struct SearchStart;

impl WithSearchPosition for SearchStart {
    type Output = ();
    fn run<P: SearchPosition>(self, rules: Rules) {
        let pos = P::startpos(rules).expect("start");
        let mut s = Searcher::<P>::new(8, Params::default());
        let mut infos = 0;
        let r = s.search(&pos, &[], &depth(5), |i| {
            infos += 1;
            assert!(!i.pv.is_empty());
        });
        let best = r.best.expect("a move");
        assert!(pos.legal_move_list().contains(&best), "{rules}");
        assert_eq!(infos, 5, "{rules}");
        assert!(
            r.score.abs() < 200,
            "{rules}: start position score {}",
            r.score
        );
    }
}

#[test]
fn every_variant_searches_from_its_start() {
    for v in Variant::ALL {
        for &r in v.rulesets() {
            with_search_position(Rules::new(v, r).expect("rules"), SearchStart);
        }
    }
}

#[test]
fn a_searcher_plays_the_shapes_of_its_params_as_they_are_when_it_searches() {
    // The searcher lays out the piece-square weights once per search; a worker changes
    // `params` between games (theta+ and theta- in one process), and a stale layout would
    // search with the old shapes.
    let fen = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
    let pos = Board::from_fen(chess(), fen).expect("valid");
    let mut shaped = Params::default();
    shaped.set("PstKnightCentreMg", -25).expect("in range");
    shaped.set("PstPawnRankEg", 20).expect("in range");
    let fresh = Searcher::<Board>::new(8, shaped.clone()).search(&pos, &[], &depth(6), |_| {});
    let mut reused = Searcher::<Board>::new(8, Params::default());
    let before = reused.search(&pos, &[], &depth(6), |_| {});
    reused.new_game();
    reused.params = shaped;
    let after = reused.search(&pos, &[], &depth(6), |_| {});
    assert_eq!((after.nodes, after.score), (fresh.nodes, fresh.score));
    assert_ne!(
        (before.nodes, before.score),
        (fresh.nodes, fresh.score),
        "the shapes must matter"
    );
}

#[test]
fn probcut_keeps_the_tactics_it_could_cut() {
    // ProbCut cuts a node on a capture's reduced search; it must not cut the line that holds
    // the tactic. Searched with and without it, deep enough for ProbCut to act (depth 5 and
    // more), the knight fork stays found. (WAC 1-12 in bench_epd run with every feature on.)
    for probcut in [true, false] {
        let pos = Board::from_fen(chess(), "r3k3/8/8/1N6/8/8/8/4K3 w - - 0 1").expect("valid");
        let mut s = Searcher::<Board>::new(8, Params::default());
        s.features.probcut = probcut;
        let r = s.search(&pos, &[], &depth(8), |_| {});
        let best = pos.move_info(r.best.expect("a move")).uci();
        assert_eq!(best, "b5c7", "probcut {probcut}");
    }
}

/// A searcher handed a network searches with it: the shipped network read back from a file
/// searches exactly as without one (the same nodes, the same move), a changed one otherwise;
/// handing back `None` returns to the position's own network, its cached evaluations gone.
#[test]
fn a_searcher_searches_with_the_network_it_is_handed() {
    use engine::board8::net_file;
    let dir = tempfile::tempdir().expect("temp dir");
    let rules = chess();
    let shipped = engine::board8::builtin_net(rules).expect("chess has a network");
    let mut changed = shipped.clone();
    for row in changed.input.iter_mut().step_by(7) {
        row.iter_mut().for_each(|w| *w /= 2);
    }
    let load = |name: &str, net: &engine::board8::net::Net| {
        let path = dir.path().join(name);
        net_file::write(&path, &net_file::to_bytes(net, Variant::Chess)).expect("written");
        let loaded = net_file::load(&path).expect("loads");
        Board::network(&loaded, rules).expect("chess's")
    };
    let (same, other) = (load("same.net", shipped), load("other.net", &changed));
    let pos = Board::from_fen(
        rules,
        "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
    )
    .expect("valid");
    let run = |network| {
        let mut s = Searcher::<Board>::new(8, Params::default());
        s.set_network(network);
        let r = s.search(&pos, &[], &depth(9), |_| {});
        (r.nodes, r.best)
    };
    let own = run(None);
    assert_eq!(run(Some(same)), own);
    assert_ne!(run(Some(other)).0, own.0);

    let mut s = Searcher::<Board>::new(8, Params::default());
    s.set_network(Some(other));
    let first = s.search(&pos, &[], &depth(9), |_| {}).nodes;
    s.new_game();
    s.set_network(None);
    assert_eq!(s.network(), None);
    assert_ne!(first, own.0);
    assert_eq!(s.search(&pos, &[], &depth(9), |_| {}).nodes, own.0);
}

/// A helper (UCI `Threads`) shares its leader's table: what it searched, the leader finds
/// there (the same depth costs far fewer nodes after it), while a searcher of its own
/// starts from nothing.
#[test]
fn a_helper_searches_into_the_leaders_table() {
    let fen = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
    let pos = Board::from_fen(chess(), fen).expect("valid");
    let mut alone = Searcher::<Board>::new(8, Params::default());
    let fresh = alone.search(&pos, &[], &depth(9), |_| {}).nodes;

    let mut leader = Searcher::<Board>::new(8, Params::default());
    let mut helper = leader.helper();
    let helped = helper.search(&pos, &[], &depth(9), |_| {}).nodes;
    assert_eq!(
        helped, fresh,
        "the helper alone searches as a fresh searcher"
    );
    let after = leader.search(&pos, &[], &depth(9), |_| {}).nodes;
    assert!(
        after * 4 < fresh,
        "{after} nodes after the helper, {fresh} alone"
    );
    // A stranger's table is its own.
    let mut stranger = Searcher::<Board>::new(8, Params::default());
    assert_eq!(stranger.search(&pos, &[], &depth(9), |_| {}).nodes, fresh);
    // A helper's new game forgets its own memory, not the leader's table; the leader's
    // forgets the table.
    helper.new_game();
    assert!(leader.search(&pos, &[], &depth(9), |_| {}).nodes * 4 < fresh);
    leader.new_game();
    helper.new_game();
    assert_eq!(leader.search(&pos, &[], &depth(9), |_| {}).nodes, fresh);
}
