//! The coordinator booted for real on 127.0.0.1:0 with a temporary database, driven by
//! synthetic workers that play no games and report made-up pair results.

mod common;

use common::*;
use coordinator::store::{self, Role};
use proto::v1 as pb;
use proto::v1::admin_service_client::AdminServiceClient;
use proto::v1::worker_service_client::WorkerServiceClient;
use std::path::PathBuf;
use std::time::Duration;
use tonic::Code;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn match_study_and_spsa_runs_complete_with_exact_totals() {
    let e = env();
    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    let m = create(&mut admin, config("match", 40, "")).await;
    let st = create(
        &mut admin,
        config("study", 24, "[study]\nbaseline = \"normal\"\n"),
    )
    .await;
    let sp = create(
        &mut admin,
        config(
            "spsa",
            30,
            "[spsa]\nparams = \"\"\"\nKnightValueMg,300,200,400,10,0.002\nBishopValueMg,300,200,400,10,0.002\n\"\"\"\n",
        ),
    )
    .await;
    let (a, b) = tokio::join!(
        work(server.worker(&e.workers[0]).await, "box0", 0),
        work(server.worker(&e.workers[1]).await, "box1", 0)
    );
    assert_eq!(a + b, 20 + 12 + 15);

    let d = show(&mut admin, m).await;
    assert_exact(&d);
    assert!(d.elo.is_some());
    assert_eq!(d.workers.iter().map(|w| w.pairs).sum::<u64>(), 20);
    // Every pair's PGN was kept: two games each.
    let text = pgn_text(&mut admin, m).await;
    assert_eq!(text.matches("[Event ").count(), 40);

    let d = show(&mut admin, st).await;
    assert_exact(&d);
    assert_eq!(d.study.len(), 2);
    assert_eq!(d.study.iter().map(|r| r.games).sum::<u64>(), 24);
    assert_eq!(d.comparisons.len(), 1);

    let d = show(&mut admin, sp).await;
    assert_exact(&d);
    assert_eq!(d.spsa.len(), 2);
    assert_eq!(d.spsa[0].iterations, 15);
    // SPSA runs keep no PGNs by default.
    let mut pgn = admin
        .export_pgn(pb::RunRequest { run_id: sp })
        .await
        .unwrap()
        .into_inner();
    assert!(pgn.message().await.unwrap().is_none());
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sprt_run_stops_itself() {
    let e = env();
    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    let id = create(&mut admin, sprt_config(4000)).await;
    work(server.worker(&e.workers[0]).await, "box0", 6).await;
    let d = show(&mut admin, id).await;
    let s = d.summary.unwrap();
    assert_eq!(s.state, pb::RunState::Finished as i32);
    assert_eq!(s.finish_reason, "sprt accepted");
    assert!(s.pairs_done < s.pairs_total);
    let sprt = d.sprt.unwrap();
    assert!(sprt.llr > sprt.upper_bound, "{sprt:?}");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_worker_lease_expires_and_is_reissued() {
    let e = env();
    let server = Server::start(&e.db, timing(600)).await;
    let mut admin = server.admin(&e.admin).await;
    let id = create(&mut admin, config("match", 80, "")).await;

    // A worker takes 4 pairs, reports one, and dies.
    let mut dead = server.worker(&e.workers[0]).await;
    let dead_id = register(&mut dead, "box0").await;
    let l = lease(&mut dead, dead_id, 4).await.unwrap();
    assert_eq!(l.pairs.len(), 4);
    let one = synthetic(&l.pairs[0], 0, true);
    dead.submit(pb::SubmitRequest {
        worker_id: dead_id,
        lease_id: l.lease_id,
        seq: 1,
        pairs: vec![one.clone()],
    })
    .await
    .unwrap();

    // The lease expires and exactly its three unreported pairs return to the queue.
    wait_until("lease expiry", Duration::from_secs(10), || {
        let mut admin = admin.clone();
        async move {
            let s = show(&mut admin, id).await.summary.unwrap();
            (s.pairs_leased == 0).then_some(())
        }
    })
    .await;
    // The dead worker's late report of a new pair is refused...
    let late = dead
        .submit(pb::SubmitRequest {
            worker_id: dead_id,
            lease_id: l.lease_id,
            seq: 2,
            pairs: vec![synthetic(&l.pairs[1], 0, true)],
        })
        .await
        .unwrap_err();
    assert_eq!(late.code(), Code::FailedPrecondition, "{late}");
    assert!(late.message().contains("expired"), "{late}");
    // ... while its committed report, resent, is acknowledged as a repeat.
    let again = dead
        .submit(pb::SubmitRequest {
            worker_id: dead_id,
            lease_id: l.lease_id,
            seq: 1,
            pairs: vec![one],
        })
        .await
        .unwrap()
        .into_inner();
    assert!(again.duplicate);

    // Another worker finishes the run, re-issued pairs first.
    let mut w = server.worker(&e.workers[1]).await;
    let wid = register(&mut w, "box1").await;
    let next = lease(&mut w, wid, 3).await.unwrap();
    let reissued: Vec<u64> = next.pairs.iter().map(|p| p.index).collect();
    let expected: Vec<u64> = l.pairs[1..].iter().map(|p| p.index).collect();
    assert_eq!(reissued, expected);
    play(&mut w, wid, &next, 0).await;
    work(w, "box1", 0).await;
    let d = show(&mut admin, id).await;
    assert_exact(&d);
    let per_worker: Vec<(String, u64)> = d
        .workers
        .iter()
        .map(|w| (w.name.clone(), w.pairs))
        .collect();
    assert_eq!(per_worker, vec![("box0".into(), 1), ("box1".into(), 39)]);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn coordinator_restart_mid_run_loses_and_doubles_nothing() {
    let e = env();
    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    let id = create(
        &mut admin,
        config(
            "spsa",
            24,
            "[spsa]\nparams = \"KnightValueMg,300,200,400,10,0.002\"\n",
        ),
    )
    .await;
    let mut w = server.worker(&e.workers[0]).await;
    let wid = register(&mut w, "box0").await;
    let l = lease(&mut w, wid, 5).await.unwrap();
    // Two pairs reported and committed before the coordinator goes down.
    let first_two: Vec<pb::PairResult> = l.pairs[..2]
        .iter()
        .map(|t| synthetic(t, 0, false))
        .collect();
    w.submit(pb::SubmitRequest {
        worker_id: wid,
        lease_id: l.lease_id,
        seq: 1,
        pairs: first_two.clone(),
    })
    .await
    .unwrap();
    let theta_before = show(&mut admin, id).await.spsa[0].clone();
    server.shutdown().await;

    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    let d = show(&mut admin, id).await;
    assert_eq!(d.summary.as_ref().unwrap().pairs_done, 2);
    assert_eq!(d.spsa[0], theta_before);
    let mut w = server.worker(&e.workers[0]).await;
    // The worker's spool resends its last report: a repeat, nothing counted twice.
    let r = w
        .submit(pb::SubmitRequest {
            worker_id: wid,
            lease_id: l.lease_id,
            seq: 1,
            pairs: first_two.clone(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(r.duplicate);
    // The lease survived the restart: the worker finishes it.
    for (k, t) in l.pairs[2..].iter().enumerate() {
        let r = w
            .submit(pb::SubmitRequest {
                worker_id: wid,
                lease_id: l.lease_id,
                seq: 2 + k as u64,
                pairs: vec![synthetic(t, 0, false)],
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(r.accepted_pairs, 1);
    }
    work(w, "box0", 0).await;
    let d = show(&mut admin, id).await;
    assert_exact(&d);
    assert_eq!(d.spsa[0].iterations, 12);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicate_and_stolen_or_expired_submissions_are_rejected() {
    let e = env();
    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    let id = create(&mut admin, config("match", 80, "")).await;
    let mut w = server.worker(&e.workers[0]).await;
    let wid = register(&mut w, "box0").await;
    let l = lease(&mut w, wid, 3).await.unwrap();
    let p0 = synthetic(&l.pairs[0], 0, false);
    let submit = |worker_id, lease_id, seq, pairs: Vec<pb::PairResult>| pb::SubmitRequest {
        worker_id,
        lease_id,
        seq,
        pairs,
    };
    let r = w
        .submit(submit(wid, l.lease_id, 1, vec![p0.clone()]))
        .await
        .unwrap()
        .into_inner();
    assert_eq!((r.duplicate, r.accepted_pairs), (false, 1));
    let r = w
        .submit(submit(wid, l.lease_id, 1, vec![p0.clone()]))
        .await
        .unwrap()
        .into_inner();
    assert_eq!((r.duplicate, r.accepted_pairs), (true, 0));
    let d = show(&mut admin, id).await;
    assert_eq!(d.summary.unwrap().pairs_done, 1);
    assert_eq!(d.pentanomial.iter().sum::<u64>(), 1);

    // Another worker cannot submit for this lease, under its own id or the holder's.
    let mut thief = server.worker(&e.workers[1]).await;
    let tid = register(&mut thief, "box1").await;
    let p1 = synthetic(&l.pairs[1], 0, false);
    let err = thief
        .submit(submit(tid, l.lease_id, 2, vec![p0.clone(), p1.clone()]))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::PermissionDenied, "{err}");
    let err = thief
        .submit(submit(wid, l.lease_id, 2, vec![p0.clone(), p1.clone()]))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::PermissionDenied, "{err}");
    // A pair outside the lease, a malformed pair, an unknown lease.
    let mut outside = synthetic(&l.pairs[1], 0, false);
    outside.index = 999;
    let err = w
        .submit(submit(wid, l.lease_id, 2, vec![p0.clone(), outside]))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    let mut one_game = p1.clone();
    one_game.games.pop();
    let err = w
        .submit(submit(wid, l.lease_id, 2, vec![one_game]))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    let err = w.submit(submit(wid, 4242, 1, vec![])).await.unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "{err}");
    // A released lease takes no new reports; its two unreported pairs went back.
    let back = w
        .release(pb::ReleaseRequest {
            worker_id: wid,
            lease_id: l.lease_id,
            failure: String::new(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(back.returned_pairs, 2);
    let err = w
        .submit(submit(wid, l.lease_id, 2, vec![p0, p1]))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition, "{err}");
    let d = show(&mut admin, id).await;
    assert_eq!(d.summary.unwrap().pairs_done, 1);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_and_roles_are_enforced_and_bad_configs_name_the_field() {
    let e = env();
    let server = Server::start(&e.db, timing(30_000)).await;
    // No token.
    let mut bare = WorkerServiceClient::new(server.channel().await);
    let err = bare
        .register(pb::RegisterRequest::default())
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::Unauthenticated, "{err}");
    let mut bare = AdminServiceClient::new(server.channel().await);
    let err = bare.list_runs(pb::ListRunsRequest {}).await.unwrap_err();
    assert_eq!(err.code(), Code::Unauthenticated, "{err}");
    // Unknown token.
    let mut forged = server.admin("vta_0000").await;
    let err = forged.list_runs(pb::ListRunsRequest {}).await.unwrap_err();
    assert_eq!(err.code(), Code::Unauthenticated, "{err}");
    // Wrong roles.
    let mut as_worker = server.admin(&e.workers[0]).await;
    let err = as_worker
        .list_runs(pb::ListRunsRequest {})
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::PermissionDenied, "{err}");
    let mut as_admin = server.worker(&e.admin).await;
    let err = as_admin
        .register(pb::RegisterRequest::default())
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::PermissionDenied, "{err}");
    // A token added while the server runs works at once.
    let late = store::add_token(&store::open(&e.db).unwrap(), "late", Role::Admin, 0).unwrap();
    let mut admin = server.admin(&late).await;
    admin.list_runs(pb::ListRunsRequest {}).await.unwrap();

    // Malformed configs: the error names the field.
    for (bad, field) in [
        (config("match", 41, ""), "games"),
        (
            config("match", 40, "").replace("\"luft\"", "\"luftt\""),
            "variants[1].ruleset",
        ),
        (config("sprt", 40, ""), "sprt"),
        (
            config("match", 40, "").replace("nodes = 500", "nodes = \"many\""),
            "limits.nodes",
        ),
        (
            config("spsa", 40, "[spsa]\nparams = \"A,1,2\"\n"),
            "spsa.params",
        ),
        ("name = [".to_string(), "(toml)"),
    ] {
        let err = admin
            .create_run(pb::CreateRunRequest { config_toml: bad })
            .await
            .unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{err}");
        assert!(err.message().contains(field), "{field}: {}", err.message());
    }
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_worker_plays_a_small_match_at_500_nodes() {
    let e = env();
    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    let id = create(
        &mut admin,
        config("match", 8, "").replace("nodes = 500", "nodes = 500\nmax_plies = 200"),
    )
    .await;
    let spool = e._dir.path().join("spool.log");
    let (_stop, stage) = tokio::sync::watch::channel(0u8);
    worker::cluster::run(
        worker::cluster::ClusterConfig {
            url: server.url.clone(),
            ca: None,
            token: e.workers[0].clone(),
            concurrency: 2,
            name: "real".into(),
            spool: spool.clone(),
            book_dir: PathBuf::from("."),
            exit_when_idle: true,
            engines: Default::default(),
            report_linger: worker::cluster::DEFAULT_REPORT_LINGER,
        },
        stage,
    )
    .await
    .unwrap();
    let d = show(&mut admin, id).await;
    assert_exact(&d);
    assert_eq!(d.study.iter().map(|r| r.games).sum::<u64>(), 8);
    let text = pgn_text(&mut admin, id).await;
    assert_eq!(text.matches("[Event ").count(), 8, "{text}");
    assert!(worker::cluster::spool::Spool::open(&spool)
        .unwrap()
        .pending()
        .is_empty());
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_run_is_shared_between_the_workers_asking_for_work() {
    let e = env();
    let server = Server::start(&e.db, timing(60_000)).await;
    let mut admin = server.admin(&e.admin).await;
    // Batches of an hour: without the share rule the first worker would take every pair.
    let text = config("match", 40, "").replace("batch_seconds = 1", "batch_seconds = 3600");
    let id = create(&mut admin, text).await;
    let mut a = server.worker(&e.workers[0]).await;
    let a_id = register(&mut a, "box0").await;
    let mut b = server.worker(&e.workers[1]).await;
    let b_id = register(&mut b, "box1").await;
    // Both have been heard from (a first lease call of b's with no run yet would do; here b
    // asks for a lease right after a): the open pairs are split, not handed whole to a.
    let opening = lease(&mut b, b_id, 1).await.expect("b is known");
    let first = lease(&mut a, a_id, 0).await.expect("work for a");
    assert!(
        first.pairs.len() <= 10,
        "a took {} of 19 open pairs",
        first.pairs.len()
    );
    let second = lease(&mut b, b_id, 0).await.expect("work for b");
    assert!(!second.pairs.is_empty(), "the second worker got nothing");
    let a_pairs: std::collections::BTreeSet<u64> = first.pairs.iter().map(|p| p.index).collect();
    assert!(
        second.pairs.iter().all(|p| !a_pairs.contains(&p.index)),
        "no pair leased twice"
    );
    let d = show(&mut admin, id).await;
    assert_eq!(
        d.summary.map(|s| s.pairs_leased),
        Some((opening.pairs.len() + first.pairs.len() + second.pairs.len()) as u64)
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_study_stops_once_every_comparison_is_decided() {
    let e = env();
    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    // The synthetic games are alike under both rule-sets: with a margin of 25 points every
    // test says "no difference" soon after each rule-set has the minimum games.
    let id = create(
        &mut admin,
        config(
            "study",
            40_000,
            "[study]\nbaseline = \"normal\"\n[study.decide]\nalpha = 0.05\neffect = 25\n",
        ),
    )
    .await;
    work(server.worker(&e.workers[0]).await, "box0", 0).await;
    let d = show(&mut admin, id).await;
    let s = d.summary.clone().unwrap();
    assert_eq!(s.state, pb::RunState::Finished as i32, "{s:?}");
    assert!(
        s.finish_reason.starts_with("every comparison decided"),
        "{s:?}"
    );
    assert!(s.pairs_done < s.pairs_total / 10, "{s:?}");
    assert!(
        d.study
            .iter()
            .all(|r| r.games >= coordinator::config::STUDY_STOP_MIN_GAMES),
        "{:?}",
        d.study
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_study_stops_once_every_interval_is_narrow_enough() {
    let e = env();
    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    // 20,000 pairs planned; ±20 points is reached as soon as each rule-set has the minimum
    // games the rule waits for.
    let id = create(
        &mut admin,
        config(
            "study",
            40_000,
            "[study]\nbaseline = \"normal\"\nstop_half_width = 20.0\n",
        ),
    )
    .await;
    work(server.worker(&e.workers[0]).await, "box0", 0).await;
    let d = show(&mut admin, id).await;
    let s = d.summary.clone().unwrap();
    assert_eq!(s.state, pb::RunState::Finished as i32, "{s:?}");
    assert!(
        s.finish_reason.starts_with("every interval within ±20"),
        "{s:?}"
    );
    assert!(s.pairs_done < s.pairs_total / 10, "{s:?}");
    assert!(
        d.study
            .iter()
            .all(|r| r.games >= coordinator::config::STUDY_STOP_MIN_GAMES),
        "{:?}",
        d.study
    );
    server.shutdown().await;
}
