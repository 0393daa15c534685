//! The cluster client: `worker --coordinator URL --token T [--concurrency N]`.
//!
//! Registers, leases pairs, plays them on blocking threads (one [`PairSession`] per slot and
//! variant), reports after every finished pair (cumulative per lease, numbered), heartbeats
//! meanwhile, and reconnects with exponential backoff and jitter. Every report is first
//! appended to a local spool file ([`spool`]) and marked acknowledged only after the
//! coordinator committed it, so a restarted worker resends what was not acknowledged.
//!
//! Shutdown: the first signal stops taking work; games under way finish, are reported, and
//! the rest of the lease is handed back. A second signal hands the lease back at once.

pub mod spool;

use std::collections::{BTreeMap, VecDeque};
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use engine::Rules;
use proto::v1 as pb;
use proto::v1::worker_service_client::WorkerServiceClient;
use rand::Rng;
use thiserror::Error;
use tokio::sync::{mpsc, watch};
use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;
use tonic::{Code, Request, Status};

use crate::adjudication::{Adjudication, DrawRule, ResignRule};
use crate::book::Book;
use crate::limits::TimeControl;
use crate::pair::PairSession;
use crate::pgn::PgnOptions;
use crate::player::PlayerSpec;
use crate::record::PairResult;
use crate::runner::GameConfig;

/// Settings of the cluster client.
#[derive(Clone, Debug)]
pub struct ClusterConfig {
    /// Coordinator URL (`http://host:port`).
    pub url: String,
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
}

/// Why the client stopped with an error.
#[derive(Debug, Error)]
pub enum ClusterError {
    /// The token cannot be sent.
    #[error("the token contains characters that cannot be sent")]
    BadToken,
    /// The coordinator refused the worker for good (bad token, unsupported version).
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

/// Randomised exponential backoff, reset on success.
struct Backoff {
    next: Duration,
}

impl Backoff {
    const MIN: Duration = Duration::from_millis(100);
    const MAX: Duration = Duration::from_secs(60);

    fn new() -> Self {
        Self { next: Self::MIN }
    }

    fn reset(&mut self) {
        self.next = Self::MIN;
    }

    fn step(&mut self) -> Duration {
        let jitter = rand::thread_rng().gen_range(0.5..1.5);
        let d = self.next.mul_f64(jitter);
        self.next = (self.next * 2).min(Self::MAX);
        d
    }
}

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

/// Run the client until the shutdown stage leaves 0 (or, with `exit_when_idle`, until there
/// is no work).
pub async fn run(config: ClusterConfig, mut stage: Stage) -> Result<(), ClusterError> {
    let bearer = Bearer(
        format!("Bearer {}", config.token)
            .parse()
            .map_err(|_| ClusterError::BadToken)?,
    );
    let mut spool = spool::Spool::open(&config.spool).map_err(|source| ClusterError::Spool {
        path: config.spool.clone(),
        source,
    })?;
    let mut backoff = Backoff::new();
    loop {
        if *stage.borrow() > 0 && spool.pending().is_empty() {
            return Ok(());
        }
        let attempt = session(
            &config,
            bearer.clone(),
            &mut spool,
            &mut stage,
            &mut backoff,
        )
        .await;
        match attempt {
            Ok(()) => return Ok(()),
            Err(s) if permanent(&s) => return Err(ClusterError::Refused(s.message().to_string())),
            Err(s) => {
                let d = backoff.step();
                tracing::warn!(error = %s, retry_in_ms = d.as_millis() as u64, "coordinator unreachable");
                if sleep_or_stop(d, &mut stage).await && *stage.borrow() >= 2 {
                    return Ok(());
                }
            }
        }
    }
}

/// One connection: register, resend the spool, then lease and play until told to stop.
async fn session(
    config: &ClusterConfig,
    bearer: Bearer,
    spool: &mut spool::Spool,
    stage: &mut Stage,
    backoff: &mut Backoff,
) -> Result<(), Status> {
    let channel = Channel::from_shared(config.url.clone())
        .map_err(|e| Status::invalid_argument(e.to_string()))?
        .connect()
        .await
        .map_err(|e| Status::unavailable(e.to_string()))?;
    let mut client = WorkerServiceClient::with_interceptor(channel, bearer)
        .max_decoding_message_size(proto::MAX_MESSAGE_BYTES);
    // Reports a previous run of this worker did not get acknowledged.
    for req in spool.pending() {
        let (lease, seq) = (req.lease_id, req.seq);
        match client.submit(req).await {
            Ok(_) => {}
            // The lease is gone: those pairs went back to the queue and are played again.
            Err(s)
                if matches!(
                    s.code(),
                    Code::FailedPrecondition
                        | Code::NotFound
                        | Code::PermissionDenied
                        | Code::InvalidArgument
                ) =>
            {
                tracing::warn!(lease, error = %s, "spooled report refused");
            }
            Err(s) => return Err(s),
        }
        spool
            .ack(lease, seq)
            .map_err(|e| Status::internal(e.to_string()))?;
    }
    spool
        .compact()
        .map_err(|e| Status::internal(e.to_string()))?;
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
            engines: Vec::new(),
        })
        .await?
        .into_inner();
    backoff.reset();
    tracing::info!(worker = reg.worker_id, "registered");
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
                play_lease(
                    config,
                    &mut client,
                    reg.worker_id,
                    &reg,
                    lease,
                    spool,
                    stage,
                )
                .await?;
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

fn player(
    p: Option<&pb::Player>,
    extra: &std::collections::HashMap<String, String>,
) -> Result<PlayerSpec, String> {
    let p = p.ok_or("lease without players")?;
    // Per-pair options override the lease's; sorted so every run applies them alike.
    let mut merged: BTreeMap<&String, &String> = p.options.iter().collect();
    merged.extend(extra.iter());
    let mut options: Vec<(usize, String, String)> = merged
        .into_iter()
        .map(|(k, v)| (0, k.clone(), v.clone()))
        .collect();
    let mut spec = if p.engine == "builtin" || p.engine.is_empty() {
        PlayerSpec::internal(p.name.clone())
    } else {
        PlayerSpec::Uci(crate::player::spec::UciSpec::new(
            p.name.clone(),
            p.engine.clone(),
        ))
    };
    if let PlayerSpec::Internal(i) = &mut spec {
        if let Some(pos) = options
            .iter()
            .position(|(_, k, _)| k.eq_ignore_ascii_case("hash"))
        {
            let (_, _, v) = options.remove(pos);
            i.hash_mib = v.parse().map_err(|_| format!("bad Hash value {v:?}"))?;
        }
    }
    spec.apply_params(std::path::Path::new("lease"), &options)
        .map_err(|e| e.to_string())?;
    Ok(spec)
}

fn game_config(s: &pb::GameSettings) -> GameConfig {
    let tc = if s.nodes > 0 {
        TimeControl::Nodes(s.nodes)
    } else if s.depth > 0 {
        TimeControl::Depth(s.depth)
    } else {
        TimeControl::MoveTime(Duration::from_millis(s.movetime_ms.max(1)))
    };
    let mut g = GameConfig::new(tc);
    let a = s.adjudication.unwrap_or_default();
    g.adjudication = if a.enabled {
        Adjudication {
            resign: Some(ResignRule {
                move_count: a.resign_moves,
                score: a.resign_score_cp,
            }),
            draw: Some(DrawRule {
                move_number: a.draw_after_move,
                move_count: a.draw_moves,
                score: a.draw_score_cp,
            }),
            max_moves: None,
        }
    } else {
        Adjudication {
            resign: None,
            draw: None,
            max_moves: None,
        }
    };
    if s.max_plies > 0 {
        g.adjudication.max_moves = Some(s.max_plies.div_ceil(2));
    }
    g
}

fn to_proto(r: &PairResult) -> pb::PairResult {
    let games = r
        .games
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let s = g.study_record(&r.ruleset);
            pb::GameFacts {
                outcome: match s.result {
                    stats::study::Outcome::WhiteWin => pb::GameOutcome::WhiteWin,
                    stats::study::Outcome::Draw => pb::GameOutcome::Draw,
                    stats::study::Outcome::BlackWin => pb::GameOutcome::BlackWin,
                } as i32,
                first_is_white: i == 0,
                termination: s.termination,
                plies: s.plies,
                castlings: s
                    .castlings
                    .into_iter()
                    .map(|c| pb::Castling {
                        white: c.side == stats::study::Side::White,
                        kind: c.kind,
                        move_number: c.move_number,
                    })
                    .collect(),
                ruleset: r.ruleset.clone(),
            }
        })
        .collect();
    let pgn_gz = r.pgn.as_deref().map_or_else(Vec::new, |text| {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        let _ = e.write_all(text.as_bytes());
        e.finish().unwrap_or_default()
    });
    pb::PairResult {
        index: r.pair_index,
        games,
        pgn_gz,
    }
}

/// What one pair needs on a slot thread.
struct Job {
    task: pb::PairTask,
    rules: Rules,
    fen: String,
    players: [PlayerSpec; 2],
}

fn jobs(config: &ClusterConfig, lease: &pb::Lease) -> Result<Vec<Job>, String> {
    let settings = lease.settings.clone().unwrap_or_default();
    let mut books: BTreeMap<(String, String, String), Book> = BTreeMap::new();
    let mut out = Vec::new();
    for task in &lease.pairs {
        let ruleset = (!task.ruleset.is_empty()).then_some(task.ruleset.as_str());
        let rules = Rules::parse(&task.variant, ruleset).map_err(|e| e.to_string())?;
        let name = if task.book.is_empty() {
            settings.book.clone()
        } else {
            task.book.clone()
        };
        let key = (task.variant.clone(), task.ruleset.clone(), name.clone());
        if !books.contains_key(&key) {
            let book = if name.is_empty() {
                Book::builtin(rules)
            } else {
                Book::load(&config.book_dir.join(&name), rules)
            }
            .map_err(|e| e.to_string())?;
            books.insert(key.clone(), book);
        }
        let book = &books[&key];
        let fen =
            book.positions[(task.opening % book.positions.len().max(1) as u64) as usize].clone();
        out.push(Job {
            rules,
            fen,
            players: [
                player(lease.first.as_ref(), &task.first_options)?,
                player(lease.second.as_ref(), &task.second_options)?,
            ],
            task: task.clone(),
        });
    }
    Ok(out)
}

/// Play a lease: slots on blocking threads, a report after every pair, heartbeats.
async fn play_lease(
    config: &ClusterConfig,
    client: &mut Client,
    worker_id: u64,
    reg: &pb::RegisterResponse,
    lease: pb::Lease,
    spool: &mut spool::Spool,
    stage: &mut Stage,
) -> Result<(), Status> {
    let lease_id = lease.lease_id;
    let span = tracing::info_span!("lease", lease = lease_id, run = lease.run_id);
    let _enter = span.enter();
    let release = |client: &mut Client| {
        let mut c = client.clone();
        async move {
            c.release(pb::ReleaseRequest {
                worker_id,
                lease_id,
            })
            .await
            .map(|_| ())
        }
    };
    let jobs = match jobs(config, &lease) {
        Ok(j) => j,
        Err(e) => {
            tracing::error!(error = %e, "cannot play lease, handing it back");
            return release(client).await;
        }
    };
    let settings = lease.settings.clone().unwrap_or_default();
    let game = game_config(&settings);
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
                    s.play_pair(job.task.index, job.task.seed, &job.fen, &game, pgn.as_ref())
                        .map_err(|e| e.to_string())
                })();
                if tx.blocking_send(result).is_err() {
                    return;
                }
            }
        });
    }
    drop(tx);
    let mut done: Vec<pb::PairResult> = Vec::new();
    let mut seq = 0u64;
    let mut beat = tokio::time::interval(Duration::from_millis(reg.heartbeat_interval_ms.max(100)));
    beat.tick().await;
    let mut stage_seen = *stage.borrow();
    loop {
        tokio::select! {
            r = rx.recv() => {
                let Some(r) = r else { break };
                let r = match r {
                    Ok(r) => r,
                    Err(e) => {
                        tracing::error!(error = %e, "pair failed, handing the lease back");
                        stop.store(true, Ordering::Relaxed);
                        continue;
                    }
                };
                done.push(to_proto(&r));
                seq += 1;
                let req = pb::SubmitRequest { worker_id, lease_id, seq, pairs: done.clone() };
                spool.append(&req).map_err(|e| Status::internal(e.to_string()))?;
                match submit_with_retry(client, req, stage).await {
                    Ok(resp) => {
                        spool.ack(lease_id, seq).map_err(|e| Status::internal(e.to_string()))?;
                        if !resp.continue_lease {
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                    Err(s) if matches!(s.code(), Code::FailedPrecondition | Code::NotFound) => {
                        tracing::warn!(error = %s, "lease no longer valid");
                        let _ = spool.ack(lease_id, seq);
                        stop.store(true, Ordering::Relaxed);
                    }
                    Err(s) => {
                        stop.store(true, Ordering::Relaxed);
                        return Err(s);
                    }
                }
            }
            _ = beat.tick() => {
                let r = client.heartbeat(pb::HeartbeatRequest { worker_id, lease_ids: vec![lease_id] }).await;
                if let Ok(r) = r {
                    if r.into_inner().leases.first().is_some_and(|s| !s.valid) {
                        tracing::warn!("lease revoked");
                        stop.store(true, Ordering::Relaxed);
                    }
                }
            }
            _ = stage.changed() => {
                let now = *stage.borrow();
                if now > stage_seen {
                    stage_seen = now;
                    stop.store(true, Ordering::Relaxed);
                    if now >= 2 {
                        // Hand back at once; games under way are abandoned.
                        let _ = release(client).await;
                        return Ok(());
                    }
                }
            }
        }
    }
    // Pairs never started go back to the queue now rather than at expiry.
    if done.len() < lease.pairs.len() {
        let _ = release(client).await;
    }
    spool
        .compact()
        .map_err(|e| Status::internal(e.to_string()))?;
    Ok(())
}

async fn submit_with_retry(
    client: &mut Client,
    req: pb::SubmitRequest,
    stage: &mut Stage,
) -> Result<pb::SubmitResponse, Status> {
    let mut backoff = Backoff::new();
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
                if backoff.next >= Backoff::MAX
                    || (sleep_or_stop(d, stage).await && *stage.borrow() >= 2)
                {
                    return Err(s);
                }
            }
            Err(s) => return Err(s),
        }
    }
}

/// `worker --coordinator URL --token T [--concurrency N]` flags.
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
    /// Worker name shown by the coordinator.
    #[arg(long)]
    pub name: Option<String>,
    /// Spool file of unacknowledged reports.
    #[arg(long, default_value = "worker-spool.log")]
    pub spool: PathBuf,
    /// Directory of opening books named by runs.
    #[arg(long, default_value = ".")]
    pub book_dir: PathBuf,
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
    let config = ClusterConfig {
        url,
        token,
        concurrency: args
            .concurrency
            .unwrap_or_else(crate::matches::default_concurrency),
        name: args.name.unwrap_or_default(),
        spool: args.spool,
        book_dir: args.book_dir,
        exit_when_idle: false,
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
