//! Recomputing a run's live state from its stored pairs: to upgrade a database from before
//! the running totals, and to check them (`coordinator run verify ID`, the crash test).
//!
//! Everything streams from the database in pair order; memory holds the totals, not the
//! pairs. [`verify`] reads in one read transaction, so it compares a consistent snapshot
//! even while the coordinator writes.

use crate::config::RunConfig;
use crate::error::CoreError;
use crate::model::GameFacts;
use crate::run::spsa_restore;
use crate::store;
use crate::totals::{RunTotals, TokenTotals};
use rusqlite::{params, Connection, OpenFlags};
use stats::spsa::{Spsa, SpsaReplay, SpsaUpdate};
use stats::{OrderedSprt, PairScore};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A run's live state as recomputed from its stored pairs.
#[derive(Debug, Clone)]
pub struct Rebuilt {
    /// Pairs stored.
    pub done: u64,
    /// Totals per token.
    pub totals: RunTotals,
    /// SPRT (SPRT runs), excluded tokens skipped.
    pub sprt: Option<OrderedSprt>,
    /// Indices handed out before, neither stored nor in an active lease.
    pub requeued: BTreeSet<u64>,
    /// Indices stored by excluded tokens, ascending.
    pub excluded_indices: Vec<u64>,
}

fn internal(e: impl std::fmt::Display) -> CoreError {
    CoreError::Internal(e.to_string())
}

/// Recompute a run's state from `conn`.
pub fn rebuild(
    conn: &Connection,
    run_id: u64,
    config: &RunConfig,
    excluded: &BTreeSet<String>,
    next_fresh: u64,
    active_pairs: &BTreeSet<u64>,
) -> Result<Rebuilt, CoreError> {
    let mut totals = RunTotals::default();
    let mut sprt = match config.sprt_params()? {
        Some(p) => {
            let batch = config.sprt.as_ref().map_or(1, |s| s.batch_pairs);
            Some(OrderedSprt::new(p, batch).map_err(internal)?)
        }
        None => None,
    };
    let mut requeued = BTreeSet::new();
    let mut excluded_indices = Vec::new();
    let mut expected = 0u64;
    let gap = |from: u64, to: u64, requeued: &mut BTreeSet<u64>| {
        requeued.extend((from..to).filter(|i| !active_pairs.contains(i)));
    };
    let done =
        store::for_each_result(conn, run_id, |index, _lease, score, token, label, games| {
            gap(expected, index.min(next_fresh), &mut requeued);
            expected = index + 1;
            let score = PairScore::from_half_points(score)
                .ok_or_else(|| CoreError::Internal(format!("stored score of pair {index}")))?;
            let games: Vec<GameFacts> = serde_json::from_str(games)
                .map_err(|e| CoreError::Internal(format!("stored games of pair {index}: {e}")))?;
            totals
                .by_token
                .entry(token.to_string())
                .or_insert_with(TokenTotals::default)
                .add(score, &games, &config.study_row(index), label);
            if excluded.contains(token) {
                excluded_indices.push(index);
            } else if let Some(s) = sprt.as_mut() {
                let compact = index - excluded_indices.len() as u64;
                s.record(compact, score).map_err(internal)?;
            }
            Ok(())
        })?;
    gap(expected, next_fresh, &mut requeued);
    Ok(Rebuilt {
        done,
        totals,
        sprt,
        requeued,
        excluded_indices,
    })
}

/// What `run verify` found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Verdict {
    /// Pairs read.
    pub pairs: u64,
    /// Every disagreement between the stored state and the recomputation (empty: all good).
    pub problems: Vec<String>,
}

/// Check a run's stored state against a recomputation from its stored pairs and SPSA
/// updates, on a connection of its own (read-only).
pub fn verify(db: &Path, run_id: u64) -> Result<Verdict, CoreError> {
    let mut conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    let tx = conn.transaction()?;
    let row = tx
        .query_row(
            "SELECT r.config_toml, s.next_fresh, s.done, s.spsa, s.sprt
             FROM runs r JOIN run_state s ON s.run_id = r.id WHERE r.id = ?1",
            params![run_id as i64],
            |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, Option<String>>(3)?,
                    r.get::<_, Option<String>>(4)?,
                ))
            },
        )
        .map_err(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => CoreError::UnknownRun(run_id),
            e => e.into(),
        })?;
    let (config_toml, next_fresh, done, spsa, sprt) = row;
    let config = RunConfig::parse(&config_toml)?;
    let excluded: BTreeSet<String> = {
        let mut q = tx.prepare("SELECT worker FROM exclusions WHERE run_id = ?1")?;
        let rows = q.query_map(params![run_id as i64], |r| r.get(0))?;
        rows.collect::<Result<_, _>>()?
    };
    let active: BTreeSet<u64> = {
        let mut q = tx.prepare(
            "SELECT lp.pair_index FROM lease_pairs lp JOIN leases l ON l.id = lp.lease_id
             WHERE l.run_id = ?1 AND l.state = 'active'",
        )?;
        let rows = q.query_map(params![run_id as i64], |r| r.get::<_, i64>(0))?;
        rows.map(|r| r.map(|v| v as u64))
            .collect::<Result<_, _>>()?
    };
    let rebuilt = rebuild(&tx, run_id, &config, &excluded, next_fresh as u64, &active)?;
    let mut v = Verdict {
        pairs: rebuilt.done,
        problems: Vec::new(),
    };
    if rebuilt.done != done as u64 {
        v.problems
            .push(format!("done: stored {done}, recomputed {}", rebuilt.done));
    }
    let stored: BTreeMap<String, TokenTotals> = {
        let mut q = tx.prepare("SELECT token, data FROM token_totals WHERE run_id = ?1")?;
        let rows = q.query_map(params![run_id as i64], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
        })?;
        let mut m = BTreeMap::new();
        for row in rows {
            let (token, data) = row?;
            let t: TokenTotals = serde_json::from_str(&data)
                .map_err(|e| CoreError::Internal(format!("stored totals of {token}: {e}")))?;
            m.insert(token, t);
        }
        m
    };
    for token in stored
        .keys()
        .chain(rebuilt.totals.by_token.keys())
        .collect::<BTreeSet<_>>()
    {
        let (a, b) = (stored.get(token), rebuilt.totals.by_token.get(token));
        let same = match (a, b) {
            (Some(a), Some(b)) => {
                a.pentanomial == b.pentanomial && a.wdl == b.wdl && a.study == b.study
            }
            _ => false,
        };
        if !same {
            v.problems.push(format!(
                "totals of {token}: stored {:?}, recomputed {:?}",
                a.map(|t| t.pentanomial),
                b.map(|t| t.pentanomial)
            ));
        }
    }
    let stored_requeued: BTreeSet<u64> = {
        let mut q = tx.prepare("SELECT pair_index FROM requeued WHERE run_id = ?1")?;
        let rows = q.query_map(params![run_id as i64], |r| r.get::<_, i64>(0))?;
        rows.map(|r| r.map(|v| v as u64))
            .collect::<Result<_, _>>()?
    };
    if stored_requeued != rebuilt.requeued {
        v.problems.push(format!(
            "queue of returned pairs: stored {} pairs, recomputed {}",
            stored_requeued.len(),
            rebuilt.requeued.len()
        ));
    }
    if let Some(r) = &rebuilt.sprt {
        match sprt.as_deref().map(serde_json::from_str::<OrderedSprt>) {
            Some(Ok(s)) => {
                if s.counted() != r.counted()
                    || s.state() != r.state()
                    || (s.llr() - r.llr()).abs() > 1e-9
                {
                    v.problems.push(format!(
                        "sprt: stored llr {} over {:?}, recomputed llr {} over {:?}",
                        s.llr(),
                        s.counted().counts(),
                        r.llr(),
                        r.counted().counts()
                    ));
                }
            }
            Some(Err(e)) => v
                .problems
                .push(format!("sprt: stored state unreadable: {e}")),
            None => v.problems.push("sprt: no stored state".into()),
        }
    }
    if let (Some(c), Some(snapshot)) = (config.spsa_config()?, spsa) {
        // Replayed one stored update at a time: constant memory whatever the run's length.
        let mut q = tx.prepare("SELECT data FROM spsa_updates WHERE run_id = ?1 ORDER BY seq")?;
        let mut rows = q.query(params![run_id as i64])?;
        let mut replay = SpsaReplay::new(&c).map_err(internal)?;
        let mut updates = 0u64;
        while let Some(row) = rows.next()? {
            let data: String = row.get(0)?;
            let u: SpsaUpdate = serde_json::from_str(&data)
                .map_err(|e| CoreError::Internal(format!("stored SPSA update: {e}")))?;
            updates += 1;
            if let Err(e) = replay.apply(&u) {
                v.problems
                    .push(format!("spsa: update {updates} does not replay: {e}"));
                break;
            }
        }
        let stored: Spsa = spsa_restore(&snapshot, &[])?;
        if stored.credited() != updates {
            v.problems.push(format!(
                "spsa: {} iterations credited, {updates} updates stored",
                stored.credited()
            ));
        }
        let theta = replay.theta();
        let far = stored
            .theta()
            .iter()
            .zip(theta)
            .any(|(a, b)| (a - b).abs() > 1e-9 * a.abs().max(1.0));
        if far {
            v.problems.push(format!(
                "spsa: stored theta {:?}, replay of the stored updates {:?}",
                stored.theta(),
                theta
            ));
        }
    }
    Ok(v)
}
