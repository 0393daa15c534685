//! Which run a worker gets, how many slots it may use, and how many pairs its lease holds.
//!
//! Pure functions over plain numbers, so that the rules that keep one client from starving
//! the others are tested on their own (property tests below):
//!
//! * a token never holds more slots than it was given at `token add` ([`granted_slots`]);
//! * a lease is at most the token's fair share of the open pairs among the tokens heard from
//!   lately, at most an eighth of the run, at most [`MAX_LEASE_PAIRS`] ([`lease_size`]);
//! * a token's pair-time estimate moves by a bounded factor per lease and never moves another
//!   token's ([`PairTimer`]).

use crate::ledger::RunId;
use std::collections::BTreeMap;

/// Most pairs in one lease: a cumulative report of the whole lease stays within the API's
/// per-report limit.
pub const MAX_LEASE_PAIRS: u64 = proto::limits::PAIRS_PER_REPORT as u64;

/// A run that could be leased, as the scheduler sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Candidate {
    /// The run.
    pub run: RunId,
    /// Higher first.
    pub priority: i32,
    /// Relative share among runs of equal priority.
    pub throughput: u32,
    /// Slots of the active leases on the run.
    pub assigned_slots: u64,
}

/// Highest priority first, then the run with the fewest slots per unit of throughput, then the
/// oldest.
pub fn pick(candidates: &[Candidate]) -> Option<RunId> {
    candidates
        .iter()
        .min_by(|a, b| {
            let load = |c: &Candidate| c.assigned_slots as f64 / f64::from(c.throughput.max(1));
            b.priority
                .cmp(&a.priority)
                .then(load(a).total_cmp(&load(b)))
                .then(a.run.cmp(&b.run))
        })
        .map(|c| c.run)
}

/// Slots a lease may use: what the worker asks for (its registered cores when it asks for
/// 0), within what its token has left. 0 means no lease now.
pub fn granted_slots(claimed: u32, cores: u32, token_max: u32, token_held: u64) -> u32 {
    let want = if claimed == 0 { cores } else { claimed }.max(1);
    let room = u64::from(token_max).saturating_sub(token_held);
    u64::from(want).min(room) as u32
}

/// What sizes a lease.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SizeInput {
    /// Slots granted to the lease (from [`granted_slots`], at least 1).
    pub slots: u32,
    /// Seconds one slot needs for one pair (this token's estimate).
    pub pair_seconds: f64,
    /// Target wall time of a lease.
    pub batch_seconds: u32,
    /// Pairs of the run that can be handed out now.
    pub available: u64,
    /// Pairs of the run.
    pub total: u64,
    /// Slots of this token among the tokens heard from lately.
    pub token_slots: u64,
    /// Slots of every token heard from lately (this one included).
    pub active_slots: u64,
    /// The worker's own bound (0: none).
    pub max_pairs: u32,
}

/// Pairs in a lease (0 only when nothing is available).
pub fn lease_size(i: &SizeInput) -> u64 {
    if i.available == 0 || i.slots == 0 {
        return 0;
    }
    let pair_seconds = if i.pair_seconds.is_finite() && i.pair_seconds > 0.0 {
        i.pair_seconds
    } else {
        1.0
    };
    let per_slot = (f64::from(i.batch_seconds) / pair_seconds).round().max(1.0);
    let mut n = (per_slot * f64::from(i.slots)).min(MAX_LEASE_PAIRS as f64) as u64;
    // This token's share of the open pairs among the tokens heard from lately.
    let token_slots = i.token_slots.max(u64::from(i.slots));
    let share = i
        .available
        .saturating_mul(token_slots)
        .div_ceil(i.active_slots.max(token_slots));
    n = n.min(share.max(1));
    // At most an eighth of the run, so that workers joining a moment later still find work.
    n = n.min(i.total.div_ceil(8).max(1));
    if i.max_pairs > 0 {
        n = n.min(u64::from(i.max_pairs));
    }
    n.clamp(1, i.available)
}

/// Seconds one slot needs for one pair, learnt per token from its completed leases.
///
/// One observation moves a token's estimate by at most a factor of [`PairTimer::STEP`], and
/// only its own: a worker that claims absurd concurrency or reports slowly shrinks its own
/// leases, nobody else's.
#[derive(Debug, Clone, PartialEq)]
pub struct PairTimer {
    initial: f64,
    by_token: BTreeMap<i64, f64>,
}

impl PairTimer {
    /// Largest factor one observation can move an estimate by.
    pub const STEP: f64 = 2.0;

    /// A timer starting from the config's guess.
    pub fn new(initial: f64) -> Self {
        let initial = if initial.is_finite() && initial > 0.0 {
            initial
        } else {
            1.0
        };
        Self {
            initial,
            by_token: BTreeMap::new(),
        }
    }

    /// The estimate for a token: its own, or the median of the others', or the initial guess.
    pub fn estimate(&self, token: i64) -> f64 {
        if let Some(&e) = self.by_token.get(&token) {
            return e;
        }
        let mut all: Vec<f64> = self.by_token.values().copied().collect();
        if all.is_empty() {
            return self.initial;
        }
        all.sort_by(f64::total_cmp);
        all[all.len() / 2]
    }

    /// Learn from a lease of `pairs` pairs on `slots` slots that took `seconds`.
    pub fn observe(&mut self, token: i64, seconds: f64, slots: u32, pairs: usize) {
        if pairs == 0 || slots == 0 || !seconds.is_finite() || seconds <= 0.0 {
            return;
        }
        let current = self.estimate(token);
        let observed = (seconds * f64::from(slots) / pairs as f64)
            .clamp(current / Self::STEP, current * Self::STEP);
        self.by_token.insert(token, 0.7 * current + 0.3 * observed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn input() -> impl Strategy<Value = SizeInput> {
        (
            1u32..10_000,
            0.001f64..1e4,
            1u32..100_000,
            0u64..10_000_000,
            1u64..10_000_000,
            0u64..100_000,
            0u64..1_000_000,
            0u32..u32::MAX,
        )
            .prop_map(
                |(slots, pair_seconds, batch_seconds, available, total, token, active, max)| {
                    SizeInput {
                        slots,
                        pair_seconds,
                        batch_seconds,
                        available: available.min(total),
                        total,
                        token_slots: token,
                        active_slots: active,
                        max_pairs: max,
                    }
                },
            )
    }

    proptest! {
        #[test]
        fn leases_are_bounded(i in input()) {
            let n = lease_size(&i);
            if i.available == 0 {
                prop_assert_eq!(n, 0);
            } else {
                prop_assert!(n >= 1);
                prop_assert!(n <= i.available);
                prop_assert!(n <= MAX_LEASE_PAIRS);
                prop_assert!(n <= i.total.div_ceil(8).max(1));
                if i.max_pairs > 0 {
                    prop_assert!(n <= u64::from(i.max_pairs));
                }
            }
        }

        #[test]
        fn a_lease_is_at_most_the_tokens_fair_share(i in input()) {
            let token = i.token_slots.max(u64::from(i.slots));
            let active = i.active_slots.max(token);
            let n = lease_size(&i);
            let share = (i.available * token).div_ceil(active).max(1);
            prop_assert!(n <= share, "{} > share {}", n, share);
        }

        #[test]
        fn tokens_never_exceed_their_slots(
            claimed in 0u32..u32::MAX, cores in 0u32..1024, max in 0u32..4096, held in 0u64..8192
        ) {
            let g = granted_slots(claimed, cores, max, held);
            prop_assert!(u64::from(g) + held <= u64::from(max).max(held));
            if held >= u64::from(max) {
                prop_assert_eq!(g, 0);
            }
        }

        #[test]
        fn one_observation_moves_an_estimate_by_a_bounded_factor(
            seconds in 0.0f64..1e9, slots in 0u32..u32::MAX, pairs in 0usize..10_000
        ) {
            let mut t = PairTimer::new(2.0);
            t.observe(1, 10.0, 1, 5);
            let before_other = t.estimate(1);
            let before = t.estimate(2);
            t.observe(2, seconds, slots, pairs);
            let after = t.estimate(2);
            prop_assert!(after <= before * PairTimer::STEP + 1e-9);
            prop_assert!(after >= before / PairTimer::STEP - 1e-9);
            prop_assert_eq!(t.estimate(1), before_other);
        }

        #[test]
        fn pick_prefers_priority_then_load(
            runs in proptest::collection::vec((-3i32..3, 1u32..200, 0u64..100), 1..8)
        ) {
            let c: Vec<Candidate> = runs
                .iter()
                .enumerate()
                .map(|(k, &(priority, throughput, assigned_slots))| Candidate {
                    run: k as u64 + 1,
                    priority,
                    throughput,
                    assigned_slots,
                })
                .collect();
            let chosen = pick(&c).unwrap();
            let best = c.iter().find(|x| x.run == chosen).unwrap();
            let top = c.iter().map(|x| x.priority).max().unwrap();
            prop_assert_eq!(best.priority, top);
            let load = |x: &Candidate| x.assigned_slots as f64 / f64::from(x.throughput);
            for x in c.iter().filter(|x| x.priority == top) {
                prop_assert!(load(best) <= load(x));
            }
        }
    }

    #[test]
    fn a_huge_claim_takes_an_eighth_at_most() {
        let n = lease_size(&SizeInput {
            slots: granted_slots(u32::MAX, 2, 64, 0),
            pair_seconds: 0.01,
            batch_seconds: 180,
            available: 2000,
            total: 2000,
            token_slots: 64,
            active_slots: 64,
            max_pairs: u32::MAX,
        });
        assert_eq!(n, 250);
    }
}
