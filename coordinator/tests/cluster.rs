//! The coordinator booted for real on 127.0.0.1:0 with a temporary database, driven by
//! synthetic workers that play no games and report made-up pair results.

use coordinator::client::Bearer;
use coordinator::core::Timing;
use coordinator::store::{self, Role};
use coordinator::ServeConfig;
use proto::v1 as pb;
use proto::v1::admin_service_client::AdminServiceClient;
use proto::v1::worker_service_client::WorkerServiceClient;
use std::future::Future;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;
use tonic::Code;

type Worker = WorkerServiceClient<InterceptedService<Channel, Bearer>>;
type Admin = AdminServiceClient<InterceptedService<Channel, Bearer>>;

/// Poll `check` until it returns `Some`, or fail after `timeout`.
async fn wait_until<T, F, Fut>(what: &str, timeout: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

struct Server {
    url: String,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<Result<(), coordinator::server::ServeError>>>,
}

impl Server {
    async fn start(db: &Path, timing: Timing) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let mut config = ServeConfig::new(db);
        config.timing = timing;
        config.sweep_interval = Duration::from_millis(100);
        let (stop, rx) = oneshot::channel();
        let task = tokio::spawn(coordinator::serve(config, listener, None, async {
            let _ = rx.await;
        }));
        let s = Self {
            url,
            stop: Some(stop),
            task: Some(task),
        };
        // Ready when the health service answers.
        let url = s.url.clone();
        wait_until("server ready", Duration::from_secs(20), || {
            let url = url.clone();
            async move {
                let ch = Channel::from_shared(url).ok()?.connect().await.ok()?;
                let mut h = tonic_health::pb::health_client::HealthClient::new(ch);
                h.check(tonic_health::pb::HealthCheckRequest {
                    service: String::new(),
                })
                .await
                .ok()
            }
        })
        .await;
        s
    }

    async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.unwrap().unwrap();
        }
    }

    async fn channel(&self) -> Channel {
        Channel::from_shared(self.url.clone())
            .unwrap()
            .connect()
            .await
            .unwrap()
    }

    async fn worker(&self, token: &str) -> Worker {
        WorkerServiceClient::with_interceptor(self.channel().await, Bearer::new(token).unwrap())
    }

    async fn admin(&self, token: &str) -> Admin {
        AdminServiceClient::with_interceptor(self.channel().await, Bearer::new(token).unwrap())
    }
}

struct Env {
    _dir: tempfile::TempDir,
    db: PathBuf,
    admin: String,
    workers: Vec<String>,
}

fn env() -> Env {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cluster.db");
    let conn = store::open(&db).unwrap();
    let admin = store::add_token(&conn, "ops", Role::Admin, 0).unwrap();
    let workers = (0..3)
        .map(|i| store::add_token(&conn, &format!("box{i}"), Role::Worker, 0).unwrap())
        .collect();
    Env {
        _dir: dir,
        db,
        admin,
        workers,
    }
}

fn timing(lease_ms: u64) -> Timing {
    Timing {
        lease_timeout_ms: lease_ms,
        heartbeat_interval_ms: lease_ms / 3,
        idle_retry_ms: 50,
    }
}

fn config(kind: &str, games: u64, extra: &str) -> String {
    format!(
        r#"
name = "{kind} test"
kind = "{kind}"
games = {games}
seed = 7
batch_seconds = 1

[limits]
nodes = 500

[[variants]]
variant = "latte"
ruleset = "normal"

[[variants]]
variant = "latte"
ruleset = "luft"

[first]
engine = "builtin"
{extra}
"#
    )
}

fn gz(text: &str) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(text.as_bytes()).unwrap();
    e.finish().unwrap()
}

/// A made-up pair: outcomes from the index, `bias` > 0 favours `first`.
fn synthetic(task: &pb::PairTask, bias: u64, pgn: bool) -> pb::PairResult {
    let h = task.index.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 33;
    let game = |first_is_white: bool, k: u64| {
        let r = (h >> (k * 3)) % (3 + bias);
        // 0: first wins, 1: draw, 2: first loses, >= 3: first wins.
        let first_wins = r == 0 || r >= 3;
        let outcome = match (r, first_is_white) {
            (1, _) => pb::GameOutcome::Draw,
            (_, true) if first_wins => pb::GameOutcome::WhiteWin,
            (_, false) if first_wins => pb::GameOutcome::BlackWin,
            (_, true) => pb::GameOutcome::BlackWin,
            (_, false) => pb::GameOutcome::WhiteWin,
        };
        pb::GameFacts {
            outcome: outcome as i32,
            first_is_white,
            termination: "checkmate".into(),
            plies: 40 + (h % 50) as u32,
            castlings: vec![pb::Castling {
                white: true,
                kind: if task.ruleset == "luft" {
                    "O-O-L"
                } else {
                    "O-O"
                }
                .into(),
                move_number: 8,
            }],
            ruleset: task.ruleset.clone(),
        }
    };
    pb::PairResult {
        index: task.index,
        games: vec![game(true, 0), game(false, 1)],
        pgn_gz: if pgn {
            gz(&format!(
                "[Event \"pair {i}\"]\n[Round \"{i}.1\"]\n\n1. e4 *\n\n[Event \"pair {i}\"]\n[Round \"{i}.2\"]\n\n1. d4 *\n",
                i = task.index
            ))
        } else {
            Vec::new()
        },
    }
}

async fn register(w: &mut Worker, name: &str) -> u64 {
    w.register(pb::RegisterRequest {
        name: name.into(),
        cores: 2,
        version: "0.1.0".into(),
        variants: vec!["latte".into(), "chess".into()],
        ..Default::default()
    })
    .await
    .unwrap()
    .into_inner()
    .worker_id
}

async fn lease(w: &mut Worker, id: u64, max_pairs: u32) -> Option<pb::Lease> {
    w.lease(pb::LeaseRequest {
        worker_id: id,
        concurrency: 2,
        max_pairs,
    })
    .await
    .unwrap()
    .into_inner()
    .lease
}

/// Play a lease to the end, reporting after every pair. Returns the number of reports.
async fn play(w: &mut Worker, id: u64, l: &pb::Lease, bias: u64) -> u64 {
    let mut done = Vec::new();
    let mut seq = 0;
    for task in &l.pairs {
        done.push(synthetic(task, bias, l.upload_pgn));
        seq += 1;
        let r = w
            .submit(pb::SubmitRequest {
                worker_id: id,
                lease_id: l.lease_id,
                seq,
                pairs: done.clone(),
            })
            .await;
        match r {
            Ok(r) if r.get_ref().continue_lease => {}
            Ok(_) => break,
            // The run ended under us (an SPRT decided): the lease was revoked.
            Err(s) if s.code() == Code::FailedPrecondition => break,
            Err(s) => panic!("submit failed: {s}"),
        }
    }
    seq
}

/// Work until no run has anything left.
async fn work(mut w: Worker, name: &str, bias: u64) -> u64 {
    let id = register(&mut w, name).await;
    let mut pairs = 0;
    let mut idle = 0;
    while idle < 5 {
        match lease(&mut w, id, 3).await {
            Some(l) => {
                idle = 0;
                play(&mut w, id, &l, bias).await;
                pairs += l.pairs.len() as u64;
            }
            None => {
                idle += 1;
                tokio::time::sleep(Duration::from_millis(30)).await;
            }
        }
    }
    pairs
}

async fn show(a: &mut Admin, id: u64) -> pb::RunDetail {
    a.show_run(pb::RunRequest { run_id: id })
        .await
        .unwrap()
        .into_inner()
}

async fn create(a: &mut Admin, text: String) -> u64 {
    a.create_run(pb::CreateRunRequest { config_toml: text })
        .await
        .unwrap()
        .into_inner()
        .run_id
}

fn assert_exact(d: &pb::RunDetail) {
    let s = d.summary.as_ref().unwrap();
    assert_eq!(s.pairs_done, s.pairs_total, "{s:?}");
    assert_eq!(s.state, pb::RunState::Finished as i32, "{s:?}");
    assert_eq!(d.pentanomial.iter().sum::<u64>(), s.pairs_total);
    assert_eq!(d.wins + d.draws + d.losses, 2 * s.pairs_total);
}

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
            "[spsa]\nparams = \"\"\"\nKnightValue,300,200,400,10,0.002\nScale,float,1.0,0.5,2.0,0.1,0.01\n\"\"\"\n",
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
    let mut pgn = admin
        .export_pgn(pb::RunRequest { run_id: m })
        .await
        .unwrap()
        .into_inner();
    let mut text = String::new();
    while let Some(c) = pgn.message().await.unwrap() {
        text.push_str(&c.text);
    }
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
    let id = create(
        &mut admin,
        config(
            "sprt",
            4000,
            "[sprt]\nelo0 = 0\nelo1 = 10\nmodel = \"logistic\"\n",
        ),
    )
    .await;
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
    let id = create(&mut admin, config("match", 20, "")).await;

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
            pairs: vec![one.clone(), synthetic(&l.pairs[1], 0, true)],
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
    assert_eq!(per_worker, vec![("box0".into(), 1), ("box1".into(), 9)]);
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
            "[spsa]\nparams = \"KnightValue,300,200,400,10,0.002\"\n",
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
    let mut all = first_two;
    for (k, t) in l.pairs[2..].iter().enumerate() {
        all.push(synthetic(t, 0, false));
        let r = w
            .submit(pb::SubmitRequest {
                worker_id: wid,
                lease_id: l.lease_id,
                seq: 2 + k as u64,
                pairs: all.clone(),
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
    let id = create(&mut admin, config("match", 20, "")).await;
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
            token: e.workers[0].clone(),
            concurrency: 2,
            name: "real".into(),
            spool: spool.clone(),
            book_dir: PathBuf::from("."),
            exit_when_idle: true,
        },
        stage,
    )
    .await
    .unwrap();
    let d = show(&mut admin, id).await;
    assert_exact(&d);
    assert_eq!(d.study.iter().map(|r| r.games).sum::<u64>(), 8);
    let mut pgn = admin
        .export_pgn(pb::RunRequest { run_id: id })
        .await
        .unwrap()
        .into_inner();
    let mut text = String::new();
    while let Some(c) = pgn.message().await.unwrap() {
        text.push_str(&c.text);
    }
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
