//! Brent's root finder, step for step as SciPy's `optimize.brentq`.
//!
//! fishtest finds every maximum-likelihood distribution and every SPRT-Elo bound with
//! `brentq` and its default tolerances. Reproducing the same iteration (same bracketing
//! updates, same inverse quadratic / secant steps, same stopping test) makes our roots land on
//! the same doubles as fishtest's, which is what lets us match its vectors to ~1e-12 rather
//! than merely to the solver tolerance. This is the classic algorithm (Brent 1973, in the
//! formulation of Charles Harris used by SciPy), written anew.

/// SciPy's default absolute tolerance for `brentq`.
pub(crate) const XTOL: f64 = 2e-12;
/// SciPy's default relative tolerance for `brentq` (4 machine epsilons).
pub(crate) const RTOL: f64 = 4.0 * f64::EPSILON;
/// SciPy's default iteration cap for `brentq`.
pub(crate) const MAXITER: usize = 100;

/// Why no root was returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BrentError {
    /// `f(a)` and `f(b)` have the same sign (SciPy raises `ValueError`).
    SameSign,
    /// The function returned NaN.
    NotANumber,
    /// The iteration cap was reached before the bracket was small enough.
    NoConvergence,
}

impl std::fmt::Display for BrentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::SameSign => "f(a) and f(b) have the same sign",
            Self::NotANumber => "the function returned NaN",
            Self::NoConvergence => "no convergence within the iteration cap",
        })
    }
}

/// Find a root of `f` in `[a, b]` with SciPy's default tolerances.
pub(crate) fn brentq<F: FnMut(f64) -> f64>(f: F, a: f64, b: f64) -> Result<f64, BrentError> {
    brentq_with(f, a, b, XTOL, RTOL, MAXITER)
}

/// Find a root of `f` in `[a, b]`.
pub(crate) fn brentq_with<F: FnMut(f64) -> f64>(
    mut f: F,
    a: f64,
    b: f64,
    xtol: f64,
    rtol: f64,
    maxiter: usize,
) -> Result<f64, BrentError> {
    let mut eval = |x: f64| {
        let y = f(x);
        if y.is_nan() {
            Err(BrentError::NotANumber)
        } else {
            Ok(y)
        }
    };
    // "pre" is the previous iterate, "cur" the current one and "blk" the point that keeps the
    // root bracketed together with "cur".
    let (mut xpre, mut xcur) = (a, b);
    let (mut xblk, mut fblk) = (0.0_f64, 0.0_f64);
    let (mut spre, mut scur) = (0.0_f64, 0.0_f64);
    let mut fpre = eval(xpre)?;
    let mut fcur = eval(xcur)?;
    if fpre * fcur > 0.0 {
        return Err(BrentError::SameSign);
    }
    if fpre == 0.0 {
        return Ok(xpre);
    }
    if fcur == 0.0 {
        return Ok(xcur);
    }
    for _ in 0..maxiter {
        if fpre * fcur < 0.0 {
            xblk = xpre;
            fblk = fpre;
            spre = xcur - xpre;
            scur = spre;
        }
        if fblk.abs() < fcur.abs() {
            // Keep the best estimate in "cur".
            xpre = xcur;
            xcur = xblk;
            xblk = xpre;
            fpre = fcur;
            fcur = fblk;
            fblk = fpre;
        }
        let delta = (xtol + rtol * xcur.abs()) / 2.0;
        let sbis = (xblk - xcur) / 2.0;
        if fcur == 0.0 || sbis.abs() < delta {
            return Ok(xcur);
        }
        if spre.abs() > delta && fcur.abs() < fpre.abs() {
            let stry = if xpre == xblk {
                // Secant step.
                -fcur * (xcur - xpre) / (fcur - fpre)
            } else {
                // Inverse quadratic extrapolation.
                let dpre = (fpre - fcur) / (xpre - xcur);
                let dblk = (fblk - fcur) / (xblk - xcur);
                -fcur * (fblk * dblk - fpre * dpre) / (dblk * dpre * (fblk - fpre))
            };
            if 2.0 * stry.abs() < spre.abs().min(3.0 * sbis.abs() - delta) {
                // The interpolation step is short enough to trust.
                spre = scur;
                scur = stry;
            } else {
                spre = sbis;
                scur = sbis;
            }
        } else {
            spre = sbis;
            scur = sbis;
        }
        xpre = xcur;
        fpre = fcur;
        if scur.abs() > delta {
            xcur += scur;
        } else {
            xcur += if sbis > 0.0 { delta } else { -delta };
        }
        fcur = eval(xcur)?;
    }
    Err(BrentError::NoConvergence)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_square_root_of_two() {
        let r = brentq(|x| x * x - 2.0, 0.0, 2.0).unwrap();
        assert!((r - std::f64::consts::SQRT_2).abs() < 1e-11);
    }

    #[test]
    fn reports_missing_bracket() {
        assert_eq!(
            brentq(|x| x * x + 1.0, -1.0, 1.0),
            Err(BrentError::SameSign)
        );
    }

    #[test]
    fn reports_nan() {
        assert_eq!(brentq(|_| f64::NAN, -1.0, 1.0), Err(BrentError::NotANumber));
    }
}
