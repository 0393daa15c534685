//! An SPRT fed in the order of pair indices rather than arrival order.
//!
//! Short games (often draws) finish first and long decisive ones later, so stopping on the
//! results that happen to have arrived can bias the decision (official-stockfish/fishtest#933).
//! Here each pair carries the index it was scheduled with; only the contiguous prefix of
//! indices 0, 1, 2, … counts, and pairs that finished early wait until the gap before them is
//! filled.

use crate::error::StatsError;
use crate::results::{PairScore, Pentanomial, Results};
use crate::sprt::{Sprt, SprtParams, SprtState};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use thiserror::Error;

/// Why a pair result was refused.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum OrderedSprtError {
    /// The pair index was already recorded.
    #[error("pair {0} was already recorded")]
    Duplicate(u64),
    /// The SPRT computation failed.
    #[error(transparent)]
    Stats(#[from] StatsError),
}

/// A pentanomial SPRT that only counts the contiguous prefix of pair indices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OrderedSprt {
    sprt: Sprt,
    next_index: u64,
    pending: BTreeMap<u64, PairScore>,
    counted: Pentanomial,
    /// Pairs counted when the test stopped; later pairs still count for Elo but no longer
    /// move the decision.
    stopped_at: Option<u64>,
}

impl OrderedSprt {
    /// A fresh test updated every `batch_pairs` pairs (fishtest's SPRT batch size).
    pub fn new(params: SprtParams, batch_pairs: u64) -> Result<Self, StatsError> {
        Ok(Self {
            sprt: Sprt::new(params, batch_pairs)?,
            next_index: 0,
            pending: BTreeMap::new(),
            counted: Pentanomial::default(),
            stopped_at: None,
        })
    }

    /// Record the result of pair `index` and return the (possibly new) state.
    pub fn record(&mut self, index: u64, score: PairScore) -> Result<SprtState, OrderedSprtError> {
        if index < self.next_index || self.pending.contains_key(&index) {
            return Err(OrderedSprtError::Duplicate(index));
        }
        self.pending.insert(index, score);
        while let Some(score) = self.pending.remove(&self.next_index) {
            self.counted.add(score);
            self.next_index += 1;
            if self.stopped_at.is_none() && self.next_index.is_multiple_of(self.sprt.batch_size) {
                let state = self.sprt.update(&Results::Pentanomial(self.counted))?;
                if state != SprtState::Continue {
                    self.stopped_at = Some(self.next_index);
                }
            }
        }
        Ok(self.sprt.state)
    }

    /// Current decision.
    pub fn state(&self) -> SprtState {
        self.sprt.state
    }

    /// The LLR at the last batch boundary of the counted prefix.
    pub fn llr(&self) -> f64 {
        self.sprt.llr
    }

    /// Pair counts of the contiguous prefix.
    pub fn counted(&self) -> Pentanomial {
        self.counted
    }

    /// Number of pairs waiting for an earlier index.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// The next pair index the prefix waits for.
    pub fn next_index(&self) -> u64 {
        self.next_index
    }

    /// Pairs counted when the test stopped, if it did.
    pub fn stopped_at(&self) -> Option<u64> {
        self.stopped_at
    }

    /// The underlying SPRT (LLR, overshoot data, bounds).
    pub fn sprt(&self) -> &Sprt {
        &self.sprt
    }
}
