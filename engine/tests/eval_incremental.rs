//! The evaluation's incremental state along random playouts from every perft-suite position,
//! under each record's variant and rule-set (so every variant and rule-set): the sums the
//! boards keep through make and unmake (piece counts, piece-square sums, pawn key) equal a
//! recount from the pieces at every node, after every legal move and after every unmake and
//! null move; and the pawn cache never changes a value: a cache kept warm over the whole
//! playout, and kept while the weights change, evaluates exactly like an empty one. The key
//! predicted before a move (for prefetching) is the key after it for every plain move.

use engine::dispatch::{with_search_position, WithSearchPosition};
use engine::eval::{PawnCache, SearchPosition};
use engine::params::Params;
use engine::{MoveInfo, Role, Rules, SquareName};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Plies of each playout.
const PLIES: usize = 40;

/// Every distinct (rules, FEN) of the perft suites.
fn suite() -> Vec<(Rules, String)> {
    let mut out: Vec<(Rules, String)> = Vec::new();
    for text in [
        include_str!("data/perft/chess.jsonl"),
        include_str!("data/perft/latte.jsonl"),
        include_str!("data/perft/secutor.jsonl"),
    ] {
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let v: serde_json::Value = serde_json::from_str(line).expect("perft record");
            let rules = Rules::parse(
                v["variant"].as_str().expect("variant"),
                v["ruleset"].as_str().filter(|r| !r.is_empty()),
            )
            .expect("known rules");
            let fen = v["fen"].as_str().expect("fen").to_string();
            if !out.iter().any(|(r, f)| *r == rules && *f == fen) {
                out.push((rules, fen));
            }
        }
    }
    out
}

/// Weights unlike the defaults in every term the caches touch: an odd piece-square scale (its
/// division rounds), distinct pawn-structure and material weights.
fn tweaked() -> Params {
    let mut p = Params::default();
    for (name, value) in [
        ("PstScale", 73),
        ("IsolatedPawnMg", 29),
        ("IsolatedPawnEg", 7),
        ("DoubledPawnMg", 17),
        ("DoubledPawnEg", 23),
        ("PassedRank2Mg", 3),
        ("PassedRank3Eg", 19),
        ("PassedRank5Mg", 41),
        ("PassedRank7Eg", 67),
        ("PawnValueMg", 91),
        ("KnightValueEg", 311),
        ("SecutorValueMg", 333),
        ("QueenValueMg", 1011),
    ] {
        p.set(name, value).expect("a valid weight");
    }
    p
}

/// A move whose key [`SearchPosition::key_after`] predicts exactly: no castling, en passant
/// or double step, nothing that changes castling rights (a king or rook moving, a rook
/// taken), no Secutor.
fn plain<S: SquareName>(info: &MoveInfo<S>) -> bool {
    let rights = |r: Role| matches!(r, Role::King | Role::Rook | Role::Secutor);
    info.castle.is_none()
        && !info.en_passant
        && !rights(info.role)
        && !info.capture.is_some_and(rights)
        && (info.role != Role::Pawn || info.from.rank().abs_diff(info.to.rank()) != 2)
}

struct Playout<'a> {
    fen: &'a str,
    seed: u64,
    weights: &'a [Params],
}

impl WithSearchPosition for Playout<'_> {
    type Output = ();

    fn run<P: SearchPosition>(self, rules: Rules) {
        let mut pos = P::from_fen(rules, self.fen).unwrap_or_else(|e| panic!("{}: {e}", self.fen));
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(self.seed);
        let mut warm = PawnCache::new();
        let mut cold = PawnCache::new();
        for ply in 0..PLIES {
            let fen = pos.to_fen();
            let ctx = format!("{rules} ply {ply} {fen}");
            assert_eq!(pos.eval_sums(), pos.recount_eval_sums(), "sums: {ctx}");
            for p in self.weights {
                cold.clear();
                assert_eq!(
                    pos.evaluate(p, &mut warm),
                    pos.evaluate(p, &mut cold),
                    "warm and cold pawn cache: {ctx}"
                );
            }
            if !pos.in_check() {
                let before = pos.clone();
                let undo = pos.make_null();
                assert_eq!(pos.eval_sums(), pos.recount_eval_sums(), "null: {ctx}");
                pos.unmake_null(undo);
                assert_eq!(pos, before, "unmake null: {ctx}");
            }
            let moves = pos.legal_move_list();
            for &mv in &moves {
                let before = pos.clone();
                let info = pos.move_info(mv);
                let uci = info.uci();
                let predicted = pos.key_after(&info);
                let undo = pos.make_move(mv);
                if plain(&info) {
                    assert_eq!(predicted, pos.key(), "key_after {uci}: {ctx}");
                }
                assert_eq!(
                    pos.eval_sums(),
                    pos.recount_eval_sums(),
                    "sums after {uci}: {ctx}"
                );
                pos.unmake_move(mv, undo);
                assert_eq!(pos.eval_sums(), before.eval_sums(), "unmake {uci}: {ctx}");
                assert_eq!(pos, before, "unmake {uci}: {ctx}");
            }
            if moves.is_empty() {
                break;
            }
            pos.make_move(moves[rng.gen_range(0..moves.len())]);
        }
    }
}

#[test]
fn incremental_sums_and_pawn_cache_match_a_recount_in_playouts() {
    let weights = [Params::default(), tweaked()];
    let positions = suite();
    assert!(positions.len() > 200, "{}", positions.len());
    for (i, (rules, fen)) in positions.iter().enumerate() {
        for seed in [i as u64, i as u64 + 10_000] {
            with_search_position(
                *rules,
                Playout {
                    fen,
                    seed,
                    weights: &weights,
                },
            );
        }
    }
}

/// Every variant and rule-set has positions in the suite, so the playouts cover them all.
#[test]
fn the_suite_covers_every_rule_set() {
    let covered: Vec<Rules> = suite().into_iter().map(|(r, _)| r).collect();
    for variant in engine::Variant::ALL {
        for &ruleset in variant.rulesets() {
            let rules = Rules::new(variant, ruleset).expect("listed rule-set");
            assert!(covered.contains(&rules), "{rules} has no perft position");
        }
    }
}
