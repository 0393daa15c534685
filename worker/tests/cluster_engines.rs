//! `worker --engine NAME=PATH`: every bad declaration stops the worker before it contacts the
//! coordinator, with exit status 2 and a message naming the problem.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A coordinator address nothing listens on: a declaration that passed would go on to
/// connect and retry, so a worker still running after a while counts as not refused.
const NOWHERE: [&str; 4] = ["--coordinator", "http://127.0.0.1:9", "--token", "t"];

fn worker(extra: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_worker"))
        .args(NOWHERE)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    let start = Instant::now();
    while child.try_wait().expect("waits").is_none() {
        if start.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("{extra:?}: accepted (the worker went on to connect)");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

fn refused(extra: &[&str], needle: &str) {
    let out = worker(extra);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{extra:?}: {stderr}");
    assert!(stderr.contains(needle), "{extra:?}: {stderr}");
}

fn fake() -> &'static str {
    env!("CARGO_BIN_EXE_fake-uci")
}

fn utf8(p: &Path) -> &str {
    p.to_str().expect("utf8 path")
}

#[test]
fn a_declaration_without_equals_sign_is_refused() {
    refused(&["--engine", "stockfish"], "is not NAME=PATH");
    refused(&["--engine", "sf="], "has no path");
}

#[test]
fn bad_names_are_refused() {
    let with = |name: &str| format!("{name}={}", fake());
    refused(&["--engine", &with("sf 16")], "contains ' '");
    refused(&["--engine", &with("sf/16")], "contains '/'");
    refused(&["--engine", &with("")], "must be 1 to 64 bytes");
    refused(
        &["--engine", &with(&"a".repeat(65))],
        "must be 1 to 64 bytes",
    );
    refused(&["--engine", &with("builtin")], "reserved");
}

#[test]
fn a_name_declared_twice_is_refused() {
    let a = format!("sf={}", fake());
    refused(
        &["--engine", &a, "--engine", &a],
        "engine 'sf' is declared twice",
    );
}

#[test]
fn a_missing_or_unusable_file_is_refused() {
    let dir = tempfile::tempdir().expect("dir");
    let missing = dir.path().join("no-such-engine");
    refused(
        &["--engine", &format!("sf={}", utf8(&missing))],
        "no-such-engine",
    );
    refused(
        &["--engine", &format!("sf={}", utf8(dir.path()))],
        "is not a regular file",
    );
    #[cfg(unix)]
    {
        let plain = dir.path().join("plain");
        std::fs::write(&plain, "#!/bin/sh\n").expect("write");
        refused(
            &["--engine", &format!("sf={}", utf8(&plain))],
            "is not executable",
        );
    }
}

#[test]
fn a_label_over_the_limit_is_refused() {
    refused(&["--name", &"n".repeat(65)], "at most 64");
}

#[test]
fn the_flag_is_documented() {
    let out = Command::new(env!("CARGO_BIN_EXE_worker"))
        .arg("--help")
        .output()
        .expect("runs");
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("--engine <NAME=PATH>"), "{help}");
}
