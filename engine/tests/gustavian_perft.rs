//! Perft of the Gustavian board against `tests/data/perft/secutor.jsonl`.
//!
//! Every line up to [`FAST_LIMIT`] nodes runs in `perft_secutor_lines`; the two depth-6 lines of
//! the start position (122 million nodes each) run only in the ignored test
//! `perft_secutor_deep_lines` (`cargo test --release -- --ignored`).

use std::collections::BTreeMap;

use engine::gustavian::Position as Gustavian;
use engine::perft::{divide, perft};
use engine::{Position, Rules};
use serde_json::Value;

/// Lines with more nodes than this only run in the ignored slow test.
const FAST_LIMIT: u64 = 5_000_000;

/// One line of the data file.
struct Line {
    id: String,
    ruleset: String,
    fen: String,
    depth: u32,
    nodes: u64,
    divide: Option<BTreeMap<String, u64>>,
}

fn lines() -> Vec<Line> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/perft/secutor.jsonl"
    );
    let text = std::fs::read_to_string(path).expect("read secutor.jsonl");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("valid JSON line");
            let field = |k: &str| {
                v[k].as_str()
                    .unwrap_or_else(|| panic!("field {k} in {l}"))
                    .to_string()
            };
            Line {
                id: field("id"),
                ruleset: field("ruleset"),
                fen: field("fen"),
                depth: v["depth"].as_u64().expect("depth") as u32,
                nodes: v["nodes"].as_u64().expect("nodes"),
                divide: v["divide"].as_object().map(|m| {
                    m.iter()
                        .map(|(k, n)| (k.clone(), n.as_u64().expect("divide count")))
                        .collect()
                }),
            }
        })
        .collect()
}

/// Runs one line; returns a report of the mismatch, if any.
fn check(line: &Line) -> Option<String> {
    let rules = Rules::parse("secutor", Some(&line.ruleset)).expect("rules");
    let mut pos = match Gustavian::from_fen(rules, &line.fen) {
        Ok(p) => p,
        Err(e) => {
            return Some(format!(
                "{} {} {}: FEN refused: {e}",
                line.id, line.ruleset, line.fen
            ))
        }
    };
    let got = perft(&mut pos, line.depth);
    if got == line.nodes {
        return None;
    }
    let mut report = format!(
        "id {} ruleset {} fen {} depth {}: expected {}, got {}",
        line.id, line.ruleset, line.fen, line.depth, line.nodes, got
    );
    if let Some(expected) = &line.divide {
        let ours: BTreeMap<String, u64> = divide(&mut pos, line.depth).into_iter().collect();
        for (mv, n) in expected {
            match ours.get(mv) {
                Some(m) if m == n => {}
                Some(m) => report.push_str(&format!("\n  {mv}: expected {n}, got {m}")),
                None => report.push_str(&format!("\n  {mv}: expected {n}, move missing")),
            }
        }
        for (mv, m) in &ours {
            if !expected.contains_key(mv) {
                report.push_str(&format!("\n  {mv}: not expected, got {m}"));
            }
        }
    }
    Some(report)
}

fn run(filter: impl Fn(&Line) -> bool) {
    let selected: Vec<Line> = lines().into_iter().filter(|l| filter(l)).collect();
    assert!(!selected.is_empty(), "no perft line selected");
    let failures: Vec<String> = selected.iter().filter_map(check).collect();
    assert!(
        failures.is_empty(),
        "{} perft line(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn perft_secutor_lines() {
    run(|l| l.nodes <= FAST_LIMIT);
}

#[test]
#[ignore = "122 million nodes per line; run with --ignored in release mode"]
fn perft_secutor_deep_lines() {
    run(|l| l.nodes > FAST_LIMIT);
}

/// Prints the perft speed of the Secutor start at depth 5 (`--ignored --nocapture`, release).
#[test]
#[ignore = "benchmark; run with --release --ignored --nocapture"]
fn perft_speed_startpos_depth5() {
    let rules = Rules::parse("secutor", None).expect("rules");
    let mut pos = Gustavian::startpos(rules).expect("start position");
    let start = std::time::Instant::now();
    let nodes = perft(&mut pos, 5);
    let secs = start.elapsed().as_secs_f64();
    assert_eq!(nodes, 4_965_755);
    println!(
        "secutor startpos depth 5: {nodes} nodes in {secs:.3} s = {:.1} Mnps",
        nodes as f64 / secs / 1e6
    );
}
