//! Sequential decisions for study comparisons: is a rule-set's figure higher than the
//! baseline's, lower, or within a stated margin of it, decided as the games come in, at an
//! error rate the user sets.
//!
//! Each comparison (one measure, one rule-set against the baseline) gets a two-sided
//! sequential probability ratio test in Sobel and Wald's form: two one-sided SPRTs, "no
//! difference" (δ = 0) against "higher by `effect`" (δ = +e) and against "lower by `effect`"
//! (δ = −e), each at `alpha / 2` and `beta`. The figure is an estimate d̂ with standard error
//! s, taken as normal (the same large-sample model as the report's intervals and fishtest's
//! normalised GSPRT); the log-likelihood ratio of δ = ±e against δ = 0 is then
//! `(±e·d̂ − e²/2) / s²`.
//!
//! * "higher" once the upward LLR reaches `ln((1 − β) / (α/2))`, "lower" likewise downward;
//! * "no difference of `effect` or more" once both LLRs are at or below `ln(β / (1 − α/2))`;
//! * otherwise still open.
//!
//! The caller checks at whatever moments it likes (the coordinator: its history checkpoints)
//! and needs to keep no state: a likelihood ratio is a martingale under the hypothesis in its
//! denominator, so by Ville's inequality the chance that it *ever* reaches 1/α is at most α,
//! whenever one looks. A decision read at any checkpoint keeps the stated error rates (up to
//! the normal approximation), and "every comparison decided at once" is a stopping rule that
//! keeps them too. What stopping on a decision does not keep is the estimates: a study stopped
//! because a difference was found reports that difference somewhat larger than it is, the
//! usual price of sequential stopping, which width-based stopping does not pay.

use crate::study::Difference;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The error rates and margin of the per-comparison tests.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DecisionRule {
    /// Chance of declaring a difference where there is none (both directions together).
    pub alpha: f64,
    /// Chance of declaring "no difference" where the difference is `effect` or more.
    pub beta: f64,
    /// The smallest difference worth finding, as a fraction (0.03 = 3 percentage points).
    pub effect: f64,
}

/// Why a [`DecisionRule`] cannot be used.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum DecisionRuleError {
    /// An error rate outside (0, 0.5).
    #[error("{name} = {value} is not an error rate between 0 and 0.5 (exclusive)")]
    ErrorRate {
        /// `alpha` or `beta`.
        name: &'static str,
        /// The value given.
        value: f64,
    },
    /// A margin that is not a difference of rates or scores.
    #[error("effect = {0} is not a difference between 0 and 1 (exclusive)")]
    Effect(f64),
}

/// What a comparison's test says now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// The rule-set's figure is higher than the baseline's.
    Higher,
    /// The rule-set's figure is lower than the baseline's.
    Lower,
    /// Any difference is smaller than the rule's `effect`.
    NoDifference,
    /// Not decided yet.
    Open,
}

impl Decision {
    /// True unless the test is still open.
    pub fn is_decided(self) -> bool {
        self != Decision::Open
    }
}

/// A test's state: its two log-likelihood ratios, the bounds and the decision.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Judgement {
    /// LLR of "higher by effect" against "no difference".
    pub llr_higher: f64,
    /// LLR of "lower by effect" against "no difference".
    pub llr_lower: f64,
    /// At or below this, a one-sided test accepts "no difference".
    pub lower_bound: f64,
    /// At or above this, a one-sided test accepts its difference.
    pub upper_bound: f64,
    /// What the two tests say together.
    pub decision: Decision,
}

impl DecisionRule {
    /// A checked rule.
    pub fn new(alpha: f64, beta: f64, effect: f64) -> Result<Self, DecisionRuleError> {
        for (name, value) in [("alpha", alpha), ("beta", beta)] {
            if !(value > 0.0 && value < 0.5) {
                return Err(DecisionRuleError::ErrorRate { name, value });
            }
        }
        if !(effect > 0.0 && effect < 1.0) {
            return Err(DecisionRuleError::Effect(effect));
        }
        Ok(DecisionRule {
            alpha,
            beta,
            effect,
        })
    }

    /// The bounds of each one-sided test: (accept "no difference", accept the difference).
    pub fn bounds(&self) -> (f64, f64) {
        let a = self.alpha / 2.0;
        ((self.beta / (1.0 - a)).ln(), ((1.0 - self.beta) / a).ln())
    }

    /// The test of one difference, from its estimate and standard error.
    ///
    /// A standard error of zero (every game alike on both sides) is floored at a ten-thousandth
    /// of the effect: the data then leave no doubt, and the LLRs are large but finite.
    pub fn judge(&self, d: &Difference) -> Judgement {
        let e = self.effect;
        let se = d.se.max(e * 1e-4);
        let v = se * se;
        let llr_higher = (e * d.estimate - e * e / 2.0) / v;
        let llr_lower = (-e * d.estimate - e * e / 2.0) / v;
        let (lower_bound, upper_bound) = self.bounds();
        let decision = if llr_higher >= upper_bound {
            Decision::Higher
        } else if llr_lower >= upper_bound {
            Decision::Lower
        } else if llr_higher <= lower_bound && llr_lower <= lower_bound {
            Decision::NoDifference
        } else {
            Decision::Open
        };
        Judgement {
            llr_higher,
            llr_lower,
            lower_bound,
            upper_bound,
            decision,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn diff(estimate: f64, se: f64) -> Difference {
        Difference {
            estimate,
            ci: [estimate - 1.96 * se, estimate + 1.96 * se],
            p_value: 1.0,
            se,
        }
    }

    #[test]
    fn bad_rules_are_named() {
        assert!(matches!(
            DecisionRule::new(0.0, 0.05, 0.03),
            Err(DecisionRuleError::ErrorRate { name: "alpha", .. })
        ));
        assert!(matches!(
            DecisionRule::new(0.05, 0.7, 0.03),
            Err(DecisionRuleError::ErrorRate { name: "beta", .. })
        ));
        assert!(matches!(
            DecisionRule::new(0.05, 0.05, f64::NAN),
            Err(DecisionRuleError::Effect(_))
        ));
        assert!(DecisionRule::new(0.05, 0.05, 1.0).is_err());
    }

    #[test]
    fn decisions_follow_the_estimate_and_its_precision() {
        let rule = DecisionRule::new(0.05, 0.05, 0.03).unwrap();
        // Far above with a small error: higher; far below: lower; near zero: no difference.
        assert_eq!(rule.judge(&diff(0.10, 0.01)).decision, Decision::Higher);
        assert_eq!(rule.judge(&diff(-0.10, 0.01)).decision, Decision::Lower);
        assert_eq!(
            rule.judge(&diff(0.001, 0.005)).decision,
            Decision::NoDifference
        );
        // The same estimates with a wide error: open.
        for d in [0.10, -0.10, 0.001] {
            assert_eq!(rule.judge(&diff(d, 0.05)).decision, Decision::Open, "{d}");
        }
        // Halfway between 0 and the effect, the test waits however precise the data.
        assert_eq!(rule.judge(&diff(0.015, 0.004)).decision, Decision::Open);
        // Every game alike: decided, never NaN.
        let j = rule.judge(&diff(0.0, 0.0));
        assert_eq!(j.decision, Decision::NoDifference);
        assert!(j.llr_higher.is_finite() && j.llr_lower.is_finite());
    }

    /// Simulated studies checked every 50 games per rule-set, stopped at the first decision:
    /// under "no difference" the share declaring one stays near alpha or below; under a true
    /// difference of `effect` the share declaring "no difference" stays near beta or below.
    #[test]
    fn simulated_error_rates_stay_within_the_rule() {
        let rule = DecisionRule::new(0.10, 0.10, 0.10).unwrap();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(15);
        let trials = 400;
        let mut run = |p_base: f64, p_rule: f64| -> (usize, usize, usize) {
            let (mut higher, mut lower, mut none) = (0, 0, 0);
            for _ in 0..trials {
                let (mut xa, mut xb, mut n) = (0u32, 0u32, 0u32);
                loop {
                    for _ in 0..50 {
                        xa += u32::from(rng.gen_bool(p_rule));
                        xb += u32::from(rng.gen_bool(p_base));
                    }
                    n += 50;
                    let (pa, pb) = (f64::from(xa) / f64::from(n), f64::from(xb) / f64::from(n));
                    let se = ((pa * (1.0 - pa) + pb * (1.0 - pb)) / f64::from(n)).sqrt();
                    match rule.judge(&diff(pa - pb, se)).decision {
                        Decision::Higher => higher += 1,
                        Decision::Lower => lower += 1,
                        Decision::NoDifference => none += 1,
                        Decision::Open if n < 20_000 => continue,
                        Decision::Open => {}
                    }
                    break;
                }
            }
            (higher, lower, none)
        };
        // No difference: at most alpha (10%, 40 of 400) plus sampling slack.
        let (h, l, _) = run(0.3, 0.3);
        assert!(h + l <= 56, "{h} higher, {l} lower of {trials}");
        // A difference of exactly the effect: "no difference" at most beta plus slack, and
        // never "lower".
        let (h, l, none) = run(0.3, 0.4);
        assert!(none <= 56 && l == 0, "{h} higher, {l} lower, {none} none");
        // Twice the effect: found nearly always.
        let (h, _, _) = run(0.3, 0.5);
        assert!(h >= trials * 95 / 100, "{h} of {trials}");
    }
}
