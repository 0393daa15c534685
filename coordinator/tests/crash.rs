//! SIGKILL the coordinator under a simulated fleet, again and again, and check that what it
//! stored is exactly what it acknowledged.
//!
//! The coordinator binary serves a temporary database; simulated workers (the `bench-load`
//! fleet) lease, report two pairs at a time and resend what went unanswered; the coordinator
//! is killed at random moments six times and started again on the same file and port. Then,
//! reading the file with SQLite directly: every acknowledged pair is stored exactly once and
//! nothing else is, `pairs_done` is the row count, the file passes `integrity_check`, and the
//! SPSA state is what its stored updates replay to. The kill times come from a seed printed at
//! the start (`CRASH_SEED=N` repeats them).
//!
//! The long version is `coordinator bench-load --kill-every SECONDS` (see the README).

use coordinator::bench_load::child::{self, Coordinator, ServeSpec};
use coordinator::bench_load::fleet::{Fleet, FleetConfig};
use coordinator::bench_load::{self, verify, RunKind};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use rusqlite::Connection;
use stats::spsa::{Spsa, SpsaUpdate};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

const WORKERS: usize = 40;
const WORKERS_PER_TOKEN: usize = 10;
const KILLS: usize = 6;

/// Wait until the fleet has `n` more pairs acknowledged than `from`.
async fn progress_past(fleet: &Fleet, from: u64, n: u64, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while fleet.progress().counts().pairs < from + n {
        assert!(
            Instant::now() < deadline,
            "no progress {what}: {:?}",
            fleet.progress().counts()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn seed() -> u64 {
    std::env::var("CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(coordinator::service::now_ms)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_pairs_survive_sigkill() {
    let seed = seed();
    eprintln!("crash test: seed {seed} (CRASH_SEED={seed} repeats the kill times)");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("crash.db");
    let prepared = bench_load::prepare(&db, "crash", WORKERS, WORKERS_PER_TOKEN).unwrap();
    let spec = ServeSpec {
        binary: env!("CARGO_BIN_EXE_coordinator").into(),
        db: db.clone(),
        addr: child::free_addr().unwrap(),
        // Leases orphaned by a kill (granted, answer lost) come back within 3 s.
        lease_timeout_s: 3,
        log: dir.path().join("serve.log"),
        ready_timeout: Duration::from_secs(60),
    };
    let log = spec.log.clone();
    let mut coord = Coordinator::start(spec).await.unwrap();
    let url = coord.url();
    let token = prepared.tokens.admin.clone();
    let mut admin = coordinator::client::admin(&url, &token, None)
        .await
        .unwrap();
    let runs = bench_load::create_runs(
        &mut admin,
        &[RunKind::Match, RunKind::Spsa],
        "crash",
        400_000,
        seed,
    )
    .await
    .unwrap();
    let fleet = Fleet::start(FleetConfig {
        url: url.clone(),
        tokens: prepared.tokens.workers.clone(),
        workers_per_token: WORKERS_PER_TOKEN,
        workers: WORKERS,
        channels: 2,
        pairs_per_report: 2,
        lease_pairs: 8,
        pair_time: Duration::ZERO,
        seed,
        resolve_timeout: Duration::from_secs(20),
        max_pairs: None,
    })
    .unwrap();

    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    for kill in 1..=KILLS {
        // Work flows again (the fleet got over the previous kill), then a random moment.
        let from = fleet.progress().counts().pairs;
        progress_past(&fleet, from, 20, &format!("before kill {kill}")).await;
        tokio::time::sleep(Duration::from_millis(rng.gen_range(0..1000))).await;
        let ready = coord
            .restart()
            .await
            .unwrap_or_else(|e| panic!("restart {kill}: {e}\n{}", child::log_tail(&log, 20)));
        eprintln!("kill {kill}: ready again in {ready:?}");
    }
    let from = fleet.progress().counts().pairs;
    progress_past(&fleet, from, 50, "after the last kill").await;
    let out = fleet.stop().await.unwrap();
    assert_eq!(coord.starts().len(), KILLS + 1);
    assert!(
        out.unresolved.is_empty(),
        "reports still unanswered with the coordinator up: {:?}",
        out.unresolved
    );
    assert!(out.anomalies.is_empty(), "{:?}", out.anomalies);
    eprintln!(
        "{} pairs acknowledged, {} resends answered duplicate, refusals {:?}",
        out.acked.len(),
        out.resent_duplicates,
        out.refusals
    );

    // What the coordinator shows, then one last SIGKILL before reading the file.
    let mut admin = coordinator::client::admin(&url, &token, None)
        .await
        .unwrap();
    let touched: BTreeSet<u64> = runs.iter().map(|&(id, _)| id).collect();
    let mut totals = Vec::new();
    for &run in &touched {
        totals.push(verify::run_totals(&mut admin, run).await.unwrap());
    }
    coord.kill().await.unwrap();
    drop(coord);

    // The fleet's own checks (the ones `bench-load --kill-every` prints) must all hold ...
    let mut findings = verify::check_totals(&totals, &out, &BTreeMap::new());
    findings.extend(verify::check_database(&db, &totals, &out, prepared.lease_floor).unwrap());
    assert!(findings.ok(), "{}", findings.text());

    // ... and, independently, straight from the file.
    let conn = Connection::open(&db).unwrap();
    let integrity: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(integrity, "ok");
    let stored: Vec<(u64, u64)> = conn
        .prepare("SELECT run_id, pair_index FROM pair_results")
        .unwrap()
        .query_map([], |r| {
            Ok((r.get::<_, i64>(0)? as u64, r.get::<_, i64>(1)? as u64))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let stored_set: BTreeSet<(u64, u64)> = stored.iter().copied().collect();
    assert_eq!(stored_set.len(), stored.len(), "a pair stored twice");
    let acked: BTreeSet<(u64, u64)> = out.acked.iter().map(|a| (a.run, a.index)).collect();
    assert_eq!(acked.len(), out.acked.len(), "a pair acknowledged twice");
    let lost: Vec<_> = acked.difference(&stored_set).take(10).collect();
    let phantom: Vec<_> = stored_set.difference(&acked).take(10).collect();
    assert!(lost.is_empty(), "acknowledged but not stored: {lost:?}");
    assert!(
        phantom.is_empty(),
        "stored but never acknowledged: {phantom:?}"
    );
    assert!(
        acked.len() > 200,
        "too little work to mean much: {}",
        acked.len()
    );

    for t in &totals {
        let rows = stored.iter().filter(|(r, _)| *r == t.run).count() as u64;
        assert_eq!(t.pairs_done, rows, "run {}: pairs_done vs rows", t.run);
        assert_eq!(t.pentanomial_sum, rows, "run {}: pentanomial", t.run);
    }

    // SPSA: the stored snapshot against a replay of the stored updates (stats crate).
    let (spsa_run, _) = runs.iter().find(|(_, k)| *k == RunKind::Spsa).unwrap();
    let snapshot = verify::stored_spsa_snapshot(&conn, *spsa_run)
        .unwrap()
        .expect("an SPSA snapshot");
    let spsa: Spsa = serde_json::from_str(&snapshot).unwrap();
    let updates: Vec<SpsaUpdate> = conn
        .prepare("SELECT data FROM spsa_updates WHERE run_id = ?1 ORDER BY seq")
        .unwrap()
        .query_map([*spsa_run as i64], |r| r.get::<_, String>(0))
        .unwrap()
        .map(|d| serde_json::from_str(&d.unwrap()).unwrap())
        .collect();
    let spsa_rows = stored.iter().filter(|(r, _)| r == spsa_run).count() as u64;
    assert_eq!(spsa.credited(), spsa_rows);
    assert_eq!(updates.len() as u64, spsa_rows);
    spsa.verify_updates(&updates)
        .unwrap_or_else(|e| panic!("SPSA state is not the replay of its updates: {e}"));
    let shown = totals.iter().find(|t| t.run == *spsa_run).unwrap();
    assert_eq!(shown.spsa.as_ref().unwrap().1, spsa.theta());
}
