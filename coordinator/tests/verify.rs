//! `run verify`: the running totals agree with a recomputation from the stored pairs, a
//! tampered database is caught, and a run stored without totals is rebuilt at start-up.

mod common;

use common::*;
use proto::v1 as pb;

async fn verify(a: &mut Admin, id: u64) -> pb::VerifyRunResponse {
    a.verify_run(pb::RunRequest { run_id: id })
        .await
        .unwrap()
        .into_inner()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn totals_agree_with_the_stored_pairs_and_tampering_is_caught() {
    let e = env();
    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    let study = create(
        &mut admin,
        config("study", 60, "[study]\nbaseline = \"normal\"\n"),
    )
    .await;
    let spsa = create(
        &mut admin,
        config(
            "spsa",
            40,
            "[spsa]\nparams = \"KnightValueMg,300,200,400,10,0.002\"\n",
        ),
    )
    .await;
    let sprt = create(
        &mut admin,
        config("sprt", 80, "[sprt]\nelo0 = -5\nelo1 = 5\n"),
    )
    .await;
    let (a, b) = tokio::join!(
        work(server.worker(&e.workers[0]).await, "box0", 0),
        work(server.worker(&e.workers[1]).await, "box1", 1)
    );
    assert!(a + b >= 30 + 20);
    for id in [study, spsa, sprt] {
        let v = verify(&mut admin, id).await;
        assert!(v.problems.is_empty(), "run {id}: {:?}", v.problems);
        assert_eq!(
            v.pairs,
            show(&mut admin, id).await.summary.unwrap().pairs_done
        );
    }
    let before = show(&mut admin, study).await;
    server.shutdown().await;

    // A pair's stored score changes behind the coordinator's back: verify says so.
    let conn = coordinator::store::open(&e.db).unwrap();
    conn.execute(
        "UPDATE pair_results SET score = (score + 1) % 5 WHERE run_id = ?1 AND pair_index = 0",
        [study as i64],
    )
    .unwrap();
    // And a run whose totals were never stored is rebuilt from its pairs at start-up.
    conn.execute("DELETE FROM token_totals WHERE run_id = ?1", [spsa as i64])
        .unwrap();
    conn.execute("UPDATE runs SET totals_ok = 0 WHERE id = ?1", [spsa as i64])
        .unwrap();
    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    let v = verify(&mut admin, study).await;
    assert!(
        v.problems.iter().any(|p| p.contains("totals")),
        "{:?}",
        v.problems
    );
    let v = verify(&mut admin, spsa).await;
    assert!(v.problems.is_empty(), "{:?}", v.problems);
    let d = show(&mut admin, spsa).await;
    assert_eq!(d.pentanomial.iter().sum::<u64>(), 20);
    assert_eq!(d.workers.iter().map(|w| w.pairs).sum::<u64>(), 20);
    // The study's figures are what they were before the restart (the totals are stored).
    let after = show(&mut admin, study).await;
    assert_eq!(after.pentanomial, before.pentanomial);
    assert_eq!(after.study, before.study);
    server.shutdown().await;
}

/// A database from before study rows were named by variant (schema 5) kept a mixed-variant
/// run's totals under the reported rule-set alone, chess's and Latte's `normal` as one row.
/// Opening it upgrades the schema and rebuilds those totals from the stored pairs, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upgrade_rebuilds_totals_stored_under_the_old_row_names() {
    let e = env();
    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    let mixed = mixed_config("sprt", 40, "[sprt]\nelo0 = -5\nelo1 = 5\n");
    let id = create(&mut admin, mixed).await;
    work(server.worker(&e.workers[0]).await, "box0", 0).await;
    let before = show(&mut admin, id).await;
    let rows: Vec<&str> = before.study.iter().map(|r| r.ruleset.as_str()).collect();
    assert_eq!(rows, ["chess/normal", "latte/normal"]);
    server.shutdown().await;

    // Back to schema 5, with the totals as that version stored them: one `normal` row.
    let conn = coordinator::store::open(&e.db).unwrap();
    let (token, data): (String, String) = conn
        .query_row(
            "SELECT token, data FROM token_totals WHERE run_id = ?1",
            [id as i64],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let mut totals: serde_json::Value = serde_json::from_str(&data).unwrap();
    let rulesets = totals["study"].as_object_mut().unwrap();
    let latte = rulesets.remove("latte/normal").unwrap();
    rulesets.remove("chess/normal").unwrap();
    rulesets.insert("normal".into(), latte);
    conn.execute(
        "UPDATE token_totals SET data = ?1 WHERE run_id = ?2 AND token = ?3",
        (totals.to_string(), id as i64, token),
    )
    .unwrap();
    conn.pragma_update(None, "user_version", 5).unwrap();
    drop(conn);

    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    let after = show(&mut admin, id).await;
    assert_eq!(after.study, before.study);
    assert_eq!(after.pentanomial, before.pentanomial);
    let v = verify(&mut admin, id).await;
    assert!(v.problems.is_empty(), "{:?}", v.problems);
    server.shutdown().await;
}
