//! The coordinator's state and every operation on it, synchronous.
//!
//! [`Core`] owns the SQLite connection, the [`Ledger`] and the runs' statistics. Each
//! operation changes the in-memory state, writes the change in one transaction and commits
//! before returning; if the write fails, the state is reloaded from the database (the
//! database is the truth) and the caller gets an error. It runs on one dedicated thread (see
//! [`crate::actor`]), never on the async runtime.

use crate::config::{option_string, RunConfig, RunKind};
use crate::error::CoreError;
use crate::ledger::{LeaseRecord, LeaseState, Ledger, Returned, RunId, WorkerId};
use crate::residual;
use crate::store::{self, Principal, ResultRow, Role};
use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use stats::spsa::{PairAssignment, Spsa, SpsaUpdate};
use stats::study::{CastlingEvent, GameRecord, Outcome, Side};
use stats::{OrderedSprt, PairScore, Pentanomial, Results};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Instant;

/// Timing settings.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// Lease lifetime without a heartbeat, ms.
    pub lease_timeout_ms: u64,
    /// Heartbeat interval suggested to workers, ms.
    pub heartbeat_interval_ms: u64,
    /// How long an idle worker waits before asking again, ms.
    pub idle_retry_ms: u64,
}

impl Default for Timing {
    fn default() -> Self {
        Self {
            lease_timeout_ms: 45_000,
            heartbeat_interval_ms: 15_000,
            idle_retry_ms: 5_000,
        }
    }
}

/// Run lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RunStatus {
    /// Handing out pairs.
    Active,
    /// Paused by an operator.
    Paused,
    /// Stopped by an operator.
    Stopped,
    /// Done.
    Finished,
}

impl RunStatus {
    /// Stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Paused => "paused",
            Self::Stopped => "stopped",
            Self::Finished => "finished",
        }
    }

    fn parse(s: &str) -> Self {
        match s {
            "paused" => Self::Paused,
            "stopped" => Self::Stopped,
            "finished" => Self::Finished,
            _ => Self::Active,
        }
    }

    /// Whether the run is over.
    pub fn is_over(self) -> bool {
        matches!(self, Self::Stopped | Self::Finished)
    }
}

/// What a worker said about itself at registration.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerInfo {
    /// Name.
    pub name: String,
    /// Cores.
    pub cores: u32,
    /// Memory, MiB.
    pub memory_mb: u64,
    /// Software version.
    pub version: String,
    /// Engine bench signature.
    pub bench_signature: u64,
    /// Variants it plays (empty: all).
    pub variants: Vec<String>,
    /// External engines it has.
    pub engines: Vec<String>,
}

#[derive(Debug, Clone)]
struct Worker {
    token_id: i64,
    info: WorkerInfo,
}

/// One game as reported (what studies and statistics need).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameFacts {
    /// Result from White's view.
    pub outcome: Outcome,
    /// Whether `first` had White.
    pub first_is_white: bool,
    /// Why the game ended.
    pub termination: String,
    /// Plies.
    pub plies: u32,
    /// Castling moves.
    pub castlings: Vec<CastlingEvent>,
    /// Rule-set.
    pub ruleset: String,
}

/// One pair as reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairReport {
    /// Pair index.
    pub index: u64,
    /// Its two games.
    pub games: Vec<GameFacts>,
    /// gzip PGN (may be empty).
    pub pgn_gz: Vec<u8>,
}

impl PairReport {
    /// `first`'s score over the pair.
    pub fn score(&self) -> Result<PairScore, CoreError> {
        let bad = |m: String| CoreError::BadReport(format!("pair {}: {m}", self.index));
        if self.games.len() != 2 {
            return Err(bad(format!("expected 2 games, got {}", self.games.len())));
        }
        if self.games[0].first_is_white == self.games[1].first_is_white {
            return Err(bad("first must play White in exactly one game".into()));
        }
        let half: u8 = self
            .games
            .iter()
            .map(|g| {
                let white = match g.outcome {
                    Outcome::WhiteWin => 2,
                    Outcome::Draw => 1,
                    Outcome::BlackWin => 0,
                };
                if g.first_is_white {
                    white
                } else {
                    2 - white
                }
            })
            .sum();
        PairScore::from_half_points(half).ok_or_else(|| bad("impossible score".into()))
    }
}

#[derive(Debug, Clone)]
struct PairEntry {
    worker: WorkerId,
    score: PairScore,
    games: Vec<GameFacts>,
}

/// A run in memory.
#[derive(Debug)]
struct Run {
    id: RunId,
    config: RunConfig,
    config_toml: String,
    status: RunStatus,
    finish_reason: String,
    created_ms: u64,
    pairs: BTreeMap<u64, PairEntry>,
    spsa: Option<Spsa>,
    /// SPSA assignment of each leased, unreported pair index.
    spsa_pairs: BTreeMap<u64, PairAssignment>,
    sprt: Option<OrderedSprt>,
    excluded: BTreeSet<String>,
    /// Seconds one slot needs for one pair (estimate, refined as leases complete).
    pair_seconds: f64,
}

/// A lease as handed to a worker.
#[derive(Debug, Clone)]
pub struct Grant {
    /// The lease.
    pub lease: LeaseRecord,
    /// The run's config.
    pub config: RunConfig,
    /// Per-pair work.
    pub pairs: Vec<PairWork>,
}

/// One pair of a grant.
#[derive(Debug, Clone)]
pub struct PairWork {
    /// Pair index.
    pub index: u64,
    /// Variant.
    pub variant: String,
    /// Rule-set.
    pub ruleset: String,
    /// Book.
    pub book: String,
    /// Seed.
    pub seed: u64,
    /// Options of `first` for this pair.
    pub first_options: BTreeMap<String, String>,
    /// Options of `second` for this pair.
    pub second_options: BTreeMap<String, String>,
}

/// Answer to a submit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubmitOutcome {
    /// Already committed before.
    pub duplicate: bool,
    /// Newly counted pairs.
    pub accepted: u32,
    /// Pairs of the lease counted so far.
    pub reported: u32,
    /// Whether to go on with the lease.
    pub continue_lease: bool,
}

/// A run's line.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Id.
    pub id: RunId,
    /// Name.
    pub name: String,
    /// Kind.
    pub kind: RunKind,
    /// Status.
    pub status: RunStatus,
    /// Priority.
    pub priority: i32,
    /// Pairs planned.
    pub pairs_total: u64,
    /// Pairs reported.
    pub pairs_done: u64,
    /// Pairs leased.
    pub pairs_leased: u64,
    /// Created, ms.
    pub created_ms: u64,
    /// Why it ended.
    pub finish_reason: String,
}

/// One worker's share of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkerShare {
    /// Name.
    pub name: String,
    /// Pentanomial.
    pub pentanomial: [u64; 5],
    /// Residual test.
    pub residual: residual::Residual,
    /// Excluded.
    pub excluded: bool,
}

/// A run's figures.
#[derive(Debug, Clone)]
pub struct Detail {
    /// Summary.
    pub summary: Summary,
    /// Config text.
    pub config_toml: String,
    /// Pentanomial of the counted pairs.
    pub pentanomial: [u64; 5],
    /// W, D, L of `first`.
    pub wdl: [u64; 3],
    /// Elo (none before the first pair).
    pub elo: Option<stats::EloEstimate>,
    /// nElo.
    pub nelo: Option<stats::NeloEstimate>,
    /// SPRT: (llr, lower, upper, state, params, counted pairs).
    pub sprt: Option<(f64, f64, f64, stats::SprtState, stats::SprtParams, u64)>,
    /// SPSA: (name, value, start, min, max) and iterations.
    pub spsa: Vec<(String, f64, f64, f64, f64, u64)>,
    /// Study.
    pub study: Option<stats::study::Study>,
    /// Workers.
    pub workers: Vec<WorkerShare>,
}

/// Counters for metrics.
#[derive(Debug, Clone, Default)]
pub struct Counters {
    /// Games counted since start.
    pub games: u64,
    /// Leases expired since start.
    pub leases_expired: u64,
    /// Commits and their total seconds.
    pub commits: u64,
    /// Sum of commit latencies, seconds.
    pub commit_seconds: f64,
}

/// The coordinator's state.
pub struct Core {
    conn: Connection,
    timing: Timing,
    ledger: Ledger,
    runs: BTreeMap<RunId, Run>,
    workers: BTreeMap<WorkerId, Worker>,
    lease_meta: BTreeMap<u64, (u64, u32)>,
    /// Workers heard from lately, with their slots: a lease takes no more than its share of
    /// a run's open pairs, so a small run still spreads over every idle worker.
    recent: BTreeMap<WorkerId, (u64, u32)>,
    /// Metrics counters.
    pub counters: Counters,
}

impl std::fmt::Debug for Core {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Core")
            .field("runs", &self.runs.len())
            .finish()
    }
}

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn value_string(kind: stats::spsa::ParamKind, v: f64) -> String {
    match kind {
        stats::spsa::ParamKind::Int => format!("{}", v.round() as i64),
        stats::spsa::ParamKind::Float => format!("{v}"),
    }
}

/// Serialise an SPSA state without its history (kept as rows).
fn spsa_snapshot(spsa: &Spsa) -> Result<String, CoreError> {
    let mut v = serde_json::to_value(spsa).map_err(|e| CoreError::Internal(e.to_string()))?;
    if let Some(obj) = v.as_object_mut() {
        obj.insert("history".into(), serde_json::Value::Array(Vec::new()));
    }
    Ok(v.to_string())
}

fn spsa_restore(snapshot: &str, history: &[String]) -> Result<Spsa, CoreError> {
    let bad = |e: serde_json::Error| CoreError::Internal(format!("stored SPSA state: {e}"));
    let mut v: serde_json::Value = serde_json::from_str(snapshot).map_err(bad)?;
    let rows = history
        .iter()
        .map(|h| serde_json::from_str::<serde_json::Value>(h))
        .collect::<Result<Vec<_>, _>>()
        .map_err(bad)?;
    if let Some(obj) = v.as_object_mut() {
        obj.insert("history".into(), serde_json::Value::Array(rows));
    }
    serde_json::from_value(v).map_err(bad)
}

fn initial_pair_seconds(c: &RunConfig) -> f64 {
    // Two games of ~160 plies; a node-limited move at ~1 Mnps.
    let per_move = if c.limits.movetime_ms > 0 {
        c.limits.movetime_ms as f64 / 1000.0
    } else if c.limits.nodes > 0 {
        c.limits.nodes as f64 / 1e6
    } else {
        0.2
    };
    (2.0 * 160.0 * per_move).max(0.01)
}

impl Run {
    fn new(id: RunId, config: RunConfig, config_toml: String, created_ms: u64) -> Self {
        Self {
            id,
            pair_seconds: initial_pair_seconds(&config),
            config,
            config_toml,
            status: RunStatus::Active,
            finish_reason: String::new(),
            created_ms,
            pairs: BTreeMap::new(),
            spsa: None,
            spsa_pairs: BTreeMap::new(),
            sprt: None,
            excluded: BTreeSet::new(),
        }
    }

    /// Rebuild the ordered SPRT from the counted pairs. Excluded workers' pairs are skipped:
    /// indices are compacted so their gaps do not hold the prefix back.
    fn rebuild_sprt(&mut self, workers: &BTreeMap<WorkerId, Worker>) -> Result<(), CoreError> {
        let Some(params) = self.config.sprt_params().map_err(CoreError::Config)? else {
            return Ok(());
        };
        let batch = self.config.sprt.as_ref().map_or(1, |s| s.batch_pairs);
        let mut sprt =
            OrderedSprt::new(params, batch).map_err(|e| CoreError::Internal(e.to_string()))?;
        let mut skipped = 0u64;
        for (&i, p) in &self.pairs {
            if self.is_excluded(p.worker, workers) {
                skipped += 1;
                continue;
            }
            sprt.record(i - skipped, p.score)
                .map_err(|e| CoreError::Internal(e.to_string()))?;
        }
        self.sprt = Some(sprt);
        Ok(())
    }

    fn is_excluded(&self, worker: WorkerId, workers: &BTreeMap<WorkerId, Worker>) -> bool {
        !self.excluded.is_empty()
            && workers
                .get(&worker)
                .is_some_and(|w| self.excluded.contains(&w.info.name))
    }

    /// Excluded pairs below `index` (for compacted SPRT indices).
    fn excluded_below(&self, index: u64, workers: &BTreeMap<WorkerId, Worker>) -> u64 {
        if self.excluded.is_empty() {
            return 0;
        }
        self.pairs
            .range(..index)
            .filter(|(_, p)| self.is_excluded(p.worker, workers))
            .count() as u64
    }

    fn work_for(&self, index: u64) -> PairWork {
        let entry = self.config.entry_for_pair(index);
        let book = if entry.book.is_empty() {
            self.config.book.clone()
        } else {
            entry.book.clone()
        };
        let mut w = PairWork {
            index,
            variant: entry.variant.clone(),
            ruleset: entry.ruleset.clone(),
            book,
            seed: splitmix(self.config.seed ^ splitmix(index)),
            first_options: BTreeMap::new(),
            second_options: BTreeMap::new(),
        };
        if let (Some(spsa), Some(a)) = (&self.spsa, self.spsa_pairs.get(&index)) {
            for (i, p) in spsa.config().params.iter().enumerate() {
                w.first_options
                    .insert(p.name.clone(), value_string(p.kind, a.plus[i]));
                w.second_options
                    .insert(p.name.clone(), value_string(p.kind, a.minus[i]));
            }
        }
        w
    }
}

impl Core {
    /// Open the database (creating and migrating it) and load every run.
    pub fn open(path: &Path, timing: Timing, now_ms: u64) -> Result<Self, CoreError> {
        let conn = store::open(path)?;
        let mut core = Self {
            conn,
            timing,
            ledger: Ledger::new(),
            runs: BTreeMap::new(),
            workers: BTreeMap::new(),
            lease_meta: BTreeMap::new(),
            recent: BTreeMap::new(),
            counters: Counters::default(),
        };
        core.reload()?;
        // Leases that were live when the coordinator stopped get a fresh deadline, so workers
        // that kept playing can still report.
        let live: Vec<_> = core
            .ledger
            .leases()
            .filter(|l| l.state == LeaseState::Active)
            .map(|l| (l.id, l.worker))
            .collect();
        let deadline = now_ms + timing.lease_timeout_ms;
        let tx = core.conn.transaction()?;
        for (id, worker) in live {
            if let Ok(l) = core.ledger.heartbeat(id, worker, 0, deadline) {
                store::update_lease(&tx, l)?;
            }
        }
        tx.commit()?;
        Ok(core)
    }

    /// Timing settings.
    pub fn timing(&self) -> Timing {
        self.timing
    }

    /// Throw the memory state away and load it from the database.
    pub fn reload(&mut self) -> Result<(), CoreError> {
        let s = store::load(&self.conn)?;
        self.workers = s
            .workers
            .iter()
            .map(|w| {
                let info: WorkerInfo =
                    serde_json::from_str(&w.info).unwrap_or_else(|_| WorkerInfo {
                        name: w.name.clone(),
                        ..WorkerInfo::default()
                    });
                (
                    w.id,
                    Worker {
                        token_id: w.token_id,
                        info,
                    },
                )
            })
            .collect();
        let records: Vec<_> = s.runs.iter().map(|r| r.record).collect();
        let active: BTreeSet<u64> = s
            .leases
            .iter()
            .filter(|l| l.state == LeaseState::Active)
            .map(|l| l.id)
            .collect();
        let leases_by_id: BTreeMap<u64, LeaseRecord> =
            s.leases.iter().map(|l| (l.id, l.clone())).collect();
        self.ledger = Ledger::restore(&records, s.leases);
        self.lease_meta = s.lease_meta;
        self.runs.clear();
        for row in s.runs {
            let config = RunConfig::parse(&row.config_toml).map_err(CoreError::Config)?;
            let mut run = Run::new(row.id, config, row.config_toml, row.created_ms);
            run.status = RunStatus::parse(&row.status);
            run.finish_reason = row.finish_reason;
            if let Some(snapshot) = &row.spsa {
                let history = s
                    .spsa_updates
                    .get(&row.id)
                    .map_or(&[][..], |v| v.as_slice());
                run.spsa = Some(spsa_restore(snapshot, history)?);
            }
            run.excluded = s.exclusions.get(&row.id).cloned().unwrap_or_default();
            self.runs.insert(row.id, run);
        }
        for ((lease, index), json) in &s.lease_spsa {
            let Some(l) = leases_by_id.get(lease) else {
                continue;
            };
            if !active.contains(lease) || l.reported.contains(index) {
                continue;
            }
            if let (Some(run), Ok(a)) = (
                self.runs.get_mut(&l.run),
                serde_json::from_str::<PairAssignment>(json),
            ) {
                run.spsa_pairs.insert(*index, a);
            }
        }
        for r in s.results {
            let games: Vec<GameFacts> = serde_json::from_str(&r.games).map_err(|e| {
                CoreError::Internal(format!("stored games of pair {}: {e}", r.index))
            })?;
            let score = PairScore::from_half_points(r.score)
                .ok_or_else(|| CoreError::Internal(format!("stored score {}", r.score)))?;
            if let Some(run) = self.runs.get_mut(&r.run_id) {
                run.pairs.insert(
                    r.index,
                    PairEntry {
                        worker: r.worker_id,
                        score,
                        games,
                    },
                );
            }
        }
        let workers = &self.workers;
        for run in self.runs.values_mut() {
            run.rebuild_sprt(workers)?;
        }
        Ok(())
    }

    /// Run `write` in a transaction; on failure reload the state from the database.
    fn commit<T>(
        &mut self,
        write: impl FnOnce(&rusqlite::Transaction<'_>, &Self) -> Result<T, CoreError>,
    ) -> Result<T, CoreError> {
        let start = Instant::now();
        let result = (|| {
            let tx = self.conn.unchecked_transaction()?;
            let out = write(&tx, self)?;
            tx.commit()?;
            Ok(out)
        })();
        match result {
            Ok(out) => {
                self.counters.commits += 1;
                self.counters.commit_seconds += start.elapsed().as_secs_f64();
                Ok(out)
            }
            Err(e) => {
                tracing::error!(error = %e, "commit failed, reloading state from the database");
                if let Err(e2) = self.reload() {
                    tracing::error!(error = %e2, "reload failed");
                }
                Err(e)
            }
        }
    }

    /// Look a token up.
    pub fn authenticate(&self, token: &str) -> Result<Option<Principal>, CoreError> {
        Ok(store::find_token(&self.conn, token)?)
    }

    /// Create a token (for tests and `coordinator token add`).
    pub fn add_token(&mut self, name: &str, role: Role, now_ms: u64) -> Result<String, CoreError> {
        Ok(store::add_token(&self.conn, name, role, now_ms)?)
    }

    // ----- worker service -----

    /// Register a worker.
    pub fn register(
        &mut self,
        who: &Principal,
        mut info: WorkerInfo,
        now_ms: u64,
    ) -> Result<WorkerId, CoreError> {
        if info.name.trim().is_empty() {
            info.name = who.name.clone();
        }
        info.cores = info.cores.max(1);
        let json = serde_json::to_string(&info).map_err(|e| CoreError::Internal(e.to_string()))?;
        let token_id = who.token_id;
        let name = info.name.clone();
        let id =
            self.commit(|tx, _| Ok(store::insert_worker(tx, token_id, &name, &json, now_ms)?))?;
        self.workers.insert(id, Worker { token_id, info });
        Ok(id)
    }

    fn check_worker(&self, who: &Principal, worker: WorkerId) -> Result<&Worker, CoreError> {
        match self.workers.get(&worker) {
            Some(w) if w.token_id == who.token_id => Ok(w),
            Some(_) => Err(CoreError::NotYourWorker(worker)),
            None => Err(CoreError::UnknownWorker(worker)),
        }
    }

    fn fits(run: &Run, w: &WorkerInfo) -> bool {
        if run.excluded.contains(&w.name) {
            return false;
        }
        let variants_ok = w.variants.is_empty()
            || run
                .config
                .variants
                .iter()
                .all(|v| w.variants.iter().any(|x| x == &v.variant));
        let engines_ok = [&run.config.first, run.config.second()]
            .iter()
            .all(|p| p.engine == "builtin" || w.engines.iter().any(|e| e == &p.engine));
        variants_ok && engines_ok
    }

    /// Cores of workers holding active leases on a run.
    fn assigned_slots(&self, run: RunId) -> u64 {
        self.ledger
            .active_leases(run)
            .map(|l| u64::from(self.lease_meta.get(&l.id).map_or(1, |m| m.1)))
            .sum()
    }

    /// Hand a worker a lease, or `None` when no run has work for it.
    pub fn lease(
        &mut self,
        who: &Principal,
        worker: WorkerId,
        concurrency: u32,
        max_pairs: u32,
        now_ms: u64,
    ) -> Result<Option<Grant>, CoreError> {
        let w = self.check_worker(who, worker)?.info.clone();
        self.expire(now_ms)?;
        let slots = if concurrency == 0 {
            w.cores
        } else {
            concurrency
        }
        .max(1);
        self.recent.insert(worker, (now_ms, slots));
        let window = 2 * self.timing.lease_timeout_ms;
        self.recent
            .retain(|_, (seen, _)| now_ms.saturating_sub(*seen) <= window);
        let active_slots: u64 = self.recent.values().map(|&(_, s)| u64::from(s)).sum();
        // Highest priority first, then the run with the fewest slots per unit of throughput.
        let pick = self
            .runs
            .values()
            .filter(|r| r.status == RunStatus::Active && self.ledger.available(r.id) > 0)
            .filter(|r| Self::fits(r, &w))
            .min_by(|a, b| {
                let load =
                    |r: &Run| self.assigned_slots(r.id) as f64 / f64::from(r.config.throughput);
                b.config
                    .priority
                    .cmp(&a.config.priority)
                    .then(load(a).total_cmp(&load(b)))
                    .then(a.id.cmp(&b.id))
            })
            .map(|r| r.id);
        let Some(run_id) = pick else { return Ok(None) };
        let run = &self.runs[&run_id];
        let per_slot = (f64::from(run.config.batch_seconds) / run.pair_seconds)
            .round()
            .max(1.0);
        let mut n = (per_slot * f64::from(slots)).min(4096.0) as u64;
        // This worker's share of the open pairs among the workers heard from lately.
        let share =
            (self.ledger.available(run_id) * u64::from(slots)).div_ceil(active_slots.max(1));
        n = n.min(share.max(1));
        if max_pairs == 0 {
            // Left to the coordinator, a lease is also at most an eighth of the run, so that
            // workers joining a moment later still find work in a small run.
            let eighth = self
                .ledger
                .run_record(run_id)
                .map_or(1, |r| r.total.div_ceil(8));
            n = n.min(eighth.max(1));
        } else {
            n = n.min(u64::from(max_pairs));
        }
        let deadline = now_ms + self.timing.lease_timeout_ms;
        let lease = self
            .ledger
            .issue(run_id, worker, n, deadline)?
            .cloned()
            .ok_or_else(|| CoreError::Internal("run had no pairs after all".into()))?;
        let run = self
            .runs
            .get_mut(&run_id)
            .ok_or(CoreError::UnknownRun(run_id))?;
        let mut spsa_rows = BTreeMap::new();
        let mut snapshot = None;
        if let Some(spsa) = run.spsa.as_mut() {
            let assignments = spsa.assign(lease.pairs.len() as u32);
            for (&i, a) in lease.pairs.iter().zip(assignments) {
                spsa_rows.insert(
                    i,
                    serde_json::to_string(&a).map_err(|e| CoreError::Internal(e.to_string()))?,
                );
                run.spsa_pairs.insert(i, a);
            }
            snapshot = Some(spsa_snapshot(spsa)?);
        }
        let next_fresh = self.ledger.run_record(run_id).map_or(0, |r| r.next_fresh);
        self.lease_meta.insert(lease.id, (now_ms, slots));
        self.commit(|tx, _| {
            store::insert_lease(tx, &lease, now_ms, slots, &spsa_rows)?;
            store::set_run_progress(tx, run_id, next_fresh, snapshot.as_deref())?;
            Ok(())
        })?;
        let run = &self.runs[&run_id];
        tracing::info!(
            lease = lease.id,
            run = run_id,
            worker,
            pairs = lease.pairs.len(),
            "lease issued"
        );
        let pairs = lease.pairs.iter().map(|&i| run.work_for(i)).collect();
        Ok(Some(Grant {
            lease,
            config: run.config.clone(),
            pairs,
        }))
    }

    /// Expire overdue leases: their unreported pairs go back to the queue.
    pub fn expire(&mut self, now_ms: u64) -> Result<usize, CoreError> {
        let returned = self.ledger.expire(now_ms);
        if returned.is_empty() {
            return Ok(0);
        }
        for r in &returned {
            tracing::warn!(
                lease = r.lease,
                run = r.run,
                returned = r.pairs.len(),
                "lease expired"
            );
        }
        self.counters.leases_expired += returned.len() as u64;
        self.persist_returned(&returned)?;
        Ok(returned.len())
    }

    /// Forget SPSA assignments of returned pairs and write the lease states.
    fn persist_returned(&mut self, returned: &[Returned]) -> Result<(), CoreError> {
        let mut snapshots = BTreeMap::new();
        for r in returned {
            if let Some(run) = self.runs.get_mut(&r.run) {
                for i in &r.pairs {
                    if let (Some(a), Some(spsa)) = (run.spsa_pairs.remove(i), run.spsa.as_mut()) {
                        let _ = spsa.abandon(a.pair_id);
                    }
                }
                if let Some(spsa) = &run.spsa {
                    snapshots.insert(r.run, spsa_snapshot(spsa)?);
                }
            }
        }
        let leases: Vec<LeaseRecord> = returned
            .iter()
            .filter_map(|r| self.ledger.lease(r.lease).cloned())
            .collect();
        let cursors: Vec<(u64, u64)> = returned
            .iter()
            .filter_map(|r| self.ledger.run_record(r.run).map(|x| (r.run, x.next_fresh)))
            .collect();
        self.commit(|tx, _| {
            for l in &leases {
                store::update_lease(tx, l)?;
            }
            for (run, next) in &cursors {
                store::set_run_progress(tx, *run, *next, snapshots.get(run).map(String::as_str))?;
            }
            Ok(())
        })
    }

    /// Extend leases; returns per lease `Ok(deadline)` or the reason it is not valid.
    pub fn heartbeat(
        &mut self,
        who: &Principal,
        worker: WorkerId,
        leases: &[u64],
        now_ms: u64,
    ) -> Result<Vec<Result<u64, String>>, CoreError> {
        self.check_worker(who, worker)?;
        self.expire(now_ms)?;
        if let Some(seen) = self.recent.get_mut(&worker) {
            seen.0 = now_ms;
        }
        let deadline = now_ms + self.timing.lease_timeout_ms;
        let mut out = Vec::new();
        let mut changed = Vec::new();
        for &id in leases {
            let status = self
                .ledger
                .lease(id)
                .and_then(|l| self.runs.get(&l.run))
                .map(|r| r.status);
            let res = match status {
                Some(RunStatus::Paused) => Err("run paused".to_string()),
                Some(RunStatus::Stopped) => Err("run stopped".to_string()),
                Some(RunStatus::Finished) => Err("run finished".to_string()),
                _ => match self.ledger.heartbeat(id, worker, now_ms, deadline) {
                    Ok(l) => {
                        changed.push(l.clone());
                        Ok(l.deadline_ms)
                    }
                    Err(e) => Err(e.to_string()),
                },
            };
            out.push(res);
        }
        if !changed.is_empty() {
            self.commit(|tx, _| {
                for l in &changed {
                    store::update_lease(tx, l)?;
                }
                Ok(())
            })?;
        }
        Ok(out)
    }

    /// Record a cumulative report.
    pub fn submit(
        &mut self,
        who: &Principal,
        worker: WorkerId,
        lease_id: u64,
        seq: u64,
        pairs: Vec<PairReport>,
        now_ms: u64,
    ) -> Result<SubmitOutcome, CoreError> {
        self.check_worker(who, worker)?;
        self.expire(now_ms)?;
        // Validate before anything changes.
        let mut scores = BTreeMap::new();
        for p in &pairs {
            if scores.insert(p.index, p.score()?).is_some() {
                return Err(CoreError::BadReport(format!(
                    "pair {} listed twice",
                    p.index
                )));
            }
        }
        let indices: Vec<u64> = scores.keys().copied().collect();
        let out = self
            .ledger
            .report(lease_id, worker, seq, &indices, now_ms)?;
        let lease = self
            .ledger
            .lease(lease_id)
            .cloned()
            .ok_or(crate::ledger::LeaseError::UnknownLease(lease_id))?;
        let run_id = lease.run;
        if out.duplicate {
            let status = self.runs.get(&run_id).map(|r| r.status);
            return Ok(SubmitOutcome {
                duplicate: true,
                accepted: 0,
                reported: out.reported as u32,
                continue_lease: !out.completed
                    && lease.state == LeaseState::Active
                    && status == Some(RunStatus::Active),
            });
        }
        let workers = &self.workers;
        let run = self
            .runs
            .get_mut(&run_id)
            .ok_or(CoreError::UnknownRun(run_id))?;
        let new: BTreeSet<u64> = out.new_pairs.iter().copied().collect();
        let mut rows = Vec::new();
        let mut updates: Vec<(u64, String)> = Vec::new();
        for p in pairs.into_iter().filter(|p| new.contains(&p.index)) {
            let score = scores[&p.index];
            let games_json =
                serde_json::to_string(&p.games).map_err(|e| CoreError::Internal(e.to_string()))?;
            if let (Some(spsa), Some(a)) = (run.spsa.as_mut(), run.spsa_pairs.remove(&p.index)) {
                match spsa
                    .report(a.pair_id, score)
                    .map(serde_json::to_string::<SpsaUpdate>)
                {
                    Ok(json) => {
                        let seq = spsa.history().len() as u64;
                        updates.push((seq, json.map_err(|e| CoreError::Internal(e.to_string()))?));
                    }
                    Err(e) => tracing::warn!(pair = p.index, error = %e, "spsa report skipped"),
                }
            }
            if !run.is_excluded(worker, workers) {
                let compact = p.index - run.excluded_below(p.index, workers);
                if let Some(sprt) = run.sprt.as_mut() {
                    sprt.record(compact, score)
                        .map_err(|e| CoreError::Internal(e.to_string()))?;
                }
            }
            self.counters.games += p.games.len() as u64;
            rows.push((
                ResultRow {
                    run_id,
                    index: p.index,
                    lease_id,
                    worker_id: worker,
                    score: score.half_points(),
                    games: games_json,
                },
                p.pgn_gz,
            ));
            run.pairs.insert(
                p.index,
                PairEntry {
                    worker,
                    score,
                    games: p.games,
                },
            );
        }
        // Learn how long a pair takes when a lease completes.
        if out.completed {
            if let Some(&(start, slots)) = self.lease_meta.get(&lease_id) {
                let secs = now_ms.saturating_sub(start) as f64 / 1000.0;
                let observed = secs * f64::from(slots) / lease.pairs.len().max(1) as f64;
                if observed > 0.0 {
                    run.pair_seconds = 0.7 * run.pair_seconds + 0.3 * observed;
                }
            }
        }
        // Did the run end?
        let mut finish = None;
        if let Some(sprt) = &run.sprt {
            if sprt.state() != stats::SprtState::Continue {
                finish = Some(format!("sprt {}", sprt.state()));
            }
        }
        if finish.is_none()
            && self.ledger.done(run_id) >= self.ledger.run_record(run_id).map_or(0, |r| r.total)
        {
            finish = Some("all pairs played".to_string());
        }
        let snapshot = run.spsa.as_ref().map(spsa_snapshot).transpose()?;
        let mut returned = Vec::new();
        if let Some(reason) = &finish {
            if !run.status.is_over() {
                run.status = RunStatus::Finished;
                run.finish_reason = reason.clone();
                tracing::info!(run = run_id, reason = %reason, "run finished");
                returned = self.ledger.revoke(run_id, None);
            } else {
                finish = None;
            }
        }
        let lease_now = self.ledger.lease(lease_id).cloned().unwrap_or(lease);
        let status = self.runs[&run_id].status;
        let reason = self.runs[&run_id].finish_reason.clone();
        let next_fresh = self.ledger.run_record(run_id).map_or(0, |r| r.next_fresh);
        let revoked: Vec<LeaseRecord> = returned
            .iter()
            .filter_map(|r| self.ledger.lease(r.lease).cloned())
            .collect();
        self.commit(|tx, _| {
            for (row, pgn) in &rows {
                store::insert_result(tx, row, pgn)?;
            }
            for (seq, data) in &updates {
                store::insert_spsa_update(tx, run_id, *seq, data)?;
            }
            store::update_lease(tx, &lease_now)?;
            store::set_run_progress(tx, run_id, next_fresh, snapshot.as_deref())?;
            for l in &revoked {
                store::update_lease(tx, l)?;
            }
            if finish.is_some() {
                store::set_run_status(tx, run_id, status.as_str(), &reason)?;
            }
            Ok(())
        })?;
        Ok(SubmitOutcome {
            duplicate: false,
            accepted: out.new_pairs.len() as u32,
            reported: out.reported as u32,
            continue_lease: !out.completed
                && lease_now.state == LeaseState::Active
                && status == RunStatus::Active,
        })
    }

    /// A worker hands a lease back.
    pub fn release(
        &mut self,
        who: &Principal,
        worker: WorkerId,
        lease_id: u64,
        now_ms: u64,
    ) -> Result<u32, CoreError> {
        self.check_worker(who, worker)?;
        let r = self.ledger.release(lease_id, worker, now_ms)?;
        let n = r.pairs.len() as u32;
        tracing::info!(
            lease = lease_id,
            run = r.run,
            returned = n,
            "lease released"
        );
        self.persist_returned(&[r])?;
        Ok(n)
    }

    // ----- admin service -----

    /// Create a run from a TOML config.
    pub fn create_run(&mut self, toml_text: &str, now_ms: u64) -> Result<Summary, CoreError> {
        let config = RunConfig::parse(toml_text)?;
        let spsa = match config.spsa_config()? {
            Some(c) => Some(Spsa::new(c).map_err(|e| CoreError::Internal(e.to_string()))?),
            None => None,
        };
        let snapshot = spsa.as_ref().map(spsa_snapshot).transpose()?;
        let total = config.pairs();
        let id = self.commit(|tx, _| {
            Ok(store::insert_run(
                tx,
                toml_text,
                total,
                snapshot.as_deref(),
                now_ms,
            )?)
        })?;
        let mut run = Run::new(id, config, toml_text.to_string(), now_ms);
        run.spsa = spsa;
        run.rebuild_sprt(&self.workers)?;
        self.ledger.add_run(id, total);
        self.runs.insert(id, run);
        tracing::info!(run = id, pairs = total, "run created");
        self.summary(id)
    }

    /// A run's line.
    pub fn summary(&self, id: RunId) -> Result<Summary, CoreError> {
        let r = self.runs.get(&id).ok_or(CoreError::UnknownRun(id))?;
        Ok(Summary {
            id,
            name: r.config.name.clone(),
            kind: r.config.kind,
            status: r.status,
            priority: r.config.priority,
            pairs_total: r.config.pairs(),
            pairs_done: self.ledger.done(id),
            pairs_leased: self.ledger.leased(id),
            created_ms: r.created_ms,
            finish_reason: r.finish_reason.clone(),
        })
    }

    /// Every run, newest first.
    pub fn list(&self) -> Vec<Summary> {
        self.runs
            .keys()
            .rev()
            .filter_map(|&id| self.summary(id).ok())
            .collect()
    }

    /// Pause, resume or stop a run.
    pub fn set_status(&mut self, id: RunId, to: RunStatus) -> Result<Summary, CoreError> {
        let run = self.runs.get(&id).ok_or(CoreError::UnknownRun(id))?;
        let from = run.status;
        let allowed = match to {
            RunStatus::Paused => from == RunStatus::Active,
            RunStatus::Active => from == RunStatus::Paused,
            RunStatus::Stopped => !from.is_over(),
            RunStatus::Finished => false,
        };
        if !allowed {
            return Err(CoreError::BadState(format!(
                "run {id} is {} and cannot become {}",
                from.as_str(),
                to.as_str()
            )));
        }
        let returned = if to == RunStatus::Stopped {
            self.ledger.revoke(id, None)
        } else {
            Vec::new()
        };
        if let Some(run) = self.runs.get_mut(&id) {
            run.status = to;
            if to == RunStatus::Stopped {
                run.finish_reason = "stopped".into();
            }
        }
        let reason = self.runs[&id].finish_reason.clone();
        self.commit(|tx, _| Ok(store::set_run_status(tx, id, to.as_str(), &reason)?))?;
        if !returned.is_empty() {
            self.persist_returned(&returned)?;
        }
        tracing::info!(run = id, status = to.as_str(), "run status changed");
        self.summary(id)
    }

    /// Exclude or include a worker's results.
    pub fn exclude(&mut self, id: RunId, worker: &str, exclude: bool) -> Result<Detail, CoreError> {
        let run = self.runs.get(&id).ok_or(CoreError::UnknownRun(id))?;
        let known = self.workers.values().any(|w| w.info.name == worker);
        if !known {
            return Err(CoreError::BadRequest(format!("no worker named '{worker}'")));
        }
        let _ = run;
        let worker_ids: Vec<WorkerId> = self
            .workers
            .iter()
            .filter(|(_, w)| w.info.name == worker)
            .map(|(&id, _)| id)
            .collect();
        let mut returned = Vec::new();
        if exclude {
            for w in worker_ids {
                returned.extend(self.ledger.revoke(id, Some(w)));
            }
        }
        let run = self.runs.get_mut(&id).ok_or(CoreError::UnknownRun(id))?;
        if exclude {
            run.excluded.insert(worker.to_string());
        } else {
            run.excluded.remove(worker);
        }
        run.rebuild_sprt(&self.workers)?;
        let name = worker.to_string();
        self.commit(|tx, _| Ok(store::set_exclusion(tx, id, &name, exclude)?))?;
        if !returned.is_empty() {
            self.persist_returned(&returned)?;
        }
        self.detail(id)
    }

    /// A run's figures.
    pub fn detail(&self, id: RunId) -> Result<Detail, CoreError> {
        let run = self.runs.get(&id).ok_or(CoreError::UnknownRun(id))?;
        let mut penta = Pentanomial::default();
        let mut wdl = [0u64; 3];
        let mut by_worker: BTreeMap<String, [u64; 5]> = BTreeMap::new();
        let mut records = Vec::new();
        for p in run.pairs.values() {
            let name = self
                .workers
                .get(&p.worker)
                .map_or_else(|| format!("worker-{}", p.worker), |w| w.info.name.clone());
            by_worker.entry(name.clone()).or_default()[usize::from(p.score.half_points())] += 1;
            if run.excluded.contains(&name) {
                continue;
            }
            penta.add(p.score);
            for g in &p.games {
                let first_half = match (g.outcome, g.first_is_white) {
                    (Outcome::Draw, _) => 1,
                    (Outcome::WhiteWin, true) | (Outcome::BlackWin, false) => 2,
                    _ => 0,
                };
                wdl[[2, 1, 0][first_half]] += 1;
                records.push(GameRecord {
                    ruleset: g.ruleset.clone(),
                    result: g.outcome,
                    plies: g.plies,
                    termination: g.termination.clone(),
                    castlings: g.castlings.clone(),
                });
            }
        }
        let results = Results::Pentanomial(penta);
        let (elo, nelo) = if penta.pairs() > 0 {
            (
                stats::logistic_elo(&results).ok(),
                stats::normalized_elo(&results).ok(),
            )
        } else {
            (None, None)
        };
        let sprt = run.sprt.as_ref().map(|s| {
            let (lo, hi) = s.sprt().stopping_bounds();
            let params = run
                .config
                .sprt_params()
                .ok()
                .flatten()
                .unwrap_or_else(|| s.sprt().params);
            (s.llr(), lo, hi, s.state(), params, s.counted().pairs())
        });
        let spsa = run
            .spsa
            .as_ref()
            .map(|s| {
                s.config()
                    .params
                    .iter()
                    .zip(s.theta())
                    .map(|(p, &v)| (p.name.clone(), v, p.start, p.min, p.max, s.credited()))
                    .collect()
            })
            .unwrap_or_default();
        let rulesets: BTreeSet<&str> = run
            .config
            .variants
            .iter()
            .map(|v| v.ruleset.as_str())
            .collect();
        let study = if run.config.kind == RunKind::Study || rulesets.len() > 1 {
            let baseline = run
                .config
                .study
                .as_ref()
                .and_then(|s| s.baseline.as_deref())
                .filter(|b| records.iter().any(|r| r.ruleset == *b));
            stats::study::study(&records, baseline).ok()
        } else {
            None
        };
        let rows: Vec<[u64; 5]> = by_worker.values().copied().collect();
        let res = residual::residuals(&rows);
        let workers = by_worker
            .into_iter()
            .zip(res)
            .map(|((name, p), r)| WorkerShare {
                excluded: run.excluded.contains(&name),
                name,
                pentanomial: p,
                residual: r,
            })
            .collect();
        Ok(Detail {
            summary: self.summary(id)?,
            config_toml: run.config_toml.clone(),
            pentanomial: penta.counts(),
            wdl,
            elo,
            nelo,
            sprt,
            spsa,
            study,
            workers,
        })
    }

    /// The PGN text of a run's finished pairs, one string per pair, in pair order.
    pub fn pgns(&self, id: RunId) -> Result<Vec<String>, CoreError> {
        if !self.runs.contains_key(&id) {
            return Err(CoreError::UnknownRun(id));
        }
        let mut out = Vec::new();
        for (index, gz) in store::pgns(&self.conn, id)? {
            use std::io::Read;
            let mut text = String::new();
            match flate2::read::GzDecoder::new(&gz[..]).read_to_string(&mut text) {
                Ok(_) => out.push(text),
                Err(e) => {
                    tracing::warn!(run = id, pair = index, error = %e, "unreadable pgn skipped")
                }
            }
        }
        Ok(out)
    }

    /// Figures for the metrics endpoint: (workers seen, leases outstanding, queue depth).
    pub fn gauges(&self) -> (u64, u64, u64) {
        let outstanding = self
            .ledger
            .leases()
            .filter(|l| l.state == LeaseState::Active)
            .count() as u64;
        let queue = self
            .runs
            .values()
            .filter(|r| r.status == RunStatus::Active)
            .map(|r| self.ledger.available(r.id))
            .sum();
        let workers: BTreeSet<u64> = self
            .ledger
            .leases()
            .filter(|l| l.state == LeaseState::Active)
            .map(|l| l.worker)
            .collect();
        (workers.len() as u64, outstanding, queue)
    }

    /// Options of the players with string values (for leases).
    pub fn player_options(config: &RunConfig) -> [BTreeMap<String, String>; 2] {
        [&config.first, config.second()].map(|p| {
            p.options
                .iter()
                .map(|(k, v)| (k.clone(), option_string(v)))
                .collect()
        })
    }
}

/// Side of a castling move from the proto's flag.
pub fn side(white: bool) -> Side {
    if white {
        Side::White
    } else {
        Side::Black
    }
}
