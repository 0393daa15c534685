//! Discrete score distributions and the maximum-likelihood fits behind the GSPRT.
//!
//! A distribution is a list of `(value, probability)` pairs, values ascending (fishtest's
//! "pdf"). The functions mirror `LLRcalc.py` operation for operation (same summation order,
//! same expression shapes), because the shared vectors are fishtest's doubles and a different
//! but mathematically equal formula would drift by more than the suggested 1e-9 in places
//! (e.g. the normalised-Elo fixed-point iteration, which stops after a data-dependent number of
//! rounds).

use crate::brent::brentq;
use crate::error::StatsError;

/// A discrete distribution: `(value, probability)` pairs, values ascending.
pub(crate) type Pdf = Vec<(f64, f64)>;

/// Mean and variance of a distribution (fishtest's `stats`), with its sanity checks.
pub(crate) fn stats(pdf: &[(f64, f64)]) -> Result<(f64, f64), StatsError> {
    const EPS: f64 = 1e-6;
    if pdf.iter().any(|&(_, p)| !(-EPS..=1.0 + EPS).contains(&p)) {
        return Err(StatsError::numerical(
            "stats",
            "a probability lies outside [0, 1]",
        ));
    }
    let n: f64 = pdf.iter().map(|&(_, p)| p).sum();
    if (n - 1.0).abs() >= EPS {
        return Err(StatsError::numerical(
            "stats",
            format!("the fitted probabilities add up to {n}, not 1 (results this one-sided cannot be fitted)"),
        ));
    }
    let s: f64 = pdf.iter().map(|&(v, p)| p * v).sum();
    let var: f64 = pdf.iter().map(|&(v, p)| p * (v - s).powi(2)).sum();
    Ok((s, var))
}

/// Mean, variance, skewness and excess kurtosis (fishtest's `stats_ex`).
pub(crate) fn stats_ex(pdf: &[(f64, f64)]) -> Result<(f64, f64, f64, f64), StatsError> {
    let (s, var) = stats(pdf)?;
    let m3: f64 = pdf.iter().map(|&(v, p)| p * (v - s).powi(3)).sum();
    let m4: f64 = pdf.iter().map(|&(v, p)| p * (v - s).powi(4)).sum();
    let skewness = m3 / var.powf(1.5);
    let exkurt = m4 / var.powi(2) - 3.0;
    Ok((s, var, skewness, exkurt))
}

/// Regularised counts → `(N, pdf)` with values `i / (m − 1)` (fishtest's `results_to_pdf`).
pub(crate) fn results_to_pdf(regularized: &[f64]) -> (f64, Pdf) {
    let n: f64 = regularized.iter().sum();
    let m = regularized.len();
    let denom = (m - 1) as f64;
    let pdf = regularized
        .iter()
        .enumerate()
        .map(|(i, &c)| (i as f64 / denom, c / n))
        .collect();
    (n, pdf)
}

/// Solve the secular equation `Σ pᵢ aᵢ / (1 + x aᵢ) = 0` for `x`, between the two poles.
///
/// Its root gives the maximum-likelihood distribution under a linear constraint (see
/// fishtest's `LLRcalc.secular`); the bracket is narrowed by 1e-9 at both ends, as fishtest does.
pub(crate) fn secular(pdf: &[(f64, f64)]) -> Result<f64, StatsError> {
    const EPS: f64 = 1e-9;
    let v = pdf.iter().map(|&(a, _)| a).fold(f64::INFINITY, f64::min);
    let w = pdf
        .iter()
        .map(|&(a, _)| a)
        .fold(f64::NEG_INFINITY, f64::max);
    if v * w >= 0.0 || v.is_nan() || w.is_nan() {
        return Err(StatsError::numerical(
            "secular equation",
            "the constraint values do not change sign (the hypothesis lies outside the possible scores)",
        ));
    }
    let lower = -1.0 / w;
    let upper = -1.0 / v;
    let f = |x: f64| -> f64 { pdf.iter().map(|&(a, p)| p * a / (1.0 + x * a)).sum() };
    brentq(f, lower + EPS, upper - EPS)
        .map_err(|e| StatsError::numerical("secular equation", e.to_string()))
}

/// Maximum-likelihood distribution on the same values with expectation `s`
/// (fishtest's `MLE_expected`).
pub(crate) fn mle_expected(pdfhat: &[(f64, f64)], s: f64) -> Result<Pdf, StatsError> {
    let shifted: Pdf = pdfhat.iter().map(|&(a, p)| (a - s, p)).collect();
    let x = secular(&shifted)?;
    let mle: Pdf = pdfhat
        .iter()
        .map(|&(a, p)| (a, p / (1.0 + x * (a - s))))
        .collect();
    let (s_, _) = stats(&mle)?;
    if (s - s_).abs() >= 1e-6 {
        return Err(StatsError::numerical(
            "MLE with given expectation",
            format!("fitted mean {s_} differs from {s}"),
        ));
    }
    Ok(mle)
}

/// Maximum-likelihood distribution on the same values with t-value `(μ − ref)/σ = t`
/// (fishtest's `MLE_t_value`): a fixed-point iteration from the uniform distribution that
/// linearises the constraint at the current μ, σ, at most 10 rounds, stopping when no
/// probability moves by 1e-9 or more.
pub(crate) fn mle_t_value(
    pdfhat: &[(f64, f64)],
    reference: f64,
    t: f64,
) -> Result<Pdf, StatsError> {
    let n = pdfhat.len();
    let mut mle: Pdf = pdfhat.iter().map(|&(a, _)| (a, 1.0 / n as f64)).collect();
    for _ in 0..10 {
        let previous = mle.clone();
        let (mu, var) = stats(&mle)?;
        let sigma = var.powf(0.5);
        let linearized: Pdf = pdfhat
            .iter()
            .map(|&(a, p)| {
                (
                    a - reference - t * sigma * (1.0 + ((mu - a) / sigma).powi(2)) / 2.0,
                    p,
                )
            })
            .collect();
        let x = secular(&linearized)?;
        mle = pdfhat
            .iter()
            .zip(&linearized)
            .map(|(&(a, p), &(a1, _))| (a, p / (1.0 + x * a1)))
            .collect();
        let moved = previous
            .iter()
            .zip(&mle)
            .map(|(&(_, p0), &(_, p1))| (p0 - p1).abs())
            .fold(0.0, f64::max);
        if moved < 1e-9 {
            break;
        }
    }
    let (mu, var) = stats(&mle)?;
    let got = (mu - reference) / var.powf(0.5);
    if (t - got).abs() >= 1e-5 {
        return Err(StatsError::numerical(
            "MLE with given t-value",
            format!("fitted t-value {got} differs from {t}"),
        ));
    }
    Ok(mle)
}

/// The constraint that defines a hypothesis in the GSPRT.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Hypothesis {
    /// The expected score equals this value (logistic Elo).
    Expectation(f64),
    /// `(μ − ½)/σ` equals this value (normalised Elo).
    TValue(f64),
}

impl Hypothesis {
    fn mle(self, pdf: &[(f64, f64)]) -> Result<Pdf, StatsError> {
        match self {
            Self::Expectation(s) => mle_expected(pdf, s),
            Self::TValue(t) => mle_t_value(pdf, 0.5, t),
        }
    }
}

/// The log-likelihood-ratio increment of each outcome, `ln q¹ᵢ − ln q⁰ᵢ`, paired with the
/// observed probability (fishtest's `LLRjumps`).
pub(crate) fn llr_jumps(
    pdf: &[(f64, f64)],
    h0: Hypothesis,
    h1: Hypothesis,
) -> Result<Pdf, StatsError> {
    let pdf0 = h0.mle(pdf)?;
    let pdf1 = h1.mle(pdf)?;
    Ok(pdf
        .iter()
        .zip(pdf0.iter().zip(&pdf1))
        .map(|(&(_, p), (&(_, q0), &(_, q1)))| (q1.ln() - q0.ln(), p))
        .collect())
}

/// The generalised LLR per sample (fishtest's `LLR`).
pub(crate) fn llr_per_sample(
    pdf: &[(f64, f64)],
    h0: Hypothesis,
    h1: Hypothesis,
) -> Result<f64, StatsError> {
    Ok(stats(&llr_jumps(pdf, h0, h1)?)?.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mle_expected_hits_the_mean() {
        let (_, pdf) = results_to_pdf(&[10.0, 20.0, 30.0]);
        let q = mle_expected(&pdf, 0.55).unwrap();
        let (s, _) = stats(&q).unwrap();
        assert!((s - 0.55).abs() < 1e-9);
    }

    #[test]
    fn mle_t_value_hits_the_t_value() {
        let (_, pdf) = results_to_pdf(&[5.0, 30.0, 200.0, 400.0, 365.0]);
        let q = mle_t_value(&pdf, 0.5, 0.1).unwrap();
        let (mu, var) = stats(&q).unwrap();
        assert!(((mu - 0.5) / var.sqrt() - 0.1).abs() < 1e-5);
    }

    #[test]
    fn secular_rejects_one_signed_values() {
        assert!(secular(&[(0.1, 0.5), (0.2, 0.5)]).is_err());
    }
}
