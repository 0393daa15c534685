//! Hostile and buggy clients against a real coordinator on 127.0.0.1:0: one test per finding
//! of the adversarial review (issue 10), each written as the attack that used to work.

mod common;

use common::*;
use coordinator::store::{self, Role};
use proto::limits;
use proto::v1 as pb;
use std::collections::BTreeSet;
use std::io::Write;
use std::time::Duration;
use tonic::Code;

fn submit(
    worker_id: u64,
    lease_id: u64,
    seq: u64,
    pairs: Vec<pb::PairResult>,
) -> pb::SubmitRequest {
    pb::SubmitRequest {
        worker_id,
        lease_id,
        seq,
        pairs,
    }
}

async fn metric(admin: &mut Admin, name: &str) -> f64 {
    let text = admin
        .metrics(pb::MetricsRequest {})
        .await
        .unwrap()
        .into_inner()
        .text;
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no metric {name} in {text}"))
}

async fn create_err(admin: &mut Admin, text: String) -> tonic::Status {
    admin
        .create_run(pb::CreateRunRequest { config_toml: text })
        .await
        .unwrap_err()
}

/// Finding 1: a report is applied whole or not at all, whatever fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f01_a_failed_report_changes_nothing_and_can_be_sent_again() {
    let e = env();
    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    // The configs that used to fail inside Submit are refused at create.
    let err = create_err(
        &mut admin,
        config(
            "sprt",
            400,
            "[sprt]\nelo0 = 0\nelo1 = 5\nmodel = \"bayeselo\"\n",
        ),
    )
    .await;
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("sprt.model"), "{err}");
    let err = create_err(
        &mut admin,
        config("sprt", 400, "[sprt]\nelo0 = -1e308\nelo1 = 5\n"),
    )
    .await;
    assert!(err.message().contains("sprt.elo0"), "{err}");

    // Any failure after the checks: the database refuses the insert (a trigger stands in for
    // a full disk or a bug).
    let id = create(
        &mut admin,
        config("sprt", 400, "[sprt]\nelo0 = 0\nelo1 = 5\n"),
    )
    .await;
    let mut w = server.worker(&e.workers[0]).await;
    let wid = register(&mut w, "box0").await;
    let l = lease(&mut w, wid, 2).await.unwrap();
    let pairs: Vec<pb::PairResult> = l.pairs.iter().map(|t| synthetic(t, 0, true)).collect();
    let side = store::open(&e.db).unwrap();
    side.execute_batch(
        "CREATE TRIGGER fail_results BEFORE INSERT ON pair_results
         BEGIN SELECT RAISE(FAIL, 'injected failure'); END;",
    )
    .unwrap();
    let err = w
        .submit(submit(wid, l.lease_id, 1, pairs.clone()))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::Internal, "{err}");
    let d = show(&mut admin, id).await;
    assert_eq!(
        d.summary.as_ref().unwrap().pairs_done,
        0,
        "memory ran ahead"
    );
    assert_eq!(d.pentanomial.iter().sum::<u64>(), 0);
    assert_eq!(d.sprt.as_ref().unwrap().counted_pairs, 0);
    side.execute_batch("DROP TRIGGER fail_results").unwrap();
    // The retry is counted, not answered `duplicate`.
    let r = w
        .submit(submit(wid, l.lease_id, 1, pairs))
        .await
        .unwrap()
        .into_inner();
    assert!(!r.duplicate);
    assert_eq!(r.accepted_pairs, 2);
    let d = show(&mut admin, id).await;
    assert_eq!(d.summary.as_ref().unwrap().pairs_done, 2);
    assert_eq!(d.sprt.unwrap().counted_pairs, 2);
    server.shutdown().await;
}

/// Finding 2: watchers wake on changes only, and stop when their client goes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f02_watch_run_does_not_spin() {
    let e = env();
    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    let id = create(&mut admin, config("match", 40, "")).await;
    let mut watches = Vec::new();
    for _ in 0..3 {
        let mut s = admin
            .watch_run(pb::RunRequest { run_id: id })
            .await
            .unwrap()
            .into_inner();
        assert!(s.message().await.unwrap().is_some());
        watches.push(s);
    }
    let before = metric(&mut admin, "cluster_core_calls_total").await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let after = metric(&mut admin, "cluster_core_calls_total").await;
    // A spinning watcher makes thousands of calls a second; idle ones make none (the sweeper
    // makes a couple, the metrics calls one each).
    assert!(
        after - before < 20.0,
        "{} core calls while idle",
        after - before
    );
    // A change wakes each watcher once.
    let mut w = server.worker(&e.workers[0]).await;
    let wid = register(&mut w, "box0").await;
    let l = lease(&mut w, wid, 1).await.unwrap();
    play(&mut w, wid, &l, 0).await;
    for s in &mut watches {
        let p = s.message().await.unwrap().unwrap();
        assert!(p.summary.is_some());
    }
    // Abandoned watchers stop at the next change instead of living on.
    drop(watches);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let l = lease(&mut w, wid, 1).await.unwrap();
    play(&mut w, wid, &l, 0).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = metric(&mut admin, "cluster_core_calls_total").await;
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let after = metric(&mut admin, "cluster_core_calls_total").await;
    assert!(
        after - before < 20.0,
        "{} core calls while idle",
        after - before
    );
    server.shutdown().await;
}

fn gz_bytes(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// Finding 3: PGN bombs are capped at submit and at export, and the export runs beside the
/// core, not on it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f03_pgn_bombs_do_not_inflate_and_export_streams() {
    let e = env();
    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    let id = create(&mut admin, config("match", 80, "")).await;
    let mut w = server.worker(&e.workers[0]).await;
    let wid = register(&mut w, "box0").await;
    let l = lease(&mut w, wid, 3).await.unwrap();
    // Over the compressed cap: refused whole.
    let mut huge = synthetic(&l.pairs[0], 0, true);
    huge.pgn_gz = vec![0x1f; limits::PGN_GZ_BYTES + 1];
    let err = w
        .submit(submit(wid, l.lease_id, 1, vec![huge]))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    // Within it but inflating to 64 MiB: stored, skipped at export with a note.
    let bomb = gz_bytes(&vec![b' '; 64 << 20]);
    assert!(bomb.len() <= limits::PGN_GZ_BYTES);
    let mut pairs = Vec::new();
    for (k, t) in l.pairs.iter().enumerate() {
        let mut p = synthetic(t, 0, true);
        if k < 2 {
            p.pgn_gz = bomb.clone();
        }
        pairs.push(p);
    }
    w.submit(submit(wid, l.lease_id, 1, pairs)).await.unwrap();
    let mut stream = admin
        .export_pgn(pb::RunRequest { run_id: id })
        .await
        .unwrap()
        .into_inner();
    // While the export is open, the core answers an honest worker.
    let mut honest = server.worker(&e.workers[1]).await;
    let hid = register(&mut honest, "box1").await;
    assert!(lease(&mut honest, hid, 1).await.is_some());
    let mut text = String::new();
    while let Some(c) = stream.message().await.unwrap() {
        assert!(c.text.len() <= coordinator::pgn_export::CHUNK_BYTES);
        text.push_str(&c.text);
    }
    assert_eq!(text.matches("PGN skipped").count(), 2, "{text}");
    assert_eq!(text.matches("[Event ").count(), 2);
    server.shutdown().await;
}

/// Finding 4: one worker cannot take a whole run, however much it claims.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f04_a_worker_cannot_hoard_a_run() {
    let e = env();
    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    let text = config("match", 4000, "").replace("batch_seconds = 1", "batch_seconds = 3600");
    create(&mut admin, text).await;
    let mut hog = server.worker(&e.workers[0]).await;
    let hid = register(&mut hog, "box0").await;
    let greedy = |worker_id| pb::LeaseRequest {
        worker_id,
        concurrency: u32::MAX,
        max_pairs: u32::MAX,
    };
    let first = hog
        .lease(greedy(hid))
        .await
        .unwrap()
        .into_inner()
        .lease
        .unwrap();
    assert!(
        first.pairs.len() <= 250,
        "took {} of 2000",
        first.pairs.len()
    );
    // Its token's slots are in use: asking again, even as a second registration, gets nothing.
    assert!(hog
        .lease(greedy(hid))
        .await
        .unwrap()
        .into_inner()
        .lease
        .is_none());
    let hid2 = register(&mut hog, "box0-bis").await;
    assert!(hog
        .lease(greedy(hid2))
        .await
        .unwrap()
        .into_inner()
        .lease
        .is_none());
    // An honest worker gets work.
    let mut w = server.worker(&e.workers[1]).await;
    let wid = register(&mut w, "box1").await;
    let honest = lease(&mut w, wid, 0).await.expect("honest worker starved");
    assert!(!honest.pairs.is_empty());
    server.shutdown().await;
}

/// Finding 5: a claimed concurrency moves only the claimant's own lease sizes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f05_claims_do_not_poison_other_workers_lease_sizes() {
    let e = env();
    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    // One-second batches: lease sizes follow the pair-time estimate, not the caps.
    create(&mut admin, config("match", 40_000, "")).await;
    let mut w = server.worker(&e.workers[1]).await;
    let wid = register(&mut w, "box1").await;
    let size = |l: &pb::Lease| l.pairs.len();
    let honest_before = lease(&mut w, wid, 0).await.unwrap();
    play(&mut w, wid, &honest_before, 0).await;
    // The attacker claims huge concurrency, finishes a lease slowly, then resubmits to it.
    let mut hog = server.worker(&e.workers[0]).await;
    let hid = register(&mut hog, "box0").await;
    let l = hog
        .lease(pb::LeaseRequest {
            worker_id: hid,
            concurrency: u32::MAX,
            max_pairs: 2,
        })
        .await
        .unwrap()
        .into_inner()
        .lease
        .unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let seq = play(&mut hog, hid, &l, 0).await;
    let done: Vec<pb::PairResult> = l.pairs.iter().map(|t| synthetic(t, 0, true)).collect();
    for k in 1..=5 {
        let _ = hog
            .submit(submit(hid, l.lease_id, seq + k, done.clone()))
            .await;
    }
    let honest_after = lease(&mut w, wid, 0).await.unwrap();
    assert!(
        size(&honest_after) * 2 >= size(&honest_before),
        "honest lease fell from {} to {}",
        size(&honest_before),
        size(&honest_after)
    );
    server.shutdown().await;
}

/// Finding 6: every size is capped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f06_sizes_and_registrations_are_capped() {
    let e = env();
    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    create(&mut admin, config("match", 4000, "")).await;
    let mut w = server.worker(&e.workers[0]).await;
    let err = w
        .register(pb::RegisterRequest {
            name: "x".repeat(limits::NAME_BYTES + 1),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert!(err.message().contains("limit"), "{err}");
    let err = w
        .register(pb::RegisterRequest {
            variants: vec!["latte".into(); limits::VARIANTS + 1],
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    for k in 0..limits::REGISTRATIONS_PER_TOKEN {
        register(&mut w, &format!("m{k}")).await;
    }
    let err = w
        .register(pb::RegisterRequest {
            name: "one-too-many".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::ResourceExhausted, "{err}");
    // A machine that restarts registers again under its name.
    let wid = register(&mut w, "m0").await;
    let l = lease(&mut w, wid, 1).await.unwrap();
    let junk: Vec<pb::PairResult> = (0..=limits::PAIRS_PER_REPORT)
        .map(|_| synthetic(&l.pairs[0], 0, false))
        .collect();
    let err = w
        .submit(submit(wid, l.lease_id, 1, junk))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    let err = create_err(&mut admin, "#".repeat(limits::CONFIG_BYTES + 1)).await;
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert!(metric(&mut admin, "cluster_reports_refused_total").await >= 1.0);
    server.shutdown().await;
}

/// Finding 7: a worker is its token; names are labels.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f07_identity_is_the_token_not_the_name() {
    let e = env();
    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    let id = create(&mut admin, config("match", 400, "")).await;
    let mut honest = server.worker(&e.workers[0]).await;
    let hid = register(&mut honest, "box0").await;
    let mut mallory = server.worker(&e.workers[1]).await;
    // Mallory registers under the honest machine's name and reports fake wins.
    let mid = register(&mut mallory, "box0").await;
    let l = lease(&mut honest, hid, 2).await.unwrap();
    play(&mut honest, hid, &l, 0).await;
    let l = lease(&mut mallory, mid, 2).await.unwrap();
    play(&mut mallory, mid, &l, 50).await;
    let d = show(&mut admin, id).await;
    let rows: Vec<(&str, u64)> = d
        .workers
        .iter()
        .map(|w| (w.name.as_str(), w.pairs))
        .collect();
    assert_eq!(
        rows,
        vec![("box0", 2), ("box1", 2)],
        "merged rows: {rows:?}"
    );
    assert!(d.workers.iter().all(|w| w.labels == ["box0"]));
    // Excluding mallory's token leaves the honest worker working...
    let d = admin
        .exclude_worker(pb::ExcludeWorkerRequest {
            run_id: id,
            worker: "box1".into(),
            exclude: true,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(d.pentanomial.iter().sum::<u64>(), 2);
    assert!(lease(&mut honest, hid, 2).await.is_some());
    // ... and mallory stays out under any new name.
    let mid2 = register(&mut mallory, "fresh-name").await;
    assert!(lease(&mut mallory, mid2, 2).await.is_none());
    server.shutdown().await;
}

/// Finding 8: facts must be what the assigned pair could produce.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f08_forged_study_facts_are_refused() {
    let e = env();
    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    let id = create(
        &mut admin,
        config("study", 80, "[study]\nbaseline = \"normal\"\n"),
    )
    .await;
    let mut w = server.worker(&e.workers[0]).await;
    let wid = register(&mut w, "box0").await;
    let l = lease(&mut w, wid, 2).await.unwrap();
    let task = l.pairs.iter().find(|t| t.ruleset == "normal").unwrap();
    type Forgery = Box<dyn Fn(&mut pb::GameFacts)>;
    let forgeries: Vec<Forgery> = vec![
        Box::new(|g| g.ruleset = "bogus-ruleset".into()),
        Box::new(|g| g.ruleset = "luft".into()),
        Box::new(|g| g.plies = 1_000_000_000),
        Box::new(|g| g.castlings[0].kind = "O-O-EVIL".into()),
        Box::new(|g| g.castlings[0].kind = "luft-king".into()),
        Box::new(|g| g.termination = "x".repeat(5000)),
        Box::new(|g| g.variant = "chess".into()),
    ];
    for (k, forge) in forgeries.iter().enumerate() {
        let mut p = synthetic(task, 0, false);
        forge(&mut p.games[1]);
        let err = w
            .submit(submit(wid, l.lease_id, 1, vec![p]))
            .await
            .unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "forgery {k}: {err}");
    }
    let d = show(&mut admin, id).await;
    assert_eq!(d.summary.unwrap().pairs_done, 0);
    let rulesets: BTreeSet<&str> = d.study.iter().map(|r| r.ruleset.as_str()).collect();
    assert!(
        rulesets.iter().all(|r| ["normal", "luft"].contains(r)),
        "{rulesets:?}"
    );
    server.shutdown().await;
}

/// Finding 9: sequence numbers, heartbeats on others' leases, reasons, the bearer scheme and
/// token revocation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f09_smaller_holes_are_closed() {
    let e = env();
    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    let id = create(&mut admin, config("match", 80, "")).await;
    let mut w = server.worker(&e.workers[0]).await;
    let wid = register(&mut w, "box0").await;
    let l = lease(&mut w, wid, 2).await.unwrap();
    let p = synthetic(&l.pairs[0], 0, false);
    let err = w
        .submit(submit(wid, l.lease_id, 1 << 63, vec![p.clone()]))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert_eq!(show(&mut admin, id).await.summary.unwrap().pairs_done, 0);
    // Another worker's heartbeat on this lease learns nothing about the run.
    admin
        .pause_run(pb::RunRequest { run_id: id })
        .await
        .unwrap();
    let mut other = server.worker(&e.workers[1]).await;
    let oid = register(&mut other, "box1").await;
    let hb = other
        .heartbeat(pb::HeartbeatRequest {
            worker_id: oid,
            lease_ids: vec![l.lease_id, 999_999],
        })
        .await
        .unwrap()
        .into_inner();
    let reasons: Vec<&str> = hb.leases.iter().map(|s| s.reason.as_str()).collect();
    assert_eq!(reasons, ["not yours", "unknown lease"]);
    let hb = w
        .heartbeat(pb::HeartbeatRequest {
            worker_id: wid,
            lease_ids: vec![l.lease_id],
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(hb.leases[0].reason, "run paused");
    admin
        .resume_run(pb::RunRequest { run_id: id })
        .await
        .unwrap();
    w.release(pb::ReleaseRequest {
        worker_id: wid,
        lease_id: l.lease_id,
        failure: String::new(),
    })
    .await
    .unwrap();
    let hb = w
        .heartbeat(pb::HeartbeatRequest {
            worker_id: wid,
            lease_ids: vec![l.lease_id],
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(hb.leases[0].reason, "released");
    // `bearer` in lower case is the same scheme.
    let ch = server.channel().await;
    let token: tonic::metadata::MetadataValue<_> = format!("bearer {}", e.admin).parse().unwrap();
    let mut lower = proto::v1::admin_service_client::AdminServiceClient::with_interceptor(
        ch,
        move |mut req: tonic::Request<()>| {
            req.metadata_mut().insert("authorization", token.clone());
            Ok(req)
        },
    );
    lower.list_runs(pb::ListRunsRequest {}).await.unwrap();
    // A revoked token is refused from the next call on, by the running server.
    store::revoke_token(&store::open(&e.db).unwrap(), "box0", 1).unwrap();
    let err = w
        .lease(pb::LeaseRequest {
            worker_id: wid,
            concurrency: 1,
            max_pairs: 1,
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::Unauthenticated, "{err}");
    // Token names are identities: no two live tokens share one.
    let conn = store::open(&e.db).unwrap();
    assert!(store::add_token(&conn, "box1", Role::Worker, 0).is_err());
    assert!(store::add_token(&conn, "box0", Role::Worker, 0).is_ok());
    server.shutdown().await;
}

/// Finding 10: runs of external engines go only to workers that declared them (with the
/// pinned digest), and the lease names the engine, never a command.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f10_external_engines_are_scheduled_by_declaration() {
    let e = env();
    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    let sha = "ab".repeat(32);
    let text = config("match", 40, "").replace(
        "[first]\nengine = \"builtin\"",
        &format!("[first]\nengine = \"sf\"\nsha256 = \"{sha}\"\n\n[second]\nengine = \"builtin\""),
    );
    let id = create(&mut admin, text).await;
    let declare = |name: &str, sha: &str| pb::RegisterRequest {
        name: name.into(),
        cores: 1,
        engines: vec![pb::EngineInfo {
            name: "sf".into(),
            sha256: sha.into(),
            ..Default::default()
        }],
        ..Default::default()
    };
    let mut plain = server.worker(&e.workers[0]).await;
    let pid = register(&mut plain, "box0").await;
    assert!(
        lease(&mut plain, pid, 1).await.is_none(),
        "no engine declared"
    );
    let mut wrong = server.worker(&e.workers[1]).await;
    let wrong_id = wrong
        .register(declare("box1", &"cd".repeat(32)))
        .await
        .unwrap()
        .into_inner()
        .worker_id;
    assert!(
        lease(&mut wrong, wrong_id, 1).await.is_none(),
        "digest differs"
    );
    let mut right = server.worker(&e.workers[2]).await;
    let rid = right
        .register(declare("box2", &sha))
        .await
        .unwrap()
        .into_inner()
        .worker_id;
    let l = lease(&mut right, rid, 1).await.expect("declared engine");
    let first = l.first.unwrap();
    assert_eq!(
        (first.engine.as_str(), first.sha256.as_str()),
        ("sf", sha.as_str())
    );
    // A declaration that is a path, or a malformed digest, is refused.
    let err = right
        .register(pb::RegisterRequest {
            engines: vec![pb::EngineInfo {
                name: "/usr/bin/rm -rf".into(),
                sha256: sha.clone(),
                ..Default::default()
            }],
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    let err = create_err(
        &mut admin,
        config("match", 40, "").replace("engine = \"builtin\"", "engine = \"/bin/sh -c x\""),
    )
    .await;
    assert!(err.message().contains("first.engine"), "{err}");
    let _ = id;
    server.shutdown().await;
}

/// A worker's declared network file plays its own game only: a run naming it in another game
/// (here a run mixing chess into Latte) is never leased to that worker, which would refuse
/// it, while a run of the network's game is. A network game that is no variant, or one too
/// long, is refused at registration with the field named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f10c_declared_networks_are_leased_runs_of_their_own_game_only() {
    let e = env();
    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    let sha = "ab".repeat(32);
    let with_cand = |text: String| {
        text.replace(
            "[first]\nengine = \"builtin\"",
            &format!(
                "[first]\nengine = \"cand\"\nsha256 = \"{sha}\"\n\n[second]\nengine = \"builtin\""
            ),
        )
    };
    let mixed = create(&mut admin, with_cand(mixed_config("match", 40, ""))).await;
    let declare = |name: &str, game: &str| pb::RegisterRequest {
        name: name.into(),
        cores: 1,
        engines: vec![pb::EngineInfo {
            name: "cand".into(),
            sha256: sha.clone(),
            network_variant: game.into(),
            ..Default::default()
        }],
        ..Default::default()
    };
    let mut w = server.worker(&e.workers[0]).await;
    let id = w
        .register(declare("box0", "latte"))
        .await
        .unwrap()
        .into_inner()
        .worker_id;
    assert!(
        lease(&mut w, id, 1).await.is_none(),
        "a Latte network offered a run with chess games"
    );
    let latte = create(&mut admin, with_cand(config("match", 40, ""))).await;
    let l = lease(&mut w, id, 1)
        .await
        .expect("a run of the network's game");
    assert_eq!(l.run_id, latte);
    assert_eq!(l.first.unwrap().engine, "cand");
    // The same file declared as a program (no game) may be offered either run.
    let mut p = server.worker(&e.workers[1]).await;
    let pid = p
        .register(declare("box1", ""))
        .await
        .unwrap()
        .into_inner()
        .worker_id;
    assert!(lease(&mut p, pid, 1).await.is_some());
    for bad in ["shogi", "LATTE ", &"x".repeat(200)] {
        let err = p.register(declare("box2", bad)).await.unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{err}");
        assert!(err.message().contains("network_variant"), "{err}");
    }
    let _ = mixed;
    server.shutdown().await;
}

/// A worker that does not declare clocks (one built before them) is never leased a clock
/// run, which it would play at its own default limits without a word; it still gets runs
/// without a clock. A feature list over the limits is refused at registration.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f10b_clock_runs_go_only_to_workers_that_declare_clocks() {
    let e = env();
    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    let clock = create(
        &mut admin,
        config("match", 40, "").replace("nodes = 500", "tc = \"10+0.1\""),
    )
    .await;
    let old_worker = |name: &str| pb::RegisterRequest {
        name: name.into(),
        cores: 1,
        version: "0.1.0".into(),
        ..Default::default()
    };
    let mut old = server.worker(&e.workers[0]).await;
    let old_id = old
        .register(old_worker("old"))
        .await
        .unwrap()
        .into_inner()
        .worker_id;
    assert!(
        lease(&mut old, old_id, 1).await.is_none(),
        "a clock run leased to a worker that does not declare clocks"
    );
    let mut new = server.worker(&e.workers[1]).await;
    let new_id = register(&mut new, "new").await;
    let l = lease(&mut new, new_id, 1)
        .await
        .expect("a clock run for a clock worker");
    assert_eq!(l.run_id, clock);
    assert_eq!(l.settings.unwrap().clock_base_ms, 10_000);

    // A run without a clock is the old worker's to play.
    let plain = create(&mut admin, config("match", 40, "")).await;
    let l = lease(&mut old, old_id, 1)
        .await
        .expect("a run without a clock");
    assert_eq!(l.run_id, plain);

    let err = old
        .register(pb::RegisterRequest {
            features: vec!["clock".into(); proto::limits::FEATURES + 1],
            ..old_worker("many")
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert!(err.message().contains("features"), "{err}");
    let err = old
        .register(pb::RegisterRequest {
            features: vec!["x".repeat(proto::limits::FEATURE_BYTES + 1)],
            ..old_worker("long")
        })
        .await
        .unwrap_err();
    assert!(err.message().contains("feature"), "{err}");
    server.shutdown().await;
}

/// Finding 11: bad configs are refused at create; a lease that cannot be played is reported,
/// the worker is not handed it again at once, and the run pauses itself saying why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f11_bad_configs_are_refused_and_failing_leases_pause_the_run() {
    let e = env();
    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    for (extra, field) in [
        (
            "options = { NoSuchOption = 3 }",
            "first.options.NoSuchOption",
        ),
        (
            "options = { KnightValueMg = 99999 }",
            "first.options.KnightValueMg",
        ),
        (
            "options = { KnightValueMg = 1.5 }",
            "first.options.KnightValueMg",
        ),
    ] {
        let text = config("match", 40, "").replace(
            "[first]\nengine = \"builtin\"",
            &format!("[first]\nengine = \"builtin\"\n{extra}"),
        );
        let err = create_err(&mut admin, text).await;
        assert!(err.message().contains(field), "{field}: {err}");
    }
    let err = create_err(
        &mut admin,
        config(
            "spsa",
            40,
            "[spsa]\nparams = \"KnightValueMg,float,300,200,400,10,0.002\"\n",
        ),
    )
    .await;
    assert!(err.message().contains("integers"), "{err}");
    let err = create_err(
        &mut admin,
        config("match", 40, "").replace("[limits]", "book = \"../../etc/passwd\"\n[limits]"),
    )
    .await;
    assert!(err.message().contains("book"), "{err}");

    // A book no worker has: every lease fails.
    let text = config("match", 400, "").replace("[limits]", "book = \"missing.epd\"\n[limits]");
    let id = create(&mut admin, text).await;
    let mut failed = 0;
    for (k, token) in e.workers.iter().enumerate() {
        let mut w = server.worker(token).await;
        let wid = register(&mut w, &format!("box{k}")).await;
        let l = lease(&mut w, wid, 1).await.expect("a lease");
        let r = w
            .release(pb::ReleaseRequest {
                worker_id: wid,
                lease_id: l.lease_id,
                failure: "book missing.epd: No such file or directory".into(),
            })
            .await
            .unwrap()
            .into_inner();
        assert!(r.retry_after_ms > 0);
        failed += 1;
        // Not handed the same run again at once.
        assert!(lease(&mut w, wid, 1).await.is_none());
    }
    assert_eq!(failed, 3);
    let s = show(&mut admin, id).await.summary.unwrap();
    assert_eq!(s.state, pb::RunState::Paused as i32);
    assert!(s.finish_reason.contains("missing.epd"), "{s:?}");
    // A failure reason is capped too.
    let mut w = server.worker(&e.workers[0]).await;
    let wid = register(&mut w, "box0").await;
    let err = w
        .release(pb::ReleaseRequest {
            worker_id: wid,
            lease_id: 1,
            failure: "x".repeat(limits::FAILURE_BYTES + 1),
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    server.shutdown().await;
}

/// Clients that open connections and never speak cannot make the coordinator hold more than
/// its connection limit; further clients wait in the accept backlog and are served as soon as
/// one closes, instead of being refused or piling up sockets and buffers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f12_connections_beyond_the_limit_wait_for_a_free_slot() {
    let e = env();
    let limits = coordinator::limits::Limits {
        max_connections: 2,
        ..Default::default()
    };
    let server = Server::start_with_limits(&e.db, timing(30_000), limits).await;
    let addr = server.url.trim_start_matches("http://").to_string();
    // Two silent connections take both slots (the readiness probe's connection is closed).
    let mut silent = Vec::new();
    for _ in 0..2 {
        silent.push(tokio::net::TcpStream::connect(&addr).await.unwrap());
    }
    // Let the acceptor take them before the third client arrives.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let url = server.url.clone();
    let third = tokio::spawn(async move {
        let ch = tonic::transport::Channel::from_shared(url)
            .unwrap()
            .connect()
            .await
            .unwrap();
        let mut h = tonic_health::pb::health_client::HealthClient::new(ch);
        h.check(tonic_health::pb::HealthCheckRequest {
            service: String::new(),
        })
        .await
        .map(|r| r.into_inner().status)
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        !third.is_finished(),
        "a third connection was served while two held both slots"
    );
    drop(silent.pop());
    let status = tokio::time::timeout(Duration::from_secs(20), third)
        .await
        .expect("the waiting client is served once a slot frees")
        .unwrap()
        .unwrap();
    assert_eq!(
        status,
        tonic_health::pb::health_check_response::ServingStatus::Serving as i32
    );
    drop(silent);
    server.shutdown().await;
}

/// Milestones are facts like castlings: a worker cannot invent kinds, repeat them, lose
/// rights it spent by castling, or send more than the cap; honest ones are stored with the
/// pair.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f13_forged_milestones_are_refused_and_honest_ones_stored() {
    let e = env();
    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    let id = create(
        &mut admin,
        config("study", 80, "[study]\nbaseline = \"normal\"\n"),
    )
    .await;
    let mut w = server.worker(&e.workers[0]).await;
    let wid = register(&mut w, "box0").await;
    let l = lease(&mut w, wid, 2).await.unwrap();
    let task = l.pairs.iter().find(|t| t.ruleset == "normal").unwrap();
    let milestone = |white: bool, kind: &str, move_number: u32| pb::Milestone {
        white,
        kind: kind.into(),
        move_number,
    };
    // `synthetic` games have White castle on move 8.
    type Forgery = Box<dyn Fn(&mut pb::GameFacts)>;
    let forgeries: Vec<(Forgery, &str)> = vec![
        (
            Box::new(move |g| g.milestones = vec![milestone(false, "rights-lost-by-charm", 9)]),
            "rights-lost-by-charm",
        ),
        (
            Box::new(move |g| g.milestones = vec![milestone(true, "rights-lost-king-moved", 5)]),
            "castled",
        ),
        (
            Box::new(move |g| g.milestones = vec![milestone(false, "king-corner", 9); 2]),
            "twice",
        ),
        (
            Box::new(move |g| {
                g.milestones = vec![
                    milestone(false, "rights-lost-king-moved", 9),
                    milestone(false, "rights-lost-rook-captured", 10),
                ]
            }),
            "rights twice",
        ),
        (
            Box::new(move |g| g.milestones = vec![milestone(false, "king-corner", 0)]),
            "impossible",
        ),
        (
            Box::new(move |g| g.milestones = vec![milestone(false, "king-corner", 9); 9]),
            "at most 8",
        ),
    ];
    for (k, (forge, why)) in forgeries.iter().enumerate() {
        let mut p = synthetic(task, 0, false);
        forge(&mut p.games[1]);
        let err = w
            .submit(submit(wid, l.lease_id, 1, vec![p]))
            .await
            .unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "forgery {k}: {err}");
        assert!(err.message().contains(why), "forgery {k}: {err}");
    }
    assert_eq!(show(&mut admin, id).await.summary.unwrap().pairs_done, 0);

    let mut p = synthetic(task, 0, false);
    p.games[1].milestones = vec![
        milestone(false, "rights-lost-rook-captured", 12),
        milestone(true, "king-corner", 20),
    ];
    let r = w
        .submit(submit(wid, l.lease_id, 1, vec![p]))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(r.accepted_pairs, 1);
    let side = store::open(&e.db).unwrap();
    let games: String = side
        .query_row(
            "SELECT games FROM pair_results WHERE run_id = ?1 AND pair_index = ?2",
            (id as i64, task.index as i64),
            |row| row.get(0),
        )
        .unwrap();
    assert!(games.contains("rights-lost-rook-captured"), "{games}");
    assert!(games.contains("king-corner"), "{games}");
    server.shutdown().await;
}

/// Submits a synthetic pair for each task of `l`, one report each, every game's facts passed
/// through `edit` first (a worker's own spelling of what it was assigned), and checks that
/// each pair is accepted.
async fn play_edited(
    w: &mut Worker,
    wid: u64,
    l: &pb::Lease,
    bias: u64,
    edit: impl Fn(&mut pb::GameFacts),
) {
    for (seq, task) in (1..).zip(&l.pairs) {
        let mut p = synthetic(task, bias, false);
        p.games.iter_mut().for_each(&edit);
        let r = w
            .submit(submit(wid, l.lease_id, seq, vec![p]))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(r.accepted_pairs, 1, "pair {seq} of lease {}", l.lease_id);
    }
}

/// Finding 14: a study row is named by the assignment, not by the worker. The rules parse
/// case-insensitively, so "NORMAL" names the pair's own game and is accepted; counting it
/// under the worker's spelling would let one worker open rows of its own ("NORMAL", "Luft")
/// beside the real ones, and split a rule-set's games between them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f14_study_rows_are_named_by_the_assignment() {
    let e = env();
    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    let id = create(
        &mut admin,
        config("study", 80, "[study]\nbaseline = \"normal\"\n"),
    )
    .await;
    let mut w = server.worker(&e.workers[0]).await;
    let wid = register(&mut w, "box0").await;
    let l = lease(&mut w, wid, 4).await.unwrap();
    play_edited(&mut w, wid, &l, 0, |g| {
        g.ruleset = g.ruleset.to_uppercase();
        g.variant = g.variant.to_uppercase();
    })
    .await;
    let d = show(&mut admin, id).await;
    let rows: BTreeSet<&str> = d.study.iter().map(|r| r.ruleset.as_str()).collect();
    assert!(
        rows.iter().all(|r| ["normal", "luft"].contains(r)),
        "{rows:?}"
    );
    let games: u64 = d.study.iter().map(|r| r.games).sum();
    assert_eq!(games, 2 * l.pairs.len() as u64);
    server.shutdown().await;
}

/// Finding 15: a run that mixes variants names its study rows by variant and rule-set. Chess
/// and Latte both have a rule-set called `normal`: named by the rule-set alone, their games
/// were one row, and a "normal" balance was a blend of two games.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f15_mixed_variants_keep_their_rows_apart() {
    let e = env();
    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    let text = mixed_config("study", 40, "[study]\nbaseline = \"latte/normal\"\n");
    let id = create(&mut admin, text).await;
    let pairs = work(server.worker(&e.workers[0]).await, "box0", 0).await;
    assert_eq!(pairs, 20);
    let d = show(&mut admin, id).await;
    let rows: Vec<(&str, u64)> = d
        .study
        .iter()
        .map(|r| (r.ruleset.as_str(), r.games))
        .collect();
    assert_eq!(
        rows,
        [("chess/normal", 20), ("latte/normal", 20)],
        "{rows:?}"
    );
    let compared: Vec<(&str, &str)> = d
        .comparisons
        .iter()
        .map(|c| (c.ruleset.as_str(), c.baseline.as_str()))
        .collect();
    assert_eq!(compared, [("chess/normal", "latte/normal")]);
    // A bare rule-set is ambiguous in such a run, and refused with the rows' names.
    let bare = mixed_config("study", 40, "[study]\nbaseline = \"normal\"\n");
    let err = create_err(&mut admin, bare).await;
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert!(err.message().contains("latte/normal"), "{err}");
    server.shutdown().await;
}

/// A test that mixes variants shows `first`'s results under each of them, named by the
/// assignment (a worker's spelling opens no row of its own), adding up to the run's own, and
/// a run of one row shows none (its row is the run).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mixed_variants_show_firsts_results_per_row() {
    let e = env();
    let server = Server::start(&e.db, timing(30_000)).await;
    let mut admin = server.admin(&e.admin).await;
    let id = create(&mut admin, mixed_config("match", 40, "")).await;
    let mut w = server.worker(&e.workers[0]).await;
    let wid = register(&mut w, "box0").await;
    while let Some(l) = lease(&mut w, wid, 4).await {
        play_edited(&mut w, wid, &l, 1, |g| g.variant = g.variant.to_uppercase()).await;
    }
    let d = show(&mut admin, id).await;
    let rows: Vec<(&str, u64)> = d
        .row_scores
        .iter()
        .map(|r| (r.ruleset.as_str(), r.pentanomial.iter().sum()))
        .collect();
    assert_eq!(rows, [("chess/normal", 10), ("latte/normal", 10)]);
    let sum = |f: fn(&pb::RowScore) -> u64| d.row_scores.iter().map(f).sum::<u64>();
    assert_eq!(
        (sum(|r| r.wins), sum(|r| r.draws), sum(|r| r.losses)),
        (d.wins, d.draws, d.losses)
    );
    for k in 0..5 {
        assert_eq!(
            d.row_scores.iter().map(|r| r.pentanomial[k]).sum::<u64>(),
            d.pentanomial[k]
        );
    }
    assert!(d.row_scores.iter().all(|r| r.elo.is_some()));
    let shown = coordinator::client::format_detail(&d);
    assert!(
        shown.contains("by rule-set") && shown.contains("chess/normal  W "),
        "{shown}"
    );

    let one = config("match", 8, "")
        .replace(
            "[[variants]]\nvariant = \"latte\"\nruleset = \"luft\"\n",
            "",
        )
        .replace("name = \"match test\"", "name = \"one row\"");
    let id = create(&mut admin, one).await;
    work(server.worker(&e.workers[1]).await, "box1", 0).await;
    let d = show(&mut admin, id).await;
    assert_eq!(d.pentanomial.iter().sum::<u64>(), 4);
    assert!(d.row_scores.is_empty(), "{:?}", d.row_scores);
    server.shutdown().await;
}
