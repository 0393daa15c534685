//! The reports of one lease: which finished pairs go in which report.
//!
//! Rules (the API's `SubmitRequest`):
//! * a report carries only pairs no earlier report of the lease carried, at most
//!   `proto::limits::PAIRS_PER_REPORT`;
//! * reports are numbered 1, 2, 3, ... per lease, and a new number is taken only once the
//!   previous report was acknowledged: never two reports of a lease in flight;
//! * a report that did not get through is sent again with the same number and the same pairs
//!   (the coordinator answers a repeat of a committed one as `duplicate`);
//! * pairs that finish while a report is in flight wait, and go together in the next one;
//! * while the lease still has pairs to play, a report waits up to a linger
//!   ([`DEFAULT_LINGER`] unless the worker says otherwise) after its first
//!   pair finished for others to join it (as a group commit batches writes): fast games
//!   (a 10-node match finishes a pair every few milliseconds) then cost one report and one
//!   commit per batch of pairs instead of one per pair, and slow games lose at most that
//!   much time.
//!
//! [`Outbox`] is the bookkeeping, with no I/O; [`deliver`] sends one report: spool it, submit
//! it (retrying transient errors), mark it acknowledged.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use proto::limits::PAIRS_PER_REPORT;
use proto::v1 as pb;
use tonic::{Code, Status};

use super::spool::SharedSpool;
use super::{Client, Stage};

/// Longest a finished pair waits by default for others to join its report while the lease
/// plays on. Real games take seconds to minutes, so two seconds costs them nothing; a
/// 1,000-node SPSA quickstart writes 9 KB per game with it against 16 KB with 500 ms.
pub const DEFAULT_LINGER: Duration = Duration::from_secs(2);

/// Finished pairs of a lease not yet acknowledged, and the report numbers used so far.
#[derive(Debug)]
pub(crate) struct Outbox {
    worker_id: u64,
    lease_id: u64,
    /// Pairs in no report yet, in the order they finished.
    waiting: VecDeque<pb::PairResult>,
    /// When the oldest waiting pair finished.
    waiting_since: Option<Instant>,
    /// How long the oldest waiting pair may wait for company.
    linger: Duration,
    /// Number of the last report made (0 before the first).
    last_seq: u64,
    /// Pairs of the report in flight; `None` when none is.
    in_flight: Option<usize>,
    /// Pairs of acknowledged reports.
    acknowledged: usize,
}

impl Outbox {
    pub(crate) fn new(worker_id: u64, lease_id: u64) -> Self {
        Self {
            worker_id,
            lease_id,
            waiting: VecDeque::new(),
            waiting_since: None,
            linger: DEFAULT_LINGER,
            last_seq: 0,
            in_flight: None,
            acknowledged: 0,
        }
    }

    /// Let pairs wait at most `linger` for company.
    pub(crate) fn with_linger(mut self, linger: Duration) -> Self {
        self.linger = linger;
        self
    }

    /// A pair finished.
    pub(crate) fn push(&mut self, pair: pb::PairResult) {
        self.push_at(pair, Instant::now());
    }

    fn push_at(&mut self, pair: pb::PairResult, now: Instant) {
        self.waiting_since.get_or_insert(now);
        self.waiting.push_back(pair);
    }

    /// Until when the next report should wait for more pairs, while more may come: `None`
    /// when it should go now (a full report waits, or the oldest waited the linger) or when
    /// nothing waits.
    pub(crate) fn hold_until(&self, now: Instant) -> Option<Instant> {
        if self.waiting.len() >= PAIRS_PER_REPORT {
            return None;
        }
        let until = self.waiting_since? + self.linger;
        (until > now).then_some(until)
    }

    /// The next report to send, when none is in flight and pairs wait: the oldest waiting
    /// pairs, at most a report's worth, under the next number.
    pub(crate) fn next_report(&mut self) -> Option<pb::SubmitRequest> {
        if self.in_flight.is_some() {
            return None;
        }
        let req = self.take_report()?;
        self.in_flight = Some(req.pairs.len());
        Some(req)
    }

    /// The report in flight was acknowledged (committed now or before).
    pub(crate) fn acknowledged(&mut self) {
        self.acknowledged += self.in_flight.take().unwrap_or(0);
    }

    /// The lease is gone: drop the report in flight and the waiting pairs; how many pairs
    /// that was.
    pub(crate) fn abandon(&mut self) -> usize {
        let dropped = self.in_flight.take().unwrap_or(0) + self.waiting.len();
        self.waiting.clear();
        dropped
    }

    /// The waiting pairs as the reports that follow the one in flight, for the spool when the
    /// connection is lost: the next session sends them after it.
    pub(crate) fn drain_reports(&mut self) -> Vec<pb::SubmitRequest> {
        std::iter::from_fn(|| self.take_report()).collect()
    }

    /// Nothing waits and nothing is in flight.
    pub(crate) fn idle(&self) -> bool {
        self.in_flight.is_none() && self.waiting.is_empty()
    }

    /// Pairs acknowledged so far.
    pub(crate) fn acknowledged_pairs(&self) -> usize {
        self.acknowledged
    }

    fn take_report(&mut self) -> Option<pb::SubmitRequest> {
        if self.waiting.is_empty() {
            return None;
        }
        let n = self.waiting.len().min(PAIRS_PER_REPORT);
        self.last_seq += 1;
        // What stays behind has waited since the report was made, at the latest.
        self.waiting_since = (self.waiting.len() > n).then(Instant::now);
        Some(pb::SubmitRequest {
            worker_id: self.worker_id,
            lease_id: self.lease_id,
            seq: self.last_seq,
            pairs: self.waiting.drain(..n).collect(),
        })
    }
}

/// How sending a report ended.
#[derive(Debug)]
pub(crate) enum Delivery {
    /// Committed, now or before (a repeat); no longer in the spool.
    Acknowledged(pb::SubmitResponse),
    /// The lease is no longer this worker's (expired, released, revoked, unknown); its
    /// reports were dropped from the spool.
    LeaseGone(Status),
    /// The coordinator refused the report as malformed; the lease's reports were dropped
    /// from the spool, since later ones cannot be committed without this one.
    Refused(Status),
    /// It did not get through; the report stays in the spool (unless spooling it failed).
    Failed(Status),
}

/// Whether a submit error says the lease is no longer this worker's (expired, released,
/// revoked, unknown, another worker's).
pub(crate) fn lease_gone(s: &Status) -> bool {
    matches!(
        s.code(),
        Code::FailedPrecondition | Code::NotFound | Code::PermissionDenied
    )
}

/// Whether a submit error refuses the report itself (malformed, over a limit, a pair reported
/// before): sending it again cannot help.
pub(crate) fn report_refused(s: &Status) -> bool {
    s.code() == Code::InvalidArgument
}

/// Send one report: on disk first, then submitted (the same request on every retry), then
/// marked acknowledged.
pub(crate) async fn deliver(
    mut client: Client,
    spool: SharedSpool,
    req: pb::SubmitRequest,
    mut stage: Stage,
) -> Delivery {
    let (lease, seq) = (req.lease_id, req.seq);
    let indices: Vec<u64> = req.pairs.iter().map(|p| p.index).collect();
    let spooled = req.clone();
    if let Err(e) = spool.with(move |s| s.append(&spooled)).await {
        return Delivery::Failed(Status::internal(format!("cannot spool the report: {e}")));
    }
    let outcome = super::submit_with_retry(&mut client, req, &mut stage).await;
    let (delivery, forget) = match outcome {
        Ok(resp) => {
            // What the coordinator now holds for good: the multi-host test checks it.
            tracing::debug!(lease, seq, pairs = ?indices, "report acknowledged");
            (Delivery::Acknowledged(resp), false)
        }
        Err(s) if lease_gone(&s) => (Delivery::LeaseGone(s), true),
        Err(s) if report_refused(&s) => (Delivery::Refused(s), true),
        Err(s) => return Delivery::Failed(s),
    };
    let done = spool
        .with(move |s| {
            if forget {
                s.forget(lease)
            } else {
                s.ack(lease, seq)
            }
        })
        .await;
    // Not fatal: what stays in the spool is sent again at the next start, and answered as a
    // repeat (or refused again).
    if let Err(e) = done {
        tracing::warn!(error = %e, seq, "cannot record the answer in the spool");
    }
    delivery
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    fn pair(index: u64) -> pb::PairResult {
        pb::PairResult {
            index,
            ..Default::default()
        }
    }

    fn indices(r: &pb::SubmitRequest) -> Vec<u64> {
        r.pairs.iter().map(|p| p.index).collect()
    }

    #[test]
    fn a_report_lingers_for_company_until_full_or_old() {
        let t0 = Instant::now();
        let mut o = Outbox::new(7, 3);
        assert_eq!(o.hold_until(t0), None, "nothing waits: nothing to hold");
        o.push_at(pair(0), t0);
        assert_eq!(o.hold_until(t0), Some(t0 + DEFAULT_LINGER));
        o.push_at(pair(1), t0 + DEFAULT_LINGER / 2);
        // The oldest pair sets the time.
        assert_eq!(
            o.hold_until(t0 + DEFAULT_LINGER / 2),
            Some(t0 + DEFAULT_LINGER)
        );
        assert_eq!(o.hold_until(t0 + DEFAULT_LINGER), None);
        let r = o.next_report().expect("a report");
        assert_eq!(indices(&r), [0, 1]);
        o.acknowledged();
        assert_eq!(o.hold_until(t0 + DEFAULT_LINGER), None, "nothing waits");
        // A full report goes at once.
        for i in 0..PAIRS_PER_REPORT as u64 {
            o.push_at(pair(10 + i), t0 + DEFAULT_LINGER);
        }
        assert_eq!(o.hold_until(t0 + DEFAULT_LINGER), None);
        // One more than a report holds: the rest waits from when the first went.
        o.push_at(pair(9_999), t0 + DEFAULT_LINGER);
        let r = o.next_report().expect("a report");
        assert_eq!(r.pairs.len(), PAIRS_PER_REPORT);
        let left = o.hold_until(Instant::now()).expect("one pair waits");
        assert!(left > t0 + DEFAULT_LINGER);
    }

    #[test]
    fn one_report_in_flight_and_the_rest_grouped_into_the_next() {
        let mut o = Outbox::new(7, 3);
        assert!(o.idle());
        assert!(o.next_report().is_none());
        o.push(pair(0));
        let r1 = o.next_report().expect("a report");
        assert_eq!((r1.worker_id, r1.lease_id, r1.seq), (7, 3, 1));
        assert_eq!(indices(&r1), [0]);
        // Pairs finishing meanwhile wait.
        for i in 1..4 {
            o.push(pair(i));
            assert!(o.next_report().is_none());
        }
        assert!(!o.idle());
        o.acknowledged();
        let r2 = o.next_report().expect("a report");
        assert_eq!(r2.seq, 2);
        assert_eq!(indices(&r2), [1, 2, 3]);
        o.acknowledged();
        assert!(o.idle());
        assert_eq!(o.acknowledged_pairs(), 4);
        assert!(o.next_report().is_none());
    }

    #[test]
    fn a_report_holds_at_most_the_limit() {
        let mut o = Outbox::new(1, 1);
        let n = 2 * PAIRS_PER_REPORT as u64 + 5;
        for i in 0..n {
            o.push(pair(i));
        }
        let mut seen = BTreeSet::new();
        let mut seqs = Vec::new();
        while let Some(r) = o.next_report() {
            assert!(r.pairs.len() <= PAIRS_PER_REPORT);
            for p in &r.pairs {
                assert!(seen.insert(p.index), "pair {} twice", p.index);
            }
            seqs.push(r.seq);
            o.acknowledged();
        }
        assert_eq!(seqs, [1, 2, 3]);
        assert_eq!(seen.len() as u64, n);
        assert_eq!(o.acknowledged_pairs() as u64, n);
    }

    #[test]
    fn waiting_pairs_are_numbered_after_the_report_in_flight() {
        let mut o = Outbox::new(1, 1);
        o.push(pair(0));
        assert_eq!(o.next_report().expect("report").seq, 1);
        for i in 1..=(PAIRS_PER_REPORT as u64 + 1) {
            o.push(pair(i));
        }
        let rest = o.drain_reports();
        let seqs: Vec<u64> = rest.iter().map(|r| r.seq).collect();
        assert_eq!(seqs, [2, 3]);
        assert_eq!(rest[0].pairs.len(), PAIRS_PER_REPORT);
        assert_eq!(indices(&rest[1]), [PAIRS_PER_REPORT as u64 + 1]);
        // Still nothing new while report 1 is in flight.
        assert!(o.next_report().is_none());
    }

    #[test]
    fn abandoning_drops_everything() {
        let mut o = Outbox::new(1, 1);
        o.push(pair(0));
        o.next_report().expect("report");
        o.push(pair(1));
        assert_eq!(o.abandon(), 2);
        assert!(o.idle());
        assert_eq!(o.acknowledged_pairs(), 0);
    }
}
