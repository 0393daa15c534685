//! The bench signature is deterministic; the EPD runner scores a suite.

use std::process::Command;

use engine::params::Params;

#[test]
fn bench_signature_is_stable_within_a_build() {
    let a: Vec<u64> = engine::bench::run(5, &Params::default())
        .expect("bench")
        .iter()
        .map(|l| l.nodes)
        .collect();
    let b: Vec<u64> = engine::bench::run(5, &Params::default())
        .expect("bench")
        .iter()
        .map(|l| l.nodes)
        .collect();
    assert_eq!(a, b);
    assert_eq!(a.len(), engine::bench::POSITIONS.len());
}

/// With helpers (UCI `Threads`) every position is still searched to the depth by the leader,
/// and the helpers' nodes are counted beside its own.
#[test]
fn bench_with_threads_counts_every_thread() {
    let lines = engine::bench::run_threads(6, &Params::default(), None, 3).expect("bench");
    assert_eq!(lines.len(), engine::bench::POSITIONS.len());
    for l in &lines {
        assert!(l.nodes > 0 && l.all_nodes > l.nodes, "{l:?}");
        assert!(l.wall > std::time::Duration::ZERO);
    }
}

/// One variant's bench is that variant's lines of the whole bench, node for node; an unknown
/// variant is refused by name.
#[test]
fn bench_of_one_variant_is_its_lines_of_the_whole() {
    use engine::Variant;
    let params = Params::default();
    let all = engine::bench::run(5, &params).expect("bench");
    for variant in [Variant::Chess, Variant::Latte, Variant::Secutor] {
        let only = engine::bench::run_variant(5, &params, Some(variant)).expect("bench");
        let want: Vec<(String, u64)> = all
            .iter()
            .filter(|l| l.rules.variant() == variant)
            .map(|l| (l.rules.to_string(), l.nodes))
            .collect();
        let got: Vec<(String, u64)> = only
            .iter()
            .map(|l| (l.rules.to_string(), l.nodes))
            .collect();
        assert!(!got.is_empty(), "{variant:?} has bench positions");
        assert_eq!(got, want, "{variant:?}");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(["bench", "1", "--variant", "chss"])
        .output()
        .expect("runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("chss"), "{err}");
}

#[test]
fn epd_runner_solves_easy_tactics_at_fixed_nodes() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/epd/wac.epd");
    let text = std::fs::read_to_string(&dir).expect("WAC copy");
    let first: String = text.lines().take(12).map(|l| format!("{l}\n")).collect();
    let tmp = std::env::temp_dir().join(format!("wac12-{}.epd", std::process::id()));
    std::fs::write(&tmp, first).expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_engine"))
        .args([
            "epd",
            &tmp.to_string_lossy(),
            "--nodes",
            // 200,000 left the count at 10 exactly, so any evaluation change that moved one
            // search was a failure: chess's learned square table (+48.5 Elo by SPRT) finds
            // WAC.011's Bxc6 at depth 14, past 200,000 nodes. The table read from the king's
            // wing (+29.7 by SPRT) finds it past 500,000 (9 of 12 there); at 1,000,000 it
            // solves 11, missing WAC.002 (missed at every budget tried, up to 2,000,000).
            "1000000",
            "--threads",
            "2",
        ])
        .output()
        .expect("runs");
    std::fs::remove_file(&tmp).ok();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap_or_default().to_string();
    let solved: usize = last
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .expect("solved count");
    assert!(last.ends_with("/ 12"), "{last}");
    // WAC 1-12 are short tactics; a working search finds nearly all of them.
    assert!(solved >= 10, "{stdout}");
}

#[test]
fn epd_reports_bad_input() {
    let tmp = std::env::temp_dir().join(format!("bad-{}.epd", std::process::id()));
    std::fs::write(&tmp, "8/8/8/8 w - - bm e4;\n").expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(["epd", &tmp.to_string_lossy(), "--nodes", "10"])
        .output()
        .expect("runs");
    std::fs::remove_file(&tmp).ok();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 1"));
    let out = Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(["epd", "/nonexistent.epd"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
}
