//! A run in memory: its config, state, counted pairs, SPSA and SPRT, and the per-pair work it
//! hands out.

use crate::config::RunConfig;
use crate::error::CoreError;
use crate::ledger::RunId;
use crate::model::{PairWork, RunStatus};
use crate::scheduler::PairTimer;
use crate::totals::RunTotals;
use stats::spsa::{PairAssignment, Spsa};
use stats::OrderedSprt;
use std::collections::{BTreeMap, BTreeSet};

/// A worker registration as the core keeps it.
#[derive(Debug, Clone)]
pub struct Worker {
    /// The token it registered with: its identity.
    pub token_id: i64,
    /// The token's name (what figures and exclusion go by).
    pub token_name: String,
    /// What it declared.
    pub info: crate::model::WorkerInfo,
}

/// A run in memory.
#[derive(Debug)]
pub struct Run {
    /// Id.
    pub id: RunId,
    /// Parsed config.
    pub config: RunConfig,
    /// Config as created.
    pub config_toml: String,
    /// Lifecycle.
    pub status: RunStatus,
    /// Why it ended or paused itself.
    pub finish_reason: String,
    /// Created, ms.
    pub created_ms: u64,
    /// Running totals per token (the pairs themselves stay in the database).
    pub totals: RunTotals,
    /// Indices stored by excluded tokens, ascending (the SPRT skips them).
    pub excluded_indices: Vec<u64>,
    /// SPSA state (SPSA runs).
    pub spsa: Option<Spsa>,
    /// SPSA assignment of each leased, unreported pair index.
    pub spsa_pairs: BTreeMap<u64, PairAssignment>,
    /// SPRT state (SPRT runs).
    pub sprt: Option<OrderedSprt>,
    /// Excluded token names.
    pub excluded: BTreeSet<String>,
    /// Pair-time estimates per token.
    pub timer: PairTimer,
    /// Lease failures since the run last became active: (token, reason).
    pub failures: Vec<(i64, String)>,
    /// Tokens that failed a lease of this run, until when (ms) they are not given it again.
    pub cooldown: BTreeMap<i64, u64>,
    /// Pairs done at which the next history point is stored (see [`history_step`]).
    pub history_next: u64,
}

/// Points a run's stored history has at most (plus one per restart at worst): charts of a run
/// with 10^6 pairs read as many rows as those of a run with 10^3.
pub const HISTORY_POINTS: u64 = 400;

/// Pairs between two history points of a run of `total` planned pairs.
pub fn history_step(total: u64) -> u64 {
    (total / HISTORY_POINTS).max(1)
}

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// An SPSA value as the engine receives it.
pub fn value_string(kind: stats::spsa::ParamKind, v: f64) -> String {
    match kind {
        stats::spsa::ParamKind::Int => format!("{}", v.round() as i64),
        stats::spsa::ParamKind::Float => format!("{v}"),
    }
}

/// Serialise an SPSA state without its history (kept as rows in `spsa_updates`) and without
/// its outstanding assignments (kept beside their leases in `lease_pairs`), so that the row
/// rewritten by every report stays the same size however many pairs are in flight.
pub fn spsa_snapshot(spsa: &Spsa) -> Result<String, CoreError> {
    serde_json::to_string(&spsa.without_outstanding())
        .map_err(|e| CoreError::Internal(e.to_string()))
}

/// Serialise an SPRT state (the row beside the SPSA snapshot), if the run has one.
pub fn sprt_snapshot(sprt: Option<&OrderedSprt>) -> Result<Option<String>, CoreError> {
    sprt.map(serde_json::to_string)
        .transpose()
        .map_err(|e| CoreError::Internal(e.to_string()))
}

/// Rebuild an SPSA state from its snapshot and history rows.
pub fn spsa_restore(snapshot: &str, history: &[String]) -> Result<Spsa, CoreError> {
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
    if let Some(clock) = c.limits.tc {
        // Two games, in each of which a side spends at most its base plus the increments of
        // ~80 moves: about the most a pair takes, so that the first leases, sized by this
        // before any pair is timed, hold batch_seconds of games rather than many times more.
        let (base, inc) = (clock.base_ms as f64 / 1000.0, clock.inc_ms as f64 / 1000.0);
        return (2.0 * (2.0 * base + 160.0 * inc)).max(0.01);
    }
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
    /// A new, active run.
    pub fn new(id: RunId, config: RunConfig, config_toml: String, created_ms: u64) -> Self {
        Self {
            id,
            timer: PairTimer::new(initial_pair_seconds(&config)),
            config,
            config_toml,
            status: RunStatus::Active,
            finish_reason: String::new(),
            created_ms,
            totals: RunTotals::default(),
            excluded_indices: Vec::new(),
            spsa: None,
            spsa_pairs: BTreeMap::new(),
            sprt: None,
            excluded: BTreeSet::new(),
            failures: Vec::new(),
            cooldown: BTreeMap::new(),
            history_next: 0,
        }
    }

    /// A fresh SPRT for this run's design (SPRT runs).
    pub fn new_sprt(&self) -> Result<Option<OrderedSprt>, CoreError> {
        let Some(params) = self.config.sprt_params().map_err(CoreError::Config)? else {
            return Ok(None);
        };
        let batch = self.config.sprt.as_ref().map_or(1, |s| s.batch_pairs);
        OrderedSprt::new(params, batch)
            .map(Some)
            .map_err(|e| CoreError::Internal(e.to_string()))
    }

    /// The SPRT index of pair `index`: excluded pairs below it are skipped, so their gaps do
    /// not hold the contiguous prefix back.
    pub fn sprt_index(&self, index: u64) -> u64 {
        index - self.excluded_indices.partition_point(|&i| i < index) as u64
    }

    /// The work of one pair index.
    pub fn work_for(&self, index: u64) -> PairWork {
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
