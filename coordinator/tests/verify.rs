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
