//! Normalised Elo (nElo) and its 95% interval, as fishtest's result pages show them
//! (`template_helpers.t_conf` on `LLRcalc.stats_ex`).
//!
//! nElo measures the score excess in standard deviations, so it does not depend on the draw
//! rate; the interval comes from the delta method with the skewness and kurtosis of the
//! observed distribution.

use crate::error::StatsError;
use crate::normal::phi_inv;
use crate::pdf::{results_to_pdf, stats_ex};
use crate::results::Results;
use serde::{Deserialize, Serialize};

/// nElo per unit of t-value: 800 / ln 10.
pub const NELO_PER_T: f64 = 800.0 / std::f64::consts::LN_10;

/// Normalised Elo estimate with the intermediate figures fishtest shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NeloEstimate {
    /// Normalised Elo.
    pub nelo: f64,
    /// 95% interval.
    pub ci: [f64; 2],
    /// Samples after regularisation (games or pairs).
    pub n: f64,
    /// The empirical distribution (value = score per game, or pair score / 2).
    pub pdf: Vec<(f64, f64)>,
    /// Mean of the distribution.
    pub mean: f64,
    /// Variance of the distribution.
    pub variance: f64,
    /// Skewness.
    pub skewness: f64,
    /// Excess kurtosis.
    pub excess_kurtosis: f64,
    /// t = (μ − ½)/σ.
    pub t: f64,
    /// Asymptotic variance of t (clamped at 0 against rounding).
    pub var_t: f64,
    /// The normal quantile used (Φ⁻¹(0.975)).
    pub z975: f64,
    /// nElo per unit of t: 800/ln 10 for games, that divided by √2 for pairs (a pair's
    /// t-value is √2 times a game's).
    pub nelo_per_t: f64,
}

/// fishtest's `t_conf`: the t-value and its asymptotic variance.
fn t_conf(avg: f64, var: f64, skewness: f64, exkurt: f64) -> (f64, f64) {
    let t = (avg - 0.5) / var.powf(0.5);
    let var_t = (1.0 - t * skewness + 0.25 * t.powi(2) * (exkurt + 2.0)).max(0.0);
    (t, var_t)
}

/// Normalised Elo and its 95% interval.
pub fn normalized_elo(results: &Results) -> Result<NeloEstimate, StatsError> {
    results.require_games()?;
    let (n, pdf) = results_to_pdf(&results.regularized());
    let (mean, variance, skewness, excess_kurtosis) = stats_ex(&pdf)?;
    let (t, var_t) = t_conf(mean, variance, skewness, excess_kurtosis);
    let z975 = phi_inv(0.975);
    let half = z975 * (var_t / n).powf(0.5);
    let (t_l, t_u) = (t - half, t + half);
    let (nelo, ci, nelo_per_t) = if results.is_pentanomial() {
        let sqrt2 = 2f64.powf(0.5);
        (
            NELO_PER_T * (t / sqrt2),
            [NELO_PER_T * (t_l / sqrt2), NELO_PER_T * (t_u / sqrt2)],
            NELO_PER_T / sqrt2,
        )
    } else {
        (
            NELO_PER_T * t,
            [NELO_PER_T * t_l, NELO_PER_T * t_u],
            NELO_PER_T,
        )
    };
    Ok(NeloEstimate {
        nelo,
        ci,
        n,
        pdf,
        mean,
        variance,
        skewness,
        excess_kurtosis,
        t,
        var_t,
        z975,
        nelo_per_t,
    })
}
