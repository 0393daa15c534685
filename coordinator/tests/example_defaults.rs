//! A shipped SPSA plan that tunes the built-in engine from where it stands says so ("starts
//! are the engine's defaults"): its result is then compared with the defaults by an SPRT.
//! When a tuning run changes the defaults, such plans must follow: this test reads every
//! example that makes the claim and names each start that has drifted. (Plans that start
//! from detuned values on purpose, to show SPSA recovering them, make no such claim.)

use engine::params::Params;

#[test]
fn builtin_spsa_starts_are_the_engine_defaults() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples");
    let mut checked = 0;
    let mut drifted = Vec::new();
    for entry in std::fs::read_dir(dir).expect("examples directory") {
        let path = entry.expect("directory entry").path();
        if path.extension().is_none_or(|x| x != "toml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("readable example");
        if !text.contains("starts are the engine's defaults") {
            continue;
        }
        let doc: toml::Table = text.parse().expect("example is TOML");
        let Some(toml::Value::Array(runs)) = doc.get("runs") else {
            continue;
        };
        for run in runs {
            let builtin = run
                .get("first")
                .and_then(|f| f.get("engine"))
                .and_then(toml::Value::as_str)
                == Some("builtin");
            let params = run
                .get("spsa")
                .and_then(|s| s.get("params"))
                .and_then(toml::Value::as_str);
            let (true, Some(params)) = (builtin, params) else {
                continue;
            };
            for line in params.lines().map(str::trim).filter(|l| !l.is_empty()) {
                let fields: Vec<&str> = line.split(',').map(str::trim).collect();
                let (_, spec) = Params::spec(fields[0]).unwrap_or_else(|| {
                    panic!("{}: unknown parameter {}", path.display(), fields[0])
                });
                let start: f64 = fields[1].parse().expect("a numeric start");
                if start != f64::from(spec.default) {
                    drifted.push(format!(
                        "{}: {} starts at {start}, the default is {}",
                        path.display(),
                        spec.name,
                        spec.default
                    ));
                }
                checked += 1;
            }
        }
    }
    assert!(
        checked > 0,
        "no SPSA plan of the built-in engine in examples/"
    );
    assert!(drifted.is_empty(), "{}", drifted.join("\n"));
}
