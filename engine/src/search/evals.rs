//! A cache of static evaluations by position key, one per search thread.
//!
//! Why: a sixth of the evaluations of `engine bench` are of a position the search evaluated
//! before (reached by another move order, or again by a re-search) whose table entry has
//! since been replaced or was never stored (quiescence stores few). The evaluation is a third
//! of the search's time, and a look-up here costs one access to a table that stays in the
//! processor's second-level cache.
//!
//! The cached value is exactly what the evaluation returned (a value that does not fit the
//! slot is not cached), so the search with the cache visits the same nodes as without it and
//! `engine bench`'s signature is unchanged. The evaluation depends on the weights and the
//! rules besides the position: the owner clears the cache when either changes.

use crate::params::Params;
use crate::variant::Rules;

/// Slots: 2^16 of 8 bytes, 512 KiB.
const BITS: u32 = 16;
const MASK: u64 = (1 << BITS) - 1;

/// Direct-mapped: slot `key & MASK` holds the key's other 48 bits and the evaluation as 16.
pub(crate) struct EvalCache {
    slots: Vec<u64>,
    /// The weights and rules the cached values were computed under.
    filled_under: Option<(Params, Rules)>,
}

impl EvalCache {
    pub(crate) fn new() -> Self {
        EvalCache {
            slots: vec![0; 1 << BITS],
            filled_under: None,
        }
    }

    /// Forgets every value.
    pub(crate) fn clear(&mut self) {
        self.slots.fill(0);
        self.filled_under = None;
    }

    /// Called before a search under `params` and `rules`: values computed under others are
    /// dropped.
    pub(crate) fn prepare(&mut self, params: &Params, rules: Rules) {
        let same = self
            .filled_under
            .as_ref()
            .is_some_and(|(p, r)| *r == rules && p == params);
        if !same {
            self.clear();
            self.filled_under = Some((params.clone(), rules));
        }
    }

    /// The cached evaluation of the position with `key`, if any.
    #[inline]
    pub(crate) fn get(&self, key: u64) -> Option<i32> {
        let slot = self.slots[(key & MASK) as usize];
        // An all-zero slot is empty; a stored (tag 0, value 0) reads as empty too, a miss only.
        (slot != 0 && slot & !MASK == key & !MASK).then_some(i32::from(slot as u16 as i16))
    }

    /// Asks the processor for `key`'s slot ahead of the look-up (as the table's bucket).
    #[inline]
    pub(crate) fn prefetch(&self, key: u64) {
        super::prefetch::prefetch(&self.slots[(key & MASK) as usize]);
    }

    /// Remembers `eval` for `key` (replacing what the slot held) when it fits 16 bits.
    #[inline]
    pub(crate) fn put(&mut self, key: u64, eval: i32) {
        if let Ok(v) = i16::try_from(eval) {
            self.slots[(key & MASK) as usize] = key & !MASK | u64::from(v as u16);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variant::Variant;

    #[test]
    fn values_come_back_exactly_and_only_for_their_key() {
        let mut c = EvalCache::new();
        let key = 0x1234_5678_9abc_def0;
        assert_eq!(c.get(key), None);
        for v in [0, 1, -1, 7_000, -32_768, 32_767] {
            c.put(key, v);
            assert_eq!(c.get(key), Some(v));
        }
        // Same slot, another key: a miss, and it replaces the value.
        let other = key ^ 1 << 40;
        assert_eq!(c.get(other), None);
        c.put(other, 5);
        assert_eq!((c.get(other), c.get(key)), (Some(5), None));
        // A value beyond 16 bits is not cached, and does not disturb the slot.
        c.put(other, 40_000);
        assert_eq!(c.get(other), Some(5));
        c.clear();
        assert_eq!(c.get(other), None);
    }

    #[test]
    fn other_weights_or_rules_empty_the_cache() {
        let mut c = EvalCache::new();
        let chess = Rules::default_for(Variant::Chess);
        let latte = Rules::default_for(Variant::Latte);
        let params = Params::default();
        c.prepare(&params, chess);
        c.put(99 << 20, 10);
        c.prepare(&params, chess);
        assert_eq!(c.get(99 << 20), Some(10));
        c.prepare(&params, latte);
        assert_eq!(c.get(99 << 20), None);
        c.put(99 << 20, 10);
        let mut tweaked = params.clone();
        tweaked.set("PawnValueMg", 91).expect("a valid weight");
        c.prepare(&tweaked, latte);
        assert_eq!(c.get(99 << 20), None);
    }
}
