//! Simulated workers: register, lease, "play" at once with seeded random results, report every
//! K pairs, heartbeat on the coordinator's interval, release when told to stop.
//!
//! Heartbeats of a lease run on a task of their own beside the reports, as a real worker sends
//! them beside its games: a slow answer to a report does not hold the next heartbeat back.
//!
//! A worker keeps every report until it has an answer: on a transport error or an internal
//! error it sends the *same* report again (same lease, same `seq`, same pairs), since the
//! first may have been committed with its answer lost; a repeat is acknowledged as
//! `duplicate`. A report is thus either acknowledged (its pairs are stored), refused (nothing
//! changed) or, when the fleet stops while the coordinator is unreachable, unresolved. Every
//! acknowledged pair is kept as an [`Acked`] for the checks.
//!
//! Workers are cheap: a task each, clients over a few shared HTTP/2 channels (a tonic channel
//! multiplexes calls), one set of atomic histograms and counters for the whole fleet.

use super::latency::{AtomicHistogram, Histogram};
use super::synth::Synth;
use super::BenchError;
use crate::client::Bearer;
use proto::v1 as pb;
use proto::v1::worker_service_client::WorkerServiceClient;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio::task::JoinSet;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Status};

type Client = WorkerServiceClient<InterceptedService<Channel, Bearer>>;

/// The calls a worker makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CallKind {
    /// `Register`.
    Register,
    /// `Lease`.
    Lease,
    /// `Submit`.
    Submit,
    /// `Heartbeat`.
    Heartbeat,
    /// `Release`.
    Release,
}

impl CallKind {
    /// Every kind, in report order.
    pub const ALL: [CallKind; 5] = [
        CallKind::Register,
        CallKind::Lease,
        CallKind::Submit,
        CallKind::Heartbeat,
        CallKind::Release,
    ];

    /// The rpc's name.
    pub fn name(self) -> &'static str {
        match self {
            CallKind::Register => "Register",
            CallKind::Lease => "Lease",
            CallKind::Submit => "Submit",
            CallKind::Heartbeat => "Heartbeat",
            CallKind::Release => "Release",
        }
    }
}

/// How the fleet behaves.
#[derive(Debug, Clone)]
pub struct FleetConfig {
    /// Coordinator URL (`http://127.0.0.1:PORT`).
    pub url: String,
    /// Worker tokens; worker `i` uses `tokens[i / workers_per_token]`.
    pub tokens: Vec<String>,
    /// Simulated workers sharing one token (at most 64: live registrations per token).
    pub workers_per_token: usize,
    /// Simulated workers.
    pub workers: usize,
    /// HTTP/2 connections shared by the workers.
    pub channels: usize,
    /// Pairs per report (the last report of a lease may hold fewer).
    pub pairs_per_report: usize,
    /// `LeaseRequest.max_pairs`.
    pub lease_pairs: u32,
    /// Simulated playing time per pair (0: instant).
    pub pair_time: Duration,
    /// Seed of every worker's random stream.
    pub seed: u64,
    /// After the stop, how long an unanswered report is still sent again.
    pub resolve_timeout: Duration,
    /// Stop once this many pairs are acknowledged.
    pub max_pairs: Option<u64>,
}

/// Running counters of the fleet.
#[derive(Debug, Default)]
pub struct Progress {
    /// Leases received.
    pub leases: AtomicU64,
    /// Submit calls answered (acknowledged or refused).
    pub reports: AtomicU64,
    /// Pairs acknowledged.
    pub pairs: AtomicU64,
    /// Calls that failed (each attempt).
    pub errors: AtomicU64,
    latency: [AtomicHistogram; 5],
}

impl Progress {
    fn hist(&self, kind: CallKind) -> &AtomicHistogram {
        &self.latency[kind as usize]
    }

    /// A snapshot of the counters.
    pub fn counts(&self) -> Counts {
        Counts {
            leases: self.leases.load(Ordering::Relaxed),
            reports: self.reports.load(Ordering::Relaxed),
            pairs: self.pairs.load(Ordering::Relaxed),
            errors: self.errors.load(Ordering::Relaxed),
        }
    }
}

/// Counters at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Leases received.
    pub leases: u64,
    /// Submit calls answered.
    pub reports: u64,
    /// Pairs acknowledged.
    pub pairs: u64,
    /// Failed call attempts.
    pub errors: u64,
}

/// A pair whose report was acknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Acked {
    /// Run.
    pub run: u64,
    /// Pair index.
    pub index: u64,
    /// `first`'s half points, as sent.
    pub half_points: u8,
}

/// A report that never got an answer: its pairs may or may not be stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unresolved {
    /// Run.
    pub run: u64,
    /// Pair indices of the report.
    pub indices: Vec<u64>,
}

/// What the fleet did, merged over its workers.
#[derive(Debug, Clone)]
pub struct FleetOutcome {
    /// Every acknowledged pair (a pair listed twice was acknowledged twice: a bug).
    pub acked: Vec<Acked>,
    /// Reports without an answer when the fleet stopped.
    pub unresolved: Vec<Unresolved>,
    /// Reports acknowledged as `duplicate` on a resend (the first answer was lost).
    pub resent_duplicates: u64,
    /// Anomalies: a first send answered `duplicate`, or `accepted_pairs` not the pairs sent.
    pub anomalies: Vec<String>,
    /// Refused reports and invalid leases by reason (gRPC code and the message's gist).
    pub refusals: BTreeMap<String, u64>,
    /// Failed call attempts by call and gRPC code.
    pub errors: BTreeMap<String, u64>,
    /// Latency of answered calls by kind.
    pub latency: BTreeMap<CallKind, Histogram>,
    /// Counters when the stop was given.
    pub at_stop: Counts,
    /// From the start to the stop.
    pub elapsed: Duration,
}

/// A running fleet.
#[derive(Debug)]
pub struct Fleet {
    stop: Arc<watch::Sender<bool>>,
    tasks: JoinSet<WorkerLog>,
    progress: Arc<Progress>,
    started: Instant,
}

impl Fleet {
    /// Start the workers (they connect lazily, so the coordinator may come up later).
    pub fn start(config: FleetConfig) -> Result<Self, BenchError> {
        if config.workers_per_token == 0
            || config.tokens.len() * config.workers_per_token < config.workers
        {
            return Err(BenchError::Config(format!(
                "{} workers need {} tokens of {} workers each, got {}",
                config.workers,
                config.workers.div_ceil(config.workers_per_token.max(1)),
                config.workers_per_token,
                config.tokens.len()
            )));
        }
        if !(1..=proto::limits::PAIRS_PER_REPORT).contains(&config.pairs_per_report) {
            return Err(BenchError::Config(format!(
                "pairs per report must be 1 to {}",
                proto::limits::PAIRS_PER_REPORT
            )));
        }
        let endpoint = Endpoint::from_shared(config.url.clone())
            .map_err(|e| BenchError::Config(format!("coordinator url {}: {e}", config.url)))?
            .connect_timeout(Duration::from_secs(2))
            .timeout(Duration::from_secs(30))
            .tcp_nodelay(true);
        let channels: Vec<Channel> = (0..config.channels.max(1))
            .map(|_| endpoint.connect_lazy())
            .collect();
        let bearers = config
            .tokens
            .iter()
            .map(|t| Bearer::new(t).map_err(|e| BenchError::Config(e.to_string())))
            .collect::<Result<Vec<_>, _>>()?;
        let (stop, _) = watch::channel(false);
        let stop = Arc::new(stop);
        let progress = Arc::new(Progress::default());
        let synth = Arc::new(Synth::new());
        let config = Arc::new(config);
        let mut tasks = JoinSet::new();
        for i in 0..config.workers {
            let client = WorkerServiceClient::with_interceptor(
                channels[i % channels.len()].clone(),
                bearers[i / config.workers_per_token].clone(),
            )
            .max_decoding_message_size(proto::MAX_MESSAGE_BYTES);
            let w = SimWorker {
                index: i,
                client,
                config: config.clone(),
                stop_rx: stop.subscribe(),
                stop: stop.clone(),
                stopped_at: None,
                progress: progress.clone(),
                synth: synth.clone(),
                rng: Xoshiro256PlusPlus::seed_from_u64(
                    config.seed ^ (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                ),
                log: WorkerLog::default(),
            };
            tasks.spawn(w.run());
        }
        Ok(Self {
            stop,
            tasks,
            progress,
            started: Instant::now(),
        })
    }

    /// Counters and latencies as they run.
    pub fn progress(&self) -> &Progress {
        &self.progress
    }

    /// Resolves once the fleet was told to stop (by [`Fleet::stop`] or its pair bound).
    pub async fn stopped(&self) {
        let mut rx = self.stop.subscribe();
        let _ = rx.wait_for(|s| *s).await;
    }

    /// Stop: no new work; reports in flight are resolved (resent within the resolve
    /// timeout), leases released; then the merged outcome.
    pub async fn stop(mut self) -> Result<FleetOutcome, BenchError> {
        self.stop.send_replace(true);
        let at_stop = self.progress.counts();
        let elapsed = self.started.elapsed();
        let mut all = WorkerLog::default();
        while let Some(done) = self.tasks.join_next().await {
            all.merge(done.map_err(|e| BenchError::Worker(e.to_string()))?);
        }
        all.acked.sort_unstable();
        let latency = CallKind::ALL
            .into_iter()
            .map(|kind| (kind, self.progress.hist(kind).snapshot()))
            .collect();
        Ok(FleetOutcome {
            acked: all.acked,
            unresolved: all.unresolved,
            resent_duplicates: all.resent_duplicates,
            anomalies: all.anomalies,
            refusals: all.refusals,
            errors: all.errors,
            latency,
            at_stop,
            elapsed,
        })
    }
}

/// What one worker saw.
#[derive(Debug, Default)]
struct WorkerLog {
    acked: Vec<Acked>,
    unresolved: Vec<Unresolved>,
    resent_duplicates: u64,
    anomalies: Vec<String>,
    refusals: BTreeMap<String, u64>,
    errors: BTreeMap<String, u64>,
}

impl WorkerLog {
    fn merge(&mut self, other: WorkerLog) {
        self.acked.extend(other.acked);
        self.unresolved.extend(other.unresolved);
        self.resent_duplicates += other.resent_duplicates;
        self.anomalies.extend(other.anomalies);
        for (k, v) in other.refusals {
            *self.refusals.entry(k).or_default() += v;
        }
        for (k, v) in other.errors {
            *self.errors.entry(k).or_default() += v;
        }
    }
}

/// Heartbeats of one lease every `every` until `over`; sets `dead` when the coordinator says
/// the lease is no longer valid (or refuses the heartbeat). A heartbeat lost to a transport
/// error is not resent: the next one is due soon enough.
async fn heartbeats(
    mut client: Client,
    progress: Arc<Progress>,
    req: pb::HeartbeatRequest,
    every: Duration,
    mut over: watch::Receiver<bool>,
    dead: Arc<AtomicBool>,
) -> WorkerLog {
    let mut log = WorkerLog::default();
    loop {
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            _ = over.wait_for(|o| *o) => return log,
        }
        let t0 = Instant::now();
        let answer = tokio::select! {
            r = client.heartbeat(req.clone()) => r,
            _ = over.wait_for(|o| *o) => return log,
        };
        let why = match answer {
            Ok(r) => {
                progress.hist(CallKind::Heartbeat).record(t0.elapsed());
                match r.into_inner().leases.first() {
                    Some(s) if s.valid => continue,
                    Some(s) => format!("lease no longer valid: {}", s.reason),
                    None => "lease no longer valid: not in the answer".to_string(),
                }
            }
            Err(status) => {
                progress.errors.fetch_add(1, Ordering::Relaxed);
                *log.errors
                    .entry(format!("Heartbeat {:?}", status.code()))
                    .or_default() += 1;
                if resend(status.code()) || status.code() == Code::Internal {
                    continue;
                }
                gist(&status)
            }
        };
        *log.refusals.entry(why).or_default() += 1;
        dead.store(true, Ordering::Relaxed);
        return log;
    }
}

/// How a call with resends ended.
enum Answer<T> {
    /// Answered; `resent` when it took more than one send.
    Ok { value: T, resent: bool },
    /// Refused for good (nothing changed).
    Refused(Status),
    /// Given up: the fleet is stopping and the coordinator does not answer.
    GaveUp,
}

/// Transport errors, after which the same request is sent again: the coordinator may be down,
/// restarting or too slow to answer in time. (`internal`, a failed commit that changed
/// nothing, is sent again a few times too, see [`SimWorker::call`].)
fn resend(code: Code) -> bool {
    matches!(
        code,
        Code::Unavailable
            | Code::Unknown
            | Code::Cancelled
            | Code::DeadlineExceeded
            | Code::Aborted
    )
}

/// A short name of a refusal for the tally: the code and the message with numbers as `#`.
fn gist(status: &Status) -> String {
    let mut msg = String::with_capacity(status.message().len());
    let mut in_number = false;
    for c in status.message().chars() {
        if c.is_ascii_digit() {
            if !in_number {
                msg.push('#');
            }
            in_number = true;
        } else {
            msg.push(c);
            in_number = false;
        }
    }
    format!("{:?}: {msg}", status.code())
}

struct SimWorker {
    index: usize,
    client: Client,
    config: Arc<FleetConfig>,
    stop_rx: watch::Receiver<bool>,
    stop: Arc<watch::Sender<bool>>,
    stopped_at: Option<Instant>,
    progress: Arc<Progress>,
    synth: Arc<Synth>,
    rng: Xoshiro256PlusPlus,
    log: WorkerLog,
}

/// Registration as the worker knows it.
#[derive(Debug, Clone, Copy)]
struct Registration {
    worker_id: u64,
    heartbeat: Duration,
}

impl SimWorker {
    async fn run(mut self) -> WorkerLog {
        // Spread the first registrations over a moment, as machines coming up would.
        let spread = self.rng.gen_range(0..=self.config.workers.min(1000) as u64);
        self.sleep(Duration::from_millis(spread)).await;
        while !self.stopping() {
            let Some(reg) = self.register().await else {
                continue;
            };
            self.work(reg).await;
        }
        self.log
    }

    fn stopping(&mut self) -> bool {
        let s = *self.stop_rx.borrow();
        if s && self.stopped_at.is_none() {
            self.stopped_at = Some(Instant::now());
        }
        s
    }

    /// Sleep, cut short by the stop.
    async fn sleep(&mut self, d: Duration) {
        if self.stopping() {
            return;
        }
        tokio::select! {
            _ = tokio::time::sleep(d) => {}
            _ = self.stop_rx.changed() => {}
        }
    }

    /// Send `make()` until answered or refused. `keep` resends after the stop too (a report
    /// in flight), within the resolve timeout.
    async fn call<T, F, Fut>(&mut self, kind: CallKind, keep: bool, mut make: F) -> Answer<T>
    where
        F: FnMut(Client) -> Fut,
        Fut: std::future::Future<Output = Result<tonic::Response<T>, Status>>,
    {
        let mut backoff = Duration::from_millis(20);
        let mut internal_errors = 0;
        let mut attempt = 0u32;
        loop {
            if attempt > 0 && !keep && self.stopping() {
                return Answer::GaveUp;
            }
            let t0 = Instant::now();
            match make(self.client.clone()).await {
                Ok(r) => {
                    self.progress.hist(kind).record(t0.elapsed());
                    return Answer::Ok {
                        value: r.into_inner(),
                        resent: attempt > 0,
                    };
                }
                Err(status) => {
                    self.progress.errors.fetch_add(1, Ordering::Relaxed);
                    *self
                        .log
                        .errors
                        .entry(format!("{} {:?}", kind.name(), status.code()))
                        .or_default() += 1;
                    // An internal error is a failed commit: nothing changed; try again a few
                    // times in case it passes (a busy or full disk).
                    let again = resend(status.code())
                        || (status.code() == Code::Internal && {
                            internal_errors += 1;
                            internal_errors <= 3
                        });
                    if !again {
                        return Answer::Refused(status);
                    }
                }
            }
            attempt += 1;
            let pause = backoff.mul_f64(self.rng.gen_range(0.5..1.0));
            backoff = (backoff * 2).min(Duration::from_secs(1));
            if self.stopping() {
                let since = self.stopped_at.map_or(Duration::ZERO, |t| t.elapsed());
                if !keep || since >= self.config.resolve_timeout {
                    return Answer::GaveUp;
                }
                tokio::time::sleep(pause).await;
            } else {
                self.sleep(pause).await;
            }
        }
    }

    fn refused(&mut self, status: &Status) {
        *self.log.refusals.entry(gist(status)).or_default() += 1;
    }

    async fn register(&mut self) -> Option<Registration> {
        let req = pb::RegisterRequest {
            name: format!("sim-{}", self.index),
            cores: 1,
            memory_mb: 1024,
            version: env!("CARGO_PKG_VERSION").to_string(),
            bench_signature: 0,
            variants: vec!["chess".into(), "latte".into(), "secutor".into()],
            engines: Vec::new(),
            features: proto::features::declared(),
        };
        match self
            .call(CallKind::Register, false, |mut c| {
                let req = req.clone();
                async move { c.register(req).await }
            })
            .await
        {
            Answer::Ok { value, .. } => Some(Registration {
                worker_id: value.worker_id,
                heartbeat: Duration::from_millis(value.heartbeat_interval_ms.max(100)),
            }),
            Answer::Refused(s) => {
                self.refused(&s);
                self.sleep(Duration::from_secs(1)).await;
                None
            }
            Answer::GaveUp => None,
        }
    }

    /// Lease and play until stopped, or until the coordinator no longer knows this worker.
    async fn work(&mut self, reg: Registration) {
        while !self.stopping() {
            let req = pb::LeaseRequest {
                worker_id: reg.worker_id,
                concurrency: 1,
                max_pairs: self.config.lease_pairs,
            };
            let answer = self
                .call(
                    CallKind::Lease,
                    false,
                    |mut c| async move { c.lease(req).await },
                )
                .await;
            match answer {
                Answer::Ok { value, .. } => match value.lease {
                    Some(lease) => {
                        self.progress.leases.fetch_add(1, Ordering::Relaxed);
                        self.play(reg, lease).await;
                    }
                    None => {
                        let wait = Duration::from_millis(value.retry_after_ms.clamp(10, 2000));
                        let wait = wait.mul_f64(self.rng.gen_range(0.5..1.0));
                        self.sleep(wait).await;
                    }
                },
                Answer::Refused(s) => {
                    self.refused(&s);
                    // Unknown worker (a registration lost with a crash) or the like:
                    // register again, after a pause.
                    self.sleep(Duration::from_millis(200)).await;
                    return;
                }
                Answer::GaveUp => return,
            }
        }
    }

    /// Play a lease: report every K pairs; release what is left when stopped.
    async fn play(&mut self, reg: Registration, lease: pb::Lease) {
        let k = self.config.pairs_per_report;
        let max_plies = lease.settings.as_ref().map_or(0, |s| s.max_plies);
        let (over, over_rx) = watch::channel(false);
        let dead = Arc::new(AtomicBool::new(false));
        let beats = tokio::spawn(heartbeats(
            self.client.clone(),
            self.progress.clone(),
            pb::HeartbeatRequest {
                worker_id: reg.worker_id,
                lease_ids: vec![lease.lease_id],
            },
            reg.heartbeat,
            over_rx,
            dead.clone(),
        ));
        let mut seq = 0u64;
        let mut reported = 0usize;
        let mut alive = true;
        for chunk in lease.pairs.chunks(k) {
            let mut pairs = Vec::with_capacity(chunk.len());
            let mut halves = Vec::with_capacity(chunk.len());
            for task in chunk {
                if !self.config.pair_time.is_zero() {
                    // Games vary in length: a fixed time would march the whole fleet in step
                    // and measure its waves rather than the coordinator.
                    let d = self.config.pair_time.mul_f64(self.rng.gen_range(0.5..1.5));
                    self.sleep(d).await;
                }
                if self.stopping() {
                    break;
                }
                if dead.load(Ordering::Relaxed) {
                    alive = false;
                    break;
                }
                let p = self
                    .synth
                    .pair(task, max_plies, lease.upload_pgn, &mut self.rng);
                pairs.push(p.result);
                halves.push((task.index, p.half_points));
            }
            if !alive || self.stopping() {
                // A partly played chunk is not reported: like a worker told to stop.
                break;
            }
            seq += 1;
            let req = pb::SubmitRequest {
                worker_id: reg.worker_id,
                lease_id: lease.lease_id,
                seq,
                pairs,
            };
            let n = req.pairs.len();
            let answer = self
                .call(CallKind::Submit, true, |mut c| {
                    let req = req.clone();
                    async move { c.submit(req).await }
                })
                .await;
            match answer {
                Answer::Ok { value, resent } => {
                    self.progress.reports.fetch_add(1, Ordering::Relaxed);
                    if value.duplicate && !resent {
                        self.log.anomalies.push(format!(
                            "lease {} report {seq}: first send answered duplicate",
                            lease.lease_id
                        ));
                    }
                    if value.duplicate {
                        // The first send was committed; its answer was lost.
                        self.log.resent_duplicates += 1;
                    } else if value.accepted_pairs as usize != n {
                        self.log.anomalies.push(format!(
                            "lease {} report {seq}: {n} pairs sent, {} accepted",
                            lease.lease_id, value.accepted_pairs
                        ));
                    }
                    self.log
                        .acked
                        .extend(halves.iter().map(|&(index, half_points)| Acked {
                            run: lease.run_id,
                            index,
                            half_points,
                        }));
                    reported += n;
                    let total =
                        self.progress.pairs.fetch_add(n as u64, Ordering::Relaxed) + n as u64;
                    if self.config.max_pairs.is_some_and(|m| total >= m) {
                        self.stop.send_replace(true);
                    }
                    if !value.continue_lease {
                        alive = false;
                        break;
                    }
                }
                Answer::Refused(s) => {
                    self.progress.reports.fetch_add(1, Ordering::Relaxed);
                    self.refused(&s);
                    alive = false;
                    break;
                }
                Answer::GaveUp => {
                    self.log.unresolved.push(Unresolved {
                        run: lease.run_id,
                        indices: halves.iter().map(|&(i, _)| i).collect(),
                    });
                    alive = false;
                    break;
                }
            }
        }
        over.send_replace(true);
        if let Ok(log) = beats.await {
            self.log.merge(log);
        }
        if alive && reported < lease.pairs.len() {
            self.release(reg, lease.lease_id).await;
        }
    }

    /// Hand the lease back (best effort: a lease not released expires).
    async fn release(&mut self, reg: Registration, lease_id: u64) {
        let req = pb::ReleaseRequest {
            worker_id: reg.worker_id,
            lease_id,
            failure: String::new(),
        };
        if let Answer::Refused(s) = self
            .call(CallKind::Release, true, |mut c| {
                let req = req.clone();
                async move { c.release(req).await }
            })
            .await
        {
            self.refused(&s);
        }
    }
}
