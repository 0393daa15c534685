//! Latency histograms shared by every simulated worker.
//!
//! Log-linear buckets: exact below 16 µs, then 16 buckets per power of two, so a reported
//! percentile is within 1/16 (6.25%) of the true value whatever the range, in a fixed 976
//! counters. Recording is one relaxed atomic add, so a thousand workers share one histogram
//! per call kind without a lock; a [`Histogram`] is a snapshot of it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

const SUB_BITS: u32 = 4;
const SUB: usize = 1 << SUB_BITS;
const BUCKETS: usize = (64 - SUB_BITS as usize + 1) * SUB;

fn bucket(micros: u64) -> usize {
    if micros < SUB as u64 {
        return micros as usize;
    }
    let exp = 63 - micros.leading_zeros();
    let sub = (micros >> (exp - SUB_BITS)) as usize & (SUB - 1);
    (exp - SUB_BITS + 1) as usize * SUB + sub
}

/// Smallest value that falls in bucket `i`.
fn lower_bound(i: usize) -> u64 {
    if i < SUB {
        return i as u64;
    }
    let exp = (i / SUB) as u32 + SUB_BITS - 1;
    (1u64 << exp) | (((i % SUB) as u64) << (exp - SUB_BITS))
}

/// A histogram many tasks record into at once.
#[derive(Debug)]
pub struct AtomicHistogram {
    counts: Box<[AtomicU64]>,
    max: AtomicU64,
}

impl Default for AtomicHistogram {
    fn default() -> Self {
        Self {
            counts: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(),
            max: AtomicU64::new(0),
        }
    }
}

impl AtomicHistogram {
    /// Count one call that took `d`.
    pub fn record(&self, d: Duration) {
        let micros = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        self.counts[bucket(micros)].fetch_add(1, Ordering::Relaxed);
        self.max.fetch_max(micros, Ordering::Relaxed);
    }

    /// The counts so far.
    pub fn snapshot(&self) -> Histogram {
        Histogram {
            counts: self
                .counts
                .iter()
                .map(|c| c.load(Ordering::Relaxed))
                .collect(),
            max: self.max.load(Ordering::Relaxed),
        }
    }
}

/// A snapshot of an [`AtomicHistogram`].
#[derive(Debug, Clone, PartialEq)]
pub struct Histogram {
    counts: Vec<u64>,
    max: u64,
}

impl Histogram {
    /// Calls counted.
    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Slowest call.
    pub fn max(&self) -> Duration {
        Duration::from_micros(self.max)
    }

    /// The `q`-quantile (0 < q ≤ 1): the middle of the bucket holding the call of that rank,
    /// never above the slowest call; `None` without calls.
    pub fn quantile(&self, q: f64) -> Option<Duration> {
        let n = self.count();
        if n == 0 {
            return None;
        }
        let rank = ((q * n as f64).ceil() as u64).clamp(1, n);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let lo = lower_bound(i);
                let hi = if i + 1 < BUCKETS {
                    lower_bound(i + 1)
                } else {
                    u64::MAX
                };
                let mid = lo + (hi - lo) / 2;
                return Some(Duration::from_micros(mid.min(self.max)));
            }
        }
        Some(Duration::from_micros(self.max))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_contiguous_and_tight() {
        for i in 0..BUCKETS - 1 {
            let lo = lower_bound(i);
            assert_eq!(bucket(lo), i, "lower bound of bucket {i}");
            let hi = lower_bound(i + 1);
            assert!(hi > lo);
            assert_eq!(bucket(hi - 1), i, "upper end of bucket {i}");
            // Width at most 1/16 of the bucket's values.
            assert!((hi - lo) * 16 <= lo.max(16), "bucket {i}: [{lo}, {hi})");
        }
        assert_eq!(bucket(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn quantiles_are_within_the_bucket_precision() {
        let h = AtomicHistogram::default();
        for us in 1..=10_000u64 {
            h.record(Duration::from_micros(us));
        }
        let s = h.snapshot();
        assert_eq!(s.count(), 10_000);
        for (q, exact) in [(0.5, 5_000.0), (0.99, 9_900.0), (0.999, 9_990.0)] {
            let got = s.quantile(q).unwrap().as_micros() as f64;
            assert!(
                (got - exact).abs() <= exact / 16.0,
                "q {q}: {got} vs {exact}"
            );
        }
        assert_eq!(s.max(), Duration::from_micros(10_000));
        assert_eq!(AtomicHistogram::default().snapshot().quantile(0.5), None);
    }
}
