//! Which pair indices of which run are where: queued, leased, reported.
//!
//! This is the exactly-once core of the coordinator, kept pure and synchronous (no I/O, no
//! clock: callers pass `now`). It holds only live state, so its size does not grow with a
//! run: each run's counters and queue of returned pairs, and the *active* leases. A lease
//! that ends (completed, expired, released, revoked) leaves the ledger and is handed to the
//! caller to store; the caller answers late calls about it from the database. Expiry pops a
//! deadline queue instead of scanning every lease. The storage layer persists
//! [`Ledger::records`] and the queue, and rebuilds the ledger with [`Ledger::restore`].
//!
//! Rules:
//! * a lease holds a set of pair indices of one run; lower indices are handed out first
//!   (returned pairs before fresh ones), so the SPRT's contiguous prefix fills early;
//! * reports are incremental and numbered: report `n + 1` follows report `n`; a number not
//!   above the last one is a repeat and changes nothing; a gap is refused, as is a pair
//!   outside the lease or reported before;
//! * a lease that is past its deadline, released or revoked takes no new report, and its
//!   unreported pairs go back to the queue: exactly those, so no index is lost or played
//!   twice.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use thiserror::Error;

/// Run id.
pub type RunId = u64;
/// Lease id.
pub type LeaseId = u64;
/// Worker id.
pub type WorkerId = u64;

/// Lifecycle of a lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LeaseState {
    /// Being played.
    Active,
    /// Every pair reported.
    Completed,
    /// The deadline passed without a heartbeat.
    Expired,
    /// Handed back by the worker.
    Released,
    /// Taken back by the coordinator (run stopped, worker excluded).
    Revoked,
}

impl LeaseState {
    /// Name stored in the database and shown to workers.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Completed => "completed",
            Self::Expired => "expired",
            Self::Released => "released",
            Self::Revoked => "revoked",
        }
    }

    /// Inverse of [`LeaseState::as_str`].
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "active" => Self::Active,
            "completed" => Self::Completed,
            "expired" => Self::Expired,
            "released" => Self::Released,
            "revoked" => Self::Revoked,
            _ => return None,
        })
    }
}

/// Why a lease operation was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LeaseError {
    /// No such lease.
    #[error("unknown lease {0}")]
    UnknownLease(LeaseId),
    /// The lease belongs to another worker.
    #[error("lease {0} is not held by this worker")]
    NotHolder(LeaseId),
    /// The lease is no longer valid.
    #[error("lease {lease} is {state} and takes no new reports")]
    NotValid {
        /// The lease.
        lease: LeaseId,
        /// Its state (`expired` also when the deadline passed and the sweep has not run).
        state: &'static str,
    },
    /// A reported pair is not one of the lease's.
    #[error("pair {index} is not part of lease {lease}")]
    PairNotInLease {
        /// The lease.
        lease: LeaseId,
        /// The pair index.
        index: u64,
    },
    /// Report numbers start at 1.
    #[error("report number 0 is invalid (numbers start at 1)")]
    ZeroSeq,
    /// A report number skips one that was never committed.
    #[error("lease {lease}: report {got} cannot follow report {last} (send report {} first)", last + 1)]
    SeqGap {
        /// The lease.
        lease: LeaseId,
        /// The last committed number.
        last: u64,
        /// The number sent.
        got: u64,
    },
    /// A pair was reported before (reports carry only new pairs).
    #[error("pair {index} of lease {lease} was reported before")]
    AlreadyReported {
        /// The lease.
        lease: LeaseId,
        /// The pair index.
        index: u64,
    },
    /// No such run in the ledger.
    #[error("unknown run {0}")]
    UnknownRun(RunId),
}

/// One lease: live in the ledger while active, stored whole when it ends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaseRecord {
    /// Lease id.
    pub id: LeaseId,
    /// Run.
    pub run: RunId,
    /// Holder.
    pub worker: WorkerId,
    /// State.
    pub state: LeaseState,
    /// Deadline, milliseconds.
    pub deadline_ms: u64,
    /// Last committed report number (0: none).
    pub last_seq: u64,
    /// Pair indices handed out.
    pub pairs: BTreeSet<u64>,
    /// Pair indices reported.
    pub reported: BTreeSet<u64>,
}

impl LeaseRecord {
    /// Pairs handed out and not reported.
    pub fn unreported(&self) -> impl Iterator<Item = u64> + '_ {
        self.pairs.difference(&self.reported).copied()
    }
}

/// The stored part of a run's pair bookkeeping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Run id.
    pub id: RunId,
    /// Pairs planned: indices `0..total`.
    pub total: u64,
    /// Indices below this have been handed out at least once.
    pub next_fresh: u64,
    /// Pairs reported.
    pub done: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct RunPairs {
    total: u64,
    next_fresh: u64,
    requeued: BTreeSet<u64>,
    done: u64,
    leased: u64,
}

/// What a report did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReportOutcome {
    /// The report number was already committed: nothing changed.
    pub duplicate: bool,
    /// Pairs counted for the first time by this report, ascending.
    pub new_pairs: Vec<u64>,
    /// Pairs of the lease reported so far.
    pub reported: usize,
    /// Whether the lease is now complete.
    pub completed: bool,
    /// The lease after the report (also when it just completed and left the ledger).
    pub lease: Option<LeaseRecord>,
}

/// What [`Ledger::check_report`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReportCheck {
    /// A repeat of a committed report.
    Duplicate(ReportOutcome),
    /// A valid new report with these new pairs.
    New(BTreeSet<u64>),
}

/// A lease that ended early (expired, released, revoked): its final record, and the pairs
/// that went back to the queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Returned {
    /// The lease as it ended.
    pub lease: LeaseRecord,
    /// The run.
    pub run: RunId,
    /// Pairs that went back to the queue.
    pub pairs: Vec<u64>,
}

/// The pair bookkeeping of every run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ledger {
    runs: BTreeMap<RunId, RunPairs>,
    /// Active leases only.
    leases: BTreeMap<LeaseId, LeaseRecord>,
    /// Active leases by deadline: expiry pops from the front.
    deadlines: BTreeSet<(u64, LeaseId)>,
    next_lease_id: LeaseId,
}

impl Ledger {
    /// An empty ledger.
    pub fn new() -> Self {
        Self {
            next_lease_id: 1,
            ..Self::default()
        }
    }

    /// Add a run with pair indices `0..total`.
    pub fn add_run(&mut self, id: RunId, total: u64) {
        self.runs.insert(
            id,
            RunPairs {
                total,
                next_fresh: 0,
                requeued: BTreeSet::new(),
                done: 0,
                leased: 0,
            },
        );
    }

    /// Raise a run's planned pairs to `0..total` (a larger budget); a smaller `total` leaves
    /// it as it is, since handed-out indices cannot be taken back. The new indices are
    /// handed out after the old ones, from the same counter: nothing per pair is made.
    pub fn grow(&mut self, id: RunId, total: u64) -> Result<(), LeaseError> {
        let r = self.runs.get_mut(&id).ok_or(LeaseError::UnknownRun(id))?;
        r.total = r.total.max(total);
        Ok(())
    }

    /// Stored form of a run.
    pub fn run_record(&self, id: RunId) -> Option<RunRecord> {
        self.runs.get(&id).map(|r| RunRecord {
            id,
            total: r.total,
            next_fresh: r.next_fresh,
            done: r.done,
        })
    }

    /// An active lease.
    pub fn lease(&self, id: LeaseId) -> Option<&LeaseRecord> {
        self.leases.get(&id)
    }

    /// Every active lease, by id.
    pub fn leases(&self) -> impl Iterator<Item = &LeaseRecord> {
        self.leases.values()
    }

    /// Active leases of a run.
    pub fn active_leases(&self, run: RunId) -> impl Iterator<Item = &LeaseRecord> {
        self.leases.values().filter(move |l| l.run == run)
    }

    /// Pairs of a run that can be handed out now.
    pub fn available(&self, run: RunId) -> u64 {
        self.runs
            .get(&run)
            .map_or(0, |r| r.requeued.len() as u64 + (r.total - r.next_fresh))
    }

    /// Reported pairs of a run.
    pub fn done(&self, run: RunId) -> u64 {
        self.runs.get(&run).map_or(0, |r| r.done)
    }

    /// Pairs of a run in active leases.
    pub fn leased(&self, run: RunId) -> u64 {
        self.runs.get(&run).map_or(0, |r| r.leased)
    }

    /// Pairs returned to the queue and waiting.
    pub fn requeued(&self, run: RunId) -> Vec<u64> {
        self.runs
            .get(&run)
            .map_or_else(Vec::new, |r| r.requeued.iter().copied().collect())
    }

    /// The id the next lease will get.
    pub fn next_lease_id(&self) -> LeaseId {
        self.next_lease_id
    }

    /// Hand up to `max_pairs` pairs of `run` to `worker`, lowest indices first. `None` when the
    /// run has nothing to hand out.
    pub fn issue(
        &mut self,
        run: RunId,
        worker: WorkerId,
        max_pairs: u64,
        deadline_ms: u64,
    ) -> Result<Option<LeaseRecord>, LeaseError> {
        let r = self.runs.get_mut(&run).ok_or(LeaseError::UnknownRun(run))?;
        let mut pairs = BTreeSet::new();
        while (pairs.len() as u64) < max_pairs {
            if let Some(i) = r.requeued.pop_first() {
                pairs.insert(i);
            } else if r.next_fresh < r.total {
                pairs.insert(r.next_fresh);
                r.next_fresh += 1;
            } else {
                break;
            }
        }
        if pairs.is_empty() {
            return Ok(None);
        }
        r.leased += pairs.len() as u64;
        let id = self.next_lease_id;
        self.next_lease_id += 1;
        let lease = LeaseRecord {
            id,
            run,
            worker,
            state: LeaseState::Active,
            deadline_ms,
            last_seq: 0,
            pairs,
            reported: BTreeSet::new(),
        };
        self.deadlines.insert((deadline_ms, id));
        self.leases.insert(id, lease.clone());
        Ok(Some(lease))
    }

    fn valid_lease(
        &self,
        id: LeaseId,
        worker: WorkerId,
        now_ms: u64,
    ) -> Result<&LeaseRecord, LeaseError> {
        let lease = self.leases.get(&id).ok_or(LeaseError::UnknownLease(id))?;
        if lease.worker != worker {
            return Err(LeaseError::NotHolder(id));
        }
        if now_ms > lease.deadline_ms {
            return Err(LeaseError::NotValid {
                lease: id,
                state: LeaseState::Expired.as_str(),
            });
        }
        Ok(lease)
    }

    /// Check an incremental report without changing anything: a repeat, or the new pairs.
    pub fn check_report(
        &self,
        id: LeaseId,
        worker: WorkerId,
        seq: u64,
        pairs: &[u64],
        now_ms: u64,
    ) -> Result<ReportCheck, LeaseError> {
        if seq == 0 {
            return Err(LeaseError::ZeroSeq);
        }
        let lease = self.leases.get(&id).ok_or(LeaseError::UnknownLease(id))?;
        if lease.worker != worker {
            return Err(LeaseError::NotHolder(id));
        }
        if seq <= lease.last_seq {
            // Committed before (the answer was lost): acknowledge again, change nothing.
            return Ok(ReportCheck::Duplicate(ReportOutcome {
                duplicate: true,
                new_pairs: Vec::new(),
                reported: lease.reported.len(),
                completed: false,
                lease: Some(lease.clone()),
            }));
        }
        let lease = self.valid_lease(id, worker, now_ms)?;
        if seq != lease.last_seq + 1 {
            return Err(LeaseError::SeqGap {
                lease: id,
                last: lease.last_seq,
                got: seq,
            });
        }
        let mut new_pairs = BTreeSet::new();
        for &index in pairs {
            if !lease.pairs.contains(&index) {
                return Err(LeaseError::PairNotInLease { lease: id, index });
            }
            if lease.reported.contains(&index) || !new_pairs.insert(index) {
                return Err(LeaseError::AlreadyReported { lease: id, index });
            }
        }
        Ok(ReportCheck::New(new_pairs))
    }

    /// Record an incremental report of an active lease: `pairs` are the pairs finished since
    /// report `seq - 1`. A lease that is not active is [`LeaseError::UnknownLease`] here; the
    /// caller knows from storage whether it ended and how. Nothing changes on an error.
    pub fn report(
        &mut self,
        id: LeaseId,
        worker: WorkerId,
        seq: u64,
        pairs: &[u64],
        now_ms: u64,
    ) -> Result<ReportOutcome, LeaseError> {
        let new_pairs = match self.check_report(id, worker, seq, pairs, now_ms)? {
            ReportCheck::Duplicate(out) => return Ok(out),
            ReportCheck::New(p) => p,
        };
        let mut lease = self
            .leases
            .remove(&id)
            .ok_or(LeaseError::UnknownLease(id))?;
        lease.reported.extend(new_pairs.iter().copied());
        lease.last_seq = seq;
        let completed = lease.reported.len() == lease.pairs.len();
        let r = self
            .runs
            .get_mut(&lease.run)
            .ok_or(LeaseError::UnknownRun(lease.run))?;
        r.done += new_pairs.len() as u64;
        r.leased -= new_pairs.len() as u64;
        let reported = lease.reported.len();
        if completed {
            lease.state = LeaseState::Completed;
            self.deadlines.remove(&(lease.deadline_ms, id));
        } else {
            self.leases.insert(id, lease.clone());
        }
        Ok(ReportOutcome {
            duplicate: false,
            new_pairs: new_pairs.into_iter().collect(),
            reported,
            completed,
            lease: Some(lease),
        })
    }

    /// Extend a lease's deadline. Returns the lease on success.
    pub fn heartbeat(
        &mut self,
        id: LeaseId,
        worker: WorkerId,
        now_ms: u64,
        deadline_ms: u64,
    ) -> Result<&LeaseRecord, LeaseError> {
        self.valid_lease(id, worker, now_ms)?;
        let lease = self
            .leases
            .get_mut(&id)
            .ok_or(LeaseError::UnknownLease(id))?;
        if deadline_ms > lease.deadline_ms {
            self.deadlines.remove(&(lease.deadline_ms, id));
            lease.deadline_ms = deadline_ms;
            self.deadlines.insert((deadline_ms, id));
        }
        Ok(lease)
    }

    fn end_lease(&mut self, id: LeaseId, state: LeaseState) -> Option<Returned> {
        let mut lease = self.leases.remove(&id)?;
        self.deadlines.remove(&(lease.deadline_ms, id));
        lease.state = state;
        let pairs: Vec<u64> = lease.unreported().collect();
        let run = lease.run;
        if let Some(r) = self.runs.get_mut(&run) {
            r.leased -= pairs.len() as u64;
            r.requeued.extend(pairs.iter().copied());
        }
        Some(Returned { lease, run, pairs })
    }

    /// Expire every active lease whose deadline is before `now_ms`: pops the deadline queue,
    /// so a call costs O(log n) plus the leases it expires.
    pub fn expire(&mut self, now_ms: u64) -> Vec<Returned> {
        let mut out = Vec::new();
        while let Some(&(deadline, id)) = self.deadlines.first() {
            if deadline >= now_ms {
                break;
            }
            self.deadlines.pop_first();
            if let Some(r) = self.end_lease(id, LeaseState::Expired) {
                out.push(r);
            }
        }
        out
    }

    /// The worker hands a lease back.
    pub fn release(
        &mut self,
        id: LeaseId,
        worker: WorkerId,
        now_ms: u64,
    ) -> Result<Returned, LeaseError> {
        self.valid_lease(id, worker, now_ms)?;
        self.end_lease(id, LeaseState::Released)
            .ok_or(LeaseError::UnknownLease(id))
    }

    /// Take back the active leases of a run, optionally only one worker's.
    pub fn revoke(&mut self, run: RunId, worker: Option<WorkerId>) -> Vec<Returned> {
        let ids: Vec<LeaseId> = self
            .active_leases(run)
            .filter(|l| worker.is_none_or(|w| l.worker == w))
            .map(|l| l.id)
            .collect();
        ids.into_iter()
            .filter_map(|id| self.end_lease(id, LeaseState::Revoked))
            .collect()
    }

    /// What is persisted of the live state: runs and active leases (the queues are stored as
    /// they change; see [`Ledger::requeued`]).
    pub fn records(&self) -> (Vec<RunRecord>, Vec<LeaseRecord>) {
        let runs = self
            .runs
            .keys()
            .filter_map(|&id| self.run_record(id))
            .collect();
        (runs, self.leases.values().cloned().collect())
    }

    /// Rebuild from persisted live state: runs, their queues of returned pairs, the active
    /// leases, and the next lease id.
    pub fn restore(
        runs: &[RunRecord],
        requeued: &BTreeMap<RunId, BTreeSet<u64>>,
        active: Vec<LeaseRecord>,
        next_lease_id: LeaseId,
    ) -> Self {
        let mut ledger = Self::new();
        ledger.next_lease_id = next_lease_id.max(1);
        for r in runs {
            ledger.runs.insert(
                r.id,
                RunPairs {
                    total: r.total,
                    next_fresh: r.next_fresh.min(r.total),
                    requeued: requeued.get(&r.id).cloned().unwrap_or_default(),
                    done: r.done,
                    leased: 0,
                },
            );
        }
        for l in active {
            ledger.next_lease_id = ledger.next_lease_id.max(l.id + 1);
            if let Some(r) = ledger.runs.get_mut(&l.run) {
                r.leased += (l.pairs.len() - l.reported.len()) as u64;
            }
            ledger.deadlines.insert((l.deadline_ms, l.id));
            ledger.leases.insert(l.id, l);
        }
        ledger
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_grown_run_hands_out_the_new_indices_after_the_old_and_never_shrinks() {
        let mut l = Ledger::new();
        l.add_run(1, 2);
        let first = l.issue(1, 7, 5, 100).unwrap().unwrap();
        assert_eq!(first.pairs, [0, 1].into());
        assert!(l.issue(1, 7, 5, 100).unwrap().is_none());
        l.grow(1, 4).unwrap();
        assert_eq!(l.available(1), 2);
        let second = l.issue(1, 8, 5, 100).unwrap().unwrap();
        assert_eq!(second.pairs, [2, 3].into());
        l.grow(1, 1).unwrap();
        assert_eq!(l.run_record(1).unwrap().total, 4);
        assert_eq!(l.grow(9, 4), Err(LeaseError::UnknownRun(9)));
    }

    #[test]
    fn lease_report_complete() {
        let mut l = Ledger::new();
        l.add_run(1, 5);
        let lease = l.issue(1, 7, 3, 100).unwrap().unwrap();
        assert_eq!(lease.pairs, [0, 1, 2].into());
        let out = l.report(lease.id, 7, 1, &[1], 50).unwrap();
        assert_eq!(out.new_pairs, vec![1]);
        // A repeat changes nothing.
        let out = l.report(lease.id, 7, 1, &[1], 50).unwrap();
        assert!(out.duplicate);
        // Another worker cannot report.
        assert_eq!(
            l.report(lease.id, 8, 2, &[2], 50),
            Err(LeaseError::NotHolder(lease.id))
        );
        assert!(matches!(
            l.report(lease.id, 7, 2, &[4], 50),
            Err(LeaseError::PairNotInLease { index: 4, .. })
        ));
        // Incremental: a pair reported before is refused, as is a gap in the numbers.
        assert!(matches!(
            l.report(lease.id, 7, 2, &[1, 2], 50),
            Err(LeaseError::AlreadyReported { index: 1, .. })
        ));
        assert!(matches!(
            l.report(lease.id, 7, 3, &[2], 50),
            Err(LeaseError::SeqGap {
                last: 1,
                got: 3,
                ..
            })
        ));
        let out = l.report(lease.id, 7, 2, &[0, 2], 50).unwrap();
        assert_eq!(out.new_pairs, vec![0, 2]);
        assert!(out.completed);
        // A completed lease leaves the ledger.
        assert!(l.lease(lease.id).is_none());
        assert_eq!(l.done(1), 3);
        assert_eq!(l.available(1), 2);
    }

    #[test]
    fn expired_lease_returns_exactly_its_unreported_pairs() {
        let mut l = Ledger::new();
        l.add_run(1, 4);
        let a = l.issue(1, 7, 3, 100).unwrap().unwrap().id;
        l.report(a, 7, 1, &[1], 50).unwrap();
        // Past the deadline the lease takes no report even before the sweep.
        assert!(matches!(
            l.report(a, 7, 2, &[2], 101),
            Err(LeaseError::NotValid { .. })
        ));
        // The old holder's resend of its committed report is still acknowledged.
        assert!(l.report(a, 7, 1, &[1], 101).unwrap().duplicate);
        let returned = l.expire(101);
        assert_eq!(returned[0].pairs, vec![0, 2]);
        assert_eq!(returned[0].lease.state, LeaseState::Expired);
        let b = l.issue(1, 8, 10, 300).unwrap().unwrap();
        assert_eq!(b.pairs, [0, 2, 3].into());
    }

    #[test]
    fn expiry_pops_the_deadline_queue_in_order() {
        let mut l = Ledger::new();
        l.add_run(1, 100);
        let a = l.issue(1, 7, 1, 300).unwrap().unwrap().id;
        let b = l.issue(1, 7, 1, 100).unwrap().unwrap().id;
        let c = l.issue(1, 7, 1, 200).unwrap().unwrap().id;
        // A heartbeat moves a lease back in the queue.
        l.heartbeat(b, 7, 50, 400).unwrap();
        let ids = |r: Vec<Returned>| r.into_iter().map(|x| x.lease.id).collect::<Vec<_>>();
        assert_eq!(ids(l.expire(250)), vec![c]);
        assert_eq!(ids(l.expire(350)), vec![a]);
        assert_eq!(ids(l.expire(450)), vec![b]);
        assert!(l.expire(10_000).is_empty());
    }

    #[derive(Debug, Clone)]
    enum Op {
        Issue {
            run: usize,
            worker: u64,
            n: u64,
        },
        Report {
            lease: usize,
            worker_ok: bool,
            take: usize,
            seq_back: u64,
        },
        Heartbeat {
            lease: usize,
        },
        Tick(u64),
        Expire,
        Release {
            lease: usize,
        },
        Revoke {
            run: usize,
        },
        Restart,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (0..2usize, 1..4u64, 1..6u64).prop_map(|(run, worker, n)| Op::Issue { run, worker, n }),
            5 => (0..16usize, prop::bool::weighted(0.9), 0..8usize, 0..3u64)
                .prop_map(|(lease, worker_ok, take, seq_back)| Op::Report { lease, worker_ok, take, seq_back }),
            2 => (0..16usize).prop_map(|lease| Op::Heartbeat { lease }),
            2 => (1..60u64).prop_map(Op::Tick),
            1 => Just(Op::Expire),
            1 => (0..16usize).prop_map(|lease| Op::Release { lease }),
            1 => (0..2usize).prop_map(|run| Op::Revoke { run }),
            1 => Just(Op::Restart),
        ]
    }

    const TTL: u64 = 40;

    /// Every index of every run is in exactly one place, and never counted twice.
    fn check(l: &Ledger, counted: &BTreeMap<(RunId, u64), u32>, totals: &[(RunId, u64)]) {
        for &(run, total) in totals {
            let mut seen: BTreeMap<u64, u32> = BTreeMap::new();
            for i in l.requeued(run) {
                *seen.entry(i).or_insert(0) += 1;
            }
            for (&(r, i), _) in counted.iter().filter(|((r, _), _)| *r == run) {
                let _ = r;
                *seen.entry(i).or_insert(0) += 1;
            }
            for lease in l.active_leases(run) {
                for i in lease.unreported() {
                    *seen.entry(i).or_insert(0) += 1;
                }
            }
            let next_fresh = l.run_record(run).unwrap().next_fresh;
            for i in 0..total {
                let n = seen.get(&i).copied().unwrap_or(0);
                assert_eq!(n, u32::from(i < next_fresh), "run {run} index {i}");
                let c = counted.get(&(run, i)).copied().unwrap_or(0);
                assert!(c <= 1, "run {run} index {i} counted {c} times");
            }
            let reported: u64 = counted.keys().filter(|(r, _)| *r == run).count() as u64;
            assert_eq!(l.done(run), reported);
            let leased: u64 = l
                .active_leases(run)
                .map(|x| x.unreported().count() as u64)
                .sum();
            assert_eq!(l.leased(run), leased);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
        #[test]
        fn interleavings_never_lose_or_double_count(ops in prop::collection::vec(op(), 1..80)) {
            let totals = [(1u64, 9u64), (2, 5)];
            let mut l = Ledger::new();
            for (run, total) in totals {
                l.add_run(run, total);
            }
            let mut now = 0u64;
            let mut counted: BTreeMap<(RunId, u64), u32> = BTreeMap::new();
            for op in ops {
                let ids: Vec<LeaseId> = l.leases().map(|x| x.id).collect();
                let pick = |i: usize| ids.get(i % ids.len().max(1)).copied();
                match op {
                    Op::Issue { run, worker, n } => {
                        let _ = l.issue(totals[run].0, worker, n, now + TTL);
                    }
                    Op::Report { lease, worker_ok, take, seq_back } => {
                        let Some(id) = pick(lease) else { continue };
                        let rec = l.lease(id).unwrap().clone();
                        let worker = if worker_ok { rec.worker } else { rec.worker + 100 };
                        let seq = (rec.last_seq + 1).saturating_sub(seq_back).max(1);
                        // Incremental: some pairs not reported yet (or, for a repeat, any).
                        let pairs: Vec<u64> = rec.unreported().take(take).collect();
                        if let Ok(out) = l.report(id, worker, seq, &pairs, now) {
                            prop_assert!(!out.duplicate || out.new_pairs.is_empty());
                            for i in out.new_pairs {
                                *counted.entry((rec.run, i)).or_insert(0) += 1;
                            }
                        }
                    }
                    Op::Heartbeat { lease } => {
                        if let Some(id) = pick(lease) {
                            let w = l.lease(id).unwrap().worker;
                            let _ = l.heartbeat(id, w, now, now + TTL);
                        }
                    }
                    Op::Tick(dt) => now += dt,
                    Op::Expire => { l.expire(now); }
                    Op::Release { lease } => {
                        if let Some(id) = pick(lease) {
                            let w = l.lease(id).unwrap().worker;
                            let _ = l.release(id, w, now);
                        }
                    }
                    Op::Revoke { run } => { l.revoke(totals[run].0, None); }
                    Op::Restart => {
                        let (runs, leases) = l.records();
                        let queues = totals
                            .iter()
                            .map(|&(r, _)| (r, l.requeued(r).into_iter().collect()))
                            .collect();
                        let restored = Ledger::restore(&runs, &queues, leases, l.next_lease_id());
                        prop_assert_eq!(&restored, &l);
                        l = restored;
                    }
                }
                check(&l, &counted, &totals);
            }
            // Drain: well-behaved workers finish everything.
            now += 10 * TTL;
            l.expire(now);
            for (run, _) in totals {
                while let Some(lease) = l.issue(run, 1, 3, now + TTL).unwrap() {
                    let pairs: Vec<u64> = lease.pairs.iter().copied().collect();
                    let out = l.report(lease.id, 1, 1, &pairs, now).unwrap();
                    for i in out.new_pairs {
                        *counted.entry((run, i)).or_insert(0) += 1;
                    }
                }
            }
            check(&l, &counted, &totals);
            for (run, total) in totals {
                for i in 0..total {
                    prop_assert_eq!(counted.get(&(run, i)).copied(), Some(1));
                }
            }
        }
    }
}
