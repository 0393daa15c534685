//! Property tests of the statistics (proptest).

use proptest::prelude::*;
use stats::spsa::{ParamKind, Spsa, SpsaConfig, SpsaError, SpsaParam, SpsaReplay, SpsaUpdate};
use stats::{
    logistic_elo, normalized_elo, sprt_elo, EloModel, PairScore, Pentanomial, Results, SprtParams,
    StatsError, Trinomial,
};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()))
}

fn trinomial() -> impl Strategy<Value = Results> {
    (0u64..5000, 0u64..5000, 0u64..5000)
        .prop_filter("some games", |(w, d, l)| w + d + l > 0)
        .prop_map(|(wins, draws, losses)| {
            Results::Trinomial(Trinomial {
                wins,
                draws,
                losses,
            })
        })
}

fn pentanomial() -> impl Strategy<Value = Results> {
    prop::array::uniform5(0u64..3000)
        .prop_filter("some pairs", |c| c.iter().sum::<u64>() > 0)
        .prop_map(|c| Results::Pentanomial(Pentanomial(c)))
}

fn any_results() -> impl Strategy<Value = Results> {
    prop_oneof![trinomial(), pentanomial()]
}

/// Adds one win (trinomial) or one won pair (pentanomial).
fn with_more_wins(r: &Results) -> Results {
    match *r {
        Results::Trinomial(t) => Results::Trinomial(Trinomial {
            wins: t.wins + 1,
            ..t
        }),
        Results::Pentanomial(Pentanomial(mut c)) => {
            c[4] += 1;
            Results::Pentanomial(Pentanomial(c))
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn swapping_wins_and_losses_negates_elo_and_mirrors_the_interval(r in any_results()) {
        let e = logistic_elo(&r).unwrap();
        let m = logistic_elo(&r.mirrored()).unwrap();
        prop_assert!(close(m.elo, -e.elo), "{} vs {}", m.elo, e.elo);
        prop_assert!(close(m.ci[0], -e.ci[1]) && close(m.ci[1], -e.ci[0]));
        prop_assert!(close(m.los, 1.0 - e.los));
        let n = normalized_elo(&r).unwrap();
        let nm = normalized_elo(&r.mirrored()).unwrap();
        prop_assert!(close(nm.nelo, -n.nelo));
        prop_assert!(close(nm.ci[0], -n.ci[1]) && close(nm.ci[1], -n.ci[0]));
    }

    #[test]
    fn the_interval_contains_the_estimate(r in any_results()) {
        let e = logistic_elo(&r).unwrap();
        prop_assert!(e.ci[0] <= e.elo && e.elo <= e.ci[1]);
        let n = normalized_elo(&r).unwrap();
        prop_assert!(n.ci[0] <= n.nelo && n.nelo <= n.ci[1]);
        prop_assert!((0.0..=1.0).contains(&e.los));
    }

    #[test]
    fn llr_grows_with_more_wins(
        r in any_results(),
        model in prop_oneof![Just(EloModel::Normalized), Just(EloModel::Logistic)],
        elo0 in -10.0f64..5.0,
        width in 0.5f64..10.0,
    ) {
        let p = SprtParams::new(0.05, 0.05, elo0, elo0 + width, model).unwrap();
        let before = p.llr(&r).unwrap();
        let after = p.llr(&with_more_wins(&r)).unwrap();
        prop_assert!(after >= before - 1e-9 * (1.0 + before.abs()), "{before} -> {after}");
    }

    #[test]
    fn one_sided_and_tiny_inputs_give_numbers_or_errors_never_nan(
        n in 0u64..100_000,
        which in 0usize..5,
        penta in any::<bool>(),
    ) {
        let r = if penta {
            let mut c = [0u64; 5];
            c[which] = n;
            Results::Pentanomial(Pentanomial(c))
        } else {
            let mut c = [0u64; 3];
            c[which % 3] = n;
            Results::from_counts(&c).unwrap()
        };
        let params = SprtParams::new(0.05, 0.05, 0.0, 2.0, EloModel::Normalized).unwrap();
        let outcomes: Vec<Result<Vec<f64>, StatsError>> = vec![
            logistic_elo(&r).map(|e| vec![e.elo, e.ci[0], e.ci[1], e.los]),
            normalized_elo(&r).map(|e| vec![e.nelo, e.ci[0], e.ci[1]]),
            params.llr(&r).map(|x| vec![x]),
            sprt_elo(&r, &params, 0.05).map(|e| vec![e.elo, e.ci[0], e.ci[1], e.los, e.llr]),
        ];
        for o in outcomes {
            match o {
                Ok(xs) => prop_assert!(xs.iter().all(|x| x.is_finite()), "{xs:?}"),
                Err(e) => prop_assert!(n == 0 || matches!(e, StatsError::Numerical { .. }), "{e}"),
            }
        }
        if n == 0 {
            prop_assert_eq!(logistic_elo(&r).unwrap_err(), StatsError::NoGames);
        }
    }
}

fn spsa_param() -> impl Strategy<Value = SpsaParam> {
    (
        any::<bool>(),
        -100.0f64..100.0,
        1.0f64..200.0,
        0.0f64..1.0,
        prop_oneof![Just(0.0), 0.05f64..20.0],
        0.0f64..0.05,
    )
        .prop_map(|(int, min, span, at, c_end, r_end)| SpsaParam {
            name: String::new(),
            kind: if int {
                ParamKind::Int
            } else {
                ParamKind::Float
            },
            start: min + at * span,
            min,
            max: min + span,
            c_end,
            r_end,
        })
}

fn spsa_config() -> impl Strategy<Value = SpsaConfig> {
    (
        prop::collection::vec(spsa_param(), 1..5),
        1u64..400,
        any::<u64>(),
    )
        .prop_map(|(mut params, pairs, seed)| {
            for (i, p) in params.iter_mut().enumerate() {
                p.name = format!("p{i}");
                if p.kind == ParamKind::Int {
                    // At least two integers in range.
                    p.max = p.max.max(p.min.ceil() + 1.0);
                }
            }
            SpsaConfig::new(params, pairs, seed)
        })
}

/// A deterministic stand-in for playing a pair: the `+` side wins more often when its first
/// value is larger, with pseudo-noise from the pair id.
fn play(plus: &[f64], minus: &[f64], pair_id: u64) -> PairScore {
    let edge = (plus[0] - minus[0]).signum() as i64;
    let noise = (pair_id.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 61) as i64; // 0..=7
    let half_points = (2 + edge + noise % 3 - 1).clamp(0, 4) as u8;
    PairScore::from_half_points(half_points).unwrap()
}

fn run(spsa: &mut Spsa, batches: u32) {
    for _ in 0..batches {
        for a in spsa.assign(3) {
            let score = play(&a.plus, &a.minus, a.pair_id);
            spsa.report(a.pair_id, score).unwrap();
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn spsa_never_leaves_the_bounds(config in spsa_config(), batches in 1u32..60) {
        let mut spsa = Spsa::new(config.clone()).unwrap();
        for _ in 0..batches {
            for a in spsa.assign(4) {
                for (i, p) in config.params.iter().enumerate() {
                    prop_assert!(p.min <= a.plus[i] && a.plus[i] <= p.max);
                    prop_assert!(p.min <= a.minus[i] && a.minus[i] <= p.max);
                    if p.kind == ParamKind::Int {
                        prop_assert_eq!(a.plus[i].fract(), 0.0);
                        if !p.is_frozen() {
                            prop_assert!(a.plus[i] != a.minus[i]);
                        }
                    }
                }
                let score = play(&a.plus, &a.minus, a.pair_id);
                spsa.report(a.pair_id, score).unwrap();
                for (i, p) in config.params.iter().enumerate() {
                    prop_assert!(p.min <= spsa.theta()[i] && spsa.theta()[i] <= p.max);
                }
            }
        }
    }

    #[test]
    fn seeded_spsa_is_reproducible_bit_for_bit(config in spsa_config(), batches in 1u32..40, cut in 0u32..40) {
        let mut a = Spsa::new(config.clone()).unwrap();
        run(&mut a, batches);
        let mut b = Spsa::new(config.clone()).unwrap();
        run(&mut b, batches);
        prop_assert_eq!(&a, &b);
        prop_assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());

        // Save after `cut` batches, reload, continue: the same run.
        let cut = cut.min(batches);
        let mut c = Spsa::new(config.clone()).unwrap();
        run(&mut c, cut);
        let saved = serde_json::to_string(&c).unwrap();
        let mut d: Spsa = serde_json::from_str(&saved).unwrap();
        run(&mut d, batches - cut);
        prop_assert_eq!(&a, &d);

        // The recorded history replays to the same θ.
        let path = Spsa::replay(&config, a.history()).unwrap();
        let last = path.last().map(Vec::as_slice).unwrap_or(a.theta());
        prop_assert_eq!(last, a.theta());
    }
}

/// Play `batches` batches of three pairs, reported out of order, the middle pair of every
/// fourth batch abandoned; returns the updates `report` gave.
fn run_mixed(spsa: &mut Spsa, batches: u32) -> Vec<SpsaUpdate> {
    let mut updates = Vec::new();
    for b in 0..batches {
        let batch = spsa.assign(3);
        for (i, a) in batch.iter().enumerate().rev() {
            if b % 4 == 3 && i == 1 {
                spsa.abandon(a.pair_id).unwrap();
                continue;
            }
            let score = play(&a.plus, &a.minus, a.pair_id);
            updates.push(spsa.report(a.pair_id, score).unwrap());
        }
    }
    updates
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn spsa_without_history_runs_the_same(config in spsa_config(), batches in 1u32..40, cut in 0u32..40) {
        let mut on = Spsa::new(config.clone()).unwrap();
        let mut off = Spsa::new(config.clone()).unwrap();
        off.set_keep_history(false);
        prop_assert!(on.keeps_history() && !off.keeps_history());
        let cut = cut.min(batches);
        let mut kept = run_mixed(&mut on, cut);
        let mut given = run_mixed(&mut off, cut);
        // Through a snapshot halfway, as the coordinator does.
        let mut off: Spsa = serde_json::from_str(&serde_json::to_string(&off).unwrap()).unwrap();
        kept.extend(run_mixed(&mut on, batches - cut));
        given.extend(run_mixed(&mut off, batches - cut));

        // The same updates, θ trajectory included, and the same state apart from the history.
        prop_assert_eq!(&kept, &given);
        prop_assert_eq!(on.history(), kept.as_slice());
        prop_assert!(off.history().is_empty());
        prop_assert_eq!(off.credited(), given.len() as u64);
        prop_assert_eq!(on.theta(), off.theta());
        prop_assert_eq!(on.assign(2), off.assign(2));
        on.set_keep_history(false);
        prop_assert!(on.history().is_empty());
        prop_assert_eq!(&on, &off);

        // The updates, held by the caller, check against the state and replay to its θ.
        off.verify_updates(&given).unwrap();
        off.verify_updates(given.iter().cloned()).unwrap();
        let mut replay = SpsaReplay::new(&config).unwrap();
        for u in &given {
            prop_assert_eq!(replay.apply(u).unwrap(), u.theta.as_slice());
        }
        prop_assert_eq!(replay.theta(), off.theta());
        prop_assert_eq!(replay.applied(), off.credited());
        if !given.is_empty() {
            // A missing update is caught.
            prop_assert!(matches!(
                off.verify_updates(&given[1..]),
                Err(SpsaError::BadHistory(_))
            ));
        }
    }
}
