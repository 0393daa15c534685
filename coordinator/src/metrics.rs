//! Prometheus text metrics: games, workers, leases, queue depth, commit latency.

use crate::actor::CoreHandle;
use crate::error::CoreError;
use std::fmt::Write;
use std::time::Instant;

/// Metrics renderer (start time for rates).
#[derive(Debug, Clone)]
pub struct Metrics {
    started: Instant,
}

impl Default for Metrics {
    fn default() -> Self {
        Self {
            started: Instant::now(),
        }
    }
}

impl Metrics {
    /// The exposition text.
    pub async fn render(&self, core: &CoreHandle) -> Result<String, CoreError> {
        let (counters, (workers, leases, queue)) =
            core.call(|c| Ok((c.counters.clone(), c.gauges()))).await?;
        let uptime = self.started.elapsed().as_secs_f64().max(1e-9);
        let mut s = String::new();
        let mut metric = |name: &str, kind: &str, help: &str, value: f64| {
            let _ = writeln!(
                s,
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}"
            );
        };
        metric(
            "cluster_games_total",
            "counter",
            "Games counted since the coordinator started.",
            counters.games as f64,
        );
        metric(
            "cluster_games_per_second",
            "gauge",
            "Games counted per second since start.",
            counters.games as f64 / uptime,
        );
        metric(
            "cluster_workers",
            "gauge",
            "Workers holding an active lease.",
            workers as f64,
        );
        metric(
            "cluster_leases_outstanding",
            "gauge",
            "Active leases.",
            leases as f64,
        );
        metric(
            "cluster_leases_expired_total",
            "counter",
            "Leases expired since start.",
            counters.leases_expired as f64,
        );
        metric(
            "cluster_queue_pairs",
            "gauge",
            "Pairs of active runs waiting to be leased.",
            queue as f64,
        );
        metric(
            "cluster_core_calls_total",
            "counter",
            "Operations run on the core thread since start.",
            counters.calls as f64,
        );
        metric(
            "cluster_reports_refused_total",
            "counter",
            "Reports refused as malformed, forged or over a limit since start.",
            counters.reports_refused as f64,
        );
        metric(
            "cluster_lease_failures_total",
            "counter",
            "Leases workers could not play, since start.",
            counters.lease_failures as f64,
        );
        metric(
            "cluster_commit_seconds_sum",
            "counter",
            "Total time spent in database commits.",
            counters.commit_seconds,
        );
        metric(
            "cluster_commit_seconds_count",
            "counter",
            "Database commits.",
            counters.commits as f64,
        );
        Ok(s)
    }
}
