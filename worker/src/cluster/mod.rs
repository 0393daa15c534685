//! The cluster client: `worker --coordinator URL --token T [--concurrency N]
//! [--engine NAME=PATH]...`.
//!
//! Registers (with the external engines this machine declares, [`engines`]), leases pairs,
//! plays them on blocking threads (one [`PairSession`] per slot and variant), reports finished
//! pairs, heartbeats meanwhile, and reconnects with exponential backoff and jitter.
//!
//! Reports are incremental (module `outbox`): each carries the pairs finished since the
//! previous one, one report of a lease is in flight at a time, and pairs finishing meanwhile
//! go together in the next. Every report is first written to a local spool file ([`spool`])
//! and dropped from it once the coordinator committed it, so a restarted worker resends, in
//! order, what was not acknowledged; the spool is compacted as it goes and does not grow
//! with the run.
//!
//! A lease this worker cannot play (an engine it did not declare, a missing book, a pair that
//! fails) is handed back with the reason as its `failure`, and the worker waits the longer of
//! the coordinator's `retry_after_ms` and a growing backoff before asking for work again.
//!
//! Shutdown: the first signal stops taking work; games under way finish, are reported, and
//! the rest of the lease is handed back. A second signal hands the lease back at once.

mod backoff;
pub mod engines;
mod jobs;
pub mod link;
mod outbox;
mod report;
pub mod spool;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use proto::v1 as pb;
use proto::v1::worker_service_client::WorkerServiceClient;
use thiserror::Error;
use tokio::sync::{mpsc, watch};
use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;
use tonic::{Code, Request, Status};
use tracing::Instrument;

use self::backoff::Backoff;
use self::engines::{EngineArg, Engines};
use self::link::Link;
use self::outbox::{Delivery, Outbox};
use self::spool::SharedSpool;
use crate::pair::PairSession;
use crate::pgn::PgnOptions;
use crate::record::PairResult;

/// Settings of the cluster client.
#[derive(Clone, Debug)]
pub struct ClusterConfig {
    /// Coordinator URL (`http://host:port`, or `https://` for TLS).
    pub url: String,
    /// PEM root certificate of a TLS coordinator whose certificate a private CA signed
    /// (without it, `https://` trusts the public web roots).
    pub ca: Option<PathBuf>,
    /// Worker token.
    pub token: String,
    /// Games at once.
    pub concurrency: usize,
    /// Name shown on `run show` (default: the token's name).
    pub name: String,
    /// The spool file of unacknowledged reports.
    pub spool: PathBuf,
    /// Directory of opening books named by runs.
    pub book_dir: PathBuf,
    /// Stop when no run has work (for tests and batch jobs) instead of waiting for more.
    pub exit_when_idle: bool,
    /// External engines this machine declares: the only programs a lease can make it run
    /// (empty: the built-in engine only).
    pub engines: Engines,
    /// Longest a finished pair waits for others to join its report while its lease plays on
    /// ([`DEFAULT_REPORT_LINGER`] by default; zero reports each pair at once).
    pub report_linger: std::time::Duration,
}

pub use outbox::DEFAULT_LINGER as DEFAULT_REPORT_LINGER;

/// Why the client stopped with an error.
#[derive(Debug, Error)]
pub enum ClusterError {
    /// The token cannot be sent.
    #[error("the token contains characters that cannot be sent")]
    BadToken,
    /// The coordinator URL or the TLS settings cannot be used.
    #[error(transparent)]
    Link(#[from] link::LinkError),
    /// The coordinator refused the worker for good (bad token, unsupported version, a
    /// registration it does not accept).
    #[error("coordinator refused the worker: {0}")]
    Refused(String),
    /// The spool file failed.
    #[error("spool {path}: {source}")]
    Spool {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// Shutdown stages: 0 running, 1 finish and submit, 2 hand back now.
pub type Stage = watch::Receiver<u8>;

#[derive(Clone, Debug)]
struct Bearer(MetadataValue<Ascii>);

impl tonic::service::Interceptor for Bearer {
    fn call(&mut self, mut req: Request<()>) -> Result<Request<()>, Status> {
        req.metadata_mut().insert("authorization", self.0.clone());
        Ok(req)
    }
}

type Client = WorkerServiceClient<InterceptedService<Channel, Bearer>>;

fn permanent(s: &Status) -> bool {
    matches!(s.code(), Code::Unauthenticated | Code::PermissionDenied)
}

/// Wait `d` unless the shutdown stage moves first; true if it did.
async fn sleep_or_stop(d: Duration, stage: &mut Stage) -> bool {
    if *stage.borrow() > 0 {
        return true;
    }
    tokio::select! {
        _ = tokio::time::sleep(d) => *stage.borrow() > 0,
        _ = stage.changed() => true,
    }
}

/// Wait `d` unless the shutdown stage reaches 2 (hand back now) first; true if it did. A
/// dropped sender counts as that.
async fn sleep_unless_aborted(d: Duration, stage: &mut Stage) -> bool {
    tokio::select! {
        biased;
        _ = stage.wait_for(|s| *s >= 2) => true,
        _ = tokio::time::sleep(d) => false,
    }
}

/// Run the client until the shutdown stage leaves 0 (or, with `exit_when_idle`, until there
/// is no work).
pub async fn run(config: ClusterConfig, mut stage: Stage) -> Result<(), ClusterError> {
    let bearer = Bearer(
        format!("Bearer {}", config.token)
            .parse()
            .map_err(|_| ClusterError::BadToken)?,
    );
    let link = Link::new(&config.url, config.ca.as_deref())?;
    let spool_error = |source| ClusterError::Spool {
        path: config.spool.clone(),
        source,
    };
    let spool = SharedSpool::open(config.spool.clone())
        .await
        .map_err(spool_error)?;
    let mut backoff = Backoff::connect();
    // Outlives connections: a reconnect must not restart the wait after failed leases.
    let mut failures = Backoff::lease_failure();
    loop {
        if *stage.borrow() > 0
            && spool
                .with(|s| Ok(s.is_empty()))
                .await
                .map_err(spool_error)?
        {
            return Ok(());
        }
        let attempt = session(
            &config,
            &link,
            bearer.clone(),
            &spool,
            &mut stage,
            &mut backoff,
            &mut failures,
        )
        .await;
        match attempt {
            Ok(()) => return Ok(()),
            Err(Interrupted::Refused(why)) => return Err(ClusterError::Refused(why)),
            Err(Interrupted::Lost(s)) => {
                let d = backoff.step();
                tracing::warn!(error = %s, retry_in_ms = d.as_millis() as u64, "coordinator unreachable");
                if sleep_unless_aborted(d, &mut stage).await {
                    return Ok(());
                }
            }
        }
    }
}

/// Why a session ended early.
#[derive(Debug)]
enum Interrupted {
    /// For good: retrying cannot help.
    Refused(String),
    /// The connection or the coordinator failed; try again later.
    Lost(Status),
}

impl From<Status> for Interrupted {
    fn from(s: Status) -> Self {
        if permanent(&s) {
            Interrupted::Refused(s.message().to_string())
        } else {
            Interrupted::Lost(s)
        }
    }
}

/// One connection: register, resend the spool, then lease and play until told to stop.
async fn session(
    config: &ClusterConfig,
    link: &Link,
    bearer: Bearer,
    spool: &SharedSpool,
    stage: &mut Stage,
    backoff: &mut Backoff,
    failures: &mut Backoff,
) -> Result<(), Interrupted> {
    let channel = link.connect().await?;
    let mut client = WorkerServiceClient::with_interceptor(channel, bearer)
        .max_decoding_message_size(proto::MAX_MESSAGE_BYTES);
    resend_spooled(&mut client, spool).await?;
    if *stage.borrow() > 0 {
        return Ok(());
    }
    let reg = client
        .register(pb::RegisterRequest {
            name: config.name.clone(),
            cores: config.concurrency as u32,
            memory_mb: 0,
            version: env!("CARGO_PKG_VERSION").into(),
            bench_signature: 0,
            variants: vec!["chess".into(), "latte".into(), "secutor".into()],
            engines: config.engines.infos(),
            features: proto::features::declared(),
        })
        .await
        .map_err(|s| match s.code() {
            // An unsupported version or a registration over the API's limits: the same
            // request would be refused again.
            Code::FailedPrecondition | Code::InvalidArgument => {
                Interrupted::Refused(s.message().to_string())
            }
            _ => s.into(),
        })?
        .into_inner();
    backoff.reset();
    tracing::info!(
        worker = reg.worker_id,
        engines = config.engines.len(),
        "registered"
    );
    loop {
        if *stage.borrow() > 0 {
            return Ok(());
        }
        let resp = client
            .lease(pb::LeaseRequest {
                worker_id: reg.worker_id,
                concurrency: config.concurrency as u32,
                max_pairs: 0,
            })
            .await?
            .into_inner();
        match resp.lease {
            Some(lease) => {
                let span = tracing::info_span!("lease", lease = lease.lease_id, run = lease.run_id);
                let end = play_lease(config, &mut client, &reg, lease, spool, stage)
                    .instrument(span)
                    .await?;
                match end {
                    LeaseEnd::Played { pairs } => {
                        if pairs > 0 {
                            failures.reset();
                        }
                    }
                    LeaseEnd::Failed { retry_after } => {
                        let d = retry_after.max(failures.step());
                        tracing::info!(
                            retry_in_ms = d.as_millis() as u64,
                            "waiting after a failed lease"
                        );
                        if sleep_or_stop(d, stage).await {
                            return Ok(());
                        }
                    }
                }
            }
            None if config.exit_when_idle => return Ok(()),
            None => {
                if sleep_or_stop(Duration::from_millis(resp.retry_after_ms.max(100)), stage).await {
                    return Ok(());
                }
            }
        }
    }
}

/// The spool's error as a status: the session ends and is tried again.
fn spool_status(e: std::io::Error) -> Status {
    Status::internal(format!("spool: {e}"))
}

/// Send the reports a previous session or run of this worker did not get acknowledged: by
/// lease, in report order. An answer, `duplicate` included, acknowledges a report. A refused
/// report drops its lease's reports: the later ones cannot be committed without it, and the
/// pairs go back to the run's queue with the lease.
async fn resend_spooled(client: &mut Client, spool: &SharedSpool) -> Result<(), Status> {
    let pending = spool
        .with(|s| Ok(s.pending()))
        .await
        .map_err(spool_status)?;
    let mut refused = BTreeSet::new();
    for req in pending {
        let (lease, seq) = (req.lease_id, req.seq);
        if refused.contains(&lease) {
            continue;
        }
        let indices: Vec<u64> = req.pairs.iter().map(|p| p.index).collect();
        match client.submit(req).await {
            Ok(_) => {
                tracing::debug!(lease, seq, pairs = ?indices, "spooled report acknowledged");
                spool
                    .with(move |s| s.ack(lease, seq))
                    .await
                    .map_err(spool_status)?;
            }
            Err(s) if outbox::lease_gone(&s) || outbox::report_refused(&s) => {
                tracing::warn!(lease, seq, error = %s, "spooled report refused");
                refused.insert(lease);
                spool
                    .with(move |s| s.forget(lease))
                    .await
                    .map_err(spool_status)?;
            }
            Err(s) => return Err(s),
        }
    }
    spool.with(|s| s.compact()).await.map_err(spool_status)
}

/// How a lease ended.
#[derive(Debug)]
enum LeaseEnd {
    /// Played (all of it, or until stopped); `pairs` were reported.
    Played {
        /// Pairs finished and reported.
        pairs: usize,
    },
    /// This worker could not play it and handed it back with the reason.
    Failed {
        /// The coordinator's hint how long to wait (0 when it sent none).
        retry_after: Duration,
    },
}

/// Hand a lease back. `failure` empty: a plain hand-back; otherwise why it could not be
/// played, cut to the API's limit.
async fn release(
    client: &mut Client,
    worker_id: u64,
    lease_id: u64,
    failure: &str,
) -> Result<pb::ReleaseResponse, Status> {
    client
        .release(pb::ReleaseRequest {
            worker_id,
            lease_id,
            failure: report::failure_reason(failure).to_string(),
        })
        .await
        .map(tonic::Response::into_inner)
}

/// Hand back a lease this worker could not play. A release that does not get through is
/// only logged: the lease expires on its own, and the wait that follows still applies.
async fn release_failed(
    client: &mut Client,
    worker_id: u64,
    lease_id: u64,
    failure: &str,
) -> LeaseEnd {
    let retry_after = match release(client, worker_id, lease_id, failure).await {
        Ok(r) => Duration::from_millis(r.retry_after_ms),
        Err(s) => {
            tracing::warn!(error = %s, "cannot hand the failed lease back");
            Duration::ZERO
        }
    };
    LeaseEnd::Failed { retry_after }
}

/// The report of a lease being sent.
type InFlight = Pin<Box<dyn Future<Output = Delivery> + Send>>;

/// The end of the report in flight; never, when none is.
async fn delivered(in_flight: &mut Option<InFlight>) -> Delivery {
    match in_flight {
        Some(f) => f.await,
        None => std::future::pending().await,
    }
}

/// Play a lease: slots on blocking threads, incremental reports, heartbeats.
async fn play_lease(
    config: &ClusterConfig,
    client: &mut Client,
    reg: &pb::RegisterResponse,
    lease: pb::Lease,
    spool: &SharedSpool,
    stage: &mut Stage,
) -> Result<LeaseEnd, Status> {
    let worker_id = reg.worker_id;
    let lease_id = lease.lease_id;
    let settings = lease.settings.clone().unwrap_or_default();
    let planned = jobs::game_config(&settings)
        .and_then(|game| Ok((game, jobs::jobs(&lease, &config.book_dir, &config.engines)?)));
    let (game, jobs) = match planned {
        Ok(p) => p,
        Err(e) => {
            let reason = e.to_string();
            tracing::error!(error = %reason, "cannot play lease, handing it back");
            return Ok(release_failed(client, worker_id, lease_id, &reason).await);
        }
    };
    let pgn = lease.upload_pgn.then(|| PgnOptions {
        event: format!("run {}", lease.run_id),
        ..PgnOptions::default()
    });
    let queue = Arc::new(Mutex::new(jobs.into_iter().collect::<VecDeque<_>>()));
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, mut rx) = mpsc::channel::<Result<PairResult, String>>(16);
    let slots = config.concurrency.max(1).min(lease.pairs.len().max(1));
    for _ in 0..slots {
        let (queue, stop, tx, game, pgn) =
            (queue.clone(), stop.clone(), tx.clone(), game, pgn.clone());
        tokio::task::spawn_blocking(move || {
            let mut sessions: BTreeMap<String, PairSession> = BTreeMap::new();
            loop {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                let Some(job) = queue.lock().ok().and_then(|mut q| q.pop_front()) else {
                    return;
                };
                let key = format!("{:?}{:?}", job.rules, job.players);
                let result = (|| {
                    if !sessions.contains_key(&key) {
                        // One session per slot: SPSA gives every pair its own parameters, and
                        // keeping each pair's engines (and their hash tables) ran the process
                        // out of memory.
                        sessions.clear();
                        sessions.insert(
                            key.clone(),
                            PairSession::new(job.rules, &job.players).map_err(|e| e.to_string())?,
                        );
                    }
                    let s = sessions.get_mut(&key).ok_or("no session")?;
                    s.play_pair_from(
                        job.task.index,
                        job.task.seed,
                        [&job.fen, &job.second_fen],
                        &game,
                        pgn.as_ref(),
                    )
                    .map_err(|e| e.to_string())
                })()
                .map_err(|e: String| format!("pair {}: {e}", job.task.index));
                if tx.blocking_send(result).is_err() {
                    return;
                }
            }
        });
    }
    drop(tx);
    let mut outbox = Outbox::new(worker_id, lease_id).with_linger(config.report_linger);
    let mut in_flight: Option<InFlight> = None;
    let mut results_open = true;
    // The coordinator no longer takes this lease's reports: later results are dropped.
    let mut lease_gone = false;
    // The first pair that failed: the reason the lease is handed back.
    let mut failure: Option<String> = None;
    let mut beat = tokio::time::interval(Duration::from_millis(reg.heartbeat_interval_ms.max(100)));
    // After a stall (a report stuck on a dead link) one heartbeat, not a burst of them.
    beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    beat.tick().await;
    let mut stage_seen = *stage.borrow();
    loop {
        // While pairs still finish, a report waits a moment for others to join it.
        let hold = if results_open && !lease_gone {
            outbox.hold_until(std::time::Instant::now())
        } else {
            None
        };
        if in_flight.is_none() && hold.is_none() {
            if let Some(req) = outbox.next_report() {
                tracing::debug!(seq = req.seq, pairs = req.pairs.len(), "reporting");
                let report = outbox::deliver(client.clone(), spool.clone(), req, stage.clone());
                in_flight = Some(Box::pin(report));
            } else if !results_open {
                break;
            }
        }
        tokio::select! {
            r = rx.recv(), if results_open => {
                match r {
                    None => results_open = false,
                    Some(Err(e)) => {
                        tracing::error!(error = %e, "pair failed, handing the lease back");
                        failure.get_or_insert(e);
                        stop.store(true, Ordering::Relaxed);
                    }
                    Some(Ok(r)) if !lease_gone => outbox.push(report::to_proto(&r)),
                    Some(Ok(_)) => {}
                }
            }
            d = delivered(&mut in_flight) => {
                in_flight = None;
                match d {
                    Delivery::Acknowledged(resp) => {
                        outbox.acknowledged();
                        if !resp.continue_lease {
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                    Delivery::LeaseGone(s) => {
                        let dropped = outbox.abandon();
                        tracing::warn!(error = %s, dropped, "lease no longer valid");
                        lease_gone = true;
                        stop.store(true, Ordering::Relaxed);
                    }
                    Delivery::Refused(s) => {
                        let dropped = outbox.abandon();
                        tracing::error!(error = %s, dropped, "report refused, handing back");
                        failure.get_or_insert(format!("report refused: {}", s.message()));
                        lease_gone = true;
                        stop.store(true, Ordering::Relaxed);
                    }
                    Delivery::Failed(s) => {
                        stop.store(true, Ordering::Relaxed);
                        // Pairs finished but not reported follow the report that failed in the
                        // spool; the next session sends them all, in order.
                        let rest = outbox.drain_reports();
                        spool
                            .with(move |sp| rest.iter().try_for_each(|r| sp.append(r)))
                            .await
                            .map_err(spool_status)?;
                        return Err(s);
                    }
                }
            }
            _ = tokio::time::sleep_until(hold.map_or_else(tokio::time::Instant::now, Into::into)), if hold.is_some() && in_flight.is_none() => {}
            _ = beat.tick() => {
                let r = client.heartbeat(pb::HeartbeatRequest { worker_id, lease_ids: vec![lease_id] }).await;
                if let Ok(r) = r {
                    if r.into_inner().leases.first().is_some_and(|s| !s.valid)
                        && !stop.swap(true, Ordering::Relaxed)
                    {
                        tracing::warn!("lease revoked");
                    }
                }
            }
            r = stage.changed() => {
                // A dropped sender can signal nothing more: taken as the second signal.
                let now = if r.is_ok() { *stage.borrow() } else { 2 };
                if now > stage_seen {
                    stage_seen = now;
                    stop.store(true, Ordering::Relaxed);
                    if now >= 2 {
                        // Hand back at once; games under way and pairs not yet reported are
                        // abandoned (a report in flight stays in the spool). A pair that had
                        // already failed is still worth telling the run about.
                        let reason = failure.as_deref().unwrap_or_default();
                        let _ = release(client, worker_id, lease_id, reason).await;
                        return Ok(LeaseEnd::Played { pairs: outbox.acknowledged_pairs() });
                    }
                }
            }
        }
    }
    debug_assert!(outbox.idle());
    let pairs = outbox.acknowledged_pairs();
    let end = if let Some(reason) = failure {
        release_failed(client, worker_id, lease_id, &reason).await
    } else {
        // Pairs never started go back to the queue now rather than at expiry.
        if pairs < lease.pairs.len() && !lease_gone {
            let _ = release(client, worker_id, lease_id, "").await;
        }
        LeaseEnd::Played { pairs }
    };
    spool.with(|s| s.compact()).await.map_err(spool_status)?;
    Ok(end)
}

/// Submit a report, sending the same request again after transient errors (with backoff)
/// until it is answered, the wait reaches its maximum, or the shutdown stage reaches 2.
async fn submit_with_retry(
    client: &mut Client,
    req: pb::SubmitRequest,
    stage: &mut Stage,
) -> Result<pb::SubmitResponse, Status> {
    let mut backoff = Backoff::connect();
    loop {
        match client.submit(req.clone()).await {
            Ok(r) => return Ok(r.into_inner()),
            Err(s)
                if matches!(
                    s.code(),
                    Code::Unavailable
                        | Code::Unknown
                        | Code::Internal
                        | Code::Cancelled
                        | Code::DeadlineExceeded
                ) =>
            {
                let d = backoff.step();
                let retry_in_ms = d.as_millis() as u64;
                tracing::debug!(seq = req.seq, error = %s, retry_in_ms, "report not through");
                if backoff.exhausted() || sleep_unless_aborted(d, stage).await {
                    return Err(s);
                }
            }
            Err(s) => return Err(s),
        }
    }
}

/// `worker --coordinator URL --token T [--concurrency N] [--engine NAME=PATH]...` flags.
#[derive(clap::Args, Debug, Clone)]
pub struct ClusterArgs {
    /// Coordinator URL: join the cluster instead of running a subcommand.
    #[arg(long)]
    pub coordinator: Option<String>,
    /// Worker token (from `coordinator token add --role worker`).
    #[arg(long, env = "WORKER_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Games at once in cluster mode (default: all cores).
    #[arg(long = "concurrency", id = "cluster_concurrency")]
    pub concurrency: Option<usize>,
    /// PEM root certificate of a TLS (`https://`) coordinator whose certificate a private CA
    /// signed; without it the public web roots are trusted.
    #[arg(long, env = "WORKER_CA")]
    pub ca: Option<PathBuf>,
    /// Worker name shown by the coordinator.
    #[arg(long)]
    pub name: Option<String>,
    /// Spool file of unacknowledged reports.
    #[arg(long, default_value = "worker-spool.log")]
    pub spool: PathBuf,
    /// Directory of opening books named by runs.
    #[arg(long, default_value = ".")]
    pub book_dir: PathBuf,
    /// An external engine runs may name (repeatable): NAME is letters, digits, '.', '_', '-';
    /// PATH an executable file. Leases can run these files and nothing else.
    #[arg(long = "engine", id = "cluster_engine", value_name = "NAME=PATH")]
    pub engines: Vec<EngineArg>,
    /// Longest a finished pair waits, in milliseconds, for more pairs to share its report
    /// while the lease plays on: fewer, larger reports (one commit each) when games are fast.
    #[arg(long, default_value_t = outbox::DEFAULT_LINGER.as_millis() as u64)]
    pub report_linger_ms: u64,
}

/// Run cluster mode from the command line: SIGINT/SIGTERM once finishes and submits, twice
/// hands the lease back; exits 0 either way.
pub fn run_cli(args: ClusterArgs) -> Result<(), crate::WorkerError> {
    let url = args.coordinator.ok_or_else(|| {
        crate::WorkerError::Invalid("give a subcommand, or --coordinator URL --token T".into())
    })?;
    let token = args.token.ok_or_else(|| {
        crate::WorkerError::Invalid("--token is required with --coordinator".into())
    })?;
    let name = args.name.unwrap_or_default();
    if name.len() > proto::limits::NAME_BYTES {
        return Err(crate::WorkerError::Invalid(format!(
            "--name {name:?} is {} bytes long; the coordinator takes at most {}",
            name.len(),
            proto::limits::NAME_BYTES
        )));
    }
    let engines =
        Engines::declare(&args.engines).map_err(|e| crate::WorkerError::Invalid(e.to_string()))?;
    for e in engines.iter() {
        match e.network() {
            Some(n) => tracing::info!(
                engine = e.name(),
                path = %e.path().display(),
                sha256 = e.sha256(),
                network = %n.variant,
                "engine declared: our engine with a network file"
            ),
            None => tracing::info!(
                engine = e.name(),
                path = %e.path().display(),
                sha256 = e.sha256(),
                "engine declared"
            ),
        }
    }
    let config = ClusterConfig {
        url,
        ca: args.ca,
        token,
        concurrency: args
            .concurrency
            .unwrap_or_else(crate::matches::default_concurrency),
        name,
        spool: args.spool,
        book_dir: args.book_dir,
        exit_when_idle: false,
        engines,
        report_linger: Duration::from_millis(args.report_linger_ms),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| crate::WorkerError::Invalid(format!("cannot start the runtime: {e}")))?;
    rt.block_on(async move {
        let (tx, rx) = watch::channel(0u8);
        tokio::spawn(async move {
            for stage in 1..=2u8 {
                signal().await;
                tracing::info!(stage, "shutdown signal");
                let _ = tx.send(stage);
            }
        });
        run(config, rx)
            .await
            .map_err(|e| crate::WorkerError::Invalid(e.to_string()))
    })?;
    // Abandoned games may still run on blocking threads; the process exits regardless.
    crate::player::uci::kill_all_engines();
    std::process::exit(0)
}

async fn signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
