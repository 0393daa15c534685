//! The main job end to end: `coordinator local` on the shipped quickstart plan with a tiny
//! game budget, exactly as the README runs it but scaled down; then the same command again,
//! which must resume (find the finished runs) rather than play anything twice.

use std::path::{Path, PathBuf};
use std::process::Command;

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples")
}

fn local(plan: &Path, state: &Path, extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_coordinator"))
        .arg("local")
        .arg(plan)
        .arg("--state")
        .arg(state)
        .args(["--workers", "2", "--quiet"])
        .args(extra)
        .output()
        .expect("coordinator runs")
}

#[test]
fn every_example_plan_is_valid() {
    let mut n = 0;
    for entry in std::fs::read_dir(examples()).expect("examples folder") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "toml") {
            let text = std::fs::read_to_string(&path).expect("readable");
            coordinator::local::plan::parse(
                &text,
                1.0,
                &coordinator::options_file::plan_dir(&path),
            )
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            n += 1;
        }
    }
    assert!(n >= 4, "quickstart, two studies and an SPRT example");
}

#[test]
fn quickstart_runs_to_a_report_and_resumes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let state = dir.path().join("state");
    let plan = examples().join("quickstart.toml");
    let out = local(&plan, &state, &["--scale", "0.01"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("Tuned (quickstart-tune) against its start"),
        "{stdout}"
    );
    let html = std::fs::read_to_string(state.join("report.html")).expect("html report");
    assert!(html.contains("<svg") && html.contains("quickstart-tune"));
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(state.join("report.json")).expect("json report"),
    )
    .expect("json");
    let runs = json["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 2);
    for r in runs {
        assert_eq!(r["pairs_done"], r["pairs_total"], "{r}");
        let games = r["wins"].as_u64().unwrap_or(0)
            + r["draws"].as_u64().unwrap_or(0)
            + r["losses"].as_u64().unwrap_or(0);
        assert_eq!(
            games,
            2 * r["pairs_done"].as_u64().unwrap_or(0),
            "totals equal the games played: {r}"
        );
    }
    assert_eq!(runs[0]["spsa"].as_array().map(Vec::len), Some(6));
    assert_eq!(runs[1]["tuned_from"], "quickstart-tune");

    // Running it again finds both runs finished: nothing is played twice.
    let again = local(&plan, &state, &["--scale", "0.01"]);
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let json2: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(state.join("report.json")).expect("json report"),
    )
    .expect("json");
    for (a, b) in runs.iter().zip(json2["runs"].as_array().expect("runs")) {
        assert_eq!(a["id"], b["id"]);
        assert_eq!(a["pentanomial"], b["pentanomial"]);
    }
}

#[test]
fn bad_plans_are_reported_with_the_field() {
    let dir = tempfile::tempdir().expect("temp dir");
    let plan = dir.path().join("bad.toml");
    std::fs::write(&plan, "[[runs]]\nname = \"x\"\nkind = \"spsa\"\ngames = 10\n[[runs.variants]]\nvariant = \"shogi\"\n[runs.first]\n").expect("write");
    let out = local(&plan, &dir.path().join("s"), &[]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("runs[0]"), "{stderr}");
    let out = local(&dir.path().join("missing.toml"), &dir.path().join("s"), &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read"));
}

/// Without `--quiet` and with stderr a pipe (as in CI logs), the hidden bar gives way to plain
/// progress lines on stderr; stdout keeps only the report.
#[test]
fn piped_stderr_gets_plain_progress_lines() {
    let dir = tempfile::tempdir().expect("temp dir");
    let plan = dir.path().join("tiny.toml");
    std::fs::write(
        &plan,
        "title = \"tiny\"\n[[runs]]\nname = \"tiny-match\"\nkind = \"match\"\ngames = 4\nseed = 1\n\
         [runs.limits]\nnodes = 200\n[[runs.variants]]\nvariant = \"latte\"\nruleset = \"normal\"\n\
         [runs.first]\nengine = \"builtin\"\n",
    )
    .expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_coordinator"))
        .arg("local")
        .arg(&plan)
        .arg("--state")
        .arg(dir.path().join("state"))
        .args(["--workers", "2"])
        .output()
        .expect("coordinator runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    // The finish line always comes; a line under way only if a poll caught the run unfinished.
    let prefix = "progress: run 1 \"tiny-match\": ";
    let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with(prefix)).collect();
    assert!(
        lines
            .last()
            .is_some_and(|l| l.contains("all pairs played after 4/4 games in ")),
        "{stderr}"
    );
    for l in &lines[..lines.len() - 1] {
        assert!(
            l.contains("/4 games (") && l.contains(" games/s, ETA "),
            "{l}"
        );
    }
    assert!(!stdout.contains("progress:"), "{stdout}");
    assert!(stdout.contains("reports: "), "{stdout}");
}

/// A plan whose second study has an external UCI engine (this workspace's own `engine`
/// binary, declared with `--engine`) play the baseline: the report lines the baseline up
/// across both. Without the declaration, the plan is refused before anything runs.
#[test]
fn an_external_engine_plays_the_baseline_beside_the_builtin() {
    let dir = tempfile::tempdir().expect("temp dir");
    let plan = dir.path().join("engines.toml");
    let run = |name: &str, engine: &str, rulesets: &[&str]| {
        let mut t = format!(
            "[[runs]]\nname = \"{name}\"\nkind = \"study\"\ngames = 24\nseed = 3\n\
             [runs.limits]\nnodes = 200\n"
        );
        for r in rulesets {
            t.push_str(&format!(
                "[[runs.variants]]\nvariant = \"latte\"\nruleset = \"{r}\"\n"
            ));
        }
        t.push_str(&format!(
            "[runs.first]\nengine = \"{engine}\"\n[runs.study]\nbaseline = \"normal\"\n"
        ));
        t
    };
    let text = format!(
        "title = \"engines\"\n{}{}",
        run("ours", "builtin", &["normal", "luft"]),
        run("uci", "ours-uci", &["normal"])
    );
    std::fs::write(&plan, text).expect("write");
    let out = local(&plan, &dir.path().join("refused"), &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("--engine ours-uci=PATH"), "{stderr}");

    let coordinator = Path::new(env!("CARGO_BIN_EXE_coordinator"));
    let engine = coordinator.with_file_name(format!("engine{}", std::env::consts::EXE_SUFFIX));
    assert!(
        engine.is_file(),
        "{} missing: build the workspace",
        engine.display()
    );
    let declared = format!("ours-uci={}", engine.display());
    let out = local(&plan, &dir.path().join("s"), &["--engine", &declared]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("The baseline (normal) in every study"),
        "{stdout}"
    );
    let html = std::fs::read_to_string(dir.path().join("s/report.html")).expect("report.html");
    assert!(html.contains("The baseline (normal) in every study"));
}

/// A run with a clock (`tc`, fishtest's notation) instead of a per-move limit: the lease
/// carries the clock to the workers, which play every game on it. The stored PGNs say so:
/// their `TimeControl` tag is the run's clock, and each move's comment has its thinking time
/// (written only when time decides a game; fixed-node games have none).
#[test]
fn a_clock_run_plays_its_games_on_the_clock() {
    let dir = tempfile::tempdir().expect("temp dir");
    let plan = dir.path().join("clock.toml");
    std::fs::write(
        &plan,
        "title = \"clock\"\n[[runs]]\nname = \"clock-match\"\nkind = \"match\"\ngames = 4\n\
         seed = 1\n[runs.limits]\ntc = \"0.2+0.01\"\nmax_plies = 60\n\
         [[runs.variants]]\nvariant = \"latte\"\nruleset = \"normal\"\n\
         [runs.first]\nengine = \"builtin\"\n",
    )
    .expect("write");
    let state = dir.path().join("state");
    let out = local(&plan, &state, &[]);
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let conn = rusqlite::Connection::open(state.join("cluster.db")).expect("database");
    let mut q = conn
        .prepare("SELECT pgn FROM pair_results WHERE pgn IS NOT NULL ORDER BY pair_index")
        .expect("query");
    let blobs: Vec<Vec<u8>> = q
        .query_map([], |r| r.get(0))
        .expect("rows")
        .collect::<Result<_, _>>()
        .expect("blobs");
    assert_eq!(blobs.len(), 2, "one PGN per pair");
    for gz in &blobs {
        let coordinator::pgn_export::Inflated::Text(text) = coordinator::pgn_export::inflate(gz)
        else {
            panic!("a stored PGN does not inflate");
        };
        let games = worker::pgn::read(&text).expect("readable PGN");
        assert_eq!(games.len(), 2, "{text}");
        for g in &games {
            let tag = g.tags.iter().find(|(k, _)| k == "TimeControl");
            assert_eq!(tag.map(|(_, v)| v.as_str()), Some("0.2+0.01"), "{text}");
            // One thinking time (`0.012s`) per move; a termination comment has none. (A
            // flag can fall on a busy machine: such a game is shorter, still on the clock.)
            let times = g
                .comments
                .iter()
                .flatten()
                .flat_map(|c| c.split_whitespace())
                .filter(|w| {
                    w.strip_suffix('s')
                        .is_some_and(|t| t.parse::<f64>().is_ok())
                })
                .count();
            assert_eq!(times, g.moves.len(), "a move without its time in {text}");
        }
    }
}

/// Stopping a long run early (SIGINT, as Ctrl-C sends) ends with where each run stands:
/// games played and the SPRT's figures so far, not only "interrupted".
#[test]
fn an_interrupted_plan_prints_its_figures_so_far() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;

    let dir = tempfile::tempdir().expect("temp dir");
    let plan = dir.path().join("long.toml");
    std::fs::write(
        &plan,
        "title = \"long\"\n[[runs]]\nname = \"long-sprt\"\nkind = \"sprt\"\ngames = 100000\n\
         seed = 1\n[runs.limits]\nnodes = 100\n[[runs.variants]]\nvariant = \"latte\"\n\
         ruleset = \"normal\"\n[runs.first]\nengine = \"builtin\"\n[runs.second]\n\
         engine = \"builtin\"\n[runs.sprt]\nelo0 = 0.0\nelo1 = 5.0\n",
    )
    .expect("write");
    let mut child = Command::new(env!("CARGO_BIN_EXE_coordinator"))
        .arg("local")
        .arg(&plan)
        .arg("--state")
        .arg(dir.path().join("state"))
        .args(["--workers", "2", "--no-http"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("coordinator runs");
    // Wait until games are being counted, then interrupt. Stderr is read to its end by a
    // thread, so the child never writes into a closed pipe.
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut seen = String::new();
    for line in rx.iter() {
        seen.push_str(&line);
        seen.push('\n');
        if line.starts_with("progress: run 1") && !line.contains(": 0/") {
            break;
        }
    }
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let out = child.wait_with_output().expect("exits");
    reader.join().expect("stderr reader");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{stdout}\n{seen}");
    assert!(stdout.contains("interrupted: "), "{stdout}");
    assert!(stdout.contains("run \"long-sprt\" so far:"), "{stdout}");
    assert!(
        stdout.contains("SPRT ") && stdout.contains("LLR"),
        "{stdout}"
    );
}

/// A run against an external engine is pinned to the build it started with: the same command
/// after the engine file changed (a rebuild, the other side of an SPRT) must not add the new
/// build's games to the old one's. It stops with the engine's name and both digests; the
/// same build resumes.
#[test]
fn resuming_with_another_build_of_an_external_engine_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let coordinator = Path::new(env!("CARGO_BIN_EXE_coordinator"));
    let built = coordinator.with_file_name(format!("engine{}", std::env::consts::EXE_SUFFIX));
    assert!(
        built.is_file(),
        "{} missing: build the workspace",
        built.display()
    );
    let engine = dir.path().join("engine-under-test");
    std::fs::copy(&built, &engine).expect("copy the engine");
    let plan = dir.path().join("pinned.toml");
    std::fs::write(
        &plan,
        "title = \"pinned\"\n[[runs]]\nname = \"uci-vs-builtin\"\nkind = \"match\"\ngames = 4\n\
         seed = 5\n[runs.limits]\nnodes = 200\n[[runs.variants]]\nvariant = \"latte\"\n\
         ruleset = \"normal\"\n[runs.first]\nengine = \"uci\"\n[runs.second]\nengine = \"builtin\"\n",
    )
    .expect("write");
    let declared = format!("uci={}", engine.display());
    let state = dir.path().join("state");
    let first = local(&plan, &state, &["--engine", &declared]);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    // The same build: resumes (the run is finished, so it only reports again).
    let again = local(&plan, &state, &["--engine", &declared]);
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );

    // Another build under the same name and path.
    let mut bytes = std::fs::read(&engine).expect("read");
    bytes.extend_from_slice(b"rebuilt");
    std::fs::write(&engine, bytes).expect("write");
    let refused = local(&plan, &state, &["--engine", &declared]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{stderr}");
    assert!(
        stderr.contains("engine \"uci\"") && stderr.contains("--state"),
        "{stderr}"
    );
}

/// A resumed run keeps the settings it was created with, except that its games may grow:
/// the same state folder without the first session's `--scale` (so twice the games) plays
/// the missing games and reports the larger run; fewer games than stored, or any other
/// change, is refused with the setting and both values instead of quietly playing the old
/// settings and reporting them as the new ones.
#[test]
fn a_resumed_run_grows_to_the_plans_games_and_other_changes_are_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let plan = dir.path().join("budget.toml");
    let text =
        "title = \"budget\"\n[[runs]]\nname = \"m\"\nkind = \"match\"\ngames = 4\nseed = 5\n\
         [runs.limits]\nnodes = 200\n[[runs.variants]]\nvariant = \"latte\"\nruleset = \"normal\"\n\
         [runs.first]\nengine = \"builtin\"\n";
    std::fs::write(&plan, text).expect("write");
    let state = dir.path().join("state");
    let trial = local(&plan, &state, &["--scale", "0.5"]);
    let stderr = String::from_utf8_lossy(&trial.stderr);
    assert!(trial.status.success(), "{stderr}");
    assert!(stderr.contains("after 2/2 games"), "{stderr}");

    let grown = local(&plan, &state, &[]);
    let stderr = String::from_utf8_lossy(&grown.stderr);
    assert!(grown.status.success(), "{stderr}");
    assert!(
        stderr.contains("run \"m\": budget raised from 2 to 4 games"),
        "{stderr}"
    );
    assert!(
        stderr.contains("all pairs played after 4/4 games"),
        "{stderr}"
    );
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(state.join("report.json")).expect("json report"),
    )
    .expect("json");
    let run = &json["runs"][0];
    assert_eq!(run["pairs_total"], 2, "{run}");
    assert_eq!(run["pairs_done"], 2, "{run}");
    let games = run["wins"].as_u64().unwrap_or(0)
        + run["draws"].as_u64().unwrap_or(0)
        + run["losses"].as_u64().unwrap_or(0);
    assert_eq!(games, 4, "the first two games and the two new ones: {run}");

    let shrunk = local(&plan, &state, &["--scale", "0.5"]);
    let stderr = String::from_utf8_lossy(&shrunk.stderr);
    assert!(!shrunk.status.success(), "{stderr}");
    assert!(
        stderr.contains("run \"m\"")
            && stderr.contains("games: 4 in the state folder, 2 in the plan")
            && stderr.contains("--state"),
        "{stderr}"
    );
    std::fs::write(&plan, text.replace("seed = 5", "seed = 6")).expect("write");
    let reseeded = local(&plan, &state, &[]);
    let stderr = String::from_utf8_lossy(&reseeded.stderr);
    assert!(!reseeded.status.success(), "{stderr}");
    assert!(
        stderr.contains("seed: 5 in the state folder, 6 in the plan"),
        "{stderr}"
    );
}

/// `--run NAME` plays only the named runs of a plan (one variant of a match plan, say); an
/// unknown name is refused naming the plan's runs, and a run that takes tuned values finds
/// its tuning finished in an earlier session of the same state folder.
#[test]
fn run_picks_runs_of_a_plan_and_finds_an_earlier_sessions_tuning() {
    let dir = tempfile::tempdir().expect("temp dir");
    let plan = dir.path().join("two.toml");
    std::fs::write(
        &plan,
        "title = \"two\"\n\
         [[runs]]\nname = \"tune\"\nkind = \"spsa\"\ngames = 8\nseed = 2\n[runs.limits]\nnodes = 200\n\
         [[runs.variants]]\nvariant = \"latte\"\nruleset = \"normal\"\n[runs.first]\nengine = \"builtin\"\n\
         [runs.spsa]\nparams = \"KnightValueMg, 250, 150, 600, 20, 0.002\"\n\
         [[runs]]\nname = \"check\"\nkind = \"match\"\ngames = 4\nseed = 3\ntuned_from = \"tune\"\n\
         [runs.limits]\nnodes = 200\n[[runs.variants]]\nvariant = \"latte\"\nruleset = \"normal\"\n\
         [runs.first]\nengine = \"builtin\"\n",
    )
    .expect("write");
    let state = dir.path().join("state");
    let unknown = local(&plan, &state, &["--run", "chek"]);
    let stderr = String::from_utf8_lossy(&unknown.stderr);
    assert!(!unknown.status.success(), "{stderr}");
    assert!(
        stderr.contains("no run \"chek\"") && stderr.contains("tune, check"),
        "{stderr}"
    );
    let early = local(&plan, &state, &["--run", "check"]);
    let stderr = String::from_utf8_lossy(&early.stderr);
    assert!(!early.status.success(), "{stderr}");
    assert!(stderr.contains("add --run tune"), "{stderr}");

    let runs = |out: &std::process::Output| -> Vec<String> {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let json: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(state.join("report.json")).expect("json report"),
        )
        .expect("json");
        json["runs"]
            .as_array()
            .expect("runs")
            .iter()
            .map(|r| r["name"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    assert_eq!(runs(&local(&plan, &state, &["--run", "tune"])), ["tune"]);
    assert_eq!(runs(&local(&plan, &state, &["--run", "check"])), ["check"]);
}

/// A network file declared with `--engine` is our engine playing with that network: the
/// session says so, and the run plays to its report; a run of another game than the network's
/// is refused before anything is played (its workers would refuse every lease).
#[test]
fn a_declared_network_file_plays_as_our_engine_with_it() {
    use engine::board8::net_file;
    use engine::{Rules, Variant};
    let dir = tempfile::tempdir().expect("temp dir");
    let latte = Rules::default_for(Variant::Latte);
    let mut net = engine::board8::builtin_net(latte)
        .expect("a network")
        .clone();
    net.output.iter_mut().flatten().for_each(|w| *w /= 2);
    let file = dir.path().join("half.net");
    net_file::write(&file, &net_file::to_bytes(&net, Variant::Latte)).expect("written");
    let declared = format!("half={}", file.display());
    let plan_for = |variant: &str| {
        format!(
            "title = \"network\"\n[[runs]]\nname = \"net-vs-builtin\"\nkind = \"match\"\n\
             games = 4\nseed = 5\n[runs.limits]\nnodes = 300\n[[runs.variants]]\n\
             variant = \"{variant}\"\nruleset = \"normal\"\n[runs.first]\nengine = \"half\"\n[runs.second]\n\
             engine = \"builtin\"\n"
        )
    };
    let plan = dir.path().join("latte.toml");
    std::fs::write(&plan, plan_for("latte")).expect("write");
    let out = local(&plan, &dir.path().join("s"), &["--engine", &declared]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("engine half: our engine with the latte network of"),
        "{stderr}"
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("net-vs-builtin"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    let plan = dir.path().join("chess.toml");
    std::fs::write(&plan, plan_for("chess")).expect("write");
    let out = local(&plan, &dir.path().join("c"), &["--engine", &declared]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("plays chess, but engine \"half\" is a network for latte"),
        "{stderr}"
    );

    // Its options are our engine's parameters, checked before anything is played.
    let plan = dir.path().join("option.toml");
    let text = plan_for("latte").replace(
        "engine = \"half\"\n",
        "engine = \"half\"\noptions = { NoSuchWeight = 3 }\n",
    );
    std::fs::write(&plan, text).expect("write");
    let out = local(&plan, &dir.path().join("o"), &["--engine", &declared]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("first.options.NoSuchWeight: the built-in engine has no option"),
        "{stderr}"
    );
}
