//! The contract of `Position::tactical_moves`: exactly the legal moves that capture or promote,
//! in the order the full legal list has them (so quiescence search, which used to filter that
//! list, searches the same tree). Checked on every board at every perft-suite position, every
//! node two plies below it, and random playouts from it.

use std::collections::BTreeSet;
use std::path::PathBuf;

use engine::dispatch::{with_position, WithPosition};
use engine::suite::parse_records;
use engine::{MoveList, Position, Rules};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The distinct (variant, rule-set, FEN) triples of every perft file.
fn suite_positions() -> BTreeSet<(String, String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/perft");
    let mut out = BTreeSet::new();
    for entry in std::fs::read_dir(&dir).expect("perft data folder") {
        let path = entry.expect("dir entry").path();
        if path.extension().is_none_or(|x| x != "jsonl") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("readable");
        for (_, r) in parse_records(&text).expect("well-formed suite") {
            out.insert((r.variant, r.ruleset, r.fen));
        }
    }
    out
}

/// Panics unless `tactical_moves` equals the filtered legal list, order included.
fn check<P: Position>(pos: &P) {
    let mut legal = MoveList::new();
    pos.legal_moves(&mut legal);
    let expected: Vec<P::Move> = legal
        .iter()
        .copied()
        .filter(|&m| {
            let info = pos.move_info(m);
            info.capture.is_some() || info.promotion.is_some()
        })
        .collect();
    let mut got = MoveList::new();
    pos.tactical_moves(&mut got);
    assert_eq!(got.as_slice(), expected.as_slice(), "{}", pos.to_fen());
}

/// Every node of the tree below `pos` down to `depth` plies.
fn walk<P: Position>(pos: &mut P, depth: u32) {
    check(pos);
    if depth == 0 {
        return;
    }
    for mv in pos.legal_move_list() {
        let undo = pos.make_move(mv);
        walk(pos, depth - 1);
        pos.unmake_move(mv, undo);
    }
}

struct Compare<'a> {
    fen: &'a str,
    seed: u64,
}

impl WithPosition for Compare<'_> {
    type Output = ();
    fn run<P: Position>(self, rules: Rules) {
        let start = P::from_fen(rules, self.fen).expect("suite FEN");
        walk(&mut start.clone(), 2);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(self.seed);
        for _ in 0..20 {
            let mut pos = start.clone();
            for _ in 0..80 {
                check(&pos);
                let moves = pos.legal_move_list();
                if moves.is_empty() {
                    break;
                }
                pos.make_move(moves[rng.gen_range(0..moves.len())]);
            }
        }
    }
}

#[test]
fn tactical_moves_are_the_filtered_legal_moves_in_order() {
    let positions = suite_positions();
    assert!(positions.iter().any(|(v, _, _)| v == "secutor"));
    for (seed, (variant, ruleset, fen)) in positions.iter().enumerate() {
        let rules = Rules::parse(variant, Some(ruleset)).expect("suite rules");
        with_position(
            rules,
            Compare {
                fen,
                seed: seed as u64,
            },
        );
    }
}
