//! SQLite storage: schema, versioned migrations, and the rows the coordinator keeps.
//!
//! The database is a single file created on first start, in WAL mode with `synchronous =
//! FULL`, so a commit that returned is on disk. Every change the coordinator acknowledges is
//! written in one transaction before the answer goes out.

use crate::ledger::{LeaseRecord, LeaseState, RunRecord};
use rusqlite::{params, Connection, OptionalExtension};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

/// Storage errors are plain SQLite errors (or a corrupt row, reported as one).
pub type StoreResult<T> = Result<T, rusqlite::Error>;

/// Schema migrations; `PRAGMA user_version` counts the ones applied.
const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE tokens (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    role TEXT NOT NULL,
    hash TEXT NOT NULL UNIQUE,
    created_ms INTEGER NOT NULL
);
CREATE TABLE workers (
    id INTEGER PRIMARY KEY,
    token_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    info TEXT NOT NULL,
    registered_ms INTEGER NOT NULL
);
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    config_toml TEXT NOT NULL,
    status TEXT NOT NULL,
    finish_reason TEXT NOT NULL DEFAULT '',
    created_ms INTEGER NOT NULL,
    total INTEGER NOT NULL,
    next_fresh INTEGER NOT NULL DEFAULT 0,
    spsa TEXT
);
CREATE TABLE leases (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL,
    worker_id INTEGER NOT NULL,
    state TEXT NOT NULL,
    deadline_ms INTEGER NOT NULL,
    last_seq INTEGER NOT NULL DEFAULT 0,
    created_ms INTEGER NOT NULL,
    slots INTEGER NOT NULL
);
CREATE INDEX leases_run ON leases(run_id);
CREATE TABLE lease_pairs (
    lease_id INTEGER NOT NULL,
    pair_index INTEGER NOT NULL,
    spsa TEXT,
    PRIMARY KEY (lease_id, pair_index)
);
CREATE TABLE pair_results (
    run_id INTEGER NOT NULL,
    pair_index INTEGER NOT NULL,
    lease_id INTEGER NOT NULL,
    worker_id INTEGER NOT NULL,
    score INTEGER NOT NULL,
    games TEXT NOT NULL,
    PRIMARY KEY (run_id, pair_index)
);
CREATE INDEX pair_results_lease ON pair_results(lease_id);
CREATE TABLE pgns (
    run_id INTEGER NOT NULL,
    pair_index INTEGER NOT NULL,
    gz BLOB NOT NULL,
    PRIMARY KEY (run_id, pair_index)
);
CREATE TABLE spsa_updates (
    run_id INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE exclusions (
    run_id INTEGER NOT NULL,
    worker TEXT NOT NULL,
    PRIMARY KEY (run_id, worker)
);
"#,
    // 2: a worker is its token. Tokens carry a slot count and can be revoked; exclusions name
    // tokens; lease failures are kept with their reasons.
    r#"
ALTER TABLE tokens ADD COLUMN max_slots INTEGER NOT NULL DEFAULT 64;
ALTER TABLE tokens ADD COLUMN revoked_ms INTEGER;
CREATE TABLE lease_failures (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL,
    lease_id INTEGER NOT NULL,
    token_id INTEGER NOT NULL,
    at_ms INTEGER NOT NULL,
    reason TEXT NOT NULL
);
CREATE INDEX lease_failures_run ON lease_failures(run_id);
DELETE FROM exclusions;
"#,
    // 3: live state only. A run keeps its counters, its queue of returned pairs, its SPRT
    // snapshot and running totals per token, so start-up and `run show` never read every
    // pair. Runs stored before this (totals_ok = 0) have their totals rebuilt once at the
    // next start.
    r#"
ALTER TABLE runs ADD COLUMN done INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN sprt TEXT;
ALTER TABLE runs ADD COLUMN totals_ok INTEGER NOT NULL DEFAULT 0;
CREATE TABLE requeued (
    run_id INTEGER NOT NULL,
    pair_index INTEGER NOT NULL,
    PRIMARY KEY (run_id, pair_index)
) WITHOUT ROWID;
CREATE TABLE token_totals (
    run_id INTEGER NOT NULL,
    token TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (run_id, token)
) WITHOUT ROWID;
CREATE INDEX leases_state ON leases(state);
CREATE INDEX pair_results_worker ON pair_results(run_id, worker_id);
"#,
    // 4: fewer pages per report. A stored pair is one row of one b-tree (the PGN in the
    // row, no secondary indexes), and a run's hot counters and snapshots live in a small
    // row of their own instead of beside its config text.
    r#"
CREATE TABLE pair_results_v4 (
    run_id INTEGER NOT NULL,
    pair_index INTEGER NOT NULL,
    lease_id INTEGER NOT NULL,
    worker_id INTEGER NOT NULL,
    score INTEGER NOT NULL,
    games TEXT NOT NULL,
    pgn BLOB,
    PRIMARY KEY (run_id, pair_index)
) WITHOUT ROWID;
INSERT INTO pair_results_v4
    SELECT pr.run_id, pr.pair_index, pr.lease_id, pr.worker_id, pr.score, pr.games, p.gz
    FROM pair_results pr
    LEFT JOIN pgns p ON p.run_id = pr.run_id AND p.pair_index = pr.pair_index;
DROP TABLE pair_results;
DROP TABLE pgns;
ALTER TABLE pair_results_v4 RENAME TO pair_results;
CREATE TABLE run_state (
    run_id INTEGER PRIMARY KEY,
    next_fresh INTEGER NOT NULL,
    done INTEGER NOT NULL,
    spsa TEXT,
    sprt TEXT
);
INSERT INTO run_state SELECT id, next_fresh, done, spsa, sprt FROM runs;
"#,
    // 5: a run's figures at a few hundred points of its progress, for charts that cost the
    // same at 10^6 pairs as at 10^2 (the dashboard; see `run::history_step`).
    r#"
CREATE TABLE run_history (
    run_id INTEGER NOT NULL,
    pairs INTEGER NOT NULL,
    at_ms INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (run_id, pairs)
) WITHOUT ROWID;
"#,
    // 6: study rows are named by the assignment (`RunConfig::study_row`): `variant/rule-set`
    // in runs that mix variants, and never the worker's spelling. Stored totals were keyed by
    // the reported rule-set, which merged chess's and Latte's `normal`: every run's totals are
    // rebuilt once from its stored pairs at the next start.
    r#"
UPDATE runs SET totals_ok = 0;
"#,
    // 7: the totals keep `first`'s results per study row too (a run mixing chess, Latte and
    // Secutor shows what each variant says of the change): rebuilt once from the stored pairs.
    r#"
UPDATE runs SET totals_ok = 0;
"#,
];

/// Slots a worker token gets when `token add` is not told otherwise.
pub const DEFAULT_MAX_SLOTS: u32 = 64;

/// Open (creating if needed) and migrate a database file.
pub fn open(path: &Path) -> StoreResult<Connection> {
    let mut conn = Connection::open(path)?;
    conn.busy_timeout(Duration::from_secs(5))?;
    // Every statement of the report and lease paths stays compiled: parsing SQL was a tenth
    // of the core's time under a 1,000-worker fleet.
    conn.set_prepared_statement_cache_capacity(128);
    // Small pages: a report touches a few rows in a few b-trees, and every page it touches is
    // written to the WAL (and later checkpointed); 1 KiB pages write a quarter of what the
    // default 4 KiB do. Takes effect only when the file is created.
    conn.pragma_update(None, "page_size", 1024)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    migrate(&mut conn)?;
    Ok(conn)
}

/// Schema version after migrations.
pub fn schema_version(conn: &Connection) -> StoreResult<u32> {
    conn.pragma_query_value(None, "user_version", |r| r.get(0))
}

fn migrate(conn: &mut Connection) -> StoreResult<()> {
    let version = schema_version(conn)? as usize;
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version) {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", (i + 1) as u32)?;
        tx.commit()?;
    }
    Ok(())
}

/// Who a token belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// Token row id.
    pub token_id: i64,
    /// Token name.
    pub name: String,
    /// `worker` or `admin`.
    pub role: Role,
    /// Most game slots the token's workers may hold at once.
    pub max_slots: u32,
}

/// A token as `token list` shows it (never its secret).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRow {
    /// Row id.
    pub id: i64,
    /// Name.
    pub name: String,
    /// Role.
    pub role: String,
    /// Slots.
    pub max_slots: u32,
    /// Created, ms.
    pub created_ms: u64,
    /// Revoked at, ms.
    pub revoked_ms: Option<u64>,
}

/// Why a token could not be added or revoked.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// Names identify workers in figures and exclusions: they must be unique.
    #[error("a token named {0:?} exists already (token names identify workers)")]
    Duplicate(String),
    /// A name must be printable and short.
    #[error("token name must be 1 to 64 printable characters, got {0:?}")]
    BadName(String),
    /// No live token of that name.
    #[error("no live token named {0:?}")]
    Unknown(String),
    /// Slots must be positive.
    #[error("--max-slots must be between 1 and 1000000")]
    BadSlots,
    /// Storage.
    #[error("storage: {0}")]
    Storage(#[from] rusqlite::Error),
}

/// What a token may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// Call the worker service.
    Worker,
    /// Call the admin service.
    Admin,
}

impl Role {
    /// Name as stored and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Worker => "worker",
            Self::Admin => "admin",
        }
    }

    /// Inverse of [`Role::as_str`].
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "worker" => Some(Self::Worker),
            "admin" => Some(Self::Admin),
            _ => None,
        }
    }
}

/// SHA-256 of a token, hex; tokens are stored only in this form.
pub fn hash_token(token: &str) -> String {
    let digest = Sha256::digest(token.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Create a token with the default slot count; returns the token text (shown once).
pub fn add_token(
    conn: &Connection,
    name: &str,
    role: Role,
    now_ms: u64,
) -> Result<String, TokenError> {
    add_token_with_slots(conn, name, role, DEFAULT_MAX_SLOTS, now_ms)
}

/// Create a token; returns the token text (shown once).
pub fn add_token_with_slots(
    conn: &Connection,
    name: &str,
    role: Role,
    max_slots: u32,
    now_ms: u64,
) -> Result<String, TokenError> {
    use rand::RngCore;
    if name.is_empty() || name.len() > 64 || name.chars().any(char::is_control) {
        return Err(TokenError::BadName(name.to_string()));
    }
    if max_slots == 0 || max_slots > 1_000_000 {
        return Err(TokenError::BadSlots);
    }
    let exists: bool = conn
        .prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM tokens WHERE name = ?1 AND revoked_ms IS NULL)",
        )?
        .query_row(params![name], |r| r.get(0))?;
    if exists {
        return Err(TokenError::Duplicate(name.to_string()));
    }
    let mut bytes = [0u8; 24];
    rand::thread_rng().fill_bytes(&mut bytes);
    let secret: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let token = format!("vt{}_{secret}", &role.as_str()[..1]);
    conn.prepare_cached(
        "INSERT INTO tokens (name, role, hash, created_ms, max_slots) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        name,
        role.as_str(),
        hash_token(&token),
        now_ms as i64,
        max_slots
    ])?;
    Ok(token)
}

/// Revoke a live token by name: from now on it authenticates nothing.
pub fn revoke_token(conn: &Connection, name: &str, now_ms: u64) -> Result<(), TokenError> {
    let n = conn
        .prepare_cached("UPDATE tokens SET revoked_ms = ?2 WHERE name = ?1 AND revoked_ms IS NULL")?
        .execute(params![name, now_ms as i64])?;
    if n == 0 {
        return Err(TokenError::Unknown(name.to_string()));
    }
    Ok(())
}

/// Every token, oldest first.
pub fn list_tokens(conn: &Connection) -> StoreResult<Vec<TokenRow>> {
    let mut q = conn.prepare_cached(
        "SELECT id, name, role, max_slots, created_ms, revoked_ms FROM tokens ORDER BY id",
    )?;
    let rows = q.query_map([], |r| {
        Ok(TokenRow {
            id: r.get(0)?,
            name: r.get(1)?,
            role: r.get(2)?,
            max_slots: r.get(3)?,
            created_ms: u(r.get(4)?),
            revoked_ms: r.get::<_, Option<i64>>(5)?.map(u),
        })
    })?;
    rows.collect()
}

/// Look a live (not revoked) token up by its text.
pub fn find_token(conn: &Connection, token: &str) -> StoreResult<Option<Principal>> {
    conn.prepare_cached(
        "SELECT id, name, role, max_slots FROM tokens WHERE hash = ?1 AND revoked_ms IS NULL",
    )?
    .query_row(params![hash_token(token)], |r| {
        let role: String = r.get(2)?;
        Ok((r.get(0)?, r.get(1)?, role, r.get(3)?))
    })
    .optional()
    .map(|o| {
        o.and_then(|(token_id, name, role, max_slots)| {
            Role::parse(&role).map(|role| Principal {
                token_id,
                name,
                role,
                max_slots,
            })
        })
    })
}

/// Names of every token by id (revoked ones included: their results stay attributed).
pub fn token_names(conn: &Connection) -> StoreResult<BTreeMap<i64, String>> {
    let mut q = conn.prepare_cached("SELECT id, name FROM tokens")?;
    let rows = q.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    rows.collect()
}

/// Record a lease failure a worker reported.
pub fn insert_lease_failure(
    tx: &Connection,
    run_id: u64,
    lease_id: u64,
    token_id: i64,
    now_ms: u64,
    reason: &str,
) -> StoreResult<()> {
    tx.prepare_cached(
        "INSERT INTO lease_failures (run_id, lease_id, token_id, at_ms, reason)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        run_id as i64,
        lease_id as i64,
        token_id,
        now_ms as i64,
        reason
    ])?;
    Ok(())
}

/// A stored worker registration.
#[derive(Debug, Clone)]
pub struct WorkerRow {
    /// Worker id.
    pub id: u64,
    /// Token it registered with.
    pub token_id: i64,
    /// Name.
    pub name: String,
    /// Registration details (JSON of [`crate::core::WorkerInfo`]).
    pub info: String,
}

/// A stored run.
#[derive(Debug, Clone)]
pub struct RunRow {
    /// Run id.
    pub id: u64,
    /// Config text.
    pub config_toml: String,
    /// `active`, `paused`, `stopped`, `finished`.
    pub status: String,
    /// Why it ended.
    pub finish_reason: String,
    /// Creation time.
    pub created_ms: u64,
    /// Pair bookkeeping.
    pub record: RunRecord,
    /// SPSA state snapshot without its history.
    pub spsa: Option<String>,
    /// SPRT state snapshot.
    pub sprt: Option<String>,
    /// Whether the running totals are stored (false: rebuild them from the stored pairs).
    pub totals_ok: bool,
}

/// A stored pair result.
#[derive(Debug, Clone)]
pub struct ResultRow {
    /// Run.
    pub run_id: u64,
    /// Pair index.
    pub index: u64,
    /// Lease it was reported under.
    pub lease_id: u64,
    /// Worker.
    pub worker_id: u64,
    /// Pair score of `first` in half points.
    pub score: u8,
    /// Game facts (JSON).
    pub games: String,
}

/// When a lease was issued and on how many slots (for lease sizing and pair timing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseMeta {
    /// Issued at, ms.
    pub started_ms: u64,
    /// Slots granted.
    pub slots: u32,
}

/// The live state loaded at start-up: nothing whose size grows with a run's length.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// Workers.
    pub workers: Vec<WorkerRow>,
    /// Runs.
    pub runs: Vec<RunRow>,
    /// Active leases with their pairs and reported pairs.
    pub leases: Vec<LeaseRecord>,
    /// The id the next lease gets.
    pub next_lease_id: u64,
    /// Lease start time and slots, by active lease.
    pub lease_meta: BTreeMap<u64, LeaseMeta>,
    /// SPSA assignments of active lease pairs: (lease, index) to JSON.
    pub lease_spsa: BTreeMap<(u64, u64), String>,
    /// Returned pairs waiting, per run.
    pub requeued: BTreeMap<u64, BTreeSet<u64>>,
    /// Running totals per run and token (JSON).
    pub totals: BTreeMap<u64, BTreeMap<String, String>>,
    /// Excluded token names per run.
    pub exclusions: BTreeMap<u64, BTreeSet<String>>,
}

fn u(v: i64) -> u64 {
    v.max(0) as u64
}

fn lease_state(v: String) -> StoreResult<LeaseState> {
    LeaseState::parse(&v).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            3,
            rusqlite::types::Type::Text,
            format!("unknown lease state {v:?}").into(),
        )
    })
}

/// Read the live state.
pub fn load(conn: &Connection) -> StoreResult<Snapshot> {
    let mut s = Snapshot::default();
    let mut q = conn.prepare_cached("SELECT id, token_id, name, info FROM workers ORDER BY id")?;
    s.workers = q
        .query_map([], |r| {
            Ok(WorkerRow {
                id: u(r.get(0)?),
                token_id: r.get(1)?,
                name: r.get(2)?,
                info: r.get(3)?,
            })
        })?
        .collect::<StoreResult<_>>()?;
    let mut q = conn.prepare_cached(
        "SELECT r.id, r.config_toml, r.status, r.finish_reason, r.created_ms, r.total,
                s.next_fresh, s.spsa, s.done, s.sprt, r.totals_ok
         FROM runs r JOIN run_state s ON s.run_id = r.id ORDER BY r.id",
    )?;
    s.runs = q
        .query_map([], |r| {
            let id = u(r.get(0)?);
            Ok(RunRow {
                id,
                config_toml: r.get(1)?,
                status: r.get(2)?,
                finish_reason: r.get(3)?,
                created_ms: u(r.get(4)?),
                record: RunRecord {
                    id,
                    total: u(r.get(5)?),
                    next_fresh: u(r.get(6)?),
                    done: u(r.get(8)?),
                },
                spsa: r.get(7)?,
                sprt: r.get(9)?,
                totals_ok: r.get::<_, i64>(10)? != 0,
            })
        })?
        .collect::<StoreResult<_>>()?;
    let mut q = conn.prepare_cached(
        "SELECT id, run_id, worker_id, state, deadline_ms, last_seq, created_ms, slots
         FROM leases WHERE state = 'active' ORDER BY id",
    )?;
    let rows = q.query_map([], |r| {
        Ok((lease_record(r)?, u(r.get(6)?), r.get::<_, u32>(7)?))
    })?;
    for row in rows {
        let (lease, created, slots) = row?;
        s.lease_meta.insert(
            lease.id,
            LeaseMeta {
                started_ms: created,
                slots,
            },
        );
        s.leases.push(lease);
    }
    let mut pairs_q =
        conn.prepare_cached("SELECT pair_index, spsa FROM lease_pairs WHERE lease_id = ?1")?;
    let mut reported_q = conn.prepare_cached(REPORTED_PAIRS_OF_LEASE)?;
    for l in &mut s.leases {
        let rows = pairs_q.query_map(params![l.id as i64], |r| {
            Ok((u(r.get(0)?), r.get::<_, Option<String>>(1)?))
        })?;
        for row in rows {
            let (index, spsa) = row?;
            l.pairs.insert(index);
            if let Some(j) = spsa {
                s.lease_spsa.insert((l.id, index), j);
            }
        }
        let rows = reported_q.query_map(params![l.id as i64], |r| r.get::<_, i64>(0))?;
        for row in rows {
            l.reported.insert(u(row?));
        }
    }
    s.next_lease_id = conn
        .prepare_cached("SELECT COALESCE(MAX(id), 0) + 1 FROM leases")?
        .query_row([], |r| r.get::<_, i64>(0))? as u64;
    let mut q = conn.prepare_cached("SELECT run_id, pair_index FROM requeued")?;
    let rows = q.query_map([], |r| Ok((u(r.get(0)?), u(r.get(1)?))))?;
    for row in rows {
        let (run, index) = row?;
        s.requeued.entry(run).or_default().insert(index);
    }
    let mut q = conn.prepare_cached("SELECT run_id, token, data FROM token_totals")?;
    let rows = q.query_map([], |r| {
        Ok((u(r.get(0)?), r.get::<_, String>(1)?, r.get::<_, String>(2)?))
    })?;
    for row in rows {
        let (run, token, data) = row?;
        s.totals.entry(run).or_default().insert(token, data);
    }
    let mut q = conn.prepare_cached("SELECT run_id, worker FROM exclusions")?;
    let rows = q.query_map([], |r| Ok((u(r.get(0)?), r.get::<_, String>(1)?)))?;
    for row in rows {
        let (run, worker) = row?;
        s.exclusions.entry(run).or_default().insert(worker);
    }
    Ok(s)
}

/// A lease from the first six columns of a row (`id, run_id, worker_id, state, deadline_ms,
/// last_seq`), without its pairs.
fn lease_record(r: &rusqlite::Row<'_>) -> rusqlite::Result<LeaseRecord> {
    Ok(LeaseRecord {
        id: u(r.get(0)?),
        run: u(r.get(1)?),
        worker: u(r.get(2)?),
        state: lease_state(r.get(3)?)?,
        deadline_ms: u(r.get(4)?),
        last_seq: u(r.get(5)?),
        pairs: BTreeSet::new(),
        reported: BTreeSet::new(),
    })
}

/// A lease as stored, for late calls about a lease that left the ledger.
pub fn lease_row(conn: &Connection, id: u64) -> StoreResult<Option<LeaseRecord>> {
    conn.prepare_cached(
        "SELECT id, run_id, worker_id, state, deadline_ms, last_seq FROM leases WHERE id = ?1",
    )?
    .query_row(params![id as i64], lease_record)
    .optional()
}

/// Pairs of a run that went back to the queue.
pub fn requeue(tx: &Connection, run_id: u64, pairs: &[u64]) -> StoreResult<()> {
    let mut q =
        tx.prepare_cached("INSERT OR IGNORE INTO requeued (run_id, pair_index) VALUES (?1, ?2)")?;
    for &i in pairs {
        q.execute(params![run_id as i64, i as i64])?;
    }
    Ok(())
}

/// A run's counters: pairs handed out at least once and pairs done.
pub fn set_run_counts(tx: &Connection, id: u64, next_fresh: u64, done: u64) -> StoreResult<()> {
    tx.prepare_cached("UPDATE run_state SET next_fresh = ?2, done = ?3 WHERE run_id = ?1")?
        .execute(params![id as i64, next_fresh as i64, done as i64])?;
    Ok(())
}

/// A run's SPSA and SPRT snapshots (each kept when `None`).
pub fn set_run_state(
    tx: &Connection,
    id: u64,
    spsa: Option<&str>,
    sprt: Option<&str>,
) -> StoreResult<()> {
    tx.prepare_cached(
        "UPDATE run_state SET spsa = COALESCE(?2, spsa), sprt = COALESCE(?3, sprt)
         WHERE run_id = ?1",
    )?
    .execute(params![id as i64, spsa, sprt])?;
    Ok(())
}

/// A point of a run's history (replaces one at the same pair count).
pub fn add_history(
    tx: &Connection,
    run_id: u64,
    pairs: u64,
    at_ms: u64,
    data: &str,
) -> StoreResult<()> {
    tx.prepare_cached(
        "INSERT OR REPLACE INTO run_history (run_id, pairs, at_ms, data) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![run_id as i64, pairs as i64, at_ms as i64, data])?;
    Ok(())
}

/// The pair count of a run's last history point.
pub fn last_history(conn: &Connection, run_id: u64) -> StoreResult<Option<u64>> {
    let v: Option<i64> = conn
        .prepare_cached("SELECT MAX(pairs) FROM run_history WHERE run_id = ?1")?
        .query_row(params![run_id as i64], |r| r.get(0))?;
    Ok(v.map(|v| v as u64))
}

/// A stored history point: pairs done, time, and the JSON the core wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryRow {
    /// Pairs done.
    pub pairs: u64,
    /// When, Unix ms.
    pub at_ms: u64,
    /// [`crate::history::Point`] as JSON.
    pub data: String,
}

/// A run's history, in order (a few hundred rows at most: see `run::HISTORY_POINTS`).
pub fn history(conn: &Connection, run_id: u64) -> StoreResult<Vec<HistoryRow>> {
    let mut q = conn.prepare_cached(
        "SELECT pairs, at_ms, data FROM run_history WHERE run_id = ?1 ORDER BY pairs",
    )?;
    let rows = q.query_map(params![run_id as i64], |r| {
        Ok(HistoryRow {
            pairs: r.get::<_, i64>(0)? as u64,
            at_ms: r.get::<_, i64>(1)? as u64,
            data: r.get(2)?,
        })
    })?;
    rows.collect()
}

/// The last history point of a run stored at or before `at_ms`, else its first: (pairs, ms).
pub fn history_base(conn: &Connection, run_id: u64, at_ms: u64) -> StoreResult<Option<(u64, u64)>> {
    let row = |r: &rusqlite::Row<'_>| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, i64>(1)? as u64));
    let before = conn
        .prepare_cached(
            "SELECT pairs, at_ms FROM run_history WHERE run_id = ?1 AND at_ms <= ?2
             ORDER BY pairs DESC LIMIT 1",
        )?
        .query_row(params![run_id as i64, at_ms as i64], row)
        .optional()?;
    if before.is_some() {
        return Ok(before);
    }
    conn.prepare_cached(
        "SELECT pairs, at_ms FROM run_history WHERE run_id = ?1 ORDER BY pairs LIMIT 1",
    )?
    .query_row(params![run_id as i64], row)
    .optional()
}

/// One token's running totals of a run.
pub fn set_token_totals(tx: &Connection, run_id: u64, token: &str, data: &str) -> StoreResult<()> {
    tx.prepare_cached(
        "INSERT INTO token_totals (run_id, token, data) VALUES (?1, ?2, ?3)
         ON CONFLICT (run_id, token) DO UPDATE SET data = excluded.data",
    )?
    .execute(params![run_id as i64, token, data])?;
    Ok(())
}

/// The pairs of a lease stored as its results. CROSS JOIN fixes the order: from the lease's
/// pairs to their result rows by primary key. Left to itself the planner walked every result
/// of the run for each lease (by `run_id` alone), and a restart with 600 live leases on a
/// run of 25,000 pairs took 16 s instead of a few milliseconds.
pub const REPORTED_PAIRS_OF_LEASE: &str = "SELECT lp.pair_index FROM lease_pairs lp
     CROSS JOIN leases l ON l.id = lp.lease_id
     CROSS JOIN pair_results pr
       ON pr.run_id = l.run_id AND pr.pair_index = lp.pair_index AND pr.lease_id = l.id
     WHERE lp.lease_id = ?1";

/// Mark a run's totals as stored (after a rebuild).
pub fn set_totals_ok(tx: &Connection, id: u64) -> StoreResult<()> {
    tx.prepare_cached("UPDATE runs SET totals_ok = 1 WHERE id = ?1")?
        .execute(params![id as i64])?;
    Ok(())
}

/// Every stored pair of a run in index order, streamed to `f(index, lease, score, token name,
/// machine label, games JSON)` (for rebuilding and verifying totals; never all in memory).
pub fn for_each_result(
    conn: &Connection,
    run_id: u64,
    mut f: impl FnMut(u64, u64, u8, &str, &str, &str) -> Result<(), crate::error::CoreError>,
) -> Result<u64, crate::error::CoreError> {
    let mut q = conn.prepare_cached(
        "SELECT pr.pair_index, pr.lease_id, pr.score, COALESCE(t.name, 'worker-' || pr.worker_id),
                pr.games, COALESCE(w.name, '')
         FROM pair_results pr
         LEFT JOIN workers w ON w.id = pr.worker_id
         LEFT JOIN tokens t ON t.id = w.token_id
         WHERE pr.run_id = ?1 ORDER BY pr.pair_index",
    )?;
    let mut rows = q.query(params![run_id as i64])?;
    let mut n = 0;
    while let Some(r) = rows.next()? {
        let index = u(r.get(0)?);
        let lease = u(r.get(1)?);
        let score: i64 = r.get(2)?;
        let token: String = r.get(3)?;
        let games: String = r.get(4)?;
        let label: String = r.get(5)?;
        f(
            index,
            lease,
            score.clamp(0, 4) as u8,
            &token,
            &label,
            &games,
        )?;
        n += 1;
    }
    Ok(n)
}

/// Insert a worker; returns its id.
pub fn insert_worker(
    tx: &Connection,
    token_id: i64,
    name: &str,
    info: &str,
    now_ms: u64,
) -> StoreResult<u64> {
    tx.prepare_cached(
        "INSERT INTO workers (token_id, name, info, registered_ms) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![token_id, name, info, now_ms as i64])?;
    Ok(u(tx.last_insert_rowid()))
}

/// Insert a run; returns its id.
pub fn insert_run(
    tx: &Connection,
    config_toml: &str,
    total: u64,
    spsa: Option<&str>,
    now_ms: u64,
) -> StoreResult<u64> {
    tx.prepare_cached(
        "INSERT INTO runs (config_toml, status, created_ms, total, totals_ok)
         VALUES (?1, 'active', ?2, ?3, 1)",
    )?
    .execute(params![config_toml, now_ms as i64, total as i64])?;
    let id = tx.last_insert_rowid();
    tx.prepare_cached(
        "INSERT INTO run_state (run_id, next_fresh, done, spsa) VALUES (?1, 0, 0, ?2)",
    )?
    .execute(params![id, spsa])?;
    Ok(u(id))
}

/// Update a run's status.
pub fn set_run_status(tx: &Connection, id: u64, status: &str, reason: &str) -> StoreResult<()> {
    tx.prepare_cached("UPDATE runs SET status = ?2, finish_reason = ?3 WHERE id = ?1")?
        .execute(params![id as i64, status, reason])?;
    Ok(())
}

/// A run's config text and planned pairs (a raised budget).
pub fn set_run_config(tx: &Connection, id: u64, config_toml: &str, total: u64) -> StoreResult<()> {
    tx.prepare_cached("UPDATE runs SET config_toml = ?2, total = ?3 WHERE id = ?1")?
        .execute(params![id as i64, config_toml, total as i64])?;
    Ok(())
}

/// Insert a new lease and its pairs.
pub fn insert_lease(
    tx: &Connection,
    lease: &LeaseRecord,
    now_ms: u64,
    slots: u32,
    spsa: &BTreeMap<u64, String>,
) -> StoreResult<()> {
    tx.prepare_cached("INSERT INTO leases (id, run_id, worker_id, state, deadline_ms, last_seq, created_ms, slots)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)")?.execute(
        params![
            lease.id as i64,
            lease.run as i64,
            lease.worker as i64,
            lease.state.as_str(),
            lease.deadline_ms as i64,
            lease.last_seq as i64,
            now_ms as i64,
            slots
        ],
    )?;
    let mut q = tx.prepare_cached(
        "INSERT INTO lease_pairs (lease_id, pair_index, spsa) VALUES (?1, ?2, ?3)",
    )?;
    let mut dq = tx.prepare_cached("DELETE FROM requeued WHERE run_id = ?1 AND pair_index = ?2")?;
    for &i in &lease.pairs {
        q.execute(params![lease.id as i64, i as i64, spsa.get(&i)])?;
        dq.execute(params![lease.run as i64, i as i64])?;
    }
    Ok(())
}

/// Update a lease's state, deadline and report number.
pub fn update_lease(tx: &Connection, lease: &LeaseRecord) -> StoreResult<()> {
    tx.prepare_cached(
        "UPDATE leases SET state = ?2, deadline_ms = ?3, last_seq = ?4 WHERE id = ?1",
    )?
    .execute(params![
        lease.id as i64,
        lease.state.as_str(),
        lease.deadline_ms as i64,
        lease.last_seq as i64
    ])?;
    Ok(())
}

/// Insert a pair result and its PGN.
pub fn insert_result(tx: &Connection, row: &ResultRow, pgn_gz: &[u8]) -> StoreResult<()> {
    tx.prepare_cached(
        "INSERT INTO pair_results (run_id, pair_index, lease_id, worker_id, score, games, pgn)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![
        row.run_id as i64,
        row.index as i64,
        row.lease_id as i64,
        row.worker_id as i64,
        row.score,
        row.games,
        (!pgn_gz.is_empty()).then_some(pgn_gz)
    ])?;
    Ok(())
}

/// Append one SPSA update.
pub fn insert_spsa_update(tx: &Connection, run_id: u64, seq: u64, data: &str) -> StoreResult<()> {
    tx.prepare_cached("INSERT INTO spsa_updates (run_id, seq, data) VALUES (?1, ?2, ?3)")?
        .execute(params![run_id as i64, seq as i64, data])?;
    Ok(())
}

/// Record or lift an exclusion.
pub fn set_exclusion(
    tx: &Connection,
    run_id: u64,
    worker: &str,
    excluded: bool,
) -> StoreResult<()> {
    if excluded {
        tx.prepare_cached("INSERT OR IGNORE INTO exclusions (run_id, worker) VALUES (?1, ?2)")?
            .execute(params![run_id as i64, worker])?;
    } else {
        tx.prepare_cached("DELETE FROM exclusions WHERE run_id = ?1 AND worker = ?2")?
            .execute(params![run_id as i64, worker])?;
    }
    Ok(())
}

/// The pair scores of a run (half points of `first`, 0..=4) in pair-index order: the
/// sequence reports plot Elo and LLR along.
pub fn pair_scores(conn: &Connection, run_id: u64) -> StoreResult<Vec<(u64, u8)>> {
    let mut q = conn.prepare_cached(
        "SELECT pair_index, score FROM pair_results WHERE run_id = ?1 ORDER BY pair_index",
    )?;
    let rows = q.query_map(params![run_id as i64], |r| {
        let score: i64 = r.get(1)?;
        Ok((u(r.get(0)?), score.clamp(0, 4) as u8))
    })?;
    rows.collect()
}

/// The recorded SPSA updates of a run (JSON of `stats::spsa::SpsaUpdate`), in order.
pub fn spsa_history(conn: &Connection, run_id: u64) -> StoreResult<Vec<String>> {
    let mut q =
        conn.prepare_cached("SELECT data FROM spsa_updates WHERE run_id = ?1 ORDER BY seq")?;
    let rows = q.query_map(params![run_id as i64], |r| r.get(0))?;
    rows.collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The query plan, one step per line.
    fn plan(conn: &Connection, sql: &str) -> Vec<String> {
        let mut q = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .expect("plan");
        q.query_map([1i64], |r| r.get::<_, String>(3))
            .expect("rows")
            .collect::<Result<_, _>>()
            .expect("plan rows")
    }

    #[test]
    fn start_up_finds_a_lease_s_results_by_primary_key() {
        let dir = tempfile::tempdir().expect("dir");
        let conn = open(&dir.path().join("p.db")).expect("db");
        let steps = plan(&conn, REPORTED_PAIRS_OF_LEASE);
        assert!(steps[0].contains("lease_pairs"), "{steps:?}");
        assert!(
            steps
                .iter()
                .any(|s| s.contains("pr USING PRIMARY KEY (run_id=? AND pair_index=?)")),
            "a lease's results must be looked up by (run, index), not walked: {steps:?}"
        );
    }
}
