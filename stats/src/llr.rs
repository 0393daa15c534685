//! The generalised SPRT log-likelihood ratio in fishtest's Elo models.
//!
//! LLR = N · Σ p̂ᵢ ln(q¹ᵢ / q⁰ᵢ), where qʲ is the maximum-likelihood distribution on the
//! observed outcome values under hypothesis j. The models differ only in the constraint that
//! defines a hypothesis (`LLRcalc.LLR_logistic`, `LLRcalc.LLR_normalized`, and the legacy
//! BayesElo conversion of `stat_util.update_SPRT`).

use crate::elo::{elo_from_score, score_from_elo};
use crate::error::{finite, StatsError};
use crate::nelo::NELO_PER_T;
use crate::pdf::{llr_per_sample, results_to_pdf, Hypothesis};
use crate::results::{regularize, Results, Trinomial};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// How the SPRT bounds `elo0`, `elo1` are expressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EloModel {
    /// Normalised Elo (fishtest's default): bounds do not depend on the draw rate.
    Normalized,
    /// Logistic Elo: bounds are differences in expected score.
    Logistic,
    /// BayesElo (fishtest's legacy trinomial model); converted to logistic bounds with the
    /// draw Elo estimated from the results.
    #[serde(rename = "bayeselo")]
    BayesElo,
}

impl fmt::Display for EloModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Normalized => "normalized",
            Self::Logistic => "logistic",
            Self::BayesElo => "BayesElo",
        })
    }
}

impl FromStr for EloModel {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "normalized" | "normalised" => Ok(Self::Normalized),
            "logistic" => Ok(Self::Logistic),
            "bayeselo" => Ok(Self::BayesElo),
            _ => Err(format!(
                "unknown Elo model '{s}' (expected normalized, logistic or bayeselo)"
            )),
        }
    }
}

/// Generalised LLR with logistic-Elo bounds (fishtest's `LLR_logistic`).
pub fn llr_logistic(elo0: f64, elo1: f64, results: &Results) -> Result<f64, StatsError> {
    finite("elo0", elo0)?;
    finite("elo1", elo1)?;
    let (s0, s1) = (score_from_elo(elo0), score_from_elo(elo1));
    let (n, pdf) = results_to_pdf(&results.regularized());
    Ok(n * llr_per_sample(
        &pdf,
        Hypothesis::Expectation(s0),
        Hypothesis::Expectation(s1),
    )?)
}

/// Generalised LLR with normalised-Elo bounds (fishtest's `LLR_normalized`).
pub fn llr_normalized(nelo0: f64, nelo1: f64, results: &Results) -> Result<f64, StatsError> {
    finite("elo0", nelo0)?;
    finite("elo1", nelo1)?;
    let (nt0, nt1) = (nelo0 / NELO_PER_T, nelo1 / NELO_PER_T);
    let (t0, t1) = if results.is_pentanomial() {
        let sqrt2 = 2f64.powf(0.5);
        (nt0 * sqrt2, nt1 * sqrt2)
    } else {
        (nt0, nt1)
    };
    let (n, pdf) = results_to_pdf(&results.regularized());
    Ok(n * llr_per_sample(&pdf, Hypothesis::TValue(t0), Hypothesis::TValue(t1))?)
}

/// Draw Elo of trinomial frequencies (fishtest's `draw_elo_calc` on regularised counts).
pub fn draw_elo(results: &Trinomial) -> f64 {
    let r = regularize(&results.counts());
    let n: f64 = r.iter().sum();
    let (p_loss, p_win) = (r[0] / n, r[2] / n);
    200.0 * ((1.0 - p_loss) / p_loss * (1.0 - p_win) / p_win).log10()
}

/// Logistic Elo of a BayesElo difference at a given draw Elo (fishtest's `bayeselo_to_elo`).
pub fn bayeselo_to_elo(belo: f64, drawelo: f64) -> f64 {
    let p_win = 1.0 / (1.0 + 10f64.powf((-belo + drawelo) / 400.0));
    let p_loss = 1.0 / (1.0 + 10f64.powf((belo + drawelo) / 400.0));
    let p_draw = 1.0 - p_win - p_loss;
    elo_from_score(p_win + 0.5 * p_draw)
}

/// Generalised LLR with BayesElo bounds: the bounds are converted to logistic Elo at the draw
/// Elo of the results, then the logistic model is used (fishtest's `update_SPRT`).
pub fn llr_bayeselo(belo0: f64, belo1: f64, results: &Trinomial) -> Result<f64, StatsError> {
    let (elo0, elo1) = bayeselo_bounds_to_logistic(belo0, belo1, results)?;
    llr_logistic(elo0, elo1, &Results::Trinomial(*results))
}

/// Convert BayesElo bounds to logistic Elo at the results' draw Elo.
pub fn bayeselo_bounds_to_logistic(
    belo0: f64,
    belo1: f64,
    results: &Trinomial,
) -> Result<(f64, f64), StatsError> {
    finite("elo0", belo0)?;
    finite("elo1", belo1)?;
    let drawelo = draw_elo(results);
    Ok((
        bayeselo_to_elo(belo0, drawelo),
        bayeselo_to_elo(belo1, drawelo),
    ))
}

/// Generalised LLR of `results` for H0: Elo = `elo0` against H1: Elo = `elo1` in `model`.
pub fn llr(model: EloModel, elo0: f64, elo1: f64, results: &Results) -> Result<f64, StatsError> {
    match model {
        EloModel::Normalized => llr_normalized(elo0, elo1, results),
        EloModel::Logistic => llr_logistic(elo0, elo1, results),
        EloModel::BayesElo => match results {
            Results::Trinomial(t) => llr_bayeselo(elo0, elo1, t),
            Results::Pentanomial(_) => Err(StatsError::BayesEloNeedsTrinomial),
        },
    }
}
