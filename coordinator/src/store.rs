//! SQLite storage: schema, versioned migrations, and the rows the coordinator keeps.
//!
//! The database is a single file created on first start, in WAL mode with `synchronous =
//! FULL`, so a commit that returned is on disk. Every change the coordinator acknowledges is
//! written in one transaction before the answer goes out.

use crate::ledger::{LeaseRecord, LeaseState, RunRecord};
use rusqlite::{params, Connection, OptionalExtension, Transaction};
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
];

/// Slots a worker token gets when `token add` is not told otherwise.
pub const DEFAULT_MAX_SLOTS: u32 = 64;

/// Open (creating if needed) and migrate a database file.
pub fn open(path: &Path) -> StoreResult<Connection> {
    let mut conn = Connection::open(path)?;
    conn.busy_timeout(Duration::from_secs(5))?;
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
    let exists: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM tokens WHERE name = ?1 AND revoked_ms IS NULL)",
        params![name],
        |r| r.get(0),
    )?;
    if exists {
        return Err(TokenError::Duplicate(name.to_string()));
    }
    let mut bytes = [0u8; 24];
    rand::thread_rng().fill_bytes(&mut bytes);
    let secret: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let token = format!("vt{}_{secret}", &role.as_str()[..1]);
    conn.execute(
        "INSERT INTO tokens (name, role, hash, created_ms, max_slots) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            name,
            role.as_str(),
            hash_token(&token),
            now_ms as i64,
            max_slots
        ],
    )?;
    Ok(token)
}

/// Revoke a live token by name: from now on it authenticates nothing.
pub fn revoke_token(conn: &Connection, name: &str, now_ms: u64) -> Result<(), TokenError> {
    let n = conn.execute(
        "UPDATE tokens SET revoked_ms = ?2 WHERE name = ?1 AND revoked_ms IS NULL",
        params![name, now_ms as i64],
    )?;
    if n == 0 {
        return Err(TokenError::Unknown(name.to_string()));
    }
    Ok(())
}

/// Every token, oldest first.
pub fn list_tokens(conn: &Connection) -> StoreResult<Vec<TokenRow>> {
    let mut q = conn.prepare(
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
    conn.query_row(
        "SELECT id, name, role, max_slots FROM tokens WHERE hash = ?1 AND revoked_ms IS NULL",
        params![hash_token(token)],
        |r| {
            let role: String = r.get(2)?;
            Ok((r.get(0)?, r.get(1)?, role, r.get(3)?))
        },
    )
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
    let mut q = conn.prepare("SELECT id, name FROM tokens")?;
    let rows = q.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    rows.collect()
}

/// Record a lease failure a worker reported.
pub fn insert_lease_failure(
    tx: &Transaction<'_>,
    run_id: u64,
    lease_id: u64,
    token_id: i64,
    now_ms: u64,
    reason: &str,
) -> StoreResult<()> {
    tx.execute(
        "INSERT INTO lease_failures (run_id, lease_id, token_id, at_ms, reason)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            run_id as i64,
            lease_id as i64,
            token_id,
            now_ms as i64,
            reason
        ],
    )?;
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

/// Everything loaded at start-up.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// Workers.
    pub workers: Vec<WorkerRow>,
    /// Runs.
    pub runs: Vec<RunRow>,
    /// Leases with their pairs and reported pairs.
    pub leases: Vec<LeaseRecord>,
    /// Lease start time and slots, by lease.
    pub lease_meta: BTreeMap<u64, LeaseMeta>,
    /// SPSA assignments of lease pairs: (lease, index) to JSON.
    pub lease_spsa: BTreeMap<(u64, u64), String>,
    /// Pair results in commit order.
    pub results: Vec<ResultRow>,
    /// SPSA history rows per run, in order.
    pub spsa_updates: BTreeMap<u64, Vec<String>>,
    /// Excluded worker names per run.
    pub exclusions: BTreeMap<u64, BTreeSet<String>>,
}

fn u(v: i64) -> u64 {
    v.max(0) as u64
}

/// Read the whole state.
pub fn load(conn: &Connection) -> StoreResult<Snapshot> {
    let mut s = Snapshot::default();
    let mut q = conn.prepare("SELECT id, token_id, name, info FROM workers ORDER BY id")?;
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
    let mut q = conn.prepare(
        "SELECT id, config_toml, status, finish_reason, created_ms, total, next_fresh, spsa
         FROM runs ORDER BY id",
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
                },
                spsa: r.get(7)?,
            })
        })?
        .collect::<StoreResult<_>>()?;
    let mut pairs: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
    let mut q = conn.prepare("SELECT lease_id, pair_index, spsa FROM lease_pairs")?;
    let rows = q.query_map([], |r| {
        Ok((u(r.get(0)?), u(r.get(1)?), r.get::<_, Option<String>>(2)?))
    })?;
    for row in rows {
        let (lease, index, spsa) = row?;
        pairs.entry(lease).or_default().insert(index);
        if let Some(j) = spsa {
            s.lease_spsa.insert((lease, index), j);
        }
    }
    let mut q = conn.prepare(
        "SELECT run_id, pair_index, lease_id, worker_id, score, games FROM pair_results
         ORDER BY rowid",
    )?;
    s.results = q
        .query_map([], |r| {
            Ok(ResultRow {
                run_id: u(r.get(0)?),
                index: u(r.get(1)?),
                lease_id: u(r.get(2)?),
                worker_id: u(r.get(3)?),
                score: r.get(4)?,
                games: r.get(5)?,
            })
        })?
        .collect::<StoreResult<_>>()?;
    let mut reported: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
    for r in &s.results {
        reported.entry(r.lease_id).or_default().insert(r.index);
    }
    let mut q = conn.prepare(
        "SELECT id, run_id, worker_id, state, deadline_ms, last_seq, created_ms, slots
         FROM leases ORDER BY id",
    )?;
    let rows = q.query_map([], |r| {
        Ok((
            u(r.get(0)?),
            u(r.get(1)?),
            u(r.get(2)?),
            r.get::<_, String>(3)?,
            u(r.get(4)?),
            u(r.get(5)?),
            u(r.get(6)?),
            r.get::<_, u32>(7)?,
        ))
    })?;
    for row in rows {
        let (id, run, worker, state, deadline_ms, last_seq, created, slots) = row?;
        let state = LeaseState::parse(&state).ok_or_else(|| {
            rusqlite::Error::InvalidColumnType(3, "state".into(), rusqlite::types::Type::Text)
        })?;
        s.lease_meta.insert(
            id,
            LeaseMeta {
                started_ms: created,
                slots,
            },
        );
        s.leases.push(LeaseRecord {
            id,
            run,
            worker,
            state,
            deadline_ms,
            last_seq,
            pairs: pairs.remove(&id).unwrap_or_default(),
            reported: reported.remove(&id).unwrap_or_default(),
        });
    }
    let mut q = conn.prepare("SELECT run_id, data FROM spsa_updates ORDER BY run_id, seq")?;
    let rows = q.query_map([], |r| Ok((u(r.get(0)?), r.get::<_, String>(1)?)))?;
    for row in rows {
        let (run, data) = row?;
        s.spsa_updates.entry(run).or_default().push(data);
    }
    let mut q = conn.prepare("SELECT run_id, worker FROM exclusions")?;
    let rows = q.query_map([], |r| Ok((u(r.get(0)?), r.get::<_, String>(1)?)))?;
    for row in rows {
        let (run, worker) = row?;
        s.exclusions.entry(run).or_default().insert(worker);
    }
    Ok(s)
}

/// Insert a worker; returns its id.
pub fn insert_worker(
    tx: &Transaction<'_>,
    token_id: i64,
    name: &str,
    info: &str,
    now_ms: u64,
) -> StoreResult<u64> {
    tx.execute(
        "INSERT INTO workers (token_id, name, info, registered_ms) VALUES (?1, ?2, ?3, ?4)",
        params![token_id, name, info, now_ms as i64],
    )?;
    Ok(u(tx.last_insert_rowid()))
}

/// Insert a run; returns its id.
pub fn insert_run(
    tx: &Transaction<'_>,
    config_toml: &str,
    total: u64,
    spsa: Option<&str>,
    now_ms: u64,
) -> StoreResult<u64> {
    tx.execute(
        "INSERT INTO runs (config_toml, status, created_ms, total, spsa)
         VALUES (?1, 'active', ?2, ?3, ?4)",
        params![config_toml, now_ms as i64, total as i64, spsa],
    )?;
    Ok(u(tx.last_insert_rowid()))
}

/// Update a run's status.
pub fn set_run_status(
    tx: &Transaction<'_>,
    id: u64,
    status: &str,
    reason: &str,
) -> StoreResult<()> {
    tx.execute(
        "UPDATE runs SET status = ?2, finish_reason = ?3 WHERE id = ?1",
        params![id as i64, status, reason],
    )?;
    Ok(())
}

/// Update a run's pair cursor and SPSA snapshot.
pub fn set_run_progress(
    tx: &Transaction<'_>,
    id: u64,
    next_fresh: u64,
    spsa: Option<&str>,
) -> StoreResult<()> {
    tx.execute(
        "UPDATE runs SET next_fresh = ?2, spsa = COALESCE(?3, spsa) WHERE id = ?1",
        params![id as i64, next_fresh as i64, spsa],
    )?;
    Ok(())
}

/// Insert a new lease and its pairs.
pub fn insert_lease(
    tx: &Transaction<'_>,
    lease: &LeaseRecord,
    now_ms: u64,
    slots: u32,
    spsa: &BTreeMap<u64, String>,
) -> StoreResult<()> {
    tx.execute(
        "INSERT INTO leases (id, run_id, worker_id, state, deadline_ms, last_seq, created_ms, slots)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
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
    let mut q =
        tx.prepare("INSERT INTO lease_pairs (lease_id, pair_index, spsa) VALUES (?1, ?2, ?3)")?;
    for &i in &lease.pairs {
        q.execute(params![lease.id as i64, i as i64, spsa.get(&i)])?;
    }
    Ok(())
}

/// Update a lease's state, deadline and report number.
pub fn update_lease(tx: &Transaction<'_>, lease: &LeaseRecord) -> StoreResult<()> {
    tx.execute(
        "UPDATE leases SET state = ?2, deadline_ms = ?3, last_seq = ?4 WHERE id = ?1",
        params![
            lease.id as i64,
            lease.state.as_str(),
            lease.deadline_ms as i64,
            lease.last_seq as i64
        ],
    )?;
    Ok(())
}

/// Insert a pair result and its PGN.
pub fn insert_result(tx: &Transaction<'_>, row: &ResultRow, pgn_gz: &[u8]) -> StoreResult<()> {
    tx.execute(
        "INSERT INTO pair_results (run_id, pair_index, lease_id, worker_id, score, games)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            row.run_id as i64,
            row.index as i64,
            row.lease_id as i64,
            row.worker_id as i64,
            row.score,
            row.games
        ],
    )?;
    if !pgn_gz.is_empty() {
        tx.execute(
            "INSERT INTO pgns (run_id, pair_index, gz) VALUES (?1, ?2, ?3)",
            params![row.run_id as i64, row.index as i64, pgn_gz],
        )?;
    }
    Ok(())
}

/// Append one SPSA update.
pub fn insert_spsa_update(
    tx: &Transaction<'_>,
    run_id: u64,
    seq: u64,
    data: &str,
) -> StoreResult<()> {
    tx.execute(
        "INSERT INTO spsa_updates (run_id, seq, data) VALUES (?1, ?2, ?3)",
        params![run_id as i64, seq as i64, data],
    )?;
    Ok(())
}

/// Record or lift an exclusion.
pub fn set_exclusion(
    tx: &Transaction<'_>,
    run_id: u64,
    worker: &str,
    excluded: bool,
) -> StoreResult<()> {
    if excluded {
        tx.execute(
            "INSERT OR IGNORE INTO exclusions (run_id, worker) VALUES (?1, ?2)",
            params![run_id as i64, worker],
        )?;
    } else {
        tx.execute(
            "DELETE FROM exclusions WHERE run_id = ?1 AND worker = ?2",
            params![run_id as i64, worker],
        )?;
    }
    Ok(())
}

/// The pair scores of a run (half points of `first`, 0..=4) in pair-index order: the
/// sequence reports plot Elo and LLR along.
pub fn pair_scores(conn: &Connection, run_id: u64) -> StoreResult<Vec<(u64, u8)>> {
    let mut q = conn.prepare(
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
    let mut q = conn.prepare("SELECT data FROM spsa_updates WHERE run_id = ?1 ORDER BY seq")?;
    let rows = q.query_map(params![run_id as i64], |r| r.get(0))?;
    rows.collect()
}
