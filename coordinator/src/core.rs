//! The coordinator's state and every operation on it, synchronous.
//!
//! [`Core`] owns the SQLite connection, the [`Ledger`] and the runs in memory. Every
//! operation first checks its request completely (nothing changes on a refused request),
//! then changes the memory state and writes the change in one transaction. If anything fails
//! after the first change (a storage error, a bug), the memory state is thrown away and
//! reloaded from the database, which holds exactly what was acknowledged: memory is never
//! ahead of the database. It runs on one dedicated thread (see [`crate::actor`]), never on
//! the async runtime.

use crate::activity::Activities;
use crate::config::{option_string, RunConfig};
use crate::error::CoreError;
use crate::facts;
use crate::figures;
use crate::history;
use crate::ledger::{
    LeaseError, LeaseRecord, LeaseState, Ledger, ReportCheck, Returned, RunId, WorkerId,
};
pub use crate::model::{
    Counters, Detail, GameFacts, Grant, LeaseView, PairReport, PairWork, ReleaseOutcome, RunStatus,
    SubmitOutcome, Summary, Timing, WorkerInfo, WorkerView,
};
use crate::run::{sprt_snapshot, spsa_restore, spsa_snapshot, Run, Worker};
use crate::scheduler::{self, Candidate, SizeInput};
use crate::store::{self, LeaseMeta, Principal, ResultRow, Role};
use crate::totals::TokenTotals;
use crate::verify;
use proto::limits;
use rusqlite::Connection;
use stats::spsa::{PairAssignment, Spsa, SpsaUpdate};
use stats::PairScore;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Instant;

/// Lease failures after which a run pauses itself.
pub const FAILURES_TO_PAUSE: usize = 3;

/// How long a token that failed a lease is not given the same run again, ms.
pub const FAILURE_COOLDOWN_MS: u64 = 5 * 60 * 1000;

/// The coordinator's state.
pub struct Core {
    conn: Connection,
    timing: Timing,
    ledger: Ledger,
    runs: BTreeMap<RunId, Run>,
    workers: BTreeMap<WorkerId, Worker>,
    /// Live registration per (token, label): a re-registration replaces the old one.
    labels: BTreeMap<i64, BTreeMap<String, WorkerId>>,
    /// Lease start time and granted slots.
    lease_meta: BTreeMap<u64, LeaseMeta>,
    /// Tokens heard from lately, per worker. A lease takes no more than its token's share of
    /// a run's open pairs.
    recent: BTreeMap<i64, BTreeMap<WorkerId, Seen>>,
    /// Bumped by every commit: watchers wake on changes, not on reads.
    generation: u64,
    /// Inside a group commit.
    in_batch: bool,
    /// Operations of the open group that failed after changing memory: each rolled the
    /// group back and reloaded memory, and the group's callers must all be refused.
    group_failures: u32,
    /// Rows to rewrite from memory before the next commit.
    dirty: Dirty,
    /// Metrics counters.
    pub counters: Counters,
    /// When each worker was last heard from and its recent games a minute (the workers page).
    activity: Activities,
}

impl std::fmt::Debug for Core {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Core")
            .field("runs", &self.runs.len())
            .finish()
    }
}

/// The per-run rows that operations change and the commit rewrites from memory: a run's
/// counters and SPSA/SPRT snapshots, and a token's running totals. Writing them once per
/// commit instead of once per operation keeps a group commit of many reports to one write
/// (and one serialisation) per run and per token.
#[derive(Debug, Default)]
struct Dirty {
    runs: BTreeSet<RunId>,
    totals: BTreeSet<(RunId, String)>,
}

/// Write the rows `dirty` names from memory.
fn write_dirty(
    conn: &Connection,
    runs: &mut BTreeMap<RunId, Run>,
    ledger: &Ledger,
    dirty: &Dirty,
) -> Result<(), CoreError> {
    for &id in &dirty.runs {
        let (Some(run), Some(record)) = (runs.get_mut(&id), ledger.run_record(id)) else {
            continue;
        };
        let spsa = run.spsa.as_ref().map(spsa_snapshot).transpose()?;
        let sprt = sprt_snapshot(run.sprt.as_ref())?;
        store::set_run_counts(conn, id, record.next_fresh, record.done)?;
        store::set_run_state(conn, id, spsa.as_deref(), sprt.as_deref())?;
        if record.done >= run.history_next {
            let point = history::Point::of(run, record.done, crate::service::now_ms());
            let json = serde_json::to_string(&point).map_err(internal)?;
            store::add_history(conn, id, record.done, point.at_ms, &json)?;
            // Memory follows the database only once the commit succeeds; a failed commit
            // reloads runs (and this field) from the database.
            run.history_next = history::next_checkpoint(record.total, record.done);
        }
    }
    for (id, token) in &dirty.totals {
        let Some(t) = runs.get(id).and_then(|r| r.totals.by_token.get(token)) else {
            continue;
        };
        let json = serde_json::to_string(t).map_err(internal)?;
        store::set_token_totals(conn, *id, token, &json)?;
    }
    Ok(())
}

/// When a worker last asked for work, and for how many slots.
#[derive(Debug, Clone, Copy)]
struct Seen {
    at_ms: u64,
    slots: u32,
}

fn internal(e: impl std::fmt::Display) -> CoreError {
    CoreError::Internal(e.to_string())
}

fn check_len(what: &str, value: &str, max: usize) -> Result<(), CoreError> {
    if value.len() > max {
        return Err(CoreError::TooLarge(format!(
            "{what} is {} bytes (limit {max})",
            value.len()
        )));
    }
    Ok(())
}

/// Refuse a list longer than `max`, naming what it holds (`what`, in the plural).
fn check_count(what: &str, count: usize, max: usize) -> Result<(), CoreError> {
    if count > max {
        return Err(CoreError::TooLarge(format!("{count} {what} (limit {max})")));
    }
    Ok(())
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
            labels: BTreeMap::new(),
            lease_meta: BTreeMap::new(),
            recent: BTreeMap::new(),
            generation: 0,
            activity: Activities::default(),
            in_batch: false,
            group_failures: 0,
            dirty: Dirty::default(),
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

    /// Copy the WAL back on a [`crate::checkpoint::Checkpointer`] thread on `db`, so that
    /// the automatic checkpoints of commits find little left to copy. It lives until the
    /// returned handle is dropped, after this core's last commit.
    pub fn checkpoint_in_background(
        &self,
        db: &Path,
        every: std::time::Duration,
    ) -> Result<crate::checkpoint::Checkpointer, CoreError> {
        crate::checkpoint::spawn(db, every)
    }

    /// Timing settings.
    pub fn timing(&self) -> Timing {
        self.timing
    }

    /// Changes committed since start (watchers compare it).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Throw the memory state away and load the live state from the database: runs with
    /// their totals and snapshots, active leases, queues. Nothing here grows with the number
    /// of pairs a run has stored (a run stored before the totals existed is rebuilt once).
    pub fn reload(&mut self) -> Result<(), CoreError> {
        // Memory is about to equal the database: nothing is left to write.
        self.dirty = Dirty::default();
        let s = store::load(&self.conn)?;
        let names = store::token_names(&self.conn)?;
        self.workers.clear();
        self.labels.clear();
        for w in &s.workers {
            let info: WorkerInfo = serde_json::from_str(&w.info).map_err(|e| {
                CoreError::Internal(format!("stored registration of worker {}: {e}", w.id))
            })?;
            let token_name = names
                .get(&w.token_id)
                .cloned()
                .unwrap_or_else(|| format!("token-{}", w.token_id));
            self.labels
                .entry(w.token_id)
                .or_default()
                .insert(info.name.clone(), w.id);
            self.workers.insert(
                w.id,
                Worker {
                    token_id: w.token_id,
                    token_name,
                    info,
                },
            );
        }
        let mut records: Vec<_> = s.runs.iter().map(|r| r.record).collect();
        let mut requeued = s.requeued;
        self.lease_meta = s.lease_meta;
        self.runs.clear();
        for row in s.runs {
            let config = RunConfig::parse(&row.config_toml).map_err(CoreError::Config)?;
            let mut run = Run::new(row.id, config, row.config_toml, row.created_ms);
            run.status = RunStatus::parse(&row.status)
                .map_err(|e| CoreError::Internal(format!("run {}: {e}", row.id)))?;
            run.finish_reason = row.finish_reason;
            run.history_next = match store::last_history(&self.conn, row.id)? {
                Some(pairs) => history::next_checkpoint(row.record.total, pairs),
                None => 0,
            };
            if let Some(snapshot) = &row.spsa {
                // The history stays in the database (spsa_updates), not in memory.
                let mut spsa = spsa_restore(snapshot, &[])?;
                spsa.set_keep_history(false);
                run.spsa = Some(spsa);
            }
            run.excluded = s.exclusions.get(&row.id).cloned().unwrap_or_default();
            run.sprt = match &row.sprt {
                Some(json) => Some(serde_json::from_str(json).map_err(|e| {
                    CoreError::Internal(format!("stored SPRT state of run {}: {e}", row.id))
                })?),
                None => run.new_sprt()?,
            };
            for (token, json) in s.totals.get(&row.id).into_iter().flatten() {
                let t: TokenTotals = serde_json::from_str(json).map_err(|e| {
                    CoreError::Internal(format!("stored totals of run {}: {e}", row.id))
                })?;
                run.totals.by_token.insert(token.clone(), t);
            }
            let needs_rebuild = !row.totals_ok;
            if needs_rebuild || !run.excluded.is_empty() {
                let active: BTreeSet<u64> = s
                    .leases
                    .iter()
                    .filter(|l| l.run == row.id)
                    .flat_map(|l| l.pairs.iter().copied())
                    .collect();
                let rebuilt = verify::rebuild(
                    &self.conn,
                    row.id,
                    &run.config,
                    &run.excluded,
                    row.record.next_fresh,
                    &active,
                )?;
                run.excluded_indices = rebuilt.excluded_indices;
                if needs_rebuild {
                    tracing::info!(
                        run = row.id,
                        pairs = rebuilt.done,
                        "rebuilding a run's totals from its stored pairs"
                    );
                    run.totals = rebuilt.totals;
                    run.sprt = rebuilt.sprt;
                    if let Some(r) = records.iter_mut().find(|r| r.id == row.id) {
                        r.done = rebuilt.done;
                    }
                    requeued.insert(row.id, rebuilt.requeued.clone());
                    let tx = self.conn.unchecked_transaction()?;
                    for (token, t) in &run.totals.by_token {
                        store::set_token_totals(
                            &tx,
                            row.id,
                            token,
                            &serde_json::to_string(t).map_err(internal)?,
                        )?;
                    }
                    store::requeue(
                        &tx,
                        row.id,
                        &rebuilt.requeued.iter().copied().collect::<Vec<_>>(),
                    )?;
                    store::set_run_counts(&tx, row.id, row.record.next_fresh, rebuilt.done)?;
                    let sprt = sprt_snapshot(run.sprt.as_ref())?;
                    store::set_run_state(&tx, row.id, None, sprt.as_deref())?;
                    store::set_totals_ok(&tx, row.id)?;
                    tx.commit()?;
                }
            }
            self.runs.insert(row.id, run);
        }
        let active: BTreeMap<u64, &LeaseRecord> = s.leases.iter().map(|l| (l.id, l)).collect();
        for ((lease, index), json) in &s.lease_spsa {
            let Some(l) = active.get(lease) else {
                continue;
            };
            if l.reported.contains(index) {
                continue;
            }
            let a = serde_json::from_str::<PairAssignment>(json).map_err(|e| {
                CoreError::Internal(format!("stored SPSA assignment of pair {index}: {e}"))
            })?;
            if let Some(run) = self.runs.get_mut(&l.run) {
                if let Some(spsa) = run.spsa.as_mut() {
                    spsa.restore_outstanding(a.clone()).map_err(|e| {
                        CoreError::Internal(format!("stored SPSA assignment of pair {index}: {e}"))
                    })?;
                }
                run.spsa_pairs.insert(*index, a);
            }
        }
        self.ledger = Ledger::restore(&records, &requeued, s.leases, s.next_lease_id);
        Ok(())
    }

    /// Run `write` in a transaction of its own and count it as a change; inside a batch
    /// ([`Core::begin_batch`]) in a savepoint of the batch's transaction, which one commit
    /// makes durable for every operation of the batch.
    fn commit<T>(
        &mut self,
        write: impl FnOnce(&Connection) -> Result<T, CoreError>,
    ) -> Result<T, CoreError> {
        let start = Instant::now();
        let out = if self.in_batch {
            self.conn.prepare_cached("SAVEPOINT op")?.execute([])?;
            match write(&self.conn) {
                Ok(out) => {
                    self.conn.prepare_cached("RELEASE op")?.execute([])?;
                    out
                }
                Err(e) => {
                    self.conn.execute_batch("ROLLBACK TO op; RELEASE op")?;
                    return Err(e);
                }
            }
        } else {
            let dirty = std::mem::take(&mut self.dirty);
            let tx = self.conn.unchecked_transaction()?;
            let out = write(&tx)?;
            write_dirty(&tx, &mut self.runs, &self.ledger, &dirty)?;
            tx.commit()?;
            self.counters.commits += 1;
            out
        };
        self.counters.commit_seconds += start.elapsed().as_secs_f64();
        self.generation += 1;
        Ok(out)
    }

    /// Start a group commit: until [`Core::end_batch`], operations write into one
    /// transaction. Their callers must not be answered before `end_batch` returns `Ok`.
    pub fn begin_batch(&mut self) -> Result<(), CoreError> {
        self.conn.prepare_cached("BEGIN IMMEDIATE")?.execute([])?;
        self.in_batch = true;
        Ok(())
    }

    /// Operations of the open group that failed after changing memory. Each rolled the
    /// group back and reloaded memory from the database; [`Core::end_batch`] refuses a group
    /// with any.
    pub fn group_failures(&self) -> u32 {
        self.group_failures
    }

    /// Commit a group (one fsync for all its operations). If the commit fails, nothing of
    /// the batch is stored, and memory is reloaded from the database to match.
    pub fn end_batch(&mut self) -> Result<(), CoreError> {
        let open = std::mem::replace(&mut self.in_batch, false);
        if std::mem::replace(&mut self.group_failures, 0) > 0 {
            if open {
                let _ = self.conn.execute_batch("ROLLBACK");
                if let Err(e) = self.reload() {
                    tracing::error!(error = %e, "reload failed");
                }
            }
            return Err(CoreError::Internal(
                "an operation of this group commit failed; nothing of the group was stored".into(),
            ));
        }
        let start = Instant::now();
        let dirty = std::mem::take(&mut self.dirty);
        let written = write_dirty(&self.conn, &mut self.runs, &self.ledger, &dirty);
        let committed = match written {
            Ok(()) => self
                .conn
                .prepare_cached("COMMIT")
                .and_then(|mut q| q.execute([]))
                .map_err(CoreError::from),
            Err(e) => Err(e),
        };
        match committed {
            Ok(_) => {
                self.counters.commits += 1;
                self.counters.batches += 1;
                self.counters.commit_seconds += start.elapsed().as_secs_f64();
                Ok(())
            }
            Err(e) => {
                tracing::error!(error = %e, "group commit failed; reloading from the database");
                let _ = self.conn.execute_batch("ROLLBACK");
                if let Err(e2) = self.reload() {
                    tracing::error!(error = %e2, "reload failed");
                }
                Err(e)
            }
        }
    }

    /// Run an operation that changes memory before it commits: if it fails, memory is
    /// reloaded from the database, so nothing it did survives without being stored.
    fn atomically<T>(
        &mut self,
        op: impl FnOnce(&mut Self) -> Result<T, CoreError>,
    ) -> Result<T, CoreError> {
        let out = op(self);
        if let Err(e) = &out {
            tracing::error!(error = %e, "operation failed after changing state; reloading from the database");
            if self.in_batch {
                // Earlier operations of the group left rows for the commit to write from a
                // memory that this one has spoilt: the whole group goes, and its callers are
                // refused (`end_batch`); the rest of the group runs in a fresh transaction
                // on reloaded memory and goes the same way.
                self.group_failures += 1;
                let _ = self.conn.execute_batch("ROLLBACK");
                if let Err(e2) = self.reload() {
                    tracing::error!(error = %e2, "reload failed");
                }
                if self.conn.execute_batch("BEGIN IMMEDIATE").is_err() {
                    self.in_batch = false;
                }
            } else if let Err(e2) = self.reload() {
                tracing::error!(error = %e2, "reload failed");
            }
        }
        out
    }

    /// Look a token up.
    pub fn authenticate(&self, token: &str) -> Result<Option<Principal>, CoreError> {
        Ok(store::find_token(&self.conn, token)?)
    }

    /// Create a token (for tests).
    pub fn add_token(&mut self, name: &str, role: Role, now_ms: u64) -> Result<String, CoreError> {
        store::add_token(&self.conn, name, role, now_ms).map_err(|e| match e {
            store::TokenError::Storage(e) => CoreError::Storage(e),
            other => CoreError::BadRequest(other.to_string()),
        })
    }

    // ----- worker service -----

    /// Register a worker. Its identity is the token; the name is a label, and registering
    /// the same label again replaces the earlier registration.
    pub fn register(
        &mut self,
        who: &Principal,
        mut info: WorkerInfo,
        now_ms: u64,
    ) -> Result<WorkerId, CoreError> {
        check_len("worker name", &info.name, limits::NAME_BYTES)?;
        check_len("version", &info.version, limits::VERSION_BYTES)?;
        check_count("variants", info.variants.len(), limits::VARIANTS)?;
        for v in &info.variants {
            check_len("variant", v, limits::RULES_ID_BYTES)?;
        }
        check_count("engines", info.engines.len(), limits::ENGINES)?;
        check_count("features", info.features.len(), limits::FEATURES)?;
        for f in &info.features {
            check_len("feature", f, limits::FEATURE_BYTES)?;
        }
        let mut seen = BTreeSet::new();
        for e in &info.engines {
            if !crate::config::valid_engine_name(&e.name) || e.name == "builtin" {
                return Err(CoreError::BadRequest(format!(
                    "engine name {:?} is not valid (letters, digits, '.', '-', '_'; at most {} bytes)",
                    e.name.chars().take(80).collect::<String>(),
                    limits::ENGINE_NAME_BYTES
                )));
            }
            let hex = e.sha256.len() == 64
                && e.sha256
                    .chars()
                    .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c));
            if !hex {
                return Err(CoreError::BadRequest(format!(
                    "engine {}: sha256 must be 64 lower-case hex digits",
                    e.name
                )));
            }
            if !seen.insert(e.name.clone()) {
                return Err(CoreError::BadRequest(format!(
                    "engine {} declared twice",
                    e.name
                )));
            }
            // The names runs' variants are checked against, which the lease filter compares
            // this with.
            let known = crate::config::VARIANTS.iter().map(|(name, _)| *name);
            if !e.network_variant.is_empty() && !known.clone().any(|v| v == e.network_variant) {
                return Err(CoreError::BadRequest(format!(
                    "engine {}: network_variant {:?} is not a variant ({})",
                    e.name,
                    e.network_variant.chars().take(40).collect::<String>(),
                    known.collect::<Vec<_>>().join(", ")
                )));
            }
        }
        if info.name.trim().is_empty() {
            info.name = who.name.clone();
        }
        info.cores = info.cores.clamp(1, who.max_slots.max(1));
        let live = self.labels.get(&who.token_id);
        let replaces = live.is_some_and(|l| l.contains_key(&info.name));
        if !replaces && live.map_or(0, BTreeMap::len) >= limits::REGISTRATIONS_PER_TOKEN {
            return Err(CoreError::Exhausted(format!(
                "token {} has {} live registrations (limit {}); reuse a machine name",
                who.name,
                limits::REGISTRATIONS_PER_TOKEN,
                limits::REGISTRATIONS_PER_TOKEN
            )));
        }
        let json = serde_json::to_string(&info).map_err(internal)?;
        let token_id = who.token_id;
        let name = info.name.clone();
        let id = self.commit(|tx| Ok(store::insert_worker(tx, token_id, &name, &json, now_ms)?))?;
        self.labels.entry(token_id).or_default().insert(name, id);
        self.workers.insert(
            id,
            Worker {
                token_id,
                token_name: who.name.clone(),
                info,
            },
        );
        Ok(id)
    }

    fn check_worker(&self, who: &Principal, worker: WorkerId) -> Result<&Worker, CoreError> {
        match self.workers.get(&worker) {
            Some(w) if w.token_id == who.token_id => Ok(w),
            Some(_) => Err(CoreError::NotYourWorker(worker)),
            None => Err(CoreError::UnknownWorker(worker)),
        }
    }

    /// Whether a worker may play a run now: not excluded, not cooling down after a failure,
    /// plays its variants, declared its external engines (with the pinned digests) and the
    /// features the run needs.
    fn fits(run: &Run, w: &Worker, now_ms: u64) -> bool {
        if run.excluded.contains(&w.token_name) {
            return false;
        }
        if run
            .cooldown
            .get(&w.token_id)
            .is_some_and(|&until| now_ms < until)
        {
            return false;
        }
        let info = &w.info;
        let variants_ok = info.variants.is_empty()
            || run
                .config
                .variants
                .iter()
                .all(|v| info.variants.iter().any(|x| x == &v.variant));
        // A declared network plays its own game only: a run of another game would have the
        // worker refuse the lease (three refusals pause the run), so it is never offered.
        let engines_ok = [&run.config.first, run.config.second()].iter().all(|p| {
            p.is_builtin()
                || info.engines.iter().any(|e| {
                    e.name == p.engine
                        && (p.sha256.is_empty() || e.sha256 == p.sha256)
                        && e.plays(run.config.variants.iter().map(|v| v.variant.as_str()))
                })
        });
        // A worker that does not declare clocks would play a clock run at its own limits.
        let clock_ok = run.config.limits.tc.is_none()
            || info.features.iter().any(|f| f == proto::features::CLOCK);
        variants_ok && engines_ok && clock_ok
    }

    /// Slots held by a token's active leases.
    fn token_held(&self, token: i64) -> u64 {
        self.ledger
            .leases()
            .filter(|l| l.state == LeaseState::Active)
            .filter(|l| {
                self.workers
                    .get(&l.worker)
                    .is_some_and(|w| w.token_id == token)
            })
            .map(|l| u64::from(self.lease_meta.get(&l.id).map_or(1, |m| m.slots)))
            .sum()
    }

    /// Slots of workers holding active leases on a run.
    fn assigned_slots(&self, run: RunId) -> u64 {
        self.ledger
            .active_leases(run)
            .map(|l| u64::from(self.lease_meta.get(&l.id).map_or(1, |m| m.slots)))
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
        let w = self.check_worker(who, worker)?.clone();
        self.activity.seen(worker, 0, now_ms);
        self.expire(now_ms)?;
        let slots = scheduler::granted_slots(
            concurrency,
            w.info.cores,
            who.max_slots,
            self.token_held(who.token_id),
        );
        if slots == 0 {
            return Ok(None);
        }
        let window = 2 * self.timing.lease_timeout_ms;
        self.recent.entry(who.token_id).or_default().insert(
            worker,
            Seen {
                at_ms: now_ms,
                slots,
            },
        );
        for seen in self.recent.values_mut() {
            seen.retain(|_, s| now_ms.saturating_sub(s.at_ms) <= window);
        }
        self.recent.retain(|_, seen| !seen.is_empty());
        let token_slots = |seen: &BTreeMap<WorkerId, Seen>, max: u32| {
            seen.values()
                .map(|s| u64::from(s.slots))
                .sum::<u64>()
                .min(u64::from(max.max(1)))
        };
        let my_slots = self
            .recent
            .get(&who.token_id)
            .map_or(u64::from(slots), |s| token_slots(s, who.max_slots));
        let active_slots: u64 = self
            .recent
            .iter()
            .map(|(&t, s)| {
                if t == who.token_id {
                    my_slots
                } else {
                    token_slots(s, u32::MAX)
                }
            })
            .sum();
        let candidates: Vec<Candidate> = self
            .runs
            .values()
            .filter(|r| r.status == RunStatus::Active && self.ledger.available(r.id) > 0)
            .filter(|r| Self::fits(r, &w, now_ms))
            .map(|r| Candidate {
                run: r.id,
                priority: r.config.priority,
                throughput: r.config.throughput,
                assigned_slots: self.assigned_slots(r.id),
            })
            .collect();
        let Some(run_id) = scheduler::pick(&candidates) else {
            return Ok(None);
        };
        let run = &self.runs[&run_id];
        let n = scheduler::lease_size(&SizeInput {
            slots,
            pair_seconds: run.timer.estimate(who.token_id),
            batch_seconds: run.config.batch_seconds,
            available: self.ledger.available(run_id),
            total: run.config.pairs(),
            token_slots: my_slots,
            active_slots,
            max_pairs,
        });
        let deadline = now_ms + self.timing.lease_timeout_ms;
        self.atomically(|core| {
            let lease = core
                .ledger
                .issue(run_id, worker, n, deadline)?
                .ok_or_else(|| CoreError::Internal("run had no pairs after all".into()))?;
            let run = core
                .runs
                .get_mut(&run_id)
                .ok_or(CoreError::UnknownRun(run_id))?;
            let mut spsa_rows = BTreeMap::new();
            if let Some(spsa) = run.spsa.as_mut() {
                let assignments = spsa.assign(lease.pairs.len() as u32);
                for (&i, a) in lease.pairs.iter().zip(assignments) {
                    spsa_rows.insert(i, serde_json::to_string(&a).map_err(internal)?);
                    run.spsa_pairs.insert(i, a);
                }
            }
            core.dirty.runs.insert(run_id);
            core.lease_meta.insert(
                lease.id,
                LeaseMeta {
                    started_ms: now_ms,
                    slots,
                },
            );
            core.commit(|tx| {
                store::insert_lease(tx, &lease, now_ms, slots, &spsa_rows)?;
                Ok(())
            })?;
            let run = &core.runs[&run_id];
            tracing::info!(
                lease = lease.id,
                run = run_id,
                worker,
                slots,
                pairs = lease.pairs.len(),
                "lease issued"
            );
            let pairs = lease.pairs.iter().map(|&i| run.work_for(i)).collect();
            Ok(Some(Grant {
                lease,
                config: run.config.clone(),
                pairs,
            }))
        })
    }

    /// Expire overdue leases: their unreported pairs go back to the queue.
    pub fn expire(&mut self, now_ms: u64) -> Result<usize, CoreError> {
        self.atomically(|core| {
            let returned = core.ledger.expire(now_ms);
            if returned.is_empty() {
                return Ok(0);
            }
            for r in &returned {
                tracing::warn!(
                    lease = r.lease.id,
                    run = r.run,
                    returned = r.pairs.len(),
                    "lease expired"
                );
            }
            core.counters.leases_expired += returned.len() as u64;
            core.persist_returned(&returned)?;
            Ok(returned.len())
        })
    }

    /// Forget SPSA assignments of returned pairs, store the ended leases and the pairs that
    /// went back to the queue. Callers run it inside [`Core::atomically`].
    fn persist_returned(&mut self, returned: &[Returned]) -> Result<(), CoreError> {
        for r in returned {
            self.lease_meta.remove(&r.lease.id);
            self.dirty.runs.insert(r.run);
            if let Some(run) = self.runs.get_mut(&r.run) {
                for i in &r.pairs {
                    if let (Some(a), Some(spsa)) = (run.spsa_pairs.remove(i), run.spsa.as_mut()) {
                        spsa.abandon(a.pair_id).map_err(internal)?;
                    }
                }
            }
        }
        self.commit(|tx| {
            for r in returned {
                store::update_lease(tx, &r.lease)?;
                store::requeue(tx, r.run, &r.pairs)?;
            }
            Ok(())
        })
    }

    /// A lease that left the ledger, from the database: why a late call about it is refused.
    fn ended_lease(&self, id: u64, worker: WorkerId) -> Result<LeaseRecord, CoreError> {
        let l = store::lease_row(&self.conn, id)?.ok_or(LeaseError::UnknownLease(id))?;
        if l.worker != worker {
            return Err(LeaseError::NotHolder(id).into());
        }
        Ok(l)
    }

    /// Extend leases; returns per lease `Ok(deadline)` or the reason it is not valid (one of
    /// the proto's list). A lease of another worker is `not yours`, and nothing more.
    pub fn heartbeat(
        &mut self,
        who: &Principal,
        worker: WorkerId,
        leases: &[u64],
        now_ms: u64,
    ) -> Result<Vec<Result<u64, String>>, CoreError> {
        self.check_worker(who, worker)?;
        self.activity.seen(worker, 0, now_ms);
        check_count(
            "leases in one heartbeat",
            leases.len(),
            limits::PAIRS_PER_REPORT,
        )?;
        self.expire(now_ms)?;
        if let Some(seen) = self
            .recent
            .get_mut(&who.token_id)
            .and_then(|s| s.get_mut(&worker))
        {
            seen.at_ms = now_ms;
        }
        let deadline = now_ms + self.timing.lease_timeout_ms;
        let mut out = Vec::new();
        let mut changed = Vec::new();
        for &id in leases {
            let res = match self.ledger.lease(id) {
                None => match self.ended_lease(id, worker) {
                    Ok(l) => Err(l.state.as_str().to_string()),
                    Err(CoreError::Lease(LeaseError::NotHolder(_))) => Err("not yours".to_string()),
                    Err(CoreError::Lease(LeaseError::UnknownLease(_))) => {
                        Err("unknown lease".to_string())
                    }
                    Err(e) => return Err(e),
                },
                Some(l) if l.worker != worker => Err("not yours".to_string()),
                Some(l) => match self.runs.get(&l.run).map(|r| r.status) {
                    Some(RunStatus::Paused) => Err("run paused".to_string()),
                    Some(RunStatus::Stopped) => Err("run stopped".to_string()),
                    Some(RunStatus::Finished) => Err("run finished".to_string()),
                    _ => match self.ledger.heartbeat(id, worker, now_ms, deadline) {
                        Ok(l) => {
                            changed.push(l.clone());
                            Ok(l.deadline_ms)
                        }
                        Err(LeaseError::NotValid { state, .. }) => Err(state.to_string()),
                        Err(LeaseError::NotHolder(_)) => Err("not yours".to_string()),
                        Err(_) => Err("unknown lease".to_string()),
                    },
                },
            };
            out.push(res);
        }
        if !changed.is_empty() {
            self.atomically(|core| {
                core.commit(|tx| {
                    for l in &changed {
                        store::update_lease(tx, l)?;
                    }
                    Ok(())
                })
            })?;
        }
        Ok(out)
    }

    /// Record an incremental report (the pairs since the previous one), whole or not at all.
    pub fn submit(
        &mut self,
        who: &Principal,
        worker: WorkerId,
        lease_id: u64,
        seq: u64,
        pairs: Vec<PairReport>,
        now_ms: u64,
    ) -> Result<SubmitOutcome, CoreError> {
        let result = self.submit_checked(who, worker, lease_id, seq, pairs, now_ms);
        if let Ok(out) = &result {
            self.activity
                .seen(worker, 2 * u64::from(out.accepted), now_ms);
        }
        if matches!(
            result,
            Err(CoreError::BadReport(_) | CoreError::TooLarge(_) | CoreError::BadRequest(_))
        ) {
            self.counters.reports_refused += 1;
        }
        result
    }

    fn submit_checked(
        &mut self,
        who: &Principal,
        worker: WorkerId,
        lease_id: u64,
        seq: u64,
        pairs: Vec<PairReport>,
        now_ms: u64,
    ) -> Result<SubmitOutcome, CoreError> {
        let label = self.check_worker(who, worker)?.info.name.clone();
        if seq == 0 {
            return Err(LeaseError::ZeroSeq.into());
        }
        if seq > limits::MAX_SEQ {
            return Err(CoreError::BadRequest(format!(
                "report number {seq} is above the limit 2^63-1"
            )));
        }
        check_count("pairs in one report", pairs.len(), limits::PAIRS_PER_REPORT)?;
        self.expire(now_ms)?;
        // Check everything before anything changes.
        let Some(lease) = self.ledger.lease(lease_id).cloned() else {
            // The lease left the ledger: a repeat of a committed report is acknowledged, and
            // anything else is refused with the lease's state.
            let l = self.ended_lease(lease_id, worker)?;
            if seq <= l.last_seq {
                return Ok(SubmitOutcome {
                    duplicate: true,
                    accepted: 0,
                    reported: 0,
                    continue_lease: false,
                });
            }
            return Err(LeaseError::NotValid {
                lease: lease_id,
                state: l.state.as_str(),
            }
            .into());
        };
        let run_id = lease.run;
        let run = self
            .runs
            .get(&run_id)
            .ok_or(CoreError::UnknownRun(run_id))?;
        let indices: Vec<u64> = pairs.iter().map(|p| p.index).collect();
        let new = match self
            .ledger
            .check_report(lease_id, worker, seq, &indices, now_ms)?
        {
            ReportCheck::Duplicate(out) => {
                return Ok(SubmitOutcome {
                    duplicate: true,
                    accepted: 0,
                    reported: out.reported as u32,
                    continue_lease: run.status == RunStatus::Active,
                })
            }
            ReportCheck::New(new) => new,
        };
        let mut scores = BTreeMap::new();
        for p in &pairs {
            scores.insert(p.index, facts::check_pair(&run.config, p)?);
        }
        if let Some(spsa) = &run.spsa {
            if let Some(i) = new.iter().find(|i| !run.spsa_pairs.contains_key(i)) {
                // Only a bug can get here: every leased pair of an SPSA run has a perturbation.
                return Err(CoreError::Internal(format!(
                    "pair {i} of SPSA run {run_id} has no assignment ({} iterations)",
                    spsa.credited()
                )));
            }
        }
        let mut rows = Vec::with_capacity(pairs.len());
        for p in pairs {
            let games = serde_json::to_string(&p.games).map_err(internal)?;
            rows.push((
                ResultRow {
                    run_id,
                    index: p.index,
                    lease_id,
                    worker_id: worker,
                    score: scores[&p.index].half_points(),
                    games,
                },
                p,
            ));
        }
        self.atomically(|core| {
            core.apply_report(who, worker, &label, &lease, seq, &scores, rows, now_ms)
        })
    }

    /// The changing half of a submit: every check has passed.
    #[allow(clippy::too_many_arguments)]
    fn apply_report(
        &mut self,
        who: &Principal,
        worker: WorkerId,
        label: &str,
        lease: &LeaseRecord,
        seq: u64,
        scores: &BTreeMap<u64, PairScore>,
        rows: Vec<(ResultRow, PairReport)>,
        now_ms: u64,
    ) -> Result<SubmitOutcome, CoreError> {
        let (lease_id, run_id) = (lease.id, lease.run);
        let indices: Vec<u64> = scores.keys().copied().collect();
        let out = self
            .ledger
            .report(lease_id, worker, seq, &indices, now_ms)?;
        let lease_now = out
            .lease
            .clone()
            .ok_or(LeaseError::UnknownLease(lease_id))?;
        let run = self
            .runs
            .get_mut(&run_id)
            .ok_or(CoreError::UnknownRun(run_id))?;
        let mut updates: Vec<(u64, String)> = Vec::new();
        let mut stored = Vec::with_capacity(rows.len());
        let token = &who.name;
        for (row, p) in rows {
            let score = scores[&p.index];
            if let (Some(spsa), Some(a)) = (run.spsa.as_mut(), run.spsa_pairs.remove(&p.index)) {
                let update: SpsaUpdate = spsa.report(a.pair_id, score).map_err(internal)?;
                let json = serde_json::to_string(&update).map_err(internal)?;
                updates.push((spsa.credited(), json));
            }
            if !run.excluded.contains(token) {
                let index = run.sprt_index(p.index);
                if let Some(sprt) = run.sprt.as_mut() {
                    sprt.record(index, score).map_err(internal)?;
                }
            }
            run.totals.by_token.entry(token.clone()).or_default().add(
                score,
                &p.games,
                &run.config.study_row(p.index),
                label,
            );
            self.counters.games += p.games.len() as u64;
            stored.push((row, p.pgn_gz));
        }
        // Learn how long a pair takes, once, when this report completes the lease.
        if out.completed {
            if let Some(meta) = self.lease_meta.remove(&lease_id) {
                let secs = now_ms.saturating_sub(meta.started_ms) as f64 / 1000.0;
                run.timer
                    .observe(who.token_id, secs, meta.slots, lease.pairs.len());
            }
        }
        // Any report counts as success for the failure streak.
        run.failures.clear();
        // Did the run end?
        let mut finish = None;
        if let Some(sprt) = &run.sprt {
            if sprt.state() != stats::SprtState::Continue {
                finish = Some(format!("sprt {}", sprt.state()));
            }
        }
        let record = self
            .ledger
            .run_record(run_id)
            .ok_or(CoreError::UnknownRun(run_id))?;
        if finish.is_none() && record.done >= record.total {
            finish = Some(crate::extend::ALL_PAIRS_PLAYED.to_string());
        }
        // A study asked to stop once its intervals are narrow enough: checked at history
        // checkpoints only, from the running tallies.
        if finish.is_none() && record.done >= run.history_next {
            if let Some(section) = run.config.study.as_ref() {
                let width = section.stop_half_width;
                let rule = section.decide.as_ref().and_then(|d| d.rule().ok());
                if width.is_some() || rule.is_some() {
                    let counted = run.totals.counted(&run.excluded);
                    if let Ok(study) = counted.study.study(section.baseline.as_deref()) {
                        finish = width
                            .and_then(|w| crate::study_stop::narrow_enough(&study, w))
                            .or_else(|| {
                                rule.and_then(|r| crate::study_stop::all_decided(&study, &r))
                            });
                    }
                }
            }
        }
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
        let status = self.runs[&run_id].status;
        let reason = self.runs[&run_id].finish_reason.clone();
        for r in &returned {
            self.lease_meta.remove(&r.lease.id);
        }
        self.dirty.runs.insert(run_id);
        self.dirty.totals.insert((run_id, token.clone()));
        self.commit(|tx| {
            for (row, pgn) in &stored {
                store::insert_result(tx, row, pgn)?;
            }
            for (seq, data) in &updates {
                store::insert_spsa_update(tx, run_id, *seq, data)?;
            }
            store::update_lease(tx, &lease_now)?;
            for r in &returned {
                store::update_lease(tx, &r.lease)?;
                store::requeue(tx, run_id, &r.pairs)?;
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

    /// A worker hands a lease back, optionally because it could not play it.
    pub fn release(
        &mut self,
        who: &Principal,
        worker: WorkerId,
        lease_id: u64,
        failure: &str,
        now_ms: u64,
    ) -> Result<ReleaseOutcome, CoreError> {
        self.check_worker(who, worker)?;
        check_len("failure reason", failure, limits::FAILURE_BYTES)?;
        let Some(lease) = self.ledger.lease(lease_id) else {
            let l = self.ended_lease(lease_id, worker)?;
            return Err(LeaseError::NotValid {
                lease: lease_id,
                state: l.state.as_str(),
            }
            .into());
        };
        if lease.worker != worker {
            return Err(LeaseError::NotHolder(lease_id).into());
        }
        let run_id = lease.run;
        let failure = failure.trim().to_string();
        self.atomically(|core| {
            let r = core.ledger.release(lease_id, worker, now_ms)?;
            let n = r.pairs.len() as u32;
            tracing::info!(lease = lease_id, run = r.run, returned = n, failure = %failure, "lease released");
            core.persist_returned(&[r])?;
            if failure.is_empty() {
                return Ok(ReleaseOutcome {
                    returned: n,
                    retry_after_ms: 0,
                });
            }
            core.counters.lease_failures += 1;
            core.record_failure(who, run_id, lease_id, &failure, now_ms)?;
            Ok(ReleaseOutcome {
                returned: n,
                retry_after_ms: core.timing.idle_retry_ms.max(1000),
            })
        })
    }

    /// Count a lease failure: the token cools down on this run; after a few failures with no
    /// report in between the run pauses itself and says why.
    fn record_failure(
        &mut self,
        who: &Principal,
        run_id: RunId,
        lease_id: u64,
        failure: &str,
        now_ms: u64,
    ) -> Result<(), CoreError> {
        let run = self
            .runs
            .get_mut(&run_id)
            .ok_or(CoreError::UnknownRun(run_id))?;
        run.cooldown
            .insert(who.token_id, now_ms + FAILURE_COOLDOWN_MS);
        run.failures.push((who.token_id, failure.to_string()));
        // Like an operator's pause, leases in flight may still report.
        let pause = run.status == RunStatus::Active && run.failures.len() >= FAILURES_TO_PAUSE;
        if pause {
            run.status = RunStatus::Paused;
            run.finish_reason = format!(
                "paused: {} lease failures, last from {}: {failure}",
                run.failures.len(),
                who.name
            );
            tracing::warn!(run = run_id, reason = %run.finish_reason, "run paused itself");
        }
        let reason = self.runs[&run_id].finish_reason.clone();
        let status = self.runs[&run_id].status;
        let token = who.token_id;
        self.commit(|tx| {
            store::insert_lease_failure(tx, run_id, lease_id, token, now_ms, failure)?;
            if pause {
                store::set_run_status(tx, run_id, status.as_str(), &reason)?;
            }
            Ok(())
        })?;
        Ok(())
    }

    // ----- admin service -----

    /// Create a run from a TOML config.
    pub fn create_run(&mut self, toml_text: &str, now_ms: u64) -> Result<Summary, CoreError> {
        check_len("run config", toml_text, limits::CONFIG_BYTES)?;
        let config = RunConfig::parse(toml_text)?;
        let spsa = match config.spsa_config()? {
            Some(c) => {
                let mut spsa = Spsa::new(c).map_err(internal)?;
                spsa.set_keep_history(false);
                Some(spsa)
            }
            None => None,
        };
        let snapshot = spsa.as_ref().map(spsa_snapshot).transpose()?;
        let total = config.pairs();
        let id = self.commit(|tx| {
            Ok(store::insert_run(
                tx,
                toml_text,
                total,
                snapshot.as_deref(),
                now_ms,
            )?)
        })?;
        self.atomically(|core| {
            let mut run = Run::new(id, config, toml_text.to_string(), now_ms);
            run.spsa = spsa;
            run.sprt = run.new_sprt()?;
            core.ledger.add_run(id, total);
            core.runs.insert(id, run);
            tracing::info!(run = id, pairs = total, "run created");
            core.summary(id)
        })
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
        self.atomically(|core| {
            let returned = if to == RunStatus::Stopped {
                core.ledger.revoke(id, None)
            } else {
                Vec::new()
            };
            if let Some(run) = core.runs.get_mut(&id) {
                run.status = to;
                run.finish_reason = match to {
                    RunStatus::Stopped => "stopped".into(),
                    _ => String::new(),
                };
                if to == RunStatus::Active {
                    run.failures.clear();
                    run.cooldown.clear();
                }
            }
            let reason = core.runs[&id].finish_reason.clone();
            core.commit(|tx| Ok(store::set_run_status(tx, id, to.as_str(), &reason)?))?;
            if !returned.is_empty() {
                core.persist_returned(&returned)?;
            }
            tracing::info!(run = id, status = to.as_str(), "run status changed");
            core.summary(id)
        })
    }

    /// Raise a run's game budget to `games` (see [`crate::extend`] for what may grow). The
    /// new pairs are dealt out after the old ones; a run that had played every pair is
    /// active again. O(1) in the run's size: the ledger hands out fresh indices from a
    /// counter, so no per-pair state is made for the new pairs.
    pub fn extend_run(&mut self, id: RunId, games: u64) -> Result<Summary, CoreError> {
        let run = self.runs.get(&id).ok_or(CoreError::UnknownRun(id))?;
        let extended = crate::extend::extend(
            id,
            &run.config_toml,
            &run.config,
            run.status,
            &run.finish_reason,
            games,
        )?;
        let from = run.config.games;
        self.atomically(|core| {
            let total = extended.config.pairs();
            core.ledger.grow(id, total)?;
            let done = core.ledger.done(id);
            let status = extended.status;
            // A finished run that reopens has no reason to show any more; an active or
            // paused one keeps its own (a self-pause names the failure the operator must fix).
            let reopens = core.runs[&id].status.is_over() && !status.is_over();
            let reason = if reopens {
                String::new()
            } else {
                core.runs[&id].finish_reason.clone()
            };
            if let Some(run) = core.runs.get_mut(&id) {
                run.config = extended.config.clone();
                run.config_toml = extended.config_toml.clone();
                run.history_next = history::next_checkpoint(total, done);
                if run.status != status {
                    run.failures.clear();
                    run.cooldown.clear();
                }
                run.status = status;
                run.finish_reason = reason.clone();
            }
            core.commit(|tx| {
                store::set_run_config(tx, id, &extended.config_toml, total)?;
                Ok(store::set_run_status(tx, id, status.as_str(), &reason)?)
            })?;
            tracing::info!(run = id, from, to = games, "run budget raised");
            core.summary(id)
        })
    }

    /// Exclude or include a worker's (token's) results.
    pub fn exclude(&mut self, id: RunId, token: &str, exclude: bool) -> Result<Detail, CoreError> {
        if !self.runs.contains_key(&id) {
            return Err(CoreError::UnknownRun(id));
        }
        let worker_ids: Vec<WorkerId> = self
            .workers
            .iter()
            .filter(|(_, w)| w.token_name == token)
            .map(|(&id, _)| id)
            .collect();
        if worker_ids.is_empty() {
            return Err(CoreError::BadRequest(format!(
                "no worker token named {:?} has registered",
                token.chars().take(80).collect::<String>()
            )));
        }
        self.atomically(|core| {
            let mut returned = Vec::new();
            if exclude {
                for w in worker_ids {
                    returned.extend(core.ledger.revoke(id, Some(w)));
                }
            }
            if !returned.is_empty() {
                core.persist_returned(&returned)?;
            }
            let run = core.runs.get_mut(&id).ok_or(CoreError::UnknownRun(id))?;
            if exclude {
                run.excluded.insert(token.to_string());
            } else {
                run.excluded.remove(token);
            }
            // The SPRT is recomputed without the excluded tokens' pairs: a scan of the stored
            // pairs, once per exclusion (a rare operator action).
            let active: BTreeSet<u64> = core
                .ledger
                .active_leases(id)
                .flat_map(|l| l.pairs.iter().copied())
                .collect();
            let next_fresh = core.ledger.run_record(id).map_or(0, |r| r.next_fresh);
            let rebuilt = verify::rebuild(
                &core.conn,
                id,
                &run.config,
                &run.excluded,
                next_fresh,
                &active,
            )?;
            run.excluded_indices = rebuilt.excluded_indices;
            run.sprt = rebuilt.sprt;
            let sprt = sprt_snapshot(run.sprt.as_ref())?;
            let name = token.to_string();
            core.commit(|tx| {
                store::set_exclusion(tx, id, &name, exclude)?;
                store::set_run_state(tx, id, None, sprt.as_deref())?;
                Ok(())
            })?;
            core.detail(id)
        })
    }

    /// A run's figures.
    pub fn detail(&self, id: RunId) -> Result<Detail, CoreError> {
        let run = self.runs.get(&id).ok_or(CoreError::UnknownRun(id))?;
        Ok(figures::detail(run, self.summary(id)?))
    }

    /// Every registered worker as the workers page shows it. O(workers + leases + runs x
    /// tokens): the size of the fleet, not of the runs.
    pub fn worker_views(&self, now_ms: u64) -> Vec<WorkerView> {
        let mut leases: BTreeMap<WorkerId, (u32, u64)> = BTreeMap::new();
        for l in self
            .ledger
            .leases()
            .filter(|l| l.state == LeaseState::Active)
        {
            let e = leases.entry(l.worker).or_default();
            e.0 += 1;
            e.1 += u64::from(self.lease_meta.get(&l.id).map_or(1, |m| m.slots));
        }
        let mut flagged: BTreeMap<&str, Vec<RunId>> = BTreeMap::new();
        for run in self.runs.values() {
            let Ok(summary) = self.summary(run.id) else {
                continue;
            };
            for share in figures::detail(run, summary).workers {
                if share.residual.flagged {
                    if let Some((name, _)) = run.totals.by_token.get_key_value(&share.name) {
                        flagged.entry(name.as_str()).or_default().push(run.id);
                    }
                }
            }
        }
        self.workers
            .iter()
            .map(|(&id, w)| {
                let activity = self.activity.get(id).copied();
                let (held, slots) = leases.get(&id).copied().unwrap_or_default();
                WorkerView {
                    id,
                    token: w.token_name.clone(),
                    label: w.info.name.clone(),
                    cores: w.info.cores,
                    version: w.info.version.clone(),
                    variants: w.info.variants.clone(),
                    engines: w
                        .info
                        .engines
                        .iter()
                        .map(|e| {
                            if e.network_variant.is_empty() {
                                e.name.clone()
                            } else {
                                format!("{} ({} network)", e.name, e.network_variant)
                            }
                        })
                        .collect(),
                    last_seen_ms: activity.map(|a| a.last_seen_ms),
                    games_per_minute: activity.map_or(0.0, |a| a.rate.per_minute(now_ms)),
                    leases: held,
                    slots,
                    flagged_runs: flagged
                        .get(w.token_name.as_str())
                        .cloned()
                        .unwrap_or_default(),
                }
            })
            .collect()
    }

    /// A run's active leases: (lease, worker label, token, pairs, reported, deadline ms).
    pub fn run_leases(&self, id: RunId) -> Vec<LeaseView> {
        self.ledger
            .active_leases(id)
            .map(|l| {
                let w = self.workers.get(&l.worker);
                LeaseView {
                    id: l.id,
                    worker: w.map(|w| w.info.name.clone()).unwrap_or_default(),
                    token: w.map(|w| w.token_name.clone()).unwrap_or_default(),
                    pairs: l.pairs.len() as u64,
                    reported: l.reported.len() as u64,
                    started_ms: self.lease_meta.get(&l.id).map_or(0, |m| m.started_ms),
                    deadline_ms: l.deadline_ms,
                }
            })
            .collect()
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

    /// Whether a run exists (for the PGN export, which reads on its own connection).
    pub fn has_run(&self, id: RunId) -> bool {
        self.runs.contains_key(&id)
    }
}

/// Side of a castling move from the proto's flag.
pub fn side(white: bool) -> stats::study::Side {
    if white {
        stats::study::Side::White
    } else {
        stats::study::Side::Black
    }
}
