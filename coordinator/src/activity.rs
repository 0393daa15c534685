//! What the workers page shows of each registered worker: when it was last heard from and
//! how many games a minute it reports lately. Kept in memory only (it is a view of the last
//! minutes, not a record) and O(1) per call: a sliding one-minute window of two buckets.

use crate::ledger::WorkerId;
use std::collections::BTreeMap;

const MINUTE_MS: u64 = 60_000;

/// Games reported in the current and the previous whole minute.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Rate {
    bucket_start_ms: u64,
    this: u64,
    last: u64,
}

impl Rate {
    fn roll(&mut self, now_ms: u64) {
        let bucket = now_ms - now_ms % MINUTE_MS;
        if bucket == self.bucket_start_ms {
            return;
        }
        self.last = if bucket == self.bucket_start_ms + MINUTE_MS {
            self.this
        } else {
            0
        };
        self.this = 0;
        self.bucket_start_ms = bucket;
    }

    /// Count `games` reported at `now_ms`.
    pub fn add(&mut self, games: u64, now_ms: u64) {
        if now_ms < self.bucket_start_ms {
            // A clock step backwards: count it in the current bucket.
            self.this += games;
            return;
        }
        self.roll(now_ms);
        self.this += games;
    }

    /// Games in the last sixty seconds, estimated: the previous minute weighted by how much
    /// of it the window still covers, plus the current minute.
    pub fn per_minute(&self, now_ms: u64) -> f64 {
        let mut r = *self;
        if now_ms >= r.bucket_start_ms {
            r.roll(now_ms);
        }
        let into = (now_ms.saturating_sub(r.bucket_start_ms)) as f64 / MINUTE_MS as f64;
        r.last as f64 * (1.0 - into.min(1.0)) + r.this as f64
    }
}

/// One worker's activity.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Activity {
    /// Last call from it, Unix ms.
    pub last_seen_ms: u64,
    /// Games it reported lately.
    pub rate: Rate,
}

/// Activity per registered worker.
#[derive(Debug, Clone, Default)]
pub struct Activities {
    by_worker: BTreeMap<WorkerId, Activity>,
}

impl Activities {
    /// A call from `worker` that reported `games` new games.
    pub fn seen(&mut self, worker: WorkerId, games: u64, now_ms: u64) {
        let a = self.by_worker.entry(worker).or_default();
        a.last_seen_ms = a.last_seen_ms.max(now_ms);
        if games > 0 {
            a.rate.add(games, now_ms);
        }
    }

    /// A worker's activity, if it called since the coordinator started.
    pub fn get(&self, worker: WorkerId) -> Option<&Activity> {
        self.by_worker.get(&worker)
    }

    /// Forget workers that are no longer registered.
    pub fn retain(&mut self, mut keep: impl FnMut(WorkerId) -> bool) {
        self.by_worker.retain(|w, _| keep(*w));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_counts_the_last_minute() {
        let mut r = Rate::default();
        let t0 = 10 * MINUTE_MS;
        r.add(30, t0 + 1_000);
        r.add(30, t0 + 59_000);
        assert_eq!(r.per_minute(t0 + 59_999), 60.0);
        // Half-way into the next minute, half of the previous one still counts.
        assert!((r.per_minute(t0 + MINUTE_MS + 30_000) - 30.0).abs() < 1e-9);
        r.add(10, t0 + MINUTE_MS + 30_000);
        assert!((r.per_minute(t0 + MINUTE_MS + 30_000) - 40.0).abs() < 1e-9);
        // Silence for two minutes: nothing.
        assert_eq!(r.per_minute(t0 + 3 * MINUTE_MS + 1), 0.0);
        // A gap of more than a minute does not carry old games forward.
        r.add(5, t0 + 5 * MINUTE_MS);
        assert_eq!(r.per_minute(t0 + 5 * MINUTE_MS), 5.0);
    }

    #[test]
    fn clock_steps_back_do_not_panic_or_lose_games() {
        let mut r = Rate::default();
        r.add(4, 5 * MINUTE_MS);
        r.add(6, 4 * MINUTE_MS);
        assert_eq!(r.per_minute(5 * MINUTE_MS), 10.0);
        assert!(r.per_minute(0) >= 0.0);
    }

    #[test]
    fn seen_keeps_the_latest_time() {
        let mut a = Activities::default();
        a.seen(3, 0, 100);
        a.seen(3, 2, 50);
        let got = a.get(3).copied().unwrap_or_default();
        assert_eq!(got.last_seen_ms, 100);
        a.retain(|w| w != 3);
        assert!(a.get(3).is_none());
    }
}
