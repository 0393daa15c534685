//! The cluster client against a scripted coordinator: what it registers, how it plays a
//! declared engine, and how it hands back a lease it cannot play (with the reason, then a wait
//! instead of taking work again at once).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use proto::v1 as pb;
use proto::v1::worker_service_server::{WorkerService, WorkerServiceServer};
use tonic::{Request, Response, Status};
use worker::cluster::engines::{sha256_file, EngineArg, Engines};
use worker::cluster::{ClusterConfig, ClusterError};

/// What the worker called, in order.
#[derive(Debug, Default)]
struct Seen {
    registrations: Vec<pb::RegisterRequest>,
    lease_calls: Vec<Instant>,
    releases: Vec<(Instant, pb::ReleaseRequest)>,
    submits: Vec<pb::SubmitRequest>,
}

/// Hands out the scripted leases one per call, then none.
struct Scripted {
    leases: Mutex<VecDeque<pb::Lease>>,
    retry_after_ms: u64,
    seen: Arc<Mutex<Seen>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[tonic::async_trait]
impl WorkerService for Scripted {
    async fn register(
        &self,
        request: Request<pb::RegisterRequest>,
    ) -> Result<Response<pb::RegisterResponse>, Status> {
        lock(&self.seen).registrations.push(request.into_inner());
        Ok(Response::new(pb::RegisterResponse {
            worker_id: 7,
            heartbeat_interval_ms: 1_000,
            lease_timeout_ms: 30_000,
        }))
    }

    async fn lease(
        &self,
        _request: Request<pb::LeaseRequest>,
    ) -> Result<Response<pb::LeaseResponse>, Status> {
        lock(&self.seen).lease_calls.push(Instant::now());
        Ok(Response::new(pb::LeaseResponse {
            lease: lock(&self.leases).pop_front(),
            retry_after_ms: 50,
        }))
    }

    async fn heartbeat(
        &self,
        request: Request<pb::HeartbeatRequest>,
    ) -> Result<Response<pb::HeartbeatResponse>, Status> {
        let leases = request
            .into_inner()
            .lease_ids
            .into_iter()
            .map(|lease_id| pb::LeaseStatus {
                lease_id,
                valid: true,
                deadline_unix_ms: 0,
                reason: String::new(),
            })
            .collect();
        Ok(Response::new(pb::HeartbeatResponse { leases }))
    }

    async fn submit(
        &self,
        request: Request<pb::SubmitRequest>,
    ) -> Result<Response<pb::SubmitResponse>, Status> {
        let req = request.into_inner();
        let pairs = req.pairs.len() as u32;
        lock(&self.seen).submits.push(req);
        Ok(Response::new(pb::SubmitResponse {
            duplicate: false,
            accepted_pairs: 1,
            reported_pairs: pairs,
            continue_lease: true,
        }))
    }

    async fn release(
        &self,
        request: Request<pb::ReleaseRequest>,
    ) -> Result<Response<pb::ReleaseResponse>, Status> {
        lock(&self.seen)
            .releases
            .push((Instant::now(), request.into_inner()));
        Ok(Response::new(pb::ReleaseResponse {
            returned_pairs: 1,
            retry_after_ms: self.retry_after_ms,
        }))
    }
}

/// Runs a worker (until no work is left) against a coordinator handing out `leases`.
async fn run_worker(
    leases: Vec<pb::Lease>,
    retry_after_ms: u64,
    engines: Engines,
) -> (Result<(), ClusterError>, Seen) {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let service = Scripted {
        leases: Mutex::new(leases.into()),
        retry_after_ms,
        seen: Arc::clone(&seen),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let (stop_server, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(WorkerServiceServer::new(service))
            .serve_with_incoming_shutdown(
                tonic::transport::server::TcpIncoming::from(listener),
                async {
                    let _ = stopped.await;
                },
            ),
    );
    let dir = tempfile::tempdir().expect("dir");
    // The sender stays alive: a dropped one reads as a shutdown signal.
    let (_stage_tx, stage) = tokio::sync::watch::channel(0u8);
    let config = ClusterConfig {
        url,
        ca: None,
        token: "t".into(),
        concurrency: 1,
        name: "scripted".into(),
        spool: dir.path().join("spool.log"),
        book_dir: dir.path().to_path_buf(),
        exit_when_idle: true,
        engines,
        report_linger: worker::cluster::DEFAULT_REPORT_LINGER,
    };
    let result = tokio::time::timeout(
        Duration::from_secs(120),
        worker::cluster::run(config, stage),
    )
    .await
    .expect("the worker stops once no work is left");
    let _ = stop_server.send(());
    let _ = server.await;
    let seen = std::mem::take(&mut *lock(&seen));
    (result, seen)
}

fn fake_uci() -> Engines {
    Engines::declare(&[EngineArg {
        name: "fake".into(),
        path: env!("CARGO_BIN_EXE_fake-uci").into(),
    }])
    .expect("fake-uci is an executable file")
}

fn fake_digest() -> String {
    sha256_file(env!("CARGO_BIN_EXE_fake-uci").as_ref()).expect("readable")
}

fn player(name: &str, engine: &str, sha256: &str) -> pb::Player {
    pb::Player {
        name: name.into(),
        engine: engine.into(),
        options: HashMap::new(),
        sha256: sha256.into(),
    }
}

/// A lease of one small chess pair between the built-in engine and `second`.
fn lease(id: u64, second: pb::Player) -> pb::Lease {
    pb::Lease {
        lease_id: id,
        run_id: 1,
        run_kind: "match".into(),
        deadline_unix_ms: 0,
        settings: Some(pb::GameSettings {
            nodes: 200,
            max_plies: 16,
            ..Default::default()
        }),
        first: Some(player("builtin", "builtin", "")),
        second: Some(second),
        pairs: vec![pb::PairTask {
            index: 0,
            opening: 0,
            variant: "chess".into(),
            seed: 1,
            ..Default::default()
        }],
        upload_pgn: true,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registers_declared_engines_and_plays_them() {
    let digest = fake_digest();
    let (result, seen) = run_worker(
        vec![lease(1, player("fake", "fake", &digest))],
        0,
        fake_uci(),
    )
    .await;
    result.expect("clean stop");
    let reg = &seen.registrations[0];
    assert_eq!(reg.engines.len(), 1);
    assert_eq!(reg.engines[0].name, "fake");
    assert_eq!(reg.engines[0].sha256, digest);
    assert_eq!(digest.len(), 64);
    assert!(seen.releases.is_empty(), "{:?}", seen.releases);
    let report = seen.submits.last().expect("a report");
    assert_eq!(report.pairs.len(), 1);
    let pair = &report.pairs[0];
    assert_eq!(pair.games.len(), 2);
    for g in &pair.games {
        assert_eq!(g.variant, "chess");
        assert!(g.plies > 0 && g.plies <= 16, "{}", g.plies);
    }
    assert!(!pair.pgn_gz.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_undeclared_engine_fails_the_lease_and_the_worker_waits() {
    let (result, seen) = run_worker(
        vec![
            lease(1, player("x", "ghost", "")),
            lease(2, player("x", "ghost", "")),
        ],
        1_500,
        fake_uci(),
    )
    .await;
    result.expect("clean stop");
    assert!(seen.submits.is_empty());
    assert_eq!(seen.releases.len(), 2, "{:?}", seen.releases);
    let (released, req) = &seen.releases[0];
    assert_eq!(req.lease_id, 1);
    assert_eq!(
        req.failure,
        "engine 'ghost' is not declared on this worker (start it with --engine ghost=PATH)"
    );
    // Three lease calls in all: no spinning on the failing run.
    assert_eq!(seen.lease_calls.len(), 3);
    let next = seen.lease_calls[1];
    assert!(
        next.duration_since(*released) >= Duration::from_millis(1_500),
        "asked again after {:?}",
        next.duration_since(*released)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pinned_digest_mismatch_fails_the_lease_and_the_wait_grows() {
    let pinned = "0".repeat(64);
    let leases = (1..=3)
        .map(|id| lease(id, player("x", "fake", &pinned)))
        .collect();
    // No hint from the coordinator: the worker's own backoff (1 s, 2 s, ... nominal, half
    // to one and a half times that) still keeps it from asking again at once.
    let (result, seen) = run_worker(leases, 0, fake_uci()).await;
    result.expect("clean stop");
    assert_eq!(seen.releases.len(), 3);
    let failure = &seen.releases[0].1.failure;
    assert!(
        failure.contains(&pinned) && failure.contains(&fake_digest()),
        "{failure}"
    );
    let waits: Vec<Duration> = seen
        .releases
        .iter()
        .zip(&seen.lease_calls[1..])
        .map(|((released, _), asked)| asked.duration_since(*released))
        .collect();
    assert!(waits[0] >= Duration::from_millis(500), "{waits:?}");
    assert!(waits[1] >= Duration::from_millis(1_000), "{waits:?}");
    assert!(waits[2] >= Duration::from_millis(2_000), "{waits:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_pair_hands_the_lease_back_with_the_reason() {
    let dir = tempfile::tempdir().expect("dir");
    // Declared and executable, but not an engine: the pair fails when it starts.
    let broken = dir.path().join("broken");
    std::fs::write(&broken, "#!/bin/sh\nexit 1\n").expect("write");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&broken, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let engines = Engines::declare(&[EngineArg {
        name: "broken".into(),
        path: broken,
    }])
    .expect("declared");
    let (result, seen) = run_worker(vec![lease(1, player("b", "broken", ""))], 200, engines).await;
    result.expect("clean stop");
    assert_eq!(seen.releases.len(), 1, "{:?}", seen.releases);
    let (released, req) = &seen.releases[0];
    assert!(req.failure.starts_with("pair 0: "), "{}", req.failure);
    assert!(req.failure.len() <= proto::limits::FAILURE_BYTES);
    assert!(seen.lease_calls[1].duration_since(*released) >= Duration::from_millis(200));
}

/// A coordinator sending an absurd clock (no run config allows one) gets the lease back with
/// the reason; the worker neither panics nor starts a game on it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_absurd_clock_hands_the_lease_back_with_the_reason() {
    let mut hostile = lease(1, player("b", "builtin", ""));
    hostile.settings = Some(pb::GameSettings {
        clock_base_ms: u64::MAX,
        clock_inc_ms: u64::MAX,
        max_plies: 16,
        ..Default::default()
    });
    let (result, seen) = run_worker(vec![hostile], 0, Engines::default()).await;
    result.expect("clean stop");
    assert!(seen.submits.is_empty(), "{:?}", seen.submits);
    assert_eq!(seen.releases.len(), 1, "{:?}", seen.releases);
    let failure = &seen.releases[0].1.failure;
    assert!(
        failure.starts_with("clock of ") && failure.contains("over an hour"),
        "{failure}"
    );
}
