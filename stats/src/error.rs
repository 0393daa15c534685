//! Error type of the core statistics (Elo, nElo, LLR, SPRT).
//!
//! fishtest answers bad input with Python `assert`s or exceptions; here every such case is a
//! variant, so that callers (worker, coordinator, CLI) can show a clear message and never panic.

use thiserror::Error;

/// Why a statistic could not be computed.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum StatsError {
    /// All counts are zero. fishtest would still produce numbers (its 0.001 regularisation turns
    /// "nothing" into a uniform distribution), but those numbers mean nothing, so we refuse.
    #[error("no games: every count is zero")]
    NoGames,
    /// A list of counts with a length other than 3 (trinomial) or 5 (pentanomial).
    #[error("expected 3 (trinomial) or 5 (pentanomial) counts, got {0}")]
    WrongCountLength(usize),
    /// The SPRT error probabilities are outside (0, 1) or leave no room between the bounds.
    #[error("alpha and beta must lie in (0, 1) with alpha + beta < 1 (got alpha = {alpha}, beta = {beta})")]
    InvalidErrorRates {
        /// False-positive probability.
        alpha: f64,
        /// False-negative probability.
        beta: f64,
    },
    /// The SPRT hypotheses are not ordered (`elo0 < elo1` is required).
    #[error("elo0 must be smaller than elo1 (got elo0 = {elo0}, elo1 = {elo1})")]
    InvalidHypotheses {
        /// Elo under H0.
        elo0: f64,
        /// Elo under H1.
        elo1: f64,
    },
    /// A parameter is NaN or infinite.
    #[error("{name} must be a finite number (got {value})")]
    NonFinite {
        /// Which parameter.
        name: &'static str,
        /// The offending value.
        value: f64,
    },
    /// A probability parameter is outside (0, 1).
    #[error("{name} must lie strictly between 0 and 1 (got {value})")]
    NotAProbability {
        /// Which parameter.
        name: &'static str,
        /// The offending value.
        value: f64,
    },
    /// The BayesElo model needs separate win/draw/loss counts to estimate the draw Elo.
    #[error("the BayesElo model needs trinomial (win/draw/loss) counts")]
    BayesEloNeedsTrinomial,
    /// A numerical step failed (no sign change for the root finder, no convergence, a value
    /// outside its valid range). fishtest would raise an assertion error here.
    #[error("numerical failure in {what}: {detail}")]
    Numerical {
        /// The computation that failed.
        what: &'static str,
        /// What went wrong.
        detail: String,
    },
}

impl StatsError {
    pub(crate) fn numerical(what: &'static str, detail: impl Into<String>) -> Self {
        Self::Numerical {
            what,
            detail: detail.into(),
        }
    }
}

/// Reject NaN and infinities in user-supplied parameters.
pub(crate) fn finite(name: &'static str, value: f64) -> Result<f64, StatsError> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(StatsError::NonFinite { name, value })
    }
}

/// Reject values outside the open interval (0, 1).
pub(crate) fn probability(name: &'static str, value: f64) -> Result<f64, StatsError> {
    if value > 0.0 && value < 1.0 {
        Ok(value)
    } else {
        Err(StatsError::NotAProbability { name, value })
    }
}
