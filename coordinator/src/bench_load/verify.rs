//! The end checks: what the coordinator shows and what its database holds against what the
//! fleet was acknowledged.
//!
//! * totals (`ShowRun`): pairs added to a run = pairs acknowledged for it (a report left
//!   unanswered may or may not count), the pentanomial sums to `pairs_done`, two games a pair,
//!   SPSA iterations = `pairs_done`;
//! * database (read with SQLite directly, after the coordinator is gone): every acknowledged
//!   pair is one row with the score sent, no row the fleet was not acknowledged (unless its
//!   report went unanswered), row count = `pairs_done`, `PRAGMA integrity_check` is `ok`, and
//!   the stored SPSA snapshot is what its `spsa_updates` replay to from the start values
//!   ([`stats::spsa::Spsa::verify_updates`]), and its θ is the one `ShowRun` shows.

use super::fleet::{Acked, FleetOutcome};
use super::BenchError;
use crate::client::AdminClient;
use proto::v1 as pb;
use rusqlite::{params, Connection, OpenFlags};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::path::Path;

/// What `ShowRun` says about a run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunTotals {
    /// Run id.
    pub run: u64,
    /// `match`, `spsa`, ...
    pub kind: String,
    /// Pairs reported.
    pub pairs_done: u64,
    /// Sum of the pentanomial counts.
    pub pentanomial_sum: u64,
    /// Wins, draws and losses.
    pub games: u64,
    /// SPSA iterations and θ (SPSA runs).
    pub spsa: Option<(u64, Vec<f64>)>,
}

/// Ask the coordinator for a run's totals.
pub async fn run_totals(admin: &mut AdminClient, run: u64) -> Result<RunTotals, BenchError> {
    let d = admin
        .show_run(pb::RunRequest { run_id: run })
        .await
        .map_err(|status| BenchError::Rpc {
            call: "ShowRun",
            status,
        })?
        .into_inner();
    let s = d.summary.unwrap_or_default();
    Ok(RunTotals {
        run,
        kind: s.kind,
        pairs_done: s.pairs_done,
        pentanomial_sum: d.pentanomial.iter().sum(),
        games: d.wins + d.draws + d.losses,
        spsa: (!d.spsa.is_empty()).then(|| {
            (
                d.spsa[0].iterations,
                d.spsa.iter().map(|p| p.value).collect(),
            )
        }),
    })
}

/// Findings of the checks: what held, what did not.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Findings {
    /// One line per check that held.
    pub passed: Vec<String>,
    /// One line per mismatch.
    pub failed: Vec<String>,
}

impl Findings {
    /// Whether every check held.
    pub fn ok(&self) -> bool {
        self.failed.is_empty()
    }

    /// Both lists, failures marked `MISMATCH`.
    pub fn text(&self) -> String {
        let mut s = String::new();
        for p in &self.passed {
            let _ = writeln!(s, "  ok: {p}");
        }
        for f in &self.failed {
            let _ = writeln!(s, "  MISMATCH: {f}");
        }
        s
    }

    fn check(&mut self, holds: bool, what: String) {
        if holds {
            self.passed.push(what);
        } else {
            self.failed.push(what);
        }
    }

    /// Add another set of findings.
    pub fn extend(&mut self, other: Findings) {
        self.passed.extend(other.passed);
        self.failed.extend(other.failed);
    }
}

/// Acknowledged pairs by run and index; an index acknowledged twice is a finding.
fn acked_by_run(acked: &[Acked], f: &mut Findings) -> BTreeMap<u64, BTreeMap<u64, u8>> {
    let mut by_run: BTreeMap<u64, BTreeMap<u64, u8>> = BTreeMap::new();
    let mut twice = Vec::new();
    for a in acked {
        if by_run
            .entry(a.run)
            .or_default()
            .insert(a.index, a.half_points)
            .is_some()
        {
            twice.push((a.run, a.index));
        }
    }
    f.check(
        twice.is_empty(),
        format!(
            "no pair acknowledged twice ({} acknowledged{})",
            acked.len(),
            sample(&twice)
        ),
    );
    by_run
}

fn unresolved_by_run(out: &FleetOutcome) -> BTreeMap<u64, BTreeSet<u64>> {
    let mut m: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
    for u in &out.unresolved {
        m.entry(u.run)
            .or_default()
            .extend(u.indices.iter().copied());
    }
    m
}

fn sample(items: &[(u64, u64)]) -> String {
    if items.is_empty() {
        return String::new();
    }
    let shown: Vec<String> = items
        .iter()
        .take(5)
        .map(|(r, i)| format!("run {r} pair {i}"))
        .collect();
    format!(
        "; {} such: {}{}",
        items.len(),
        shown.join(", "),
        if items.len() > 5 { ", ..." } else { "" }
    )
}

/// Check `ShowRun` totals against the fleet's acknowledgements; `before` is each run's
/// `pairs_done` before the fleet started (absent: 0).
pub fn check_totals(
    totals: &[RunTotals],
    out: &FleetOutcome,
    before: &BTreeMap<u64, u64>,
) -> Findings {
    let mut f = Findings::default();
    let acked = acked_by_run(&out.acked, &mut f);
    let unresolved = unresolved_by_run(out);
    for t in totals {
        let base = before.get(&t.run).copied().unwrap_or(0);
        let got = acked.get(&t.run).map_or(0, BTreeMap::len) as u64;
        let open = unresolved.get(&t.run).map_or(0, BTreeSet::len) as u64;
        let added = t.pairs_done.saturating_sub(base);
        let range = if open == 0 {
            format!("{got}")
        } else {
            format!("{got} to {} ({open} unanswered)", got + open)
        };
        f.check(
            t.pairs_done >= base && added >= got && added <= got + open,
            format!(
                "run {} ({}): pairs_done {} = {base} before + {added} added; acknowledged {range}",
                t.run, t.kind, t.pairs_done
            ),
        );
        f.check(
            t.pentanomial_sum == t.pairs_done && t.games == 2 * t.pairs_done,
            format!(
                "run {}: pentanomial sums to {}, {} games (pairs_done {})",
                t.run, t.pentanomial_sum, t.games, t.pairs_done
            ),
        );
        if let Some((iterations, _)) = &t.spsa {
            f.check(
                *iterations == t.pairs_done,
                format!(
                    "run {}: SPSA iterations {iterations} = pairs_done {}",
                    t.run, t.pairs_done
                ),
            );
        }
    }
    f
}

/// Check the database file (the coordinator should be stopped or killed): rows against the
/// acknowledged pairs of leases above `lease_floor` (the highest lease id before the fleet
/// started), integrity, and the SPSA state of every run in `totals`.
pub fn check_database(
    db: &Path,
    totals: &[RunTotals],
    out: &FleetOutcome,
    lease_floor: u64,
) -> Result<Findings, BenchError> {
    let sql = |source| BenchError::Database {
        path: db.display().to_string(),
        source,
    };
    // Read-write so that SQLite can recover the WAL of a killed writer.
    let conn = Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(sql)?;
    let mut f = Findings::default();
    let integrity: Vec<String> = conn
        .prepare("PRAGMA integrity_check")
        .and_then(|mut q| {
            q.query_map([], |r| r.get::<_, String>(0))?
                .collect::<Result<_, _>>()
        })
        .map_err(sql)?;
    f.check(
        integrity == ["ok"],
        format!("PRAGMA integrity_check: {}", integrity.join("; ")),
    );
    let acked = acked_by_run(&out.acked, &mut Findings::default());
    let unresolved = unresolved_by_run(out);
    let mut q = conn
        .prepare("SELECT pair_index, score, lease_id FROM pair_results WHERE run_id = ?1")
        .map_err(sql)?;
    for t in totals {
        let mut stored: BTreeMap<u64, u8> = BTreeMap::new();
        let mut rows = 0u64;
        let mut it = q.query(params![t.run as i64]).map_err(sql)?;
        while let Some(r) = it.next().map_err(sql)? {
            rows += 1;
            let (index, score, lease): (i64, i64, i64) = (
                r.get(0).map_err(sql)?,
                r.get(1).map_err(sql)?,
                r.get(2).map_err(sql)?,
            );
            if lease as u64 > lease_floor {
                stored.insert(index as u64, score as u8);
            }
        }
        let empty = BTreeMap::new();
        let mine = acked.get(&t.run).unwrap_or(&empty);
        let open = unresolved.get(&t.run);
        let mut missing = Vec::new();
        let mut wrong = Vec::new();
        for (&i, &half) in mine {
            match stored.get(&i) {
                None => missing.push((t.run, i)),
                Some(&s) if s != half => wrong.push((t.run, i)),
                Some(_) => {}
            }
        }
        let extra: Vec<(u64, u64)> = stored
            .keys()
            .filter(|i| !mine.contains_key(i) && !open.is_some_and(|o| o.contains(i)))
            .map(|&i| (t.run, i))
            .collect();
        f.check(
            missing.is_empty(),
            format!(
                "run {}: every acknowledged pair is stored ({} acknowledged, {} stored by this fleet){}",
                t.run,
                mine.len(),
                stored.len(),
                sample(&missing)
            ),
        );
        f.check(
            wrong.is_empty(),
            format!(
                "run {}: stored scores are the ones sent{}",
                t.run,
                sample(&wrong)
            ),
        );
        f.check(
            extra.is_empty(),
            format!(
                "run {}: no stored pair that was not acknowledged{}",
                t.run,
                sample(&extra)
            ),
        );
        f.check(
            rows == t.pairs_done,
            format!(
                "run {}: {rows} rows in pair_results = pairs_done {}",
                t.run, t.pairs_done
            ),
        );
        if let Some((_, shown)) = &t.spsa {
            f.extend(check_spsa(&conn, t.run, rows, shown).map_err(sql)?);
        }
    }
    Ok(f)
}

/// A run's stored SPSA snapshot (JSON of [`stats::spsa::Spsa`]): the `spsa` column of
/// `run_state` from schema 4 on, of `runs` before.
pub fn stored_spsa_snapshot(conn: &Connection, run: u64) -> rusqlite::Result<Option<String>> {
    let split: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'run_state')",
        [],
        |r| r.get(0),
    )?;
    let sql = if split {
        "SELECT spsa FROM run_state WHERE run_id = ?1"
    } else {
        "SELECT spsa FROM runs WHERE id = ?1"
    };
    conn.query_row(sql, params![run as i64], |r| r.get(0))
}

/// The stored SPSA snapshot and updates of a run: updates numbered 1..=n, one per stored
/// pair, and the snapshot verified against them by the stats crate
/// ([`stats::spsa::Spsa::verify_updates`]: each recorded θ replays from the start values, n is
/// the credited count, the last θ is the snapshot's); the snapshot's θ is the one `ShowRun`
/// shows. Updates are streamed from the database, so a long run does not need its history in
/// memory.
fn check_spsa(conn: &Connection, run: u64, rows: u64, shown: &[f64]) -> rusqlite::Result<Findings> {
    use stats::spsa::{Spsa, SpsaUpdate};
    let mut f = Findings::default();
    let snapshot = stored_spsa_snapshot(conn, run)?;
    let spsa = match snapshot.as_deref().map(serde_json::from_str::<Spsa>) {
        Some(Ok(s)) => s,
        Some(Err(e)) => {
            f.check(
                false,
                format!("run {run}: stored SPSA state does not load: {e}"),
            );
            return Ok(f);
        }
        None => {
            f.check(false, format!("run {run}: no stored SPSA state"));
            return Ok(f);
        }
    };
    f.check(
        spsa.credited() == rows,
        format!(
            "run {run}: SPSA snapshot credits {} pairs, {rows} stored",
            spsa.credited()
        ),
    );
    f.check(
        shown == spsa.theta(),
        format!(
            "run {run}: ShowRun θ {shown:?} = stored θ {:?}",
            spsa.theta()
        ),
    );
    let mut q =
        conn.prepare("SELECT seq, data FROM spsa_updates WHERE run_id = ?1 ORDER BY seq")?;
    let mut problem: Option<String> = None;
    let mut next_seq = 1i64;
    let verdict = {
        let updates = q
            .query_map(params![run as i64], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
            })?
            .map_while(|row| {
                let parsed = match row {
                    Err(e) => Err(e.to_string()),
                    Ok((seq, _)) if seq != next_seq => {
                        Err(format!("update number {seq} where {next_seq} was due"))
                    }
                    Ok((seq, data)) => serde_json::from_str::<SpsaUpdate>(&data)
                        .map_err(|e| format!("update {seq} does not load: {e}")),
                };
                next_seq += 1;
                parsed.map_err(|e| problem = Some(e)).ok()
            });
        spsa.verify_updates(updates)
    };
    let n = next_seq - 1;
    match (problem, verdict) {
        (Some(p), _) => f.check(false, format!("run {run}: spsa_updates: {p}")),
        (None, Err(e)) => f.check(false, format!("run {run}: SPSA replay of {n} updates: {e}")),
        (None, Ok(())) => f.check(
            true,
            format!(
                "run {run}: SPSA state is the replay of its {n} stored updates (θ {:?})",
                spsa.theta()
            ),
        ),
    }
    Ok(f)
}
