//! The `coordinator stats` commands, run as a user would.

use std::path::PathBuf;
use std::process::{Command, Output};

fn coordinator(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_coordinator"))
        .args(args)
        .output()
        .expect("the coordinator binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn vectors_file() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../stats/tests/data/fishtest_vectors.json")
}

/// A scratch file unique to this test process.
fn scratch(name: &str, contents: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("coordinator-test-{}-{name}", std::process::id()));
    std::fs::write(&path, contents).expect("temp file");
    path
}

/// Bad input: exit status 2 and an `error:` line that mentions `needle`.
fn assert_bad_input(args: &[&str], needle: &str) {
    let o = coordinator(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.starts_with("error:"), "{args:?}: {err}");
    assert!(
        err.contains(needle),
        "{args:?}: expected '{needle}' in: {err}"
    );
    assert!(stdout(&o).is_empty(), "{args:?} printed to stdout");
}

#[test]
fn elo_from_wdl_is_human_readable() {
    let o = coordinator(&["stats", "elo", "--wdl", "5,4,3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("Games        : 12 (W 5, D 4, L 3"), "{out}");
    assert!(out.contains("Elo          : 58.45 ± 176.67"), "{out}");
    assert!(out.contains("LOS"), "{out}");
    assert!(out.contains("nElo"), "{out}");
    assert!(!out.contains("NaN") && !out.contains("inf"), "{out}");
}

#[test]
fn elo_json_matches_the_library() {
    let o = coordinator(&[
        "stats",
        "elo",
        "--ptnml",
        "39,2226,31451,2412,40",
        "--elo0",
        "0",
        "--elo1",
        "2",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("valid JSON");
    let results = stats::Results::Pentanomial(stats::Pentanomial([39, 2226, 31451, 2412, 40]));
    let elo = stats::logistic_elo(&results).unwrap();
    let params = stats::SprtParams::new(0.05, 0.05, 0.0, 2.0, stats::EloModel::Normalized).unwrap();
    assert_eq!(v["elo"]["elo"].as_f64(), Some(elo.elo));
    assert_eq!(v["elo"]["los"].as_f64(), Some(elo.los));
    assert_eq!(
        v["sprt"]["llr"].as_f64(),
        Some(params.llr(&results).unwrap())
    );
    assert_eq!(v["sprt"]["state"], "continue");
    assert_eq!(v["sprt"]["model"], "normalized");
    assert!(v["sprt"]["sprt_elo"]["elo"].is_number());
    assert_eq!(v["input"]["pairs"], 36168);
}

#[test]
fn elo_accepts_negative_bounds_and_logistic_model() {
    let o = coordinator(&[
        "stats",
        "elo",
        "--wdl",
        "700,200,100",
        "--elo0",
        "-1.75",
        "--elo1",
        "0.25",
        "--model",
        "logistic",
        "--alpha",
        "0.1",
        "--beta",
        "0.1",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["sprt"]["state"], "accepted");
    assert_eq!(v["sprt"]["model"], "logistic");
    assert_eq!(v["sprt"]["elo0"].as_f64(), Some(-1.75));
}

#[test]
fn degenerate_results_never_print_nan() {
    for args in [
        [
            "stats", "elo", "--wdl", "20,0,0", "--elo0", "0", "--elo1", "2",
        ],
        [
            "stats", "elo", "--wdl", "0,1000,0", "--elo0", "0", "--elo1", "2",
        ],
        [
            "stats", "elo", "--wdl", "0,0,20", "--elo0", "0", "--elo1", "2",
        ],
    ] {
        let o = coordinator(&args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        let out = stdout(&o).to_lowercase();
        assert!(
            !out.contains("nan") && !out.contains("inf"),
            "{args:?}: {out}"
        );
    }
    let o = coordinator(&[
        "stats",
        "elo",
        "--ptnml",
        "0,100000,0,0,0",
        "--elo0",
        "0",
        "--elo1",
        "2",
    ]);
    assert!(o.status.success());
    assert!(stdout(&o).contains("not computable"), "{}", stdout(&o));
}

#[test]
fn check_passes_every_shared_vector() {
    let file = vectors_file();
    let o = coordinator(&["stats", "check", file.to_str().unwrap()]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    let last = out.lines().last().unwrap_or_default();
    assert!(last.ends_with(" passed, 0 failed"), "{last}");
    assert!(!last.starts_with("0 passed"), "{last}");
}

#[test]
fn check_reports_each_mismatch_and_fails() {
    let text = std::fs::read_to_string(vectors_file()).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let want = v["vectors"][0]["elo"]["los"].as_f64().unwrap();
    v["vectors"][0]["elo"]["los"] = serde_json::json!(want + 1e-6);
    v["vectors"][1]["sprt"]["llr"][2]["state"] = serde_json::json!("accepted");
    let n = v["vectors"].as_array().unwrap().len();
    let path = scratch("tampered.json", &v.to_string());
    let o = coordinator(&["stats", "check", path.to_str().unwrap()]);
    let _ = std::fs::remove_file(&path);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("MISMATCH") && out.contains("vectors[0].elo.los"),
        "{out}"
    );
    assert!(out.contains("vectors[1].sprt.llr[2].state"), "{out}");
    assert_eq!(
        out.lines().last(),
        Some(format!("{} passed, 2 failed", n - 2).as_str())
    );
    // The same error passes a looser tolerance.
    let path = scratch("tampered-los.json", &{
        v["vectors"][1]["sprt"]["llr"][2]["state"] = serde_json::json!("continue");
        v.to_string()
    });
    let o = coordinator(&[
        "stats",
        "check",
        "--tolerance",
        "1e-5",
        path.to_str().unwrap(),
    ]);
    let _ = std::fs::remove_file(&path);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

#[test]
fn malformed_wdl_is_refused() {
    assert_bad_input(&["stats", "elo", "--wdl", "1,x,3"], "not a whole number");
}

#[test]
fn negative_counts_are_refused() {
    assert_bad_input(&["stats", "elo", "--wdl", "1,-2,3"], "negative");
    assert_bad_input(&["stats", "elo", "--wdl", "-1,2,3"], "negative");
    assert_bad_input(&["stats", "elo", "--ptnml=1,2,-3,4,5"], "negative");
}

#[test]
fn wrong_count_of_numbers_is_refused() {
    assert_bad_input(&["stats", "elo", "--wdl", "1,2"], "expected 3");
    assert_bad_input(&["stats", "elo", "--wdl", "1,2,3,4"], "expected 3");
    assert_bad_input(&["stats", "elo", "--ptnml", "1,2,3"], "expected 5");
}

#[test]
fn no_games_is_refused() {
    assert_bad_input(&["stats", "elo", "--wdl", "0,0,0"], "no games");
}

#[test]
fn bad_sprt_settings_are_refused() {
    assert_bad_input(&["stats", "elo", "--wdl", "1,2,3", "--elo0", "0"], "--elo1");
    assert_bad_input(
        &[
            "stats", "elo", "--wdl", "1,2,3", "--elo0", "2", "--elo1", "0",
        ],
        "elo0 must be smaller",
    );
    assert_bad_input(
        &[
            "stats", "elo", "--wdl", "1,2,3", "--elo0", "0", "--elo1", "2", "--alpha", "1.5",
        ],
        "between 0 and 1",
    );
    assert_bad_input(
        &[
            "stats", "elo", "--wdl", "1,2,3", "--elo0", "nan", "--elo1", "2",
        ],
        "not a finite number",
    );
    assert_bad_input(
        &["stats", "elo", "--wdl", "1,2,3", "--model", "bayes"],
        "--model",
    );
    assert_bad_input(
        &["stats", "elo", "--wdl", "1,2,3", "--ptnml", "1,1,1,1,1"],
        "cannot be used with",
    );
}

#[test]
fn missing_file_is_refused() {
    assert_bad_input(
        &["stats", "check", "/nonexistent/vectors.json"],
        "cannot read '/nonexistent/vectors.json'",
    );
}

#[test]
fn malformed_json_is_refused() {
    let path = scratch("malformed.json", "{\"vectors\": [");
    let shown = path.to_str().unwrap().to_string();
    assert_bad_input(&["stats", "check", &shown], "malformed JSON");
    let _ = std::fs::remove_file(&path);
    let path = scratch("not-vectors.json", "{\"something\": 1}");
    let shown = path.to_str().unwrap().to_string();
    assert_bad_input(&["stats", "check", &shown], "no \"vectors\" array");
    let _ = std::fs::remove_file(&path);
}

#[test]
fn check_needs_a_file() {
    assert_bad_input(&["stats", "check"], "FILE");
}
