//! The Elo estimate fishtest shows for SPRT runs (`stat_util.SPRT_elo`, `sprt.sprt`).
//!
//! A test that stops when the LLR crosses a bound over-estimates the Elo of passing patches and
//! under-estimates that of failing ones. fishtest corrects this by modelling the LLR as a
//! Brownian motion (with the drift/variance approximation of `LLR_drift_variance_alt2`) and
//! reporting the median-unbiased estimate: the Elo at which a worse outcome than the observed
//! one has probability ½. Elo and interval are logistic Elo whatever the bounds' model.

use crate::brent::brentq;
use crate::brownian::Brownian;
use crate::elo::score_from_elo;
use crate::error::{probability, StatsError};
use crate::llr::EloModel;
use crate::nelo::NELO_PER_T;
use crate::pdf::{results_to_pdf, stats, Pdf};
use crate::results::Results;
use crate::sprt::SprtParams;
use serde::{Deserialize, Serialize};

/// Median-unbiased Elo of an SPRT run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SprtElo {
    /// Logistic Elo with outcome probability ½.
    pub elo: f64,
    /// Interval at outcome probabilities p/2 and 1 − p/2, searched within [−1000, 1000].
    pub ci: [f64; 2],
    /// Outcome probability at Elo 0.
    pub los: f64,
    /// The exact LLR of the bounds' model.
    pub llr: f64,
    /// Whether the Brownian approximation of the LLR lay more than 3% beyond a bound, or a
    /// bound of the interval was pinned to the ±1000 search window.
    pub clamped: bool,
}

/// Drift and variance per sample of the LLR, Brownian approximation
/// (fishtest's `LLR_drift_variance_alt2`); `s` replaces the observed mean if given.
///
/// The variance is always the observed one. Older fishtest replaced it by its maximum-likelihood
/// value at `s` (adding `(s − ŝ)²`); the shared vectors (fishtest b8eecff2) are reproduced
/// only without that term, and without it the estimate of a test far from both bounds equals
/// the fixed-sample one (same LOS, interval `[elo(μ₋), elo(μ₊)]`), as it should.
fn drift_variance(
    pdf: &[(f64, f64)],
    s0: f64,
    s1: f64,
    s: Option<f64>,
) -> Result<(f64, f64), StatsError> {
    let (s_, v) = stats(pdf)?;
    let s = s.unwrap_or(s_);
    let mu = (s - (s0 + s1) / 2.0) * (s1 - s0) / v;
    let var = (s1 - s0).powi(2) / v;
    Ok((mu, var))
}

/// fishtest's `sprt` class after `set_state`.
struct SprtModel {
    a: f64,
    b: f64,
    pdf: Pdf,
    s0: f64,
    s1: f64,
    llr: f64,
    t: f64,
    clamped: bool,
}

impl SprtModel {
    fn new(
        params: &SprtParams,
        model: EloModel,
        elo0: f64,
        elo1: f64,
        results: &Results,
    ) -> Result<Self, StatsError> {
        let a = params.lower_bound();
        let b = params.upper_bound();
        let (n, pdf) = results_to_pdf(&results.regularized());
        let (s0, s1) = if model == EloModel::Normalized {
            let (_, var) = stats(&pdf)?;
            let sigma_pg = if results.is_pentanomial() {
                (2.0 * var).powf(0.5)
            } else {
                var.powf(0.5)
            };
            let to_score = |elo: f64| elo / NELO_PER_T * sigma_pg + 0.5;
            (to_score(elo0), to_score(elo1))
        } else {
            (score_from_elo(elo0), score_from_elo(elo1))
        };
        let (mu_llr, _) = drift_variance(&pdf, s0, s1, None)?;
        let mut llr = n * mu_llr;
        let mut t = n;
        let slope = llr / n;
        let clamped = llr > 1.03 * b || llr < 1.03 * a;
        if llr < a {
            t = a / slope;
            llr = a;
        } else if llr > b {
            t = b / slope;
            llr = b;
        }
        Ok(Self {
            a,
            b,
            pdf,
            s0,
            s1,
            llr,
            t,
            clamped,
        })
    }

    /// Probability of a worse outcome (faster fail, slower pass, or a pass turned into a
    /// fail) for a true logistic Elo of `elo`.
    fn outcome_prob(&self, elo: f64) -> Result<f64, StatsError> {
        let s = score_from_elo(elo);
        let (mu, var) = drift_variance(&self.pdf, self.s0, self.s1, Some(s))?;
        Brownian {
            a: self.a,
            b: self.b,
            mu,
            sigma: var.sqrt(),
        }
        .outcome_cdf(self.t, self.llr)
    }

    /// For each `p`, the Elo at which the observed outcome has probability `p` of being beaten
    /// (where the outcome probability falls through `1 − p`).
    ///
    /// As fishtest does, the search runs over logistic Elo in [−1000, 1000]: a scan on a 10 Elo
    /// grid finds the leftmost descending crossing, then Brent's method refines it. The
    /// outcome probability is only monotone while the small-Elo approximation holds; far from
    /// the bounds it dips and rises again, and the rising branch is spurious. A level never
    /// reached is pinned to the window's edge and marks the result as clamped.
    fn confidence_bounds(&mut self, ps: &[f64]) -> Result<Vec<f64>, StatsError> {
        const CLAMP: f64 = 1000.0;
        const STEP: f64 = 10.0;
        let (lo, hi) = (-CLAMP, CLAMP);
        let steps = ((hi - lo) / STEP).round() as u32;
        let levels: Vec<f64> = ps.iter().map(|p| 1.0 - p).collect();
        let mut bounds = vec![hi; ps.len()];
        let mut op_prev = self.outcome_prob(lo)?;
        let mut pending = Vec::new();
        for (i, &level) in levels.iter().enumerate() {
            if op_prev <= level {
                bounds[i] = lo;
                self.clamped = true;
            } else {
                pending.push(i);
            }
        }
        let mut x_prev = lo;
        for step in 1..=steps {
            if pending.is_empty() {
                break;
            }
            let x = lo + (hi - lo) * f64::from(step) / f64::from(steps);
            let op = self.outcome_prob(x)?;
            let mut still = Vec::new();
            for &i in &pending {
                let level = levels[i];
                if op_prev >= level && level > op {
                    bounds[i] = self.crossing(level, x_prev, x)?;
                } else {
                    still.push(i);
                }
            }
            pending = still;
            x_prev = x;
            op_prev = op;
        }
        if !pending.is_empty() {
            // Never reached inside the window: unbounded above.
            self.clamped = true;
        }
        Ok(bounds)
    }

    /// The Elo in `[lo, hi]` where the outcome probability equals `level`.
    fn crossing(&self, level: f64, lo: f64, hi: f64) -> Result<f64, StatsError> {
        // Errors inside the closure are kept aside: Brent only sees numbers.
        let mut inner: Option<StatsError> = None;
        let f = |elo: f64| match self.outcome_prob(elo) {
            Ok(v) => v - level,
            Err(e) => {
                inner.get_or_insert(e);
                f64::NAN
            }
        };
        let found = brentq(f, lo, hi);
        if let Some(e) = inner {
            return Err(e);
        }
        found.map_err(|e| StatsError::numerical("SPRT Elo bound", e.to_string()))
    }
}

/// fishtest's SPRT Elo estimate for `results` under the design `params`, with interval level
/// `1 − p` (fishtest uses p = 0.05).
pub fn sprt_elo(results: &Results, params: &SprtParams, p: f64) -> Result<SprtElo, StatsError> {
    params.validate()?;
    probability("p", p)?;
    results.require_games()?;
    let (model, elo0, elo1) = params.effective_bounds(results)?;
    let mut m = SprtModel::new(params, model, elo0, elo1, results)?;
    let bounds = m.confidence_bounds(&[0.5, p / 2.0, 1.0 - p / 2.0])?;
    let (elo, ci) = (bounds[0], [bounds[1], bounds[2]]);
    let los = m.outcome_prob(0.0)?;
    // Like fishtest, report the exact LLR rather than its Brownian approximation.
    let llr = params.llr(results)?;
    Ok(SprtElo {
        elo,
        ci,
        los,
        llr,
        clamped: m.clamped,
    })
}
