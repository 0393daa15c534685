//! SPSA: a batch of pairs, each with its own perturbation, moves θ by the same expected amount
//! as fishtest's batch with one shared perturbation.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use stats::spsa::{ParamKind, Spsa, SpsaConfig, SpsaParam};
use stats::PairScore;

const GRADIENT: [f64; 3] = [0.004, -0.002, 0.0];
const PAIRS_PER_BATCH: u32 = 8;
const BATCHES: u32 = 6000;

/// One game pair between engines with these values: each game is +1/0/−1 for the `+` side,
/// with an edge proportional to the gradient times the value difference.
fn play(plus: &[f64], minus: &[f64], rng: &mut Xoshiro256PlusPlus) -> i8 {
    let edge: f64 = GRADIENT
        .iter()
        .zip(plus.iter().zip(minus))
        .map(|(g, (p, m))| g * (p - m) / 2.0)
        .sum();
    let game = |rng: &mut Xoshiro256PlusPlus| {
        let u: f64 = rng.gen();
        if u < 0.3 + edge {
            1
        } else if u < 0.6 {
            0
        } else {
            -1
        }
    };
    game(rng) + game(rng)
}

fn config() -> SpsaConfig {
    let params = (0..3)
        .map(|i| SpsaParam {
            name: format!("p{i}"),
            kind: ParamKind::Float,
            start: 0.0,
            min: -1e9,
            max: 1e9,
            c_end: 2.0 + i as f64,
            r_end: 0.002,
        })
        .collect();
    SpsaConfig::new(params, u64::from(PAIRS_PER_BATCH * BATCHES), 42)
}

/// Mean and standard error.
fn mean_se(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    let v = xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0);
    (m, (v / n).sqrt())
}

#[test]
fn per_pair_perturbations_give_fishtests_expected_update() {
    let mut spsa = Spsa::new(config()).unwrap();
    let mut games = Xoshiro256PlusPlus::seed_from_u64(7);
    let n = GRADIENT.len();
    // Per batch and parameter: the update divided by (a_k / c_k) and by (pairs · c_k), whose
    // expectation is 4·g_i under both schemes.
    let mut ours = vec![Vec::new(); n];
    let mut fishtest = vec![Vec::new(); n];
    let mut flips_rng = Xoshiro256PlusPlus::seed_from_u64(11);
    for _ in 0..BATCHES {
        let before = spsa.theta().to_vec();
        let batch = spsa.assign(PAIRS_PER_BATCH);
        let (c_k, a_k) = (batch[0].c_k.clone(), batch[0].a_k.clone());
        for a in &batch {
            let r = play(&a.plus, &a.minus, &mut games);
            let score = PairScore::from_half_points((r + 2) as u8).unwrap();
            spsa.report(a.pair_id, score).unwrap();
        }
        // fishtest: one shared flip vector for the batch, θ ± c_k·δ, one step for Σ(W − L).
        let shared: Vec<f64> = (0..n)
            .map(|_| if flips_rng.gen::<bool>() { 1.0 } else { -1.0 })
            .collect();
        let plus: Vec<f64> = (0..n).map(|i| before[i] + c_k[i] * shared[i]).collect();
        let minus: Vec<f64> = (0..n).map(|i| before[i] - c_k[i] * shared[i]).collect();
        let total: i32 = (0..PAIRS_PER_BATCH)
            .map(|_| i32::from(play(&plus, &minus, &mut games)))
            .sum();
        for i in 0..n {
            let scale = a_k[i] / c_k[i] * f64::from(PAIRS_PER_BATCH) * c_k[i];
            ours[i].push((spsa.theta()[i] - before[i]) / scale);
            let fishtest_step = a_k[i] / c_k[i].powi(2) * c_k[i] * f64::from(total) * shared[i];
            fishtest[i].push(fishtest_step / scale);
        }
    }
    for i in 0..n {
        let (mo, so) = mean_se(&ours[i]);
        let (mf, sf) = mean_se(&fishtest[i]);
        let expected = 4.0 * GRADIENT[i];
        assert!(
            (mo - expected).abs() < 5.0 * so,
            "ours p{i}: {mo} ± {so}, expected {expected}"
        );
        assert!(
            (mf - expected).abs() < 5.0 * sf,
            "fishtest p{i}: {mf} ± {sf}, expected {expected}"
        );
        assert!(
            (mo - mf).abs() < 5.0 * (so * so + sf * sf).sqrt(),
            "p{i}: {mo} vs {mf}"
        );
        // Independent perturbations per pair make the estimate less noisy, not more.
        assert!(so <= sf * 1.05, "p{i}: {so} vs {sf}");
    }
}

#[test]
fn history_records_every_update() {
    let mut spsa = Spsa::new(config()).unwrap();
    let mut games = Xoshiro256PlusPlus::seed_from_u64(3);
    let batch = spsa.assign(5);
    for a in batch.iter().rev() {
        let r = play(&a.plus, &a.minus, &mut games);
        spsa.report(
            a.pair_id,
            PairScore::from_half_points((r + 2) as u8).unwrap(),
        )
        .unwrap();
    }
    let h = spsa.history();
    assert_eq!(h.len(), 5);
    assert_eq!(spsa.credited(), 5);
    for (u, a) in h.iter().zip(batch.iter().rev()) {
        assert_eq!(u.pair_id, a.pair_id);
        assert_eq!(u.flips, a.flips);
        assert_eq!(u.c_k, a.c_k);
        assert_eq!(u.a_k, a.a_k);
        assert_eq!(u.iteration, 0);
    }
    assert_eq!(h.last().unwrap().theta, spsa.theta());
    assert_eq!(Spsa::replay(spsa.config(), h).unwrap().len(), 5);
}
