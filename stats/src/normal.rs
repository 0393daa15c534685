//! Standard normal CDF and quantile.
//!
//! fishtest uses SciPy's `norm.cdf` / `norm.ppf` (Cephes). For Φ we use the `libm` crate's
//! `erfc` (the fdlibm/musl algorithm, within 1 ulp, the same one CPython's `math.erfc` uses):
//! `statrs`' `erfc` is off by up to ~1e-10 relative (2e-12 at Φ⁻¹(0.975)), which is more than
//! we want when matching fishtest's doubles. For Φ⁻¹ we use `statrs`' `erfc_inv` (a port of
//! Boost's), which is within an ulp or two.

use libm::erfc;
use statrs::function::erf::erfc_inv;
use std::f64::consts::SQRT_2;

/// Φ(x): probability that a standard normal variable is at most `x`.
pub fn phi(x: f64) -> f64 {
    0.5 * erfc(-x / SQRT_2)
}

/// Φ⁻¹(p): the standard normal quantile of `p` (`p` in (0, 1)).
pub fn phi_inv(p: f64) -> f64 {
    -SQRT_2 * erfc_inv(2.0 * p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantile_and_cdf_agree() {
        let z = phi_inv(0.975);
        assert!((z - 1.959_963_984_540_054).abs() < 1e-15);
        assert!((phi(z) - 0.975).abs() < 1e-15, "{}", phi(z) - 0.975);
        assert!((phi_inv(0.025) + z).abs() < 1e-15);
        assert_eq!(phi(0.0), 0.5);
    }
}
