//! `coordinator bench-load`: many simulated workers against a real coordinator over gRPC on
//! loopback, and a check that what it stored is exactly what it acknowledged.
//!
//! The coordinator runs as a child process (`coordinator serve` on a temporary or given
//! database and a free loopback port, see [`child`]); the bench makes the tokens in the
//! database before it starts, creates a match and an SPSA run over the admin API, then runs
//! the [`fleet`] for a bounded time or pair count. With `kill_every` it SIGKILLs the
//! coordinator at random moments and starts it again on the same file and port while the
//! workers resend what went unanswered. At the end it prints rates, latencies per call, the
//! coordinator's CPU time and peak memory, and the [`verify`] checks; any mismatch is an
//! error (exit status 1).
//!
//! ```no_run
//! # async fn demo() -> Result<(), coordinator::bench_load::BenchError> {
//! use coordinator::bench_load::{bench, Plan};
//! let mut plan = Plan::new(std::env::current_exe().unwrap());
//! plan.workers = 1000;
//! plan.pairs_per_report = 8;
//! let report = bench(plan).await?;
//! print!("{}", report.text());
//! assert!(report.findings.ok());
//! # Ok(()) }
//! ```

pub mod child;
pub mod fleet;
pub mod latency;
pub mod synth;
pub mod verify;

use crate::cli::Outcome;
use crate::client::{self, AdminClient, ClientError};
use crate::store::{self, Role, TokenError};
use child::{Coordinator, ServeSpec, Start, Usage};
use fleet::{CallKind, Fleet, FleetConfig, FleetOutcome};
use proto::v1 as pb;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use thiserror::Error;
use verify::{Findings, RunTotals};

/// Why a bench could not run (a failed check is not an error: see [`Findings`]).
#[derive(Debug, Error)]
pub enum BenchError {
    /// A setting is out of range.
    #[error("{0}")]
    Config(String),
    /// The database file could not be read or written.
    #[error("database {path}: {source}")]
    Database {
        /// The file.
        path: String,
        /// What SQLite said.
        source: rusqlite::Error,
    },
    /// A token could not be made.
    #[error("token: {0}")]
    Token(#[from] TokenError),
    /// A file or process operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        source: std::io::Error,
    },
    /// `/proc` did not read as expected.
    #[error("{0}")]
    Proc(String),
    /// The coordinator did not become ready.
    #[error("the coordinator did not answer its health check within {after:?} (log: {})", .log.display())]
    NotReady {
        /// How long we waited.
        after: Duration,
        /// Its log file.
        log: PathBuf,
    },
    /// The coordinator exited on its own.
    #[error("the coordinator exited unexpectedly ({status}); the end of its log {}:\n{tail}", .log.display())]
    Exited {
        /// Its exit status.
        status: String,
        /// Its log file.
        log: PathBuf,
        /// The last lines of the log.
        tail: String,
    },
    /// An admin client could not connect.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// An admin call was refused.
    #[error("{call}: {}: {}", .status.code(), .status.message())]
    Rpc {
        /// The rpc.
        call: &'static str,
        /// The answer.
        status: tonic::Status,
    },
    /// A simulated worker's task failed.
    #[error("simulated worker: {0}")]
    Worker(String),
}

/// The runs a bench creates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum RunKind {
    /// A match of the built-in engine against itself over Latte (normal, Luft) and chess.
    Match,
    /// SPSA over two built-in evaluation parameters, same variants.
    Spsa,
}

impl RunKind {
    fn name(self) -> &'static str {
        match self {
            RunKind::Match => "match",
            RunKind::Spsa => "spsa",
        }
    }
}

/// The run config (TOML) of a bench run.
pub fn run_config(kind: RunKind, name: &str, games: u64, seed: u64) -> String {
    let extra = match kind {
        RunKind::Match => "",
        RunKind::Spsa => {
            "\n[spsa]\nparams = \"\"\"\nKnightValueMg, 300, 150, 600, 20, 0.002\nBishopValueMg, 320, 150, 600, 20, 0.002\n\"\"\"\n"
        }
    };
    format!(
        r#"name = "{name}"
kind = "{kind}"
games = {games}
seed = {seed}
batch_seconds = 60

[limits]
nodes = 1000
max_plies = 400

[[variants]]
variant = "latte"
ruleset = "normal"

[[variants]]
variant = "latte"
ruleset = "luft"

[[variants]]
variant = "chess"

[first]
engine = "builtin"
{extra}"#,
        kind = kind.name()
    )
}

/// Tokens made for a bench.
#[derive(Debug, Clone)]
pub struct Tokens {
    /// Admin token.
    pub admin: String,
    /// Worker tokens, one per `workers_per_token` simulated workers.
    pub workers: Vec<String>,
}

/// The database before the coordinator starts.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// Tokens made.
    pub tokens: Tokens,
    /// Highest lease id so far: rows of later leases are this bench's.
    pub lease_floor: u64,
    /// Pair results stored so far.
    pub stored_pairs: u64,
}

/// Open (creating) the database and make an admin token and worker tokens named
/// `{tag}-admin`, `{tag}-w{i}`. A worker token gets four slots per worker: leases orphaned by
/// a crash hold their slots until they expire.
pub fn prepare(
    db: &Path,
    tag: &str,
    workers: usize,
    workers_per_token: usize,
) -> Result<Prepared, BenchError> {
    if !(1..=proto::limits::REGISTRATIONS_PER_TOKEN).contains(&workers_per_token) {
        return Err(BenchError::Config(format!(
            "workers per token must be 1 to {} (live registrations per token)",
            proto::limits::REGISTRATIONS_PER_TOKEN
        )));
    }
    let sql = |source| BenchError::Database {
        path: db.display().to_string(),
        source,
    };
    let conn = store::open(db).map_err(sql)?;
    let now = crate::service::now_ms();
    let admin = store::add_token(&conn, &format!("{tag}-admin"), Role::Admin, now)?;
    let slots = u32::try_from(4 * workers_per_token).unwrap_or(u32::MAX);
    let workers = (0..workers.div_ceil(workers_per_token))
        .map(|i| {
            store::add_token_with_slots(&conn, &format!("{tag}-w{i}"), Role::Worker, slots, now)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let count = |q: &str| conn.query_row(q, [], |r| r.get::<_, i64>(0)).map_err(sql);
    Ok(Prepared {
        tokens: Tokens { admin, workers },
        lease_floor: count("SELECT COALESCE(MAX(id), 0) FROM leases")? as u64,
        stored_pairs: count("SELECT COUNT(*) FROM pair_results")? as u64,
    })
}

/// Create one run of each kind; returns their ids.
pub async fn create_runs(
    admin: &mut AdminClient,
    kinds: &[RunKind],
    tag: &str,
    games: u64,
    seed: u64,
) -> Result<Vec<(u64, RunKind)>, BenchError> {
    let mut out = Vec::new();
    for &kind in kinds {
        let name = format!("{tag} {}", kind.name());
        let s = admin
            .create_run(pb::CreateRunRequest {
                config_toml: run_config(kind, &name, games, seed),
            })
            .await
            .map_err(|status| BenchError::Rpc {
                call: "CreateRun",
                status,
            })?
            .into_inner();
        out.push((s.run_id, kind));
    }
    Ok(out)
}

/// `pairs_done` of every run.
pub async fn pairs_done(admin: &mut AdminClient) -> Result<BTreeMap<u64, u64>, BenchError> {
    let runs = admin
        .list_runs(pb::ListRunsRequest {})
        .await
        .map_err(|status| BenchError::Rpc {
            call: "ListRuns",
            status,
        })?
        .into_inner()
        .runs;
    Ok(runs.iter().map(|r| (r.run_id, r.pairs_done)).collect())
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The `coordinator` executable to start as the server.
    pub binary: PathBuf,
    /// Database file to use (and keep); a temporary one when absent.
    pub db: Option<PathBuf>,
    /// Simulated workers.
    pub workers: usize,
    /// Simulated workers per token (at most 64).
    pub workers_per_token: usize,
    /// HTTP/2 connections (0: one per 100 workers).
    pub channels: usize,
    /// Stop after this long.
    pub duration: Duration,
    /// Stop once this many pairs are acknowledged.
    pub max_pairs: Option<u64>,
    /// Pairs per report.
    pub pairs_per_report: usize,
    /// Most pairs per lease.
    pub lease_pairs: u32,
    /// Simulated playing time per pair.
    pub pair_time: Duration,
    /// Seed of the results, the workers and the kill times.
    pub seed: u64,
    /// Runs to create.
    pub runs: Vec<RunKind>,
    /// Game budget of each run.
    pub games: u64,
    /// `serve --lease-timeout`, seconds.
    pub lease_timeout_s: u64,
    /// SIGKILL and restart the coordinator about this often (uniformly 0.5 to 1.5 times it).
    pub kill_every: Option<Duration>,
    /// Progress lines on stderr this often.
    pub progress_every: Option<Duration>,
}

impl Plan {
    /// Defaults: 200 workers for 30 s, one pair per report, a match and an SPSA run of
    /// 2,000,000 games each.
    pub fn new(binary: PathBuf) -> Self {
        Self {
            binary,
            db: None,
            workers: 200,
            workers_per_token: 32,
            channels: 0,
            duration: Duration::from_secs(30),
            max_pairs: None,
            pairs_per_report: 1,
            lease_pairs: 16,
            pair_time: Duration::ZERO,
            seed: 1,
            runs: vec![RunKind::Match, RunKind::Spsa],
            games: 2_000_000,
            lease_timeout_s: 45,
            kill_every: None,
            progress_every: None,
        }
    }

    fn channels(&self) -> usize {
        if self.channels > 0 {
            self.channels
        } else {
            self.workers.div_ceil(100).max(1)
        }
    }
}

/// What a bench measured and found.
#[derive(Debug, Clone)]
pub struct BenchReport {
    /// The plan.
    pub plan: Plan,
    /// The runs created.
    pub runs: Vec<(u64, RunKind)>,
    /// Pairs stored before the bench started.
    pub stored_before: u64,
    /// Pairs stored at the end (every run).
    pub stored_after: u64,
    /// Every start of the coordinator.
    pub starts: Vec<Start>,
    /// SIGKILLs while the fleet ran.
    pub kills: u32,
    /// The coordinator's processes, from the first start to the end.
    pub coordinator: Usage,
    /// The coordinator's CPU seconds while the fleet ran (its start to its stop).
    pub window_cpu_s: f64,
    /// This process (the simulated fleet).
    pub generator: Usage,
    /// The fleet's outcome.
    pub fleet: FleetOutcome,
    /// `ShowRun` of every run the fleet reported to.
    pub totals: Vec<RunTotals>,
    /// The checks.
    pub findings: Findings,
    /// Database file.
    pub db: PathBuf,
    /// Whether the database file is still there (given, or kept after a failed check).
    pub db_kept: bool,
}

/// Run a plan: start the coordinator, the fleet, (kill and restart), stop, check.
pub async fn bench(plan: Plan) -> Result<BenchReport, BenchError> {
    if plan.workers == 0 {
        return Err(BenchError::Config("at least one worker".into()));
    }
    if plan.runs.is_empty() {
        return Err(BenchError::Config("at least one run".into()));
    }
    let tag = format!("bench-{}", crate::service::now_ms());
    let (temp, db) = match &plan.db {
        Some(db) => (None, db.clone()),
        None => {
            let dir =
                std::env::temp_dir().join(format!("coordinator-{tag}-{}", std::process::id()));
            std::fs::create_dir_all(&dir).map_err(|source| BenchError::Io {
                what: format!("cannot create {}", dir.display()),
                source,
            })?;
            let db = dir.join("bench.db");
            (Some(dir), db)
        }
    };
    let prepared = prepare(&db, &tag, plan.workers, plan.workers_per_token)?;
    let mut log = db.clone().into_os_string();
    log.push(".serve.log");
    let spec = ServeSpec {
        binary: plan.binary.clone(),
        db: db.clone(),
        addr: child::free_addr()?,
        lease_timeout_s: plan.lease_timeout_s.max(1),
        log: PathBuf::from(log),
        ready_timeout: Duration::from_secs(300),
    };
    let mut coord = Coordinator::start(spec).await?;
    let url = coord.url();
    let mut admin = client::admin(&url, &prepared.tokens.admin, None).await?;
    let before = pairs_done(&mut admin).await?;
    let runs = create_runs(&mut admin, &plan.runs, &tag, plan.games, plan.seed).await?;
    let fleet = Fleet::start(FleetConfig {
        url: url.clone(),
        tokens: prepared.tokens.workers.clone(),
        workers_per_token: plan.workers_per_token,
        workers: plan.workers,
        channels: plan.channels(),
        pairs_per_report: plan.pairs_per_report,
        lease_pairs: plan.lease_pairs,
        pair_time: plan.pair_time,
        seed: plan.seed,
        resolve_timeout: Duration::from_secs(30),
        max_pairs: plan.max_pairs,
    })?;

    let cpu_before = coord.usage()?.cpu_s();
    let kills = drive(&plan, &fleet, &mut coord, &prepared.tokens.admin, &runs).await?;
    // CPU of the measured window (the fleet's start to its stop), without the drain after.
    let window_cpu_s = coord.usage()?.cpu_s() - cpu_before;
    let out = fleet.stop().await?;

    // The admin channel may have gone with a killed coordinator: a fresh one.
    let mut admin = client::admin(&url, &prepared.tokens.admin, None).await?;
    let touched: BTreeSet<u64> = runs
        .iter()
        .map(|&(id, _)| id)
        .chain(out.acked.iter().map(|a| a.run))
        .chain(out.unresolved.iter().map(|u| u.run))
        .collect();
    let mut totals = Vec::new();
    for &run in &touched {
        totals.push(verify::run_totals(&mut admin, run).await?);
    }
    let usage = coord.usage()?;
    let starts = coord.starts().to_vec();
    // The end is one more crash: the checks read what a SIGKILL leaves.
    coord.kill().await?;
    drop(coord);

    let mut findings = verify::check_totals(&totals, &out, &before);
    findings.extend(verify::check_database(
        &db,
        &totals,
        &out,
        prepared.lease_floor,
    )?);
    for a in &out.anomalies {
        findings.failed.push(format!("protocol: {a}"));
    }
    let stored_after = stored_pairs(&db)?;
    let generator = child::usage_of(std::process::id())?;
    let db_kept = temp.is_none() || !findings.ok();
    if let (Some(dir), false) = (&temp, db_kept) {
        let _ = std::fs::remove_dir_all(dir);
    }
    Ok(BenchReport {
        plan,
        runs,
        stored_before: prepared.stored_pairs,
        stored_after,
        starts,
        kills,
        coordinator: usage,
        window_cpu_s,
        generator,
        fleet: out,
        totals,
        findings,
        db,
        db_kept,
    })
}

fn stored_pairs(db: &Path) -> Result<u64, BenchError> {
    let sql = |source| BenchError::Database {
        path: db.display().to_string(),
        source,
    };
    let conn = rusqlite::Connection::open(db).map_err(sql)?;
    conn.query_row("SELECT COUNT(*) FROM pair_results", [], |r| {
        r.get::<_, i64>(0)
    })
    .map(|n| n as u64)
    .map_err(sql)
}

/// Until the time or pair bound, or every run finished: progress lines, and the kills.
/// Returns the number of kills.
async fn drive(
    plan: &Plan,
    fleet: &Fleet,
    coord: &mut Coordinator,
    admin_token: &str,
    runs: &[(u64, RunKind)],
) -> Result<u32, BenchError> {
    let t0 = Instant::now();
    let deadline = t0 + plan.duration;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(plan.seed ^ 0x6b69_6c6c);
    let mut jitter = |every: Duration| every.mul_f64(rng.gen_range(0.5..1.5));
    let mut next_kill = plan.kill_every.map(|e| t0 + jitter(e));
    // Finished runs are looked for at least every 5 s, progress or not.
    let tick = plan.progress_every.unwrap_or(Duration::from_secs(5));
    let mut next_tick = t0 + tick;
    let mut kills = 0u32;
    let mut last = (t0, 0u64);
    loop {
        let wake = [Some(deadline), next_kill, Some(next_tick)]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(deadline);
        tokio::select! {
            _ = tokio::time::sleep_until(wake.into()) => {}
            _ = fleet.stopped() => return Ok(kills),
        }
        let now = Instant::now();
        if now >= deadline {
            return Ok(kills);
        }
        coord.check_alive()?;
        if next_kill.is_some_and(|k| now >= k) {
            let ready = coord.restart().await?;
            kills += 1;
            if plan.progress_every.is_some() {
                eprintln!(
                    "{:>6.1} s: SIGKILL {kills}, ready again in {:.3} s",
                    t0.elapsed().as_secs_f64(),
                    ready.as_secs_f64()
                );
            }
            next_kill = plan.kill_every.map(|e| Instant::now() + jitter(e));
        }
        if now >= next_tick {
            next_tick = now + tick;
            let c = fleet.progress().counts();
            if plan.progress_every.is_some() {
                let rate = (c.pairs - last.1) as f64 / now.duration_since(last.0).as_secs_f64();
                eprintln!(
                    "{:>6.1} s: {} pairs ({rate:.0}/s), {} reports, {} leases, {} failed calls",
                    t0.elapsed().as_secs_f64(),
                    c.pairs,
                    c.reports,
                    c.leases,
                    c.errors
                );
                last = (now, c.pairs);
            }
            // A congested coordinator answers late: the time bound goes first.
            let wait = deadline
                .saturating_duration_since(Instant::now())
                .min(Duration::from_secs(2));
            let url = coord.url();
            let finished = all_finished(&url, admin_token, runs);
            if tokio::time::timeout(wait, finished).await == Ok(true) {
                return Ok(kills);
            }
        }
    }
}

/// Whether every run of the bench has ended (false when the coordinator does not answer).
async fn all_finished(url: &str, token: &str, runs: &[(u64, RunKind)]) -> bool {
    let Ok(mut admin) = client::admin(url, token, None).await else {
        return false;
    };
    let Ok(list) = admin.list_runs(pb::ListRunsRequest {}).await else {
        return false;
    };
    let over: BTreeSet<u64> = list
        .into_inner()
        .runs
        .iter()
        .filter(|r| {
            r.state != pb::RunState::Active as i32 && r.state != pb::RunState::Paused as i32
        })
        .map(|r| r.run_id)
        .collect();
    runs.iter().all(|(id, _)| over.contains(id))
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn ms(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms < 10.0 {
        format!("{ms:.2} ms")
    } else if ms < 1000.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{:.2} s", ms / 1000.0)
    }
}

impl BenchReport {
    /// The report as text.
    pub fn text(&self) -> String {
        let p = &self.plan;
        let f = &self.fleet;
        let secs = f.elapsed.as_secs_f64().max(1e-9);
        let mut s = String::new();
        let runs: Vec<String> = self
            .runs
            .iter()
            .map(|(id, k)| format!("{} {id}", k.name()))
            .collect();
        let _ = writeln!(
            s,
            "bench-load: {} workers ({} per token, {} HTTP/2 connection(s)), {} pair(s) per report, leases of up to {} pairs, {}; runs: {}",
            p.workers,
            p.workers_per_token,
            p.channels(),
            p.pairs_per_report,
            p.lease_pairs,
            if p.pair_time.is_zero() {
                "instant play".to_string()
            } else {
                format!("{} per pair", ms(p.pair_time))
            },
            runs.join(", ")
        );
        if let Some(first) = self.starts.first() {
            let _ = writeln!(
                s,
                "coordinator: started in {:.3} s on {} stored pairs (RSS {:.1} MiB once ready); database {}{}",
                first.ready_after.as_secs_f64(),
                self.stored_before,
                mib(first.rss_kib),
                self.db.display(),
                if self.db_kept { "" } else { " (removed)" }
            );
        }
        if self.kills > 0 {
            let mut ready: Vec<Duration> = self.starts[1..].iter().map(|s| s.ready_after).collect();
            ready.sort();
            let _ = writeln!(
                s,
                "crashes: {} SIGKILLs while the fleet ran, ready again in {} median, {} max; {} reports acknowledged as duplicate after a resend",
                self.kills,
                ms(ready[ready.len() / 2]),
                ms(*ready.last().unwrap_or(&Duration::ZERO)),
                f.resent_duplicates
            );
        }
        let c = f.at_stop;
        let _ = writeln!(s, "over {secs:.1} s:");
        let _ = writeln!(s, "  leases        {:>10.1}/s", c.leases as f64 / secs);
        let _ = writeln!(s, "  report calls  {:>10.1}/s", c.reports as f64 / secs);
        let _ = writeln!(
            s,
            "  pair results  {:>10.1}/s durable (acknowledged)",
            c.pairs as f64 / secs
        );
        let _ = writeln!(s, "  failed calls  {:>10}", c.errors);
        let _ = writeln!(
            s,
            "  {:<10} {:>9} {:>10} {:>10} {:>10} {:>10}",
            "latency", "calls", "p50", "p99", "p99.9", "max"
        );
        for kind in CallKind::ALL {
            let Some(h) = f.latency.get(&kind) else {
                continue;
            };
            let q = |x: f64| h.quantile(x).map_or("-".to_string(), ms);
            let _ = writeln!(
                s,
                "  {:<10} {:>9} {:>10} {:>10} {:>10} {:>10}",
                kind.name(),
                h.count(),
                q(0.5),
                q(0.99),
                q(0.999),
                if h.count() > 0 {
                    ms(h.max())
                } else {
                    "-".into()
                }
            );
        }
        let u = self.coordinator;
        let _ = writeln!(
            s,
            "coordinator: CPU {:.2} s while the fleet ran ({:.2} cores); {:.2} s in all (user {:.2}, system {:.2}, with start-up and the drain after the stop); peak RSS {:.1} MiB",
            self.window_cpu_s,
            self.window_cpu_s / secs,
            u.cpu_s(),
            u.user_s,
            u.system_s,
            mib(u.peak_rss_kib)
        );
        let g = self.generator;
        let _ = writeln!(
            s,
            "load generator: CPU {:.2} s, peak RSS {:.1} MiB",
            g.cpu_s(),
            mib(g.peak_rss_kib)
        );
        let _ = writeln!(
            s,
            "stored pairs: {} before, {} after; {} acknowledged to the fleet (with the reports in flight at the stop)",
            self.stored_before,
            self.stored_after,
            f.acked.len()
        );
        if !f.refusals.is_empty() {
            let _ = writeln!(s, "refused or ended leases:");
            for (why, n) in &f.refusals {
                let _ = writeln!(s, "  {n:>8}  {why}");
            }
        }
        if !f.errors.is_empty() {
            let _ = writeln!(s, "failed call attempts:");
            for (why, n) in &f.errors {
                let _ = writeln!(s, "  {n:>8}  {why}");
            }
        }
        let _ = writeln!(
            s,
            "checks: {}",
            if self.findings.ok() {
                "stored totals equal the acknowledged ones"
            } else {
                "FAILED"
            }
        );
        s.push_str(&self.findings.text());
        s
    }
}

/// `coordinator bench-load`.
#[derive(Debug, clap::Args)]
pub struct BenchLoadArgs {
    /// Simulated workers.
    #[arg(long, default_value_t = 200)]
    pub workers: usize,
    /// Stop after this many seconds.
    #[arg(long, default_value_t = 30.0)]
    pub seconds: f64,
    /// Stop once this many pair results are acknowledged (and at --seconds at the latest).
    #[arg(long)]
    pub pairs: Option<u64>,
    /// Pairs per report (more than 1: group reports).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub pairs_per_report: u16,
    /// Most pairs per lease (LeaseRequest.max_pairs).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub lease_pairs: u32,
    /// Simulated milliseconds per pair on average: each pair takes 0.5 to 1.5 times it
    /// (seeded). 0: instant play, the coordinator's limit.
    #[arg(long, default_value_t = 0)]
    pub pair_ms: u64,
    /// Seed of the results, the workers' timing and the kill times.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Database file to use and keep (say, to grow one over several benches); default: a
    /// temporary file, removed when the checks pass.
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// Runs to create, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "match,spsa")]
    pub runs: Vec<RunKind>,
    /// Game budget of each run.
    #[arg(long, default_value_t = 2_000_000)]
    pub games: u64,
    /// Simulated workers per token (at most 64 live registrations per token).
    #[arg(long, default_value_t = 32)]
    pub workers_per_token: usize,
    /// HTTP/2 connections the workers share (0: one per 100 workers).
    #[arg(long, default_value_t = 0)]
    pub channels: usize,
    /// The coordinator's lease timeout, seconds (heartbeats every third of it); `serve`'s
    /// default.
    #[arg(long, default_value_t = 45)]
    pub lease_timeout: u64,
    /// SIGKILL the coordinator about this often (0.5 to 1.5 times, seeded) and start it
    /// again on the same database and port; the checks then cover the crashes.
    #[arg(long)]
    pub kill_every: Option<f64>,
    /// Coordinator executable to start (default: this one).
    #[arg(long)]
    pub coordinator_bin: Option<PathBuf>,
    /// No progress lines on stderr.
    #[arg(long)]
    pub quiet: bool,
}

fn seconds(what: &str, s: f64) -> anyhow::Result<Duration> {
    Duration::try_from_secs_f64(s)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| anyhow::anyhow!("--{what} must be a positive number of seconds, got {s}"))
}

/// Run `coordinator bench-load`: exit status 1 when a check fails.
pub fn run(args: BenchLoadArgs) -> anyhow::Result<Outcome> {
    use anyhow::Context;
    let binary = match args.coordinator_bin {
        Some(b) => b,
        None => std::env::current_exe().context("cannot find this executable")?,
    };
    let mut plan = Plan::new(binary);
    plan.db = args.db;
    plan.workers = args.workers;
    plan.workers_per_token = args.workers_per_token;
    plan.channels = args.channels;
    plan.duration = seconds("seconds", args.seconds)?;
    plan.max_pairs = args.pairs;
    plan.pairs_per_report = usize::from(args.pairs_per_report);
    plan.lease_pairs = args.lease_pairs;
    plan.pair_time = Duration::from_millis(args.pair_ms);
    plan.seed = args.seed;
    plan.runs = args.runs;
    plan.games = args.games;
    plan.lease_timeout_s = args.lease_timeout;
    plan.kill_every = args
        .kill_every
        .map(|s| seconds("kill-every", s))
        .transpose()?;
    plan.progress_every = (!args.quiet).then_some(Duration::from_secs(5));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let report = rt.block_on(bench(plan))?;
    let code = if report.findings.ok() {
        0
    } else {
        eprintln!(
            "error: {} check(s) failed: what the coordinator stored differs from what it acknowledged (database kept: {})",
            report.findings.failed.len(),
            report.db.display()
        );
        1
    };
    Ok(Outcome {
        stdout: report.text(),
        code,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RunConfig;

    #[test]
    fn bench_run_configs_are_valid() {
        for kind in [RunKind::Match, RunKind::Spsa] {
            let text = run_config(kind, "bench", 2_000_000, 1);
            let c = RunConfig::parse(&text).unwrap_or_else(|e| panic!("{kind:?}: {e}\n{text}"));
            assert_eq!(c.pairs(), 1_000_000);
            assert_eq!(c.spsa_config().unwrap().is_some(), kind == RunKind::Spsa);
        }
    }
}
