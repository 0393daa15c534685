//! The perft contract: every record of every file in `tests/data/perft/` (copies of the shared
//! reference tables), the largest lines included. Run in release mode, as the README's test
//! command does; on two cores the whole suite takes a few seconds.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use engine::suite::{check_record, parse_records, Record};

fn records() -> Vec<(String, usize, Record)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/perft");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("perft data folder")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 3,
        "expected chess, latte and secutor tables in {}",
        dir.display()
    );
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("readable");
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for (line, r) in parse_records(&text).expect("well-formed suite") {
            out.push((name.clone(), line, r));
        }
    }
    out
}

#[test]
fn every_perft_record_passes() {
    let mut all = records();
    all.sort_by_key(|(_, _, r)| std::cmp::Reverse(r.nodes));
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((file, line, r)) = all.get(i) else {
                    break;
                };
                let checked = check_record(r, *line).expect("record loads");
                if !checked.passed(r) {
                    failures.lock().expect("lock").push(format!(
                        "{file}:{line} {} {} depth {}: expected {}, got {} ({}) diff {:?}",
                        r.id,
                        r.ruleset,
                        r.depth,
                        r.nodes,
                        checked.nodes,
                        r.fen,
                        checked.differences
                    ));
                }
            });
        }
    });
    let failures = failures.into_inner().expect("lock");
    assert!(
        failures.is_empty(),
        "{} of {} records failed:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
    // Every variant and rule-set of the tables was exercised.
    for (variant, ruleset) in [
        ("chess", "normal"),
        ("latte", "normal"),
        ("latte", "luft"),
        ("latte", "tworooks"),
        ("latte", "both"),
        ("secutor", "extended"),
        ("secutor", "orthodox"),
    ] {
        assert!(
            all.iter()
                .any(|(_, _, r)| r.variant == variant && r.ruleset == ruleset),
            "{variant} {ruleset}"
        );
    }
}
