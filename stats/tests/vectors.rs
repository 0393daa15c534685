//! Every shared fishtest vector must be reproduced within the tolerances its README suggests, and
//! a wrong number in a vector must be noticed.

use serde_json::{Number, Value};
use stats::vectors::{check_vectors, Tolerance, Tolerances};

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

/// A number of a vector: its path in the checker's notation (`vectors[3].elo.ci[0]`), its JSON
/// pointer, and whether it is an argument of a fishtest call (inside an `args` object).
struct Leaf {
    path: String,
    pointer: String,
    argument: bool,
}

fn leaves(v: &Value, path: &str, pointer: &str, argument: bool, out: &mut Vec<Leaf>) {
    match v {
        Value::Number(_) => out.push(Leaf {
            path: path.to_string(),
            pointer: pointer.to_string(),
            argument,
        }),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let (path, pointer) = (format!("{path}[{i}]"), format!("{pointer}/{i}"));
                leaves(item, &path, &pointer, argument, out);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                let escaped = key.replace('~', "~0").replace('/', "~1");
                let (path, pointer) = (format!("{path}.{key}"), format!("{pointer}/{escaped}"));
                leaves(item, &path, &pointer, argument || key == "args", out);
            }
        }
        _ => {}
    }
}

/// The tolerance the README gives the figure at `path`: 1e-8 for LLRs, 1e-6 for the rest of
/// the SPRT Elo block, 1e-9 for everything else.
fn readme_tolerance(path: &str, t: &Tolerances) -> Tolerance {
    if path.ends_with(".llr") {
        t.llr
    } else if path.contains(".sprt_elo.") {
        t.sprt_elo
    } else {
        t.general
    }
}

/// `x` moved three times `tol` away (whole numbers, i.e. counts, by one).
fn nudge(x: &Number, tol: Tolerance) -> Value {
    match x.as_i64() {
        Some(n) => Value::from(n + 1),
        None => {
            let f = x.as_f64().expect("a finite number");
            Value::from(f + 3.0 * (tol.abs + tol.rel * f.abs()))
        }
    }
}

#[test]
fn every_number_of_a_vector_can_fail_it() {
    // The file passes (see above); moving any single number of a vector three times its
    // README tolerance away must then make that vector fail. A figure the checker skipped, or
    // compared more loosely than the README says, or an input it ignored, would let it pass.
    // Real-valued arguments of the fishtest calls (inside `args`: alpha, beta, p, the bounds)
    // are left out: while the LLR is far from the SPRT bounds the SPRT Elo hardly depends on
    // alpha, beta or elo0, so that even a 1 % move of them can stay within 1e-6. Counts among
    // the arguments are in.
    let tol = Tolerances::default();
    let text = data("fishtest_vectors.json");
    let root: Value = serde_json::from_str(&text).expect("valid JSON");
    let count = root["vectors"].as_array().expect("a vectors array").len();
    let mut unnoticed = Vec::new();
    let mut nudged = 0;
    for i in 0..count {
        let mut numbers = Vec::new();
        let (path, pointer) = (format!("vectors[{i}]"), format!("/vectors/{i}"));
        leaves(&root["vectors"][i], &path, &pointer, false, &mut numbers);
        for leaf in numbers {
            let Some(Value::Number(x)) = root.pointer(&leaf.pointer) else {
                unreachable!("leaves() returns numbers only")
            };
            if leaf.argument && x.as_i64().is_none() {
                continue;
            }
            let mut changed = root.clone();
            *changed.pointer_mut(&leaf.pointer).expect("the leaf exists") =
                nudge(x, readme_tolerance(&leaf.path, &tol));
            nudged += 1;
            let report = check_vectors(&changed.to_string(), &tol).expect("still well-formed");
            if report.vectors[i].passed() {
                unnoticed.push(leaf.path);
            }
        }
    }
    assert!(nudged > 40 * count, "only {nudged} numbers nudged");
    assert!(
        unnoticed.is_empty(),
        "a vector still passes with one of these numbers moved:\n{}",
        unnoticed.join("\n")
    );
}
