//! A run's figures at a few hundred points of its progress: what the dashboard's charts (Elo
//! and LLR over games, SPSA parameters over iterations) are drawn from.
//!
//! Points are stored by the commit that carries a run past its next checkpoint (every
//! [`crate::run::history_step`] pairs), in the same transaction as the totals they copy, so a
//! chart never shows a figure that was not durable. Reading a run's history costs the same at
//! 10^6 pairs as at 10^3.

use crate::run::{history_step, Run};
use serde::{Deserialize, Serialize};
use stats::Pentanomial;

/// One point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Pairs done.
    pub pairs: u64,
    /// When, Unix ms.
    #[serde(default)]
    pub at_ms: u64,
    /// Pentanomial of the counted pairs (excluded workers left out at that time).
    pub pentanomial: [u64; 5],
    /// SPRT log-likelihood ratio (SPRT runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llr: Option<f64>,
    /// SPSA parameters (SPSA runs), in the config's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub theta: Vec<f64>,
}

impl Point {
    /// The run's figures now.
    pub fn of(run: &Run, pairs: u64, at_ms: u64) -> Self {
        Self {
            pairs,
            at_ms,
            pentanomial: run.totals.counted(&run.excluded).pentanomial.0,
            llr: run.sprt.as_ref().map(|s| s.llr()).filter(|v| v.is_finite()),
            theta: run
                .spsa
                .as_ref()
                .map(|s| s.theta().to_vec())
                .unwrap_or_default(),
        }
    }

    /// The pentanomial as the statistics crate's type.
    pub fn penta(&self) -> Pentanomial {
        Pentanomial(self.pentanomial)
    }
}

/// The pair count at which the point after one at `pairs` is due: the next multiple of the
/// step, or the run's last pair.
pub fn next_checkpoint(total: u64, pairs: u64) -> u64 {
    let next = (pairs / history_step(total) + 1) * history_step(total);
    if pairs < total {
        next.min(total)
    } else {
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoints_are_multiples_of_the_step_after_the_last_point() {
        assert_eq!(next_checkpoint(100, 0), 1);
        assert_eq!(next_checkpoint(100, 7), 8);
        assert_eq!(next_checkpoint(1_000_000, 0), 2500);
        assert_eq!(next_checkpoint(1_000_000, 2500), 5000);
        assert_eq!(next_checkpoint(1_000_000, 4999), 5000);
        // The last pair always gets its point.
        assert_eq!(next_checkpoint(1001, 1000), 1001);
        // A run never has more than HISTORY_POINTS points from checkpoints.
        let total = 123_457;
        let mut n = 0;
        let mut at = 0;
        while at <= total {
            at = next_checkpoint(total, at);
            n += 1;
        }
        assert!(n <= crate::run::HISTORY_POINTS + 2, "{n}");
    }

    #[test]
    fn points_round_trip_and_old_fields_default() {
        let p = Point {
            pairs: 5,
            at_ms: 9,
            pentanomial: [1, 2, 3, 4, 5],
            llr: Some(0.5),
            theta: vec![1.0, 2.0],
        };
        let s = serde_json::to_string(&p).unwrap_or_default();
        assert_eq!(serde_json::from_str::<Point>(&s).ok(), Some(p));
        let bare: Point = serde_json::from_str(r#"{"pairs":1,"pentanomial":[0,0,1,0,0]}"#)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(bare.llr, None);
        assert!(bare.theta.is_empty());
    }
}
