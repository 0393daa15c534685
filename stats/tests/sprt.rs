//! Behaviour of the running SPRT: overshoot correction and pair-index ordering.

use proptest::prelude::*;
use stats::ordered::OrderedSprtError;
use stats::{EloModel, OrderedSprt, PairScore, Pentanomial, Results, Sprt, SprtParams, SprtState};

fn params() -> SprtParams {
    SprtParams::new(0.05, 0.05, 0.0, 2.0, EloModel::Normalized).unwrap()
}

/// A reproducible stream of pair scores with a slight edge for the tested engine.
fn scores(n: usize) -> Vec<PairScore> {
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let u = (x >> 11) as f64 / (1u64 << 53) as f64;
            let hp = match u {
                u if u < 0.05 => 0,
                u if u < 0.27 => 1,
                u if u < 0.72 => 2,
                u if u < 0.95 => 3,
                _ => 4,
            };
            PairScore::from_half_points(hp).unwrap()
        })
        .collect()
}

#[test]
fn bad_designs_are_refused() {
    assert!(SprtParams::new(0.0, 0.05, 0.0, 2.0, EloModel::Normalized).is_err());
    assert!(SprtParams::new(0.6, 0.5, 0.0, 2.0, EloModel::Normalized).is_err());
    assert!(SprtParams::new(0.05, 0.05, 2.0, 0.0, EloModel::Normalized).is_err());
    assert!(SprtParams::new(0.05, 0.05, f64::NAN, 2.0, EloModel::Normalized).is_err());
}

#[test]
fn overshoot_moves_the_bounds_inwards_and_stops_no_later() {
    let mut sprt = Sprt::new(params(), 16).unwrap();
    let mut counts = Pentanomial::default();
    let mut plain_stop = None;
    let mut corrected_stop = None;
    for (i, s) in scores(200_000).into_iter().enumerate() {
        counts.add(s);
        if (i + 1) % 16 == 0 {
            let state = sprt.update(&Results::Pentanomial(counts)).unwrap();
            let (lower, upper) = sprt.stopping_bounds();
            assert!(lower >= params().lower_bound() && upper <= params().upper_bound());
            if corrected_stop.is_none() && state != SprtState::Continue {
                corrected_stop = Some(i + 1);
            }
            if plain_stop.is_none() && params().decide(sprt.llr) != SprtState::Continue {
                plain_stop = Some(i + 1);
            }
            if plain_stop.is_some() {
                break;
            }
        }
    }
    let (o0, o1) = sprt.expected_overshoot();
    assert!(o0 >= 0.0 && o1 > 0.0, "{o0} {o1}");
    assert!(corrected_stop.is_some());
    assert!(corrected_stop <= plain_stop);
    assert_eq!(sprt.overshoot.unwrap().skipped_updates, 0);
}

#[test]
fn updates_that_break_the_batch_contract_drop_the_overshoot() {
    let mut sprt = Sprt::new(params(), 4).unwrap();
    sprt.update(&Results::Pentanomial(Pentanomial([1, 1, 1, 1, 0])))
        .unwrap();
    assert!(sprt.overshoot.is_some());
    sprt.update(&Results::Pentanomial(Pentanomial([1, 1, 1, 1, 1])))
        .unwrap();
    assert!(sprt.overshoot.is_none());
    assert_eq!(sprt.illegal_update, Some(5));
    assert_eq!(sprt.expected_overshoot(), (0.0, 0.0));
}

#[test]
fn ordered_sprt_ignores_arrival_order() {
    let s = scores(20_000);
    let mut in_order = OrderedSprt::new(params(), 8).unwrap();
    for (i, &x) in s.iter().enumerate() {
        in_order.record(i as u64, x).unwrap();
    }
    // Same pairs, delivered in blocks of 64 in reverse order inside each block.
    let mut shuffled = OrderedSprt::new(params(), 8).unwrap();
    for block in (0..s.len()).collect::<Vec<_>>().chunks(64) {
        for &i in block.iter().rev() {
            shuffled.record(i as u64, s[i]).unwrap();
        }
    }
    assert_eq!(in_order.sprt(), shuffled.sprt());
    assert_eq!(in_order.counted(), shuffled.counted());
    assert_eq!(in_order.stopped_at(), shuffled.stopped_at());
    assert_eq!(shuffled.pending(), 0);
}

#[test]
fn ordered_sprt_waits_for_gaps_and_refuses_duplicates() {
    let mut o = OrderedSprt::new(params(), 2).unwrap();
    let win = PairScore::from_half_points(4).unwrap();
    o.record(1, win).unwrap();
    o.record(2, win).unwrap();
    assert_eq!(o.counted().pairs(), 0);
    assert_eq!(o.pending(), 2);
    o.record(0, win).unwrap();
    assert_eq!(o.counted().pairs(), 3);
    assert_eq!(o.next_index(), 3);
    assert_eq!(
        o.record(1, win).unwrap_err(),
        OrderedSprtError::Duplicate(1)
    );
    o.record(5, win).unwrap();
    assert_eq!(
        o.record(5, win).unwrap_err(),
        OrderedSprtError::Duplicate(5)
    );
    // Serialisable for the coordinator's store.
    let back: OrderedSprt = serde_json::from_str(&serde_json::to_string(&o).unwrap()).unwrap();
    assert_eq!(back, o);
}

/// Half-point scores of pairs: even, ahead, behind, or lopsided (so that tests stop both
/// ways, and sometimes not).
fn half_points() -> impl Strategy<Value = Vec<u8>> {
    let even = prop_oneof![1 => Just(0u8), 4 => Just(1), 6 => Just(2), 4 => Just(3), 1 => Just(4)];
    let edge = prop_oneof![1 => Just(0u8), 3 => Just(1), 6 => Just(2), 5 => Just(3), 2 => Just(4)];
    let behind =
        prop_oneof![2 => Just(0u8), 5 => Just(1), 6 => Just(2), 3 => Just(3), 1 => Just(4)];
    let lopsided = prop_oneof![1 => Just(1u8), 2 => Just(2), 4 => Just(3), 4 => Just(4)];
    prop_oneof![
        prop::collection::vec(even, 0..2000),
        prop::collection::vec(edge, 0..2000),
        prop::collection::vec(behind, 0..2000),
        prop::collection::vec(lopsided, 0..400),
    ]
}

fn design() -> impl Strategy<Value = (SprtParams, u64)> {
    (
        prop_oneof![Just(EloModel::Normalized), Just(EloModel::Logistic)],
        -3.0f64..2.0,
        0.5f64..6.0,
        1u64..20,
    )
        .prop_map(|(model, elo0, width, batch)| {
            (
                SprtParams::new(0.05, 0.05, elo0, elo0 + width, model).unwrap(),
                batch,
            )
        })
}

/// Equal, and equal as JSON text (shortest round-trip floats: equal text, equal bits).
fn same(a: &OrderedSprt, b: &OrderedSprt) -> Result<(), TestCaseError> {
    prop_assert_eq!(a, b);
    prop_assert_eq!(
        serde_json::to_string(a).unwrap(),
        serde_json::to_string(b).unwrap()
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// The coordinator stores the test as JSON after every report: a stored and reloaded
    /// test is the same test (LLR, overshoot sums, pending pairs, stop point) and goes on
    /// exactly as the one that stayed in memory.
    #[test]
    fn ordered_sprt_json_round_trip_is_lossless(
        hp in half_points(),
        (params, batch) in design(),
        block in 1usize..200,
        cut in any::<prop::sample::Index>(),
    ) {
        // Arrival order: blocks of indices, each delivered back to front.
        let order: Vec<usize> = (0..hp.len())
            .collect::<Vec<_>>()
            .chunks(block)
            .flat_map(|c| c.iter().rev().copied().collect::<Vec<_>>())
            .collect();
        let score = |i: usize| PairScore::from_half_points(hp[i]).unwrap();
        let cut = cut.index(order.len() + 1);
        let mut kept = OrderedSprt::new(params, batch).unwrap();
        for &i in &order[..cut] {
            kept.record(i as u64, score(i)).unwrap();
        }
        let json = serde_json::to_string(&kept).unwrap();
        let mut loaded: OrderedSprt = serde_json::from_str(&json).unwrap();
        same(&loaded, &kept)?;
        for &i in &order[cut..] {
            let a = kept.record(i as u64, score(i)).unwrap();
            let b = loaded.record(i as u64, score(i)).unwrap();
            prop_assert_eq!(a, b);
        }
        same(&loaded, &kept)?;
        prop_assert_eq!(loaded.counted().pairs(), hp.len() as u64);
        let again: OrderedSprt =
            serde_json::from_str(&serde_json::to_string(&loaded).unwrap()).unwrap();
        same(&again, &loaded)?;
    }
}
