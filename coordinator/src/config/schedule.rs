//! Which variant entry each pair of a run plays, laid out once per run.
//!
//! Pairs are dealt to a run's variant entries by a smooth weighted round robin over periods
//! of `sum of weights` pairs. Walking the round robin up to a pair costs up to a period times
//! the entries (16 entries of weight 1,000: a quarter of a million steps), and the coordinator
//! asks for every pair it leases and every pair a worker reports, several times. So one period
//! is laid out once, on first use, and every later question is an index into it: the cost per
//! report stays flat however the run's entries are weighted.
//!
//! The layout is exactly the walk the coordinator has always used, so stored runs keep the
//! assignment their pairs were played under.

use super::{MAX_VARIANT_ENTRIES, MAX_WEIGHT};
use std::sync::{Arc, OnceLock};

/// The entry a pair plays and how many earlier pairs of its period the same entry took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Slot {
    /// Index into the run's variant entries.
    pub(super) entry: usize,
    /// The pair is the entry's `occurrence`-th (from 0) within its period.
    pub(super) occurrence: u64,
}

/// One period of the round robin, with the weights it was laid out for.
#[derive(Debug)]
struct Period {
    weights: Vec<u32>,
    /// Packed: at most [`MAX_VARIANT_ENTRIES`] entries of weight at most [`MAX_WEIGHT`].
    slots: Vec<(u8, u16)>,
}

/// A run's pair-to-entry schedule, computed on first use and shared by clones of its config.
///
/// It is derived data, not part of the config: it is never serialized, and two configs
/// compare equal whatever their caches hold.
#[derive(Debug, Clone, Default)]
pub(super) struct PairSchedule {
    period: OnceLock<Arc<Period>>,
}

impl PartialEq for PairSchedule {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

// What validation allows is what is laid out (at most 16,000 slots of 4 bytes); a config
// beyond it (validation refuses one) is walked pair by pair instead, never laid out large.
const _: () = assert!(MAX_VARIANT_ENTRIES <= u8::MAX as usize && MAX_WEIGHT <= u16::MAX as u32);

impl PairSchedule {
    /// The slot of pair `index` for entries of the given weights.
    pub(super) fn slot(&self, weights: &[u32], index: u64) -> Slot {
        let total: u64 = weights.iter().map(|&w| u64::from(w)).sum();
        if total == 0 {
            return Slot {
                entry: 0,
                occurrence: 0,
            };
        }
        let layable =
            weights.len() <= MAX_VARIANT_ENTRIES && weights.iter().all(|&w| w <= MAX_WEIGHT);
        if !layable {
            return walk(weights, index % total);
        }
        let period = self.period.get_or_init(|| Arc::new(lay_out(weights)));
        // The weights are the config's own; a config whose entries changed after the first
        // question (nothing does this) gets a correct answer the slow way, never a stale one.
        if period.weights != weights {
            return walk(weights, index % total);
        }
        let (entry, occurrence) = period.slots[(index % total) as usize];
        Slot {
            entry: usize::from(entry),
            occurrence: u64::from(occurrence),
        }
    }
}

/// One period of the round robin, laid out.
fn lay_out(weights: &[u32]) -> Period {
    let total: u64 = weights.iter().map(|&w| u64::from(w)).sum();
    // `slot` lays out only weights within the packing (asserted above), so the casts keep
    // every value.
    let slots = RoundRobin::new(weights)
        .take(total as usize)
        .map(|s| (s.entry as u8, s.occurrence as u16))
        .collect();
    Period {
        weights: weights.to_vec(),
        slots,
    }
}

/// The slot at `slot` (< total) by walking the round robin from the start of the period.
fn walk(weights: &[u32], slot: u64) -> Slot {
    RoundRobin::new(weights).nth(slot as usize).unwrap_or(Slot {
        entry: 0,
        occurrence: 0,
    })
}

/// The smooth weighted round robin from the start of a period, slot after slot (endless: a
/// period repeats): at each slot every entry gains its weight and the richest (the first
/// among equals) is chosen and pays the total.
struct RoundRobin<'a> {
    weights: &'a [u32],
    total: i64,
    current: Vec<i64>,
    taken: Vec<u64>,
}

impl<'a> RoundRobin<'a> {
    fn new(weights: &'a [u32]) -> Self {
        RoundRobin {
            weights,
            total: weights.iter().map(|&w| i64::from(w)).sum(),
            current: vec![0; weights.len()],
            taken: vec![0; weights.len()],
        }
    }
}

impl Iterator for RoundRobin<'_> {
    type Item = Slot;

    fn next(&mut self) -> Option<Slot> {
        for (c, &w) in self.current.iter_mut().zip(self.weights) {
            *c += i64::from(w);
        }
        let current = &self.current;
        let chosen = (0..current.len())
            .max_by_key(|&k| (current[k], std::cmp::Reverse(k)))
            .unwrap_or(0);
        let taken = self.taken.get_mut(chosen)?;
        self.current[chosen] -= self.total;
        *taken += 1;
        Some(Slot {
            entry: chosen,
            occurrence: *taken - 1,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The walk as the coordinator wrote it before the layout, kept as the reference: a pair
    /// of a stored run must play what it was assigned when it was leased.
    fn reference(weights: &[u32], index: u64) -> (usize, u64) {
        let total: u64 = weights.iter().map(|&w| u64::from(w)).sum();
        let slot = index % total.max(1);
        let mut current: Vec<i64> = vec![0; weights.len()];
        let mut taken: Vec<u64> = vec![0; weights.len()];
        let mut chosen = 0;
        for _ in 0..=slot {
            for (c, &w) in current.iter_mut().zip(weights) {
                *c += i64::from(w);
            }
            chosen = (0..current.len())
                .max_by_key(|&k| (current[k], std::cmp::Reverse(k)))
                .unwrap_or(0);
            current[chosen] -= total as i64;
            taken[chosen] += 1;
        }
        (chosen, taken[chosen].saturating_sub(1))
    }

    #[test]
    fn the_layout_assigns_every_pair_as_the_walk_did() {
        let cases: [&[u32]; 6] = [
            &[1],
            &[1, 1, 1, 1],
            &[2, 1],
            &[3, 5, 7],
            &[1000, 1, 999, 17],
            &[13, 1, 1, 2, 8, 5, 3, 21, 34, 1, 4, 9, 16, 25, 36, 49],
        ];
        for weights in cases {
            let schedule = PairSchedule::default();
            let total: u64 = weights.iter().map(|&w| u64::from(w)).sum();
            // Two periods and a bit: the second must repeat the first.
            for index in (0..2 * total + 3).chain([10 * total + 1, u64::from(u32::MAX)]) {
                let slot = schedule.slot(weights, index);
                assert_eq!(
                    (slot.entry, slot.occurrence),
                    reference(weights, index),
                    "weights {weights:?}, pair {index}"
                );
            }
        }
    }

    #[test]
    fn each_entry_takes_its_weight_in_every_period() {
        let weights = [1000, 1, 999, 17];
        let schedule = PairSchedule::default();
        let total: u64 = weights.iter().map(|&w| u64::from(w)).sum();
        let mut taken = [0u64; 4];
        for index in 0..total {
            let slot = schedule.slot(&weights, index);
            assert_eq!(slot.occurrence, taken[slot.entry], "pair {index}");
            taken[slot.entry] += 1;
        }
        assert_eq!(taken, weights.map(u64::from));
    }

    #[test]
    fn a_schedule_asked_with_other_weights_answers_for_them() {
        let schedule = PairSchedule::default();
        assert_eq!(schedule.slot(&[1, 1], 1).entry, 1);
        // The layout is for [1, 1]; a changed entry list is walked, not looked up stale.
        for index in 0..7 {
            let slot = schedule.slot(&[2, 3, 2], index);
            assert_eq!((slot.entry, slot.occurrence), reference(&[2, 3, 2], index));
        }
    }
}
