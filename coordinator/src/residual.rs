//! Bad-worker detection: fishtest's chi-square residual test (`util.get_chi2`).
//!
//! Each worker's pairs fall in three cells, `[WW + WD, LL + LD, the rest]` from the tested
//! engine's view. Under "every worker plays the same match" the table is homogeneous; each
//! worker's adjusted residuals (cell by cell, `(o − e) / √(e·(1 − row/N)·(1 − col/N))`) are
//! squared and summed, that sum is read as a chi-square with 2 degrees of freedom and turned
//! into a one-sided normal z-score. A worker is flagged when its z exceeds the Bonferroni
//! threshold `Φ⁻¹(1 − 0.01 / rows)`. Workers whose expected cells are 5 or less are not tested.

use stats::normal::phi_inv;

/// One worker's test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Residual {
    /// z-score (0 when untested).
    pub z: f64,
    /// Beyond the threshold.
    pub flagged: bool,
}

/// Cells of a pentanomial `[LL, LD, WL+DD, DW, WW]`: `[wins, losses, rest]`.
pub fn cells(p: [u64; 5]) -> [f64; 3] {
    [(p[3] + p[4]) as f64, (p[0] + p[1]) as f64, p[2] as f64]
}

/// Residuals of every row (same order as `rows`).
pub fn residuals(rows: &[[u64; 5]]) -> Vec<Residual> {
    let table: Vec<[f64; 3]> = rows.iter().map(|&p| cells(p)).collect();
    let untested = Residual {
        z: 0.0,
        flagged: false,
    };
    let n: f64 = table.iter().flatten().sum();
    let active = table.iter().filter(|r| r.iter().sum::<f64>() > 0.0).count();
    if n == 0.0 || active < 2 {
        return vec![untested; rows.len()];
    }
    let col: Vec<f64> = (0..3).map(|j| table.iter().map(|r| r[j]).sum()).collect();
    let threshold = phi_inv(1.0 - 0.01 / active as f64);
    table
        .iter()
        .map(|r| {
            let row: f64 = r.iter().sum();
            let mut sum = 0.0;
            for j in 0..3 {
                let e = row * col[j] / n;
                if e <= 5.0 {
                    return untested;
                }
                let adj = (r[j] - e) / (e * (1.0 - row / n) * (1.0 - col[j] / n)).sqrt();
                if adj.is_finite() {
                    sum += adj * adj;
                }
            }
            // Chi-square with 2 degrees of freedom: CDF 1 − exp(−x/2).
            let cdf = 1.0 - (-sum / 2.0).exp();
            let z = phi_inv(cdf.clamp(1e-15, 1.0 - 1e-15));
            Residual {
                z,
                flagged: z > threshold,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cheating_worker_is_flagged() {
        let honest = [20, 80, 200, 80, 20];
        let cheat = [2, 10, 40, 28, 20];
        let mut rows = vec![honest; 8];
        rows.push(cheat);
        let r = residuals(&rows);
        assert!(r[8].flagged, "{r:?}");
        assert!(r[..8].iter().all(|x| !x.flagged), "{r:?}");
    }

    #[test]
    fn small_or_single_workers_are_not_tested() {
        assert!(!residuals(&[[1, 2, 3, 2, 1]])[0].flagged);
        let r = residuals(&[[0, 1, 1, 1, 0], [10, 40, 100, 40, 10]]);
        assert_eq!(r[0].z, 0.0);
    }
}
