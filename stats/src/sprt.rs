//! The sequential probability ratio test: bounds, decision and fishtest's dynamic overshoot
//! correction (`stat_util.SPRT` / `update_SPRT`).

use crate::error::{finite, StatsError};
use crate::llr::{bayeselo_bounds_to_logistic, llr_logistic, llr_normalized, EloModel};
use crate::results::Results;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Design of an SPRT: error rates and the two hypotheses.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SprtParams {
    /// Probability of accepting H1 when H0 holds (false positive).
    pub alpha: f64,
    /// Probability of accepting H0 when H1 holds (false negative).
    pub beta: f64,
    /// Elo under H0.
    pub elo0: f64,
    /// Elo under H1.
    pub elo1: f64,
    /// Elo model of `elo0` and `elo1`.
    pub model: EloModel,
}

/// Where a test stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SprtState {
    /// Neither bound crossed yet.
    Continue,
    /// The upper bound was crossed: H1 accepted (the patch passes).
    Accepted,
    /// The lower bound was crossed: H0 accepted (the patch fails).
    Rejected,
}

impl fmt::Display for SprtState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Continue => "continue",
            Self::Accepted => "accepted",
            Self::Rejected => "rejected",
        })
    }
}

impl SprtParams {
    /// A validated SPRT design.
    pub fn new(
        alpha: f64,
        beta: f64,
        elo0: f64,
        elo1: f64,
        model: EloModel,
    ) -> Result<Self, StatsError> {
        let params = Self {
            alpha,
            beta,
            elo0,
            elo1,
            model,
        };
        params.validate()?;
        Ok(params)
    }

    /// Check the design (useful after deserialising one).
    pub fn validate(&self) -> Result<(), StatsError> {
        finite("alpha", self.alpha)?;
        finite("beta", self.beta)?;
        finite("elo0", self.elo0)?;
        finite("elo1", self.elo1)?;
        let ok = self.alpha > 0.0
            && self.beta > 0.0
            && self.alpha < 1.0
            && self.beta < 1.0
            && self.alpha + self.beta < 1.0;
        if !ok {
            return Err(StatsError::InvalidErrorRates {
                alpha: self.alpha,
                beta: self.beta,
            });
        }
        if self.elo0 >= self.elo1 {
            return Err(StatsError::InvalidHypotheses {
                elo0: self.elo0,
                elo1: self.elo1,
            });
        }
        Ok(())
    }

    /// Wald's lower bound ln(β / (1 − α)).
    pub fn lower_bound(&self) -> f64 {
        (self.beta / (1.0 - self.alpha)).ln()
    }

    /// Wald's upper bound ln((1 − β) / α).
    pub fn upper_bound(&self) -> f64 {
        ((1.0 - self.beta) / self.alpha).ln()
    }

    /// The bounds converted to the model in which the LLR is computed: BayesElo becomes
    /// logistic at the results' draw Elo; the other models are returned as they are.
    pub fn effective_bounds(&self, results: &Results) -> Result<(EloModel, f64, f64), StatsError> {
        match self.model {
            EloModel::BayesElo => match results {
                Results::Trinomial(t) => {
                    let (e0, e1) = bayeselo_bounds_to_logistic(self.elo0, self.elo1, t)?;
                    Ok((EloModel::Logistic, e0, e1))
                }
                Results::Pentanomial(_) => Err(StatsError::BayesEloNeedsTrinomial),
            },
            model => Ok((model, self.elo0, self.elo1)),
        }
    }

    /// The generalised LLR of `results` (an error for an empty match).
    pub fn llr(&self, results: &Results) -> Result<f64, StatsError> {
        results.require_games()?;
        let (model, e0, e1) = self.effective_bounds(results)?;
        match model {
            EloModel::Normalized => llr_normalized(e0, e1, results),
            _ => llr_logistic(e0, e1, results),
        }
    }

    /// The decision for an LLR against the plain Wald bounds (no overshoot correction).
    pub fn decide(&self, llr: f64) -> SprtState {
        decide(llr, self.lower_bound(), self.upper_bound())
    }
}

fn decide(llr: f64, lower: f64, upper: f64) -> SprtState {
    if llr < lower {
        SprtState::Rejected
    } else if llr > upper {
        SprtState::Accepted
    } else {
        SprtState::Continue
    }
}

/// Running record of how far the LLR jumped past its previous extremes, used to estimate the
/// expected overshoot of a bound (Siegmund, Sequential Analysis, Cor. 8.33).
///
/// The LLR is only observed once per batch, so it crosses a bound by some amount; stopping at
/// `bound − expected overshoot` restores the nominal error rates.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Overshoot {
    /// Samples (games or pairs) at the last update.
    pub last_update: u64,
    /// Samples that arrived in jumps bigger than one batch (audit).
    pub skipped_updates: u64,
    /// Running minimum of the LLR.
    pub ref0: f64,
    /// Sum of the downward jumps below the running minimum.
    pub m0: f64,
    /// Sum of their squares.
    pub sq0: f64,
    /// Running maximum of the LLR.
    pub ref1: f64,
    /// Sum of the upward jumps above the running maximum.
    pub m1: f64,
    /// Sum of their squares.
    pub sq1: f64,
}

/// A running SPRT fed with cumulative results once per batch, with fishtest's overshoot
/// correction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sprt {
    /// The test design.
    pub params: SprtParams,
    /// Samples (games for trinomial, pairs for pentanomial) per update.
    pub batch_size: u64,
    /// LLR at the last update.
    pub llr: f64,
    /// Decision at the last update.
    pub state: SprtState,
    /// Overshoot data; dropped (as fishtest does) when the batch contract is broken.
    pub overshoot: Option<Overshoot>,
    /// Sample count of an update that was not a multiple of the batch size (audit).
    pub illegal_update: Option<u64>,
    /// Samples that disappeared between updates, e.g. after a purge (audit).
    pub lost_samples: Option<u64>,
}

impl Sprt {
    /// A fresh test. `batch_size` is the number of samples between updates (at least 1).
    pub fn new(params: SprtParams, batch_size: u64) -> Result<Self, StatsError> {
        params.validate()?;
        Ok(Self {
            params,
            batch_size: batch_size.max(1),
            llr: 0.0,
            state: SprtState::Continue,
            overshoot: Some(Overshoot::default()),
            illegal_update: None,
            lost_samples: None,
        })
    }

    /// Recompute the LLR from cumulative `results`, update the overshoot record and decide.
    ///
    /// Safe to call repeatedly with the same counts; meant to be called each time exactly one
    /// more batch is complete.
    pub fn update(&mut self, results: &Results) -> Result<SprtState, StatsError> {
        let samples = results.samples();
        if !samples.is_multiple_of(self.batch_size) {
            self.illegal_update = Some(samples);
            self.overshoot = None;
        }
        let llr = if samples == 0 {
            0.0
        } else {
            self.params.llr(results)?
        };
        self.llr = llr;
        if let Some(o) = self.overshoot.as_mut() {
            if samples < o.last_update {
                self.lost_samples = Some(o.last_update - samples);
                self.overshoot = None;
            } else {
                if samples == o.last_update {
                    // Same data again: nothing to learn.
                } else if samples == o.last_update + self.batch_size {
                    if llr < o.ref0 {
                        let delta = llr - o.ref0;
                        o.m0 += delta;
                        o.sq0 += delta * delta;
                        o.ref0 = llr;
                    }
                    if llr > o.ref1 {
                        let delta = llr - o.ref1;
                        o.m1 += delta;
                        o.sq1 += delta * delta;
                        o.ref1 = llr;
                    }
                } else {
                    // Updates were missed: restart the extremes from here.
                    o.ref0 = llr;
                    o.ref1 = llr;
                    o.skipped_updates += (samples - o.last_update) - 1;
                }
                o.last_update = samples;
            }
        }
        let (lower, upper) = self.stopping_bounds();
        self.state = decide(llr, lower, upper);
        Ok(self.state)
    }

    /// Expected overshoots `(o0, o1)` of the lower and upper bound (0 without data).
    pub fn expected_overshoot(&self) -> (f64, f64) {
        match &self.overshoot {
            Some(o) => (
                if o.m0 != 0.0 {
                    -o.sq0 / o.m0 / 2.0
                } else {
                    0.0
                },
                if o.m1 != 0.0 { o.sq1 / o.m1 / 2.0 } else { 0.0 },
            ),
            None => (0.0, 0.0),
        }
    }

    /// The bounds the LLR is compared with: Wald's bounds moved inwards by the expected
    /// overshoots.
    pub fn stopping_bounds(&self) -> (f64, f64) {
        let (o0, o1) = self.expected_overshoot();
        (
            self.params.lower_bound() + o0,
            self.params.upper_bound() - o1,
        )
    }
}
