//! Brownian motion with drift between two absorbing barriers (fishtest's `brownian.py`).
//!
//! Used to turn a stopped (or running) SPRT into a median-unbiased Elo estimate: the LLR is
//! modelled as such a motion, and we ask how likely an outcome "worse" than the observed one is.

use crate::error::StatsError;
use crate::normal::phi;
use std::f64::consts::PI;

/// A Brownian motion started at 0 with drift `mu` and standard deviation `sigma` per unit time,
/// absorbed at `a < 0 < b`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Brownian {
    pub(crate) a: f64,
    pub(crate) b: f64,
    pub(crate) mu: f64,
    pub(crate) sigma: f64,
}

/// A primitive of e^(γy) sin(nπy/A), times 2/A · e^(−γy).
fn u(n: f64, gamma: f64, a: f64, y: f64) -> f64 {
    (2.0 * a * gamma * (PI * n * y / a).sin() - 2.0 * PI * n * (PI * n * y / a).cos())
        / (a.powi(2) * gamma.powi(2) + PI.powi(2) * n.powi(2))
}

impl Brownian {
    fn sigma2(&self) -> f64 {
        self.sigma.powi(2)
    }

    /// Probability that the path passes to the right of `(t, y)` (time axis vertical), i.e.
    /// ends with a "worse" outcome than stopping at LLR `y` after time `t`.
    pub(crate) fn outcome_cdf(&self, t: f64, y: f64) -> Result<f64, StatsError> {
        let sigma2 = self.sigma2();
        let gamma = self.mu / sigma2;
        let a = self.b - self.a;
        let ret = if sigma2 * t / a.powi(2) < 1e-2 || (gamma * a).abs() > 15.0 {
            self.outcome_cdf_siegmund(t, y)
        } else {
            self.outcome_cdf_series(t, y)?
        };
        if (-1e-3..=1.0 + 1e-3).contains(&ret) {
            Ok(ret)
        } else {
            Err(StatsError::numerical(
                "Brownian outcome probability",
                format!("{ret} is not a probability"),
            ))
        }
    }

    /// Exact series solution (slow to converge for short times).
    fn outcome_cdf_series(&self, t: f64, y: f64) -> Result<f64, StatsError> {
        const MAX_TERMS: u32 = 1_000_000;
        let mu = self.mu;
        let sigma2 = self.sigma2();
        let a = self.b - self.a;
        let x = 0.0 - self.a;
        let y = y - self.a;
        let gamma = mu / sigma2;
        let mut s = 0.0;
        let lambda_1 = (PI / a).powi(2) * sigma2 / 2.0 + (mu.powi(2) / sigma2) / 2.0;
        let t0 = (-lambda_1 * t - x * gamma + y * gamma).exp();
        let mut n = 1u32;
        loop {
            let nf = f64::from(n);
            let lambda_n = (nf * PI / a).powi(2) * sigma2 / 2.0 + (mu.powi(2) / sigma2) / 2.0;
            let t1 = (-(lambda_n - lambda_1) * t).exp();
            let t3 = u(nf, gamma, a, y);
            let t4 = (nf * PI * x / a).sin();
            s += t1 * t3 * t4;
            if (t0 * t1 * t3).abs() <= 1e-9 {
                break;
            }
            n += 1;
            if n > MAX_TERMS {
                return Err(StatsError::numerical(
                    "Brownian outcome probability",
                    "the series did not converge",
                ));
            }
        }
        let pre = if gamma * a > 30.0 {
            // Avoid overflow.
            (-2.0 * gamma * x).exp()
        } else if (gamma * a).abs() < 1e-8 {
            // Avoid 0/0.
            (a - x) / a
        } else {
            (1.0 - (2.0 * gamma * (a - x)).exp()) / (1.0 - (2.0 * gamma * a).exp())
        };
        Ok(pre + t0 * s)
    }

    /// Siegmund's approximation, with the asymptotic expansion of Φ in the tails.
    fn outcome_cdf_siegmund(&self, t: f64, y: f64) -> f64 {
        let sigma2 = self.sigma2();
        let denom = (t * sigma2).sqrt();
        let offset = self.mu * t;
        let gamma = self.mu / sigma2;
        let (a, b) = (self.a, self.b);
        let z = (y - offset) / denom;
        let za = (-y + offset + 2.0 * a) / denom;
        let zb = (y - offset - 2.0 * b) / denom;
        let t1 = phi(z);
        let tail = |zz: f64, g: f64| {
            -(-(zz.powi(2)) / 2.0 + 2.0 * g).exp() / (2.0 * PI).sqrt()
                * (1.0 / zz - 1.0 / zz.powi(3))
        };
        let t2 = if gamma * a >= 5.0 {
            tail(za, gamma * a)
        } else {
            (2.0 * gamma * a).exp() * phi(za)
        };
        let t3 = if gamma * b >= 5.0 {
            tail(zb, gamma * b)
        } else {
            (2.0 * gamma * b).exp() * phi(zb)
        };
        t1 + t2 - t3
    }
}
