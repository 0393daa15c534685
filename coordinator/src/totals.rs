//! Running totals of a run, per token: what every figure of `run show` is computed from.
//!
//! Each report adds its pairs to the reporting token's totals in memory and the token's row is
//! rewritten in the report's transaction, so showing a run costs O(tokens), never O(pairs),
//! and a restart reads one row per token. The totals can always be recomputed from the stored
//! pairs ([`crate::verify`]), which is how a database from before the totals is upgraded and
//! how `coordinator run verify` checks them.

use crate::model::GameFacts;
use serde::{Deserialize, Serialize};
use stats::study::{GameRecord, Outcome, StudyTally};
use stats::{PairScore, Pentanomial};
use std::collections::{BTreeMap, BTreeSet};

/// Most machine labels kept per token.
pub const LABELS_KEPT: usize = 16;

/// One token's share of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TokenTotals {
    /// Pairs by `first`'s half points.
    pub pentanomial: [u64; 5],
    /// `first`'s wins, draws, losses.
    pub wdl: [u64; 3],
    /// Per rule-set game figures.
    pub study: StudyTally,
    /// Machine labels seen under the token (at most [`LABELS_KEPT`]).
    pub labels: BTreeSet<String>,
    /// `first`'s results per study row (the assignment's, so as many entries as the run
    /// config has rows, whatever a worker sends).
    #[serde(default)]
    pub by_row: BTreeMap<String, RowScore>,
}

/// `first`'s results under one study row: what a run mixing variants says of each.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowScore {
    /// Pairs by `first`'s half points.
    pub pentanomial: [u64; 5],
    /// `first`'s wins, draws, losses.
    pub wdl: [u64; 3],
}

impl RowScore {
    fn merge(&mut self, other: &RowScore) {
        for (sum, n) in self.pentanomial.iter_mut().zip(other.pentanomial) {
            *sum += n;
        }
        for (sum, n) in self.wdl.iter_mut().zip(other.wdl) {
            *sum += n;
        }
    }
}

/// A game as the study tallies read it, counted under study row `row` (the assignment's,
/// [`crate::config::RunConfig::study_row`]: not the worker's spelling of its rule-set).
pub fn game_record(g: &GameFacts, row: &str) -> GameRecord {
    GameRecord {
        ruleset: row.to_string(),
        result: g.outcome,
        plies: g.plies,
        termination: g.termination.clone(),
        castlings: g.castlings.clone(),
        milestones: g.milestones.clone(),
    }
}

impl TokenTotals {
    /// Count one pair, whose games go to study row `row`.
    pub fn add(&mut self, score: PairScore, games: &[GameFacts], row: &str, label: &str) {
        self.pentanomial[usize::from(score.half_points())] += 1;
        let mut by_row = RowScore::default();
        by_row.pentanomial[usize::from(score.half_points())] += 1;
        for g in games {
            let first_half = match (g.outcome, g.first_is_white) {
                (Outcome::Draw, _) => 1,
                (Outcome::WhiteWin, true) | (Outcome::BlackWin, false) => 2,
                _ => 0,
            };
            self.wdl[[2, 1, 0][first_half]] += 1;
            by_row.wdl[[2, 1, 0][first_half]] += 1;
            self.study.add(&game_record(g, row));
        }
        match self.by_row.get_mut(row) {
            Some(r) => r.merge(&by_row),
            None => {
                self.by_row.insert(row.to_string(), by_row);
            }
        }
        if !label.is_empty() && self.labels.len() < LABELS_KEPT {
            self.labels.insert(label.to_string());
        }
    }

    /// Pairs counted.
    pub fn pairs(&self) -> u64 {
        self.pentanomial.iter().sum()
    }
}

/// A run's totals: one entry per token that reported.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunTotals {
    /// By token name.
    pub by_token: BTreeMap<String, TokenTotals>,
}

/// The run-wide sums of the tokens that count.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counted {
    /// Pentanomial.
    pub pentanomial: Pentanomial,
    /// W, D, L of `first`.
    pub wdl: [u64; 3],
    /// Study tallies.
    pub study: StudyTally,
    /// `first`'s results per study row.
    pub by_row: BTreeMap<String, RowScore>,
}

impl RunTotals {
    /// Sum the tokens not in `excluded`.
    pub fn counted(&self, excluded: &BTreeSet<String>) -> Counted {
        let mut c = Counted::default();
        let mut penta = [0u64; 5];
        for (token, t) in &self.by_token {
            if excluded.contains(token) {
                continue;
            }
            for (sum, n) in penta.iter_mut().zip(t.pentanomial) {
                *sum += n;
            }
            for (sum, n) in c.wdl.iter_mut().zip(t.wdl) {
                *sum += n;
            }
            c.study.merge(&t.study);
            for (row, r) in &t.by_row {
                c.by_row.entry(row.clone()).or_default().merge(r);
            }
        }
        c.pentanomial = Pentanomial(penta);
        c
    }
}
