//! Behaviour of the running SPRT: overshoot correction and pair-index ordering.

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
