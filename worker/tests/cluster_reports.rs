//! Incremental reports against a fake coordinator that keeps the API's rules for `Submit`
//! (a report number not above the last committed one is a repeat, one more than one above it
//! is refused): pairs are reported once, numbers go 1, 2, 3, ..., a transient error is
//! retried with the same report, pairs finishing while a report is in flight go together in
//! the next one, and a restarted worker resends its spool in order.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use proto::v1 as pb;
use proto::v1::worker_service_server::{WorkerService, WorkerServiceServer};
use tonic::{Request, Response, Status};
use worker::cluster::engines::{EngineArg, Engines};
use worker::cluster::spool::Spool;
use worker::cluster::{ClusterConfig, ClusterError};

/// How the fake coordinator answered a submit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Answer {
    Committed,
    Duplicate,
    /// A transient failure: the report was not committed.
    Unavailable,
    /// An error the worker does not retry: it ends the session.
    Aborted,
    /// A number more than one above the last committed one.
    Gap,
    /// A lease the coordinator does not know.
    UnknownLease,
    /// A pair an earlier report of the lease carried.
    ReportedBefore,
}

#[derive(Debug)]
struct Attempt {
    req: pb::SubmitRequest,
    answer: Answer,
    /// Registrations before it arrived.
    registrations: usize,
}

/// What the fake coordinator does besides keeping the rules.
#[derive(Debug, Default)]
struct Script {
    /// The first attempt of every report is answered only after this long.
    hold: Duration,
    /// The first attempt of this report number fails with UNAVAILABLE.
    unavailable_seq: Option<u64>,
    /// The first attempt of this report number fails with ABORTED.
    abort_seq: Option<u64>,
    /// Last committed report number per lease when the worker starts.
    committed: HashMap<u64, u64>,
    /// Leases answered with NOT_FOUND.
    unknown: Vec<u64>,
}

#[derive(Debug, Default)]
struct Seen {
    attempts: Vec<Attempt>,
    registrations: usize,
    releases: Vec<pb::ReleaseRequest>,
}

#[derive(Debug, Default)]
struct Books {
    committed: HashMap<u64, u64>,
    reported: HashMap<u64, BTreeSet<u64>>,
    failed_once: BTreeSet<u64>,
}

struct Fake {
    leases: Mutex<VecDeque<pb::Lease>>,
    script: Script,
    books: Mutex<Books>,
    seen: Arc<Mutex<Seen>>,
    /// Submits being answered now, and the most at once.
    submitting: AtomicUsize,
    most_at_once: Arc<AtomicUsize>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Counts a submit as under way until dropped.
struct Submitting<'a>(&'a AtomicUsize);

impl<'a> Submitting<'a> {
    fn start(count: &'a AtomicUsize, most: &AtomicUsize) -> Self {
        let now = count.fetch_add(1, Ordering::SeqCst) + 1;
        most.fetch_max(now, Ordering::SeqCst);
        Submitting(count)
    }
}

impl Drop for Submitting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Fake {
    /// The answer the API's rules give to `req`, committing it when they say so.
    fn judge(&self, req: &pb::SubmitRequest) -> Answer {
        let mut books = lock(&self.books);
        if self.script.unknown.contains(&req.lease_id) {
            return Answer::UnknownLease;
        }
        if self.script.unavailable_seq == Some(req.seq) && books.failed_once.insert(req.seq) {
            return Answer::Unavailable;
        }
        if self.script.abort_seq == Some(req.seq) && books.failed_once.insert(req.seq) {
            return Answer::Aborted;
        }
        let last = books.committed.get(&req.lease_id).copied().unwrap_or(0);
        if req.seq <= last {
            return Answer::Duplicate;
        }
        if req.seq > last + 1 {
            return Answer::Gap;
        }
        let reported = books.reported.entry(req.lease_id).or_default();
        if req.pairs.iter().any(|p| reported.contains(&p.index)) {
            return Answer::ReportedBefore;
        }
        reported.extend(req.pairs.iter().map(|p| p.index));
        books.committed.insert(req.lease_id, req.seq);
        Answer::Committed
    }
}

#[tonic::async_trait]
impl WorkerService for Fake {
    async fn register(
        &self,
        _request: Request<pb::RegisterRequest>,
    ) -> Result<Response<pb::RegisterResponse>, Status> {
        lock(&self.seen).registrations += 1;
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
        let _under_way = Submitting::start(&self.submitting, &self.most_at_once);
        let req = request.into_inner();
        let first_attempt = !lock(&self.seen)
            .attempts
            .iter()
            .any(|a| a.req.lease_id == req.lease_id && a.req.seq == req.seq);
        if first_attempt {
            tokio::time::sleep(self.script.hold).await;
        }
        let answer = self.judge(&req);
        let (lease, pairs) = (req.lease_id, req.pairs.len() as u32);
        {
            let mut seen = lock(&self.seen);
            let registrations = seen.registrations;
            seen.attempts.push(Attempt {
                req,
                answer,
                registrations,
            });
        }
        let reported = lock(&self.books)
            .reported
            .get(&lease)
            .map_or(0, |r| r.len() as u32);
        let ok = |duplicate, accepted_pairs| {
            Ok(Response::new(pb::SubmitResponse {
                duplicate,
                accepted_pairs,
                reported_pairs: reported,
                continue_lease: true,
            }))
        };
        match answer {
            Answer::Committed => ok(false, pairs),
            Answer::Duplicate => ok(true, 0),
            Answer::Unavailable => Err(Status::unavailable("try again")),
            Answer::Aborted => Err(Status::aborted("lost")),
            Answer::Gap => Err(Status::failed_precondition("an earlier report is missing")),
            Answer::UnknownLease => Err(Status::not_found("unknown lease")),
            Answer::ReportedBefore => Err(Status::invalid_argument("pair reported before")),
        }
    }

    async fn release(
        &self,
        request: Request<pb::ReleaseRequest>,
    ) -> Result<Response<pb::ReleaseResponse>, Status> {
        lock(&self.seen).releases.push(request.into_inner());
        Ok(Response::new(pb::ReleaseResponse {
            returned_pairs: 0,
            retry_after_ms: 0,
        }))
    }
}

/// What a run of the worker showed.
struct Outcome {
    result: Result<(), ClusterError>,
    seen: Seen,
    most_at_once: usize,
}

/// Run a worker (until no work is left) against the fake coordinator, with `spool` as its
/// spool file.
async fn run_worker(
    leases: Vec<pb::Lease>,
    script: Script,
    spool: PathBuf,
    engines: Engines,
) -> Outcome {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let most_at_once = Arc::new(AtomicUsize::new(0));
    let books = Books {
        committed: script.committed.clone(),
        ..Books::default()
    };
    let service = Fake {
        leases: Mutex::new(leases.into()),
        script,
        books: Mutex::new(books),
        seen: Arc::clone(&seen),
        submitting: AtomicUsize::new(0),
        most_at_once: Arc::clone(&most_at_once),
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
    let book_dir = spool.parent().expect("a directory").to_path_buf();
    // The sender stays alive: a dropped one reads as a shutdown signal.
    let (_stage_tx, stage) = tokio::sync::watch::channel(0u8);
    let config = ClusterConfig {
        url,
        ca: None,
        token: "t".into(),
        concurrency: 2,
        name: "reports".into(),
        spool,
        book_dir,
        exit_when_idle: true,
        engines,
        report_linger: std::time::Duration::ZERO,
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
    Outcome {
        result,
        seen,
        most_at_once: most_at_once.load(Ordering::SeqCst),
    }
}

/// Declares `slow`: the test engine answering every `go` after 20 ms, so that a pair takes
/// a few hundred milliseconds.
#[cfg(unix)]
fn slow_engine(dir: &Path) -> Engines {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("slow");
    let script = format!(
        "#!/bin/sh\nexec '{}' --delay-ms 20\n",
        env!("CARGO_BIN_EXE_fake-uci")
    );
    std::fs::write(&path, script).expect("write");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    Engines::declare(&[EngineArg {
        name: "slow".into(),
        path,
    }])
    .expect("declared")
}

/// A lease of `pairs` short chess pairs of the built-in engine against `second`.
fn lease(id: u64, pairs: u64, second: &str) -> pb::Lease {
    let player = |name: &str| pb::Player {
        name: name.into(),
        engine: name.into(),
        options: HashMap::new(),
        sha256: String::new(),
    };
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
        first: Some(player("builtin")),
        second: Some(player(second)),
        pairs: (0..pairs)
            .map(|index| pb::PairTask {
                index,
                opening: index,
                variant: "chess".into(),
                seed: index + 1,
                ..Default::default()
            })
            .collect(),
        upload_pgn: true,
    }
}

fn spool_is_empty(path: &Path) {
    assert!(Spool::open(path).expect("spool").is_empty());
    assert_eq!(std::fs::metadata(path).expect("spool file").len(), 0);
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reports_are_incremental_numbered_retried_and_grouped() {
    let dir = tempfile::tempdir().expect("dir");
    let spool = dir.path().join("spool.log");
    let pairs = 12;
    // A pair takes over 300 ms (16 plies, 8 of them 20 ms answers, twice), two at a time,
    // so the lease plays for 2 s at least; every report is held 1 s. Pairs finish while
    // reports are in flight, and the lease takes three reports or more.
    let script = Script {
        hold: Duration::from_millis(1_000),
        unavailable_seq: Some(2),
        ..Script::default()
    };
    let out = run_worker(
        vec![lease(1, pairs, "slow")],
        script,
        spool.clone(),
        slow_engine(dir.path()),
    )
    .await;
    out.result.expect("clean stop");
    let attempts = &out.seen.attempts;
    assert!(out.seen.releases.is_empty(), "{:?}", out.seen.releases);
    assert_eq!(out.most_at_once, 1, "two reports in flight at once");

    // Numbers 1, 2, 3, ... with no gap; every attempt either new or a retry of the last.
    let answers: Vec<(u64, Answer)> = attempts.iter().map(|a| (a.req.seq, a.answer)).collect();
    let committed: Vec<&pb::SubmitRequest> = attempts
        .iter()
        .filter(|a| a.answer == Answer::Committed)
        .map(|a| &a.req)
        .collect();
    let seqs: Vec<u64> = committed.iter().map(|r| r.seq).collect();
    assert_eq!(
        seqs,
        (1..=seqs.len() as u64).collect::<Vec<_>>(),
        "{answers:?}"
    );
    assert!(
        attempts
            .iter()
            .all(|a| matches!(a.answer, Answer::Committed | Answer::Unavailable)),
        "{answers:?}"
    );

    // The transient failure was retried with the same report, and then committed.
    let failed = attempts
        .iter()
        .position(|a| a.answer == Answer::Unavailable)
        .expect("report 2 failed once");
    assert_eq!(attempts[failed].req.seq, 2);
    assert_eq!(attempts[failed + 1].req, attempts[failed].req);
    assert_eq!(attempts[failed + 1].answer, Answer::Committed);

    // Incremental: every pair in exactly one report, all of them reported.
    let mut reported = BTreeSet::new();
    for r in &committed {
        assert!(r.pairs.len() <= proto::limits::PAIRS_PER_REPORT);
        assert_eq!((r.worker_id, r.lease_id), (7, 1));
        for p in &r.pairs {
            assert!(reported.insert(p.index), "pair {} in two reports", p.index);
            assert_eq!(p.games.len(), 2);
            assert!(!p.pgn_gz.is_empty());
        }
    }
    assert_eq!(reported, (0..pairs).collect::<BTreeSet<_>>());
    // No linger here: report 1 left with the first pair; pairs finished while a report was
    // held went together in the next one.
    let sizes: Vec<usize> = committed.iter().map(|r| r.pairs.len()).collect();
    assert_eq!(sizes[0], 1, "{sizes:?}");
    assert!(sizes.len() >= 3, "{sizes:?}");
    assert!(sizes.iter().any(|&n| n >= 2), "{sizes:?}");
    // Everything acknowledged: the spool was compacted to nothing.
    spool_is_empty(&spool);
}

fn report(lease: u64, seq: u64, pairs: &[u64]) -> pb::SubmitRequest {
    pb::SubmitRequest {
        worker_id: 3,
        lease_id: lease,
        seq,
        pairs: pairs
            .iter()
            .map(|&index| pb::PairResult {
                index,
                ..Default::default()
            })
            .collect(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_worker_resends_its_spool_in_order() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("spool.log");
    {
        // What a worker that crashed left: reports of lease 5 (the first of which the
        // coordinator had committed before the answer was lost) and of lease 6, which
        // the coordinator no longer knows.
        let mut s = Spool::open(&path).expect("spool");
        for r in [
            report(6, 1, &[0]),
            report(5, 1, &[0, 1]),
            report(5, 2, &[2]),
            report(6, 2, &[1]),
            report(5, 3, &[3, 4]),
        ] {
            s.append(&r).expect("append");
        }
    }
    // It crashed while appending report 4.
    let torn = "R 0a0b0c";
    std::fs::write(
        &path,
        [std::fs::read(&path).expect("read"), torn.into()].concat(),
    )
    .expect("write");
    let script = Script {
        committed: HashMap::from([(5, 1)]),
        unknown: vec![6],
        ..Script::default()
    };
    let out = run_worker(Vec::new(), script, path.clone(), Engines::default()).await;
    out.result.expect("clean stop");
    let sent: Vec<(u64, u64, Answer)> = out
        .seen
        .attempts
        .iter()
        .map(|a| (a.req.lease_id, a.req.seq, a.answer))
        .collect();
    // By lease, in report order; a duplicate counts as acknowledged; the unknown lease's
    // later report is not sent at all.
    assert_eq!(
        sent,
        [
            (5, 1, Answer::Duplicate),
            (5, 2, Answer::Committed),
            (5, 3, Answer::Committed),
            (6, 1, Answer::UnknownLease),
        ]
    );
    assert_eq!(out.seen.attempts[2].req, report(5, 3, &[3, 4]));
    assert_eq!(out.seen.registrations, 1);
    assert!(out.seen.attempts.iter().all(|a| a.registrations == 0));
    spool_is_empty(&path);
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pairs_waiting_when_the_session_ends_are_spooled_and_sent_next_session() {
    let dir = tempfile::tempdir().expect("dir");
    let spool = dir.path().join("spool.log");
    // Report 2 is held 1 s, then answered with an error that ends the session: the pairs
    // finished meanwhile go to the spool as report 3, sent after report 2 on reconnecting.
    let script = Script {
        hold: Duration::from_millis(1_000),
        abort_seq: Some(2),
        ..Script::default()
    };
    let out = run_worker(
        vec![lease(1, 12, "slow")],
        script,
        spool.clone(),
        slow_engine(dir.path()),
    )
    .await;
    out.result.expect("clean stop");
    let attempts = &out.seen.attempts;
    let sent: Vec<(u64, Answer, usize)> = attempts
        .iter()
        .map(|a| (a.req.seq, a.answer, a.registrations))
        .collect();
    assert_eq!(
        sent,
        [
            (1, Answer::Committed, 1),
            (2, Answer::Aborted, 1),
            // Before registering again.
            (2, Answer::Committed, 1),
            (3, Answer::Committed, 1),
        ]
    );
    assert_eq!(out.seen.registrations, 2);
    assert_eq!(attempts[2].req, attempts[1].req);
    assert!(!attempts[3].req.pairs.is_empty());
    let mut reported = BTreeSet::new();
    for a in [&attempts[0], &attempts[2], &attempts[3]] {
        for p in &a.req.pairs {
            assert!(reported.insert(p.index), "pair {} in two reports", p.index);
        }
    }
    spool_is_empty(&spool);
}
