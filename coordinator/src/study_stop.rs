//! When a study may stop before its last game: once every comparison with the baseline is
//! measured to the precision the plan asked for (`[study] stop_half_width`), or once every
//! comparison is decided by its sequential test (`[study.decide]`, [`stats::sequential`]).
//!
//! Checked when a run passes one of its history checkpoints (at most about 400 times a run,
//! see [`crate::run::history_step`]), from the running tallies: no work per report that
//! grows with the run.

use crate::config::STUDY_STOP_MIN_GAMES;
use crate::report::study::measures;
use stats::sequential::{DecisionRule, Judgement};
use stats::study::{Difference, Study};

/// One comparison's sequential test: the rule-set, the measure, its difference and the test.
#[derive(Debug, Clone, PartialEq)]
pub struct Tested {
    /// The rule-set compared with the baseline.
    pub ruleset: String,
    /// The measure (one of the report's [`measures`]).
    pub measure: &'static str,
    /// Rule-set minus baseline.
    pub difference: Difference,
    /// What its test says.
    pub judgement: Judgement,
}

/// Every comparison's test, rule-set by rule-set, in the report's order of measures.
pub fn tests(study: &Study, rule: &DecisionRule) -> Vec<Tested> {
    study
        .comparisons
        .iter()
        .flat_map(|c| {
            measures().into_iter().filter_map(move |(measure, pick)| {
                let difference = pick(c)?;
                Some(Tested {
                    ruleset: c.ruleset.clone(),
                    measure,
                    difference,
                    judgement: rule.judge(&difference),
                })
            })
        })
        .collect()
}

/// The reason to stop, if every comparison's test is decided and every rule-set has at least
/// [`STUDY_STOP_MIN_GAMES`] games (the normal model of the tests needs them, as the intervals
/// do).
pub fn all_decided(study: &Study, rule: &DecisionRule) -> Option<String> {
    if !ready(study) {
        return None;
    }
    let tested = tests(study, rule);
    let found = tested
        .iter()
        .filter(|t| {
            matches!(
                t.judgement.decision,
                stats::sequential::Decision::Higher | stats::sequential::Decision::Lower
            )
        })
        .count();
    tested
        .iter()
        .all(|t| t.judgement.decision.is_decided())
        .then(|| {
            format!(
                "every comparison decided (α {}, β {}, effect {} points): {found} of {} differ",
                rule.alpha,
                rule.beta,
                rule.effect * 100.0,
                tested.len()
            )
        })
}

/// Whether a study may be judged for stopping at all: it has comparisons with a baseline, and
/// every rule-set has [`STUDY_STOP_MIN_GAMES`] games (below that, the large-sample intervals
/// and tests are not to be trusted).
fn ready(study: &Study) -> bool {
    !study.comparisons.is_empty()
        && study
            .rulesets
            .iter()
            .all(|r| r.games >= STUDY_STOP_MIN_GAMES)
}

/// Every interval the rule asks about (the report's measures), as half-widths (fractions).
fn half_widths(study: &Study) -> Vec<f64> {
    let half = |d: Difference| (d.ci[1] - d.ci[0]) / 2.0;
    study
        .comparisons
        .iter()
        .flat_map(|c| measures().into_iter().filter_map(move |(_, pick)| pick(c)))
        .map(half)
        .collect()
}

/// The reason to stop, if every comparison's 95% interval is within ±`half_width_points`
/// percentage points and every rule-set has at least [`STUDY_STOP_MIN_GAMES`] games.
pub fn narrow_enough(study: &Study, half_width_points: f64) -> Option<String> {
    if !ready(study) {
        return None;
    }
    let widest = half_widths(study).into_iter().fold(0.0_f64, f64::max);
    (widest * 100.0 <= half_width_points).then(|| {
        format!(
            "every interval within ±{half_width_points} points (widest ±{:.2})",
            widest * 100.0
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use stats::study::{study, GameRecord, Outcome};

    fn games(n: u32) -> Vec<GameRecord> {
        let mut out = Vec::new();
        for i in 0..n {
            for ruleset in ["normal", "luft"] {
                out.push(GameRecord {
                    ruleset: ruleset.into(),
                    result: [Outcome::WhiteWin, Outcome::Draw, Outcome::BlackWin][(i % 3) as usize],
                    plies: 80,
                    termination: "checkmate".into(),
                    castlings: Vec::new(),
                    milestones: Vec::new(),
                });
            }
        }
        out
    }

    #[test]
    fn intervals_narrow_with_games_and_the_rule_waits_for_them() {
        let few = study(&games(100), Some("normal")).unwrap();
        // Too few games per rule-set, whatever the widths.
        assert_eq!(narrow_enough(&few, 50.0), None);
        let many = study(&games(4000), Some("normal")).unwrap();
        let widest = half_widths(&many).into_iter().fold(0.0_f64, f64::max) * 100.0;
        assert!(narrow_enough(&many, widest + 0.01).is_some());
        assert_eq!(narrow_enough(&many, widest - 0.01), None);
        // A quarter of the games: intervals about twice as wide.
        let quarter = study(&games(1000), Some("normal")).unwrap();
        let w4 = half_widths(&quarter).into_iter().fold(0.0_f64, f64::max) * 100.0;
        assert!((w4 / widest - 2.0).abs() < 0.1, "{w4} vs {widest}");
    }

    #[test]
    fn without_a_baseline_a_study_never_stops_early() {
        let s = study(&games(4000), None).unwrap();
        assert_eq!(narrow_enough(&s, 50.0), None);
        let rule = DecisionRule::new(0.05, 0.05, 0.5).unwrap();
        assert_eq!(all_decided(&s, &rule), None);
    }

    #[test]
    fn a_study_is_decided_when_every_comparison_is() {
        // The two rule-sets play identical games: every test ends in "no difference", once
        // there are games enough for the margin asked for.
        let rule = DecisionRule::new(0.05, 0.05, 0.10).unwrap();
        let few = study(&games(100), Some("normal")).unwrap();
        assert_eq!(all_decided(&few, &rule), None, "too few games");
        let some = study(&games(300), Some("normal")).unwrap();
        let open: Vec<_> = tests(&some, &rule)
            .into_iter()
            .filter(|t| !t.judgement.decision.is_decided())
            .map(|t| t.measure)
            .collect();
        let many = study(&games(3000), Some("normal")).unwrap();
        let reason = all_decided(&many, &rule).expect("decided");
        assert!(reason.contains("0 of 6 differ"), "{reason}");
        // A margin of 1 point is not settled by 300 games a side.
        let tight = DecisionRule::new(0.05, 0.05, 0.01).unwrap();
        assert_eq!(all_decided(&some, &tight), None, "open then: {open:?}");
    }

    #[test]
    fn a_real_difference_is_decided_in_its_direction() {
        // Under luft, White wins every game the baseline draws: White's score is higher and
        // the draw rate lower, each decided; the castling measures are equal (nobody castles).
        let mut records = games(600);
        for r in records.iter_mut().filter(|r| r.ruleset == "luft") {
            if r.result == Outcome::Draw {
                r.result = Outcome::WhiteWin;
            }
        }
        let s = study(&records, Some("normal")).unwrap();
        let rule = DecisionRule::new(0.05, 0.05, 0.05).unwrap();
        let t = tests(&s, &rule);
        let of = |m: &str| {
            t.iter()
                .find(|x| x.measure == m)
                .map(|x| x.judgement.decision)
        };
        use stats::sequential::Decision;
        assert_eq!(of("White's score"), Some(Decision::Higher));
        assert_eq!(of("draw rate"), Some(Decision::Lower));
        assert_eq!(of("White castled"), Some(Decision::NoDifference));
        let reason = all_decided(&s, &rule).expect("decided");
        assert!(reason.contains("2 of 6 differ"), "{reason}");
    }
}
