//! External UCI engines end to end: runs name engines the workers declared
//! (`--engine NAME=PATH`), and real workers play them as separate processes.
//!
//! * an SPSA run tunes this project's own `engine` binary as an external UCI engine;
//! * a `chess` match against Stockfish, where Debian's `stockfish` is installed.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use worker::cluster::engines::{EngineArg, Engines};

/// The workspace's `engine` binary, built beside this test by `cargo test --workspace`.
fn engine_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    // target/<profile>/deps/external-<hash>
    let dir = exe.parent()?.parent()?;
    let path = dir.join(format!("engine{}", std::env::consts::EXE_SUFFIX));
    path.is_file().then_some(path)
}

fn stockfish() -> Option<PathBuf> {
    ["/usr/games/stockfish", "/usr/bin/stockfish"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

async fn play_with_workers(e: &Env, server: &Server, engines: &[(&str, &Path)], workers: usize) {
    let args: Vec<EngineArg> = engines
        .iter()
        .map(|(name, path)| EngineArg {
            name: (*name).to_string(),
            path: path.to_path_buf(),
        })
        .collect();
    let mut tasks = Vec::new();
    for k in 0..workers {
        let (_stop, stage) = tokio::sync::watch::channel(0u8);
        let config = worker::cluster::ClusterConfig {
            url: server.url.clone(),
            ca: None,
            token: e.workers[k].clone(),
            concurrency: 1,
            name: format!("ext-{k}"),
            spool: e._dir.path().join(format!("spool-{k}.log")),
            book_dir: PathBuf::from("."),
            exit_when_idle: true,
            engines: Engines::declare(&args).expect("engines declared"),
            report_linger: worker::cluster::DEFAULT_REPORT_LINGER,
        };
        tasks.push(tokio::spawn(async move {
            let r = worker::cluster::run(config, stage).await;
            drop(_stop);
            r
        }));
    }
    for t in tasks {
        t.await.expect("worker task").expect("worker ran");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spsa_tunes_our_engine_binary_as_an_external_uci_engine() {
    let Some(engine) = engine_binary() else {
        eprintln!("SKIPPED: no engine binary beside the test (run `cargo test --workspace`)");
        return;
    };
    let e = env();
    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    let sha = worker::cluster::engines::sha256_file(&engine).expect("hash");
    let text = format!(
        r#"
name = "external spsa"
kind = "spsa"
games = 12
seed = 3
batch_seconds = 1
[limits]
nodes = 300
max_plies = 80
[[variants]]
variant = "latte"
ruleset = "normal"
[first]
engine = "ours"
sha256 = "{sha}"
options = {{ Hash = 8 }}
[spsa]
params = """
KnightValueMg, 250, 150, 600, 25, 0.01
BishopValueMg, 260, 150, 600, 25, 0.01
"""
"#
    );
    let id = create(&mut admin, text).await;
    play_with_workers(&e, &server, &[("ours", &engine)], 2).await;
    let d = show(&mut admin, id).await;
    assert_exact(&d);
    assert_eq!(d.spsa.len(), 2);
    assert!(d.spsa.iter().all(|p| p.iterations == 6), "{:?}", d.spsa);
    // Both workers took part (the run is shared) and reported under their tokens.
    let names: Vec<&str> = d.workers.iter().map(|w| w.name.as_str()).collect();
    assert!(!names.is_empty());
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chess_match_against_stockfish() {
    let Some(sf) = stockfish() else {
        eprintln!("SKIPPED: Debian's stockfish is not installed (apt-get install stockfish)");
        return;
    };
    let e = env();
    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    let text = r#"
name = "ours vs stockfish"
kind = "match"
games = 4
batch_seconds = 1
[limits]
nodes = 2000
max_plies = 160
[[variants]]
variant = "chess"
ruleset = "normal"
[first]
engine = "builtin"
[second]
engine = "stockfish"
options = { Threads = 1, Hash = 16, UCI_LimitStrength = true, UCI_Elo = 1400 }
"#
    .to_string();
    let id = create(&mut admin, text).await;
    play_with_workers(&e, &server, &[("stockfish", &sf)], 1).await;
    let d = show(&mut admin, id).await;
    assert_exact(&d);
    let text = pgn_text(&mut admin, id).await;
    assert_eq!(text.matches("[Event ").count(), 4, "{text}");
    // No game ended because an engine failed.
    for bad in ["crash", "illegal-move", "timeout"] {
        assert!(!text.contains(&format!("Termination \"{bad}\"")), "{text}");
    }
    server.shutdown().await;
}
