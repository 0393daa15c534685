//! Randomised exponential backoff, reset on success: the jitter keeps a fleet that lost the
//! coordinator at once from coming back at once.

use std::time::Duration;

use rand::Rng;

/// Waits that double from `min` up to `max`, each drawn from half to one and a half times
/// the nominal value.
#[derive(Debug)]
pub(crate) struct Backoff {
    min: Duration,
    max: Duration,
    next: Duration,
}

impl Backoff {
    /// Reconnecting to the coordinator: quick at first, a minute at most.
    pub(crate) fn connect() -> Self {
        Self::new(Duration::from_millis(100), Duration::from_secs(60))
    }

    /// After a lease this worker could not play: the coordinator's `retry_after_ms` is the
    /// floor; this keeps a worker that fails every lease (a missing book, an engine that does
    /// not start) from taking and handing back leases in a tight loop, even when the
    /// coordinator sends no hint.
    pub(crate) fn lease_failure() -> Self {
        Self::new(Duration::from_secs(1), Duration::from_secs(300))
    }

    pub(crate) fn new(min: Duration, max: Duration) -> Self {
        Self {
            min,
            max,
            next: min,
        }
    }

    pub(crate) fn reset(&mut self) {
        self.next = self.min;
    }

    /// True once the nominal wait has reached the maximum.
    pub(crate) fn exhausted(&self) -> bool {
        self.next >= self.max
    }

    /// The next wait.
    pub(crate) fn step(&mut self) -> Duration {
        let jitter = rand::thread_rng().gen_range(0.5..1.5);
        let d = self.next.mul_f64(jitter);
        self.next = (self.next * 2).min(self.max);
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_to_the_maximum_and_resets() {
        let mut b = Backoff::new(Duration::from_secs(1), Duration::from_secs(8));
        let waits: Vec<Duration> = (0..6).map(|_| b.step()).collect();
        for (w, nominal) in waits.iter().zip([1u64, 2, 4, 8, 8, 8]) {
            let nominal = Duration::from_secs(nominal);
            assert!(*w >= nominal / 2 && *w <= nominal.mul_f64(1.5), "{w:?}");
        }
        assert!(b.exhausted());
        b.reset();
        assert!(!b.exhausted());
        assert!(b.step() <= Duration::from_millis(1500));
    }
}
