//! Logistic Elo with its 95% confidence interval and the likelihood of superiority
//! (fishtest's `stat_util.get_elo`).

use crate::error::StatsError;
use crate::normal::{phi, phi_inv};
use crate::results::Results;
use serde::{Deserialize, Serialize};

/// Logistic Elo estimate of a match.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EloEstimate {
    /// Logistic Elo of the expected score.
    pub elo: f64,
    /// Half-width of the 95% interval.
    pub elo95: f64,
    /// `[elo − elo95, elo + elo95]`. fishtest centres the interval on the estimate (half the
    /// width of the mapped score interval), which is why it is symmetric even though the Elo
    /// curve is not.
    pub ci: [f64; 2],
    /// Likelihood of superiority: Φ((μ − ½) / (σ/√games)).
    pub los: f64,
    /// Games after regularisation (each zero count counts as 0.001 samples).
    pub games: f64,
    /// Expected score per game, μ.
    pub score: f64,
    /// Score variance per game, σ² (for pairs: the pair-score variance halved).
    pub variance: f64,
}

/// fishtest's `L`: the expected score of an Elo difference.
pub fn score_from_elo(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// fishtest's `elo`: the Elo difference of an expected score, the score clamped to
/// [0.001, 0.999] so that one-sided results give ±1200 rather than infinities.
pub fn elo_from_score(score: f64) -> f64 {
    let x = score.clamp(1e-3, 1.0 - 1e-3);
    -400.0 * (1.0 / x - 1.0).log10()
}

/// Games, per-game mean score and per-game variance of regularised counts
/// (fishtest's `stat_util.stats`).
pub(crate) fn game_stats(regularized: &[f64]) -> (f64, f64, f64) {
    let l = regularized.len();
    let n: f64 = regularized.iter().sum();
    let games = n * (l - 1) as f64 / 2.0;
    let mu = regularized
        .iter()
        .enumerate()
        .map(|(i, &c)| c * (i as f64 / 2.0))
        .sum::<f64>()
        / games;
    let mu_ = (l - 1) as f64 / 2.0 * mu;
    let var = regularized
        .iter()
        .enumerate()
        .map(|(i, &c)| c * (i as f64 / 2.0 - mu_).powi(2))
        .sum::<f64>()
        / games;
    (games, mu, var)
}

/// Logistic Elo, its 95% interval and LOS of a match.
pub fn logistic_elo(results: &Results) -> Result<EloEstimate, StatsError> {
    results.require_games()?;
    let (games, mu, var) = game_stats(&results.regularized());
    let stdev = var.sqrt();
    let mu_min = mu + phi_inv(0.025) * stdev / games.sqrt();
    let mu_max = mu + phi_inv(0.975) * stdev / games.sqrt();
    let elo = elo_from_score(mu);
    let elo95 = (elo_from_score(mu_max) - elo_from_score(mu_min)) / 2.0;
    let los = phi((mu - 0.5) / (stdev / games.sqrt()));
    Ok(EloEstimate {
        elo,
        elo95,
        ci: [elo - elo95, elo + elo95],
        los,
        games,
        score: mu,
        variance: var,
    })
}
