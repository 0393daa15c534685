//! Property tests over random playouts in every variant and rule-set: make/unmake, keys and
//! the evaluation's incremental sums, FEN and SAN round trips, and legality by an independent
//! brute-force check.

use engine::dispatch::{with_search_position, WithSearchPosition};
use engine::eval::SearchPosition;
use engine::notation::parse_uci;
use engine::san::{parse_san, to_san};
use engine::{Rules, Ruleset, Variant};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

fn all_rules() -> Vec<Rules> {
    Variant::ALL
        .into_iter()
        .flat_map(|v| {
            v.rulesets()
                .iter()
                .map(move |&r| Rules::new(v, r).expect("listed rule-set"))
        })
        .collect()
}

/// Plays `plies` random legal moves (castling preferred when available, to reach the rare
/// castling states) and checks every invariant at every node on the way.
struct Playout {
    seed: u64,
    plies: usize,
}

impl WithSearchPosition for Playout {
    type Output = Result<(), TestCaseError>;
    fn run<P: SearchPosition>(self, rules: Rules) -> Self::Output {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(self.seed);
        let mut pos = P::startpos(rules).map_err(|e| TestCaseError::fail(e.to_string()))?;
        for ply in 0..self.plies {
            let fen = pos.to_fen();
            let ctx = || format!("{rules} ply {ply} fen {fen}");
            prop_assert_eq!(
                pos.key(),
                pos.recompute_key(),
                "incremental key differs: {}",
                ctx()
            );
            prop_assert_eq!(
                pos.eval_sums(),
                pos.recount_eval_sums(),
                "incremental evaluation sums differ: {}",
                ctx()
            );
            let reread = P::from_fen(rules, &fen)
                .map_err(|e| TestCaseError::fail(format!("{e}: {}", ctx())))?;
            prop_assert_eq!(&reread, &pos, "FEN round trip: {}", ctx());
            prop_assert_eq!(
                pos.in_check(),
                pos.king_attacked_slow(pos.turn()),
                "in_check: {}",
                ctx()
            );

            let moves = pos.legal_move_list();
            let mut tactical = engine::MoveList::new();
            pos.tactical_moves(&mut tactical);
            let mut expected: Vec<_> = moves
                .iter()
                .copied()
                .filter(|&m| {
                    let i = pos.move_info(m);
                    i.capture.is_some() || i.promotion.is_some()
                })
                .collect();
            let mut got: Vec<_> = tactical.to_vec();
            let key = |m: &P::Move| format!("{m:?}");
            expected.sort_by_key(key);
            got.sort_by_key(key);
            prop_assert_eq!(got, expected, "tactical moves: {}", ctx());
            for &mv in &moves {
                let before = pos.clone();
                let san = to_san(&pos, mv);
                prop_assert_eq!(
                    parse_san(&pos, &san),
                    Ok(mv),
                    "SAN {} round trip: {}",
                    san,
                    ctx()
                );
                let uci = pos.move_info(mv).uci();
                prop_assert_eq!(
                    parse_uci(&pos, &uci),
                    Ok(mv),
                    "UCI {} round trip: {}",
                    uci,
                    ctx()
                );
                let mover = pos.turn();
                let undo = pos.make_move(mv);
                prop_assert!(
                    !pos.king_attacked_slow(mover),
                    "{} leaves the king attacked: {}",
                    uci,
                    fen
                );
                prop_assert_eq!(pos.key(), pos.recompute_key(), "key after {}: {}", uci, fen);
                prop_assert_eq!(
                    pos.eval_sums(),
                    pos.recount_eval_sums(),
                    "evaluation sums after {}: {}",
                    uci,
                    fen
                );
                pos.unmake_move(mv, undo);
                prop_assert_eq!(&pos, &before, "unmake of {} does not restore: {}", uci, fen);
            }
            if moves.is_empty() {
                break;
            }
            let castles: Vec<_> = moves
                .iter()
                .copied()
                .filter(|&m| pos.move_info(m).castle.is_some())
                .collect();
            let mv = if !castles.is_empty() && rng.gen_bool(0.7) {
                castles[rng.gen_range(0..castles.len())]
            } else {
                moves[rng.gen_range(0..moves.len())]
            };
            pos.make_move(mv);
        }
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 320, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_playouts_keep_every_invariant(rules_index in 0usize..7, seed in any::<u64>(), plies in 1usize..160) {
        let rules = all_rules()[rules_index];
        with_search_position(rules, Playout { seed, plies })?;
    }
}

#[test]
fn every_rule_set_is_covered() {
    assert_eq!(all_rules().len(), 7);
    assert!(all_rules().iter().any(|r| r.ruleset() == Ruleset::Both));
}
