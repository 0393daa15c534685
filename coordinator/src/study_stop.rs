//! When a study may stop before its last game: once every comparison with the baseline is
//! measured to the precision the plan asked for (`[study] stop_half_width`).
//!
//! Checked when a run passes one of its history checkpoints (at most about 400 times a run,
//! see [`crate::run::history_step`]), from the running tallies: no work per report that
//! grows with the run.

use crate::config::STUDY_STOP_MIN_GAMES;
use crate::report::study::measures;
use stats::study::{Difference, Study};

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
    if study.comparisons.is_empty()
        || study
            .rulesets
            .iter()
            .any(|r| r.games < STUDY_STOP_MIN_GAMES)
    {
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
    }
}
