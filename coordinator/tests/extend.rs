//! Raising a run's game budget over the admin API (fishtest's "add games"), with the
//! coordinator booted for real: the new pairs follow the old ones, a run that had played
//! every pair plays on, the budget survives a restart, and what may not grow (SPSA, a
//! stopped run, a decided SPRT, a smaller or odd budget, a worker's token) is refused with a
//! code and a message that names why.

mod common;

use common::*;
use proto::v1 as pb;
use tonic::Code;

async fn extend(a: &mut Admin, id: u64, games: u64) -> Result<pb::RunSummary, tonic::Status> {
    a.extend_run(pb::ExtendRunRequest { run_id: id, games })
        .await
        .map(tonic::Response::into_inner)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_match_grows_plays_on_and_keeps_its_budget_across_a_restart() {
    let e = env();
    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    let id = create(&mut admin, config("match", 8, "")).await;
    assert_eq!(work(server.worker(&e.workers[0]).await, "box0", 0).await, 4);
    let d = show(&mut admin, id).await;
    assert_exact(&d);
    let first_pentanomial = d.pentanomial.clone();

    let s = extend(&mut admin, id, 20).await.expect("extended");
    assert_eq!(s.state, pb::RunState::Active as i32);
    assert_eq!((s.pairs_done, s.pairs_total), (4, 10));
    assert!(s.finish_reason.is_empty(), "{s:?}");
    let d = show(&mut admin, id).await;
    assert!(d.config_toml.contains("games = 20"), "{}", d.config_toml);

    // The new pairs are the next indices, handed out as any others.
    let mut w = server.worker(&e.workers[1]).await;
    let wid = register(&mut w, "box1").await;
    let l = lease(&mut w, wid, 3).await.expect("the grown run has work");
    let indices: Vec<u64> = l.pairs.iter().map(|p| p.index).collect();
    let taken = indices.len() as u64;
    assert_eq!(indices, (4..4 + taken).collect::<Vec<_>>());
    play(&mut w, wid, &l, 0).await;

    // It survives a restart mid-way, then plays to its new end.
    server.shutdown().await;
    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    let s = show(&mut admin, id).await.summary.expect("summary");
    assert_eq!((s.pairs_done, s.pairs_total), (4 + taken, 10));
    work(server.worker(&e.workers[1]).await, "box1", 0).await;
    let d = show(&mut admin, id).await;
    assert_exact(&d);
    assert_eq!(d.summary.as_ref().map(|s| s.pairs_total), Some(10));
    // The first four pairs are still counted once each, with the new six beside them.
    assert!(d
        .pentanomial
        .iter()
        .zip(&first_pentanomial)
        .all(|(now, then)| now >= then));
    let text = pgn_text(&mut admin, id).await;
    assert_eq!(text.matches("[Event ").count(), 20);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_grows_while_a_lease_is_out_and_the_lease_still_reports() {
    let e = env();
    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    let id = create(&mut admin, config("match", 4, "")).await;
    let mut w = server.worker(&e.workers[0]).await;
    let wid = register(&mut w, "box0").await;
    let l = lease(&mut w, wid, 2).await.expect("work");
    let s = extend(&mut admin, id, 8).await.expect("extended");
    assert_eq!((s.pairs_leased, s.pairs_total), (l.pairs.len() as u64, 4));
    play(&mut w, wid, &l, 0).await;
    work(w, "box0", 0).await;
    assert_exact(&show(&mut admin, id).await);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_may_not_grow_is_refused_naming_why() {
    let e = env();
    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    let m = create(&mut admin, config("match", 8, "")).await;

    let unknown = extend(&mut admin, 999, 10).await.expect_err("unknown run");
    assert_eq!(unknown.code(), Code::NotFound);
    for (games, words) in [
        (8, "must be more"),
        (6, "must be more"),
        (11, "even"),
        (u64::MAX, "at most"),
    ] {
        let s = extend(&mut admin, m, games).await.expect_err("bad budget");
        assert_eq!(s.code(), Code::InvalidArgument, "{s:?}");
        assert!(
            s.message().starts_with("games: ") && s.message().contains(words),
            "{}",
            s.message()
        );
    }
    // A worker's token may not change runs.
    let mut w = server.admin(&e.workers[0]).await;
    let s = extend(&mut w, m, 10).await.expect_err("worker token");
    assert_eq!(s.code(), Code::PermissionDenied, "{s:?}");
    // Nothing of the refused requests stuck.
    let d = show(&mut admin, m).await;
    assert_eq!(d.summary.as_ref().map(|s| s.pairs_total), Some(4));
    assert!(d.config_toml.contains("games = 8"), "{}", d.config_toml);

    admin
        .stop_run(pb::RunRequest { run_id: m })
        .await
        .expect("stop");
    let s = extend(&mut admin, m, 10).await.expect_err("stopped");
    assert_eq!(s.code(), Code::FailedPrecondition);
    assert!(s.message().contains("stopped"), "{}", s.message());

    let spsa = create(
        &mut admin,
        config(
            "spsa",
            20,
            "[spsa]\nparams = \"KnightValueMg,300,200,400,10,0.002\"\n",
        ),
    )
    .await;
    let s = extend(&mut admin, spsa, 40).await.expect_err("spsa");
    assert_eq!(s.code(), Code::FailedPrecondition);
    assert!(s.message().contains("gain schedule"), "{}", s.message());

    let sprt = create(&mut admin, sprt_config(4000)).await;
    work(server.worker(&e.workers[0]).await, "box0", 6).await;
    let s = show(&mut admin, sprt).await.summary.expect("summary");
    assert_eq!(s.finish_reason, "sprt accepted");
    let refused = extend(&mut admin, sprt, 8000).await.expect_err("decided");
    assert_eq!(refused.code(), Code::FailedPrecondition);
    assert!(
        refused.message().contains("sprt accepted") && refused.message().contains("verdict"),
        "{}",
        refused.message()
    );
    server.shutdown().await;
}

/// The largest budget a config may plan costs what a small one does: the ledger hands out
/// fresh pairs from a counter, so a run raised to a billion pairs makes nothing per pair (a
/// per-pair structure would exhaust memory here instead of answering).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_raised_to_the_largest_budget_makes_nothing_per_pair() {
    let e = env();
    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    let id = create(&mut admin, config("match", 4, "")).await;
    let max = coordinator::config::MAX_GAMES;
    let s = extend(&mut admin, id, max).await.expect("extended");
    assert_eq!(s.pairs_total, max / 2);
    let mut w = server.worker(&e.workers[0]).await;
    let wid = register(&mut w, "box0").await;
    let l = lease(&mut w, wid, 3).await.expect("work");
    play(&mut w, wid, &l, 0).await;
    let s = show(&mut admin, id).await.summary.expect("summary");
    assert_eq!(
        (s.pairs_done, s.pairs_total),
        (l.pairs.len() as u64, max / 2)
    );
    server.shutdown().await;
}

/// A run that paused itself because every worker failed its leases keeps saying why when its
/// budget is raised: the operator raising it has not fixed the book, and `run show` must
/// still name it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_self_paused_run_keeps_its_reason_when_it_grows() {
    let e = env();
    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    let text = config("match", 400, "").replace("[limits]", "book = \"missing.epd\"\n[limits]");
    let id = create(&mut admin, text).await;
    for (k, token) in e.workers.iter().enumerate() {
        let mut w = server.worker(token).await;
        let wid = register(&mut w, &format!("box{k}")).await;
        let l = lease(&mut w, wid, 1).await.expect("a lease");
        w.release(pb::ReleaseRequest {
            worker_id: wid,
            lease_id: l.lease_id,
            failure: "book missing.epd: No such file or directory".into(),
        })
        .await
        .expect("released");
    }
    let before = show(&mut admin, id).await.summary.expect("summary");
    assert_eq!(before.state, pb::RunState::Paused as i32);
    assert!(before.finish_reason.contains("missing.epd"), "{before:?}");

    let s = extend(&mut admin, id, 800).await.expect("extended");
    assert_eq!((s.state, s.pairs_total), (pb::RunState::Paused as i32, 400));
    assert_eq!(s.finish_reason, before.finish_reason);
    // And after a restart, from the database.
    server.shutdown().await;
    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    let s = show(&mut admin, id).await.summary.expect("summary");
    assert_eq!(s.finish_reason, before.finish_reason);
    server.shutdown().await;
}
