//! Every shared fishtest vector must be reproduced within the tolerances its README suggests.

use stats::vectors::{check_vectors, Tolerances};

fn data(name: &str) -> String {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
}

#[test]
fn all_fishtest_vectors_match_readme_tolerances() {
    let report = check_vectors(&data("fishtest_vectors.json"), &Tolerances::default())
        .expect("the vectors file is well-formed");
    assert!(
        report.file_mismatches.is_empty(),
        "{:?}",
        report.file_mismatches
    );
    assert!(!report.vectors.is_empty());
    let mut failures = Vec::new();
    for v in &report.vectors {
        assert!(
            v.checked > 40,
            "{} checked only {} figures",
            v.id,
            v.checked
        );
        for m in &v.mismatches {
            failures.push(format!("{}: {m}", v.id));
        }
    }
    assert!(failures.is_empty(), "mismatches:\n{}", failures.join("\n"));
}

#[test]
fn margins_are_comfortable() {
    // Report how much of the README tolerance is used; fail only if a vector uses all of it
    // (already covered above) so this doubles as a readable diagnostic with --nocapture.
    let report = check_vectors(&data("fishtest_vectors.json"), &Tolerances::default()).unwrap();
    for v in &report.vectors {
        println!(
            "{:24} checked {:3} worst |diff|/allowed {:.2e}",
            v.id, v.checked, v.worst_ratio
        );
        assert!(v.worst_ratio <= 1.0);
    }
}
