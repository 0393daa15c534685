//! Rule-set study figures: how a rule-set (a castling rule variant, say) changes the game.
//!
//! Input is one plain [`GameRecord`] per game, filled by the worker. Output, per rule-set:
//! results, White's score with a 95% interval, draw and decisive rates with Wilson intervals,
//! game length (mean, median, quartiles), how often each castling kind is played by each side
//! and on which move, and termination reasons; and for each rule-set against a baseline, the
//! difference in White's score and in draw rate with a 95% interval and a two-sided p-value.
//!
//! Intervals are large-sample ones (normal approximation for the score, Wilson for rates,
//! Newcombe's hybrid score interval for a difference of rates), which is what matters for
//! studies of thousands of games; with few games they are wide, never undefined.

use crate::normal::{phi, phi_inv};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use thiserror::Error;

/// Result of one game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// White won.
    WhiteWin,
    /// Drawn.
    Draw,
    /// Black won.
    BlackWin,
}

impl Outcome {
    /// White's score: 1, ½ or 0.
    pub fn white_score(self) -> f64 {
        match self {
            Self::WhiteWin => 1.0,
            Self::Draw => 0.5,
            Self::BlackWin => 0.0,
        }
    }
}

/// A side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// White.
    White,
    /// Black.
    Black,
}

/// One castling move played in a game.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CastlingEvent {
    /// Who castled.
    pub side: Side,
    /// Which castling kind (rule-set specific id, e.g. `"O-O"` or `"long"`).
    pub kind: String,
    /// Full-move number of the castling move.
    pub move_number: u32,
}

/// One game, as the worker records it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GameRecord {
    /// Rule-set id.
    pub ruleset: String,
    /// Result.
    pub result: Outcome,
    /// Game length in plies.
    pub plies: u32,
    /// Why the game ended (e.g. `"checkmate"`, `"adjudication"`).
    pub termination: String,
    /// Castling moves, in any order.
    pub castlings: Vec<CastlingEvent>,
}

/// Why a study could not be made.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum StudyError {
    /// The baseline rule-set has no games.
    #[error("baseline rule-set '{0}' has no games")]
    UnknownBaseline(String),
}

/// A proportion with its 95% Wilson interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rate {
    /// Number of hits.
    pub count: u64,
    /// Number of trials.
    pub total: u64,
    /// `count / total`.
    pub rate: f64,
    /// Wilson score interval; unlike the Wald interval it stays inside [0, 1] and is not
    /// empty at rates of 0 or 1.
    pub ci: [f64; 2],
}

impl Rate {
    /// The rate of `count` in `total` (`total` > 0).
    pub fn wilson(count: u64, total: u64) -> Self {
        let n = total as f64;
        let p = count as f64 / n;
        let z = z975();
        let z2 = z * z;
        let denom = 1.0 + z2 / n;
        let center = (p + z2 / (2.0 * n)) / denom;
        let half = z / denom * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
        Self {
            count,
            total,
            rate: p,
            ci: [(center - half).max(0.0), (center + half).min(1.0)],
        }
    }
}

/// Location and spread of a list of numbers.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Arithmetic mean.
    pub mean: f64,
    /// Median.
    pub median: f64,
    /// First quartile.
    pub q1: f64,
    /// Third quartile.
    pub q3: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
}

impl Summary {
    /// Summary of a non-empty list; quartiles by linear interpolation between order
    /// statistics (the usual "type 7" definition, as NumPy and R default to).
    fn of(values: &mut [f64]) -> Option<Self> {
        if values.is_empty() {
            return None;
        }
        values.sort_by(f64::total_cmp);
        let q = |p: f64| {
            let h = (values.len() - 1) as f64 * p;
            let lo = h.floor() as usize;
            let hi = h.ceil() as usize;
            values[lo] + (h - lo as f64) * (values[hi] - values[lo])
        };
        Some(Self {
            mean: values.iter().sum::<f64>() / values.len() as f64,
            median: q(0.5),
            q1: q(0.25),
            q3: q(0.75),
            min: values[0],
            max: values[values.len() - 1],
        })
    }
}

/// How often one side played one castling kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CastlingFigures {
    /// Who castled.
    pub side: Side,
    /// Castling kind id.
    pub kind: String,
    /// Castling moves of this kind by this side.
    pub count: u64,
    /// Share of games in which it happened at least once (Wilson interval).
    pub games: Rate,
    /// Move numbers on which it was played.
    pub move_number: Summary,
    /// Move number → how often it was played on that move.
    pub by_move: BTreeMap<u32, u64>,
}

/// One termination reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TerminationFigures {
    /// The reason as recorded.
    pub reason: String,
    /// Share of the games that ended so (Wilson interval).
    pub games: Rate,
}

/// Figures of one rule-set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RulesetFigures {
    /// Rule-set id.
    pub ruleset: String,
    /// Games played.
    pub games: u64,
    /// White wins.
    pub white_wins: u64,
    /// Draws.
    pub draws: u64,
    /// Black wins.
    pub black_wins: u64,
    /// White's mean score per game.
    pub white_score: f64,
    /// 95% interval of White's score (normal approximation, clamped to [0, 1]).
    pub white_score_ci: [f64; 2],
    /// Per-game variance of White's score (used for comparisons).
    pub white_score_variance: f64,
    /// Draw rate.
    pub draw_rate: Rate,
    /// Decisive-game rate.
    pub decisive_rate: Rate,
    /// Game length in plies.
    pub plies: Summary,
    /// Castling, per side and kind (White first, kinds by id).
    pub castling: Vec<CastlingFigures>,
    /// Termination reasons, most frequent first.
    pub terminations: Vec<TerminationFigures>,
}

/// A difference between a rule-set and the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Difference {
    /// Rule-set minus baseline.
    pub estimate: f64,
    /// 95% interval of the difference.
    pub ci: [f64; 2],
    /// Two-sided p-value of "no difference".
    pub p_value: f64,
}

/// A rule-set compared with the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// The rule-set.
    pub ruleset: String,
    /// The baseline rule-set.
    pub baseline: String,
    /// Difference in White's score (Welch z-test).
    pub white_score: Difference,
    /// Difference in draw rate (Newcombe interval, pooled two-proportion z-test).
    pub draw_rate: Difference,
}

/// A whole study.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Study {
    /// Figures per rule-set, by rule-set id.
    pub rulesets: Vec<RulesetFigures>,
    /// Every other rule-set against the baseline (empty without a baseline).
    pub comparisons: Vec<Comparison>,
}

fn z975() -> f64 {
    phi_inv(0.975)
}

/// Figures per rule-set, ordered by rule-set id.
pub fn ruleset_figures(records: &[GameRecord]) -> Vec<RulesetFigures> {
    let mut by_ruleset: BTreeMap<&str, Vec<&GameRecord>> = BTreeMap::new();
    for r in records {
        by_ruleset.entry(r.ruleset.as_str()).or_default().push(r);
    }
    by_ruleset
        .into_iter()
        .filter_map(|(id, games)| figures_of(id, &games))
        .collect()
}

/// Running counts for one (side, castling kind).
#[derive(Default)]
struct CastlingTally {
    count: u64,
    games: BTreeSet<usize>,
    moves: Vec<f64>,
    by_move: BTreeMap<u32, u64>,
}

fn figures_of(id: &str, games: &[&GameRecord]) -> Option<RulesetFigures> {
    let n = games.len() as u64;
    let count = |o: Outcome| games.iter().filter(|g| g.result == o).count() as u64;
    let (white_wins, draws, black_wins) = (
        count(Outcome::WhiteWin),
        count(Outcome::Draw),
        count(Outcome::BlackWin),
    );
    let nf = n as f64;
    let score = games.iter().map(|g| g.result.white_score()).sum::<f64>() / nf;
    let variance = games
        .iter()
        .map(|g| (g.result.white_score() - score).powi(2))
        .sum::<f64>()
        / nf;
    let half = z975() * (variance / nf).sqrt();
    let mut plies: Vec<f64> = games.iter().map(|g| f64::from(g.plies)).collect();

    let mut castling: BTreeMap<(Side, &str), CastlingTally> = BTreeMap::new();
    for (gi, g) in games.iter().enumerate() {
        for c in &g.castlings {
            let e = castling.entry((c.side, c.kind.as_str())).or_default();
            e.count += 1;
            e.games.insert(gi);
            e.moves.push(f64::from(c.move_number));
            *e.by_move.entry(c.move_number).or_default() += 1;
        }
    }
    let castling = castling
        .into_iter()
        .filter_map(|((side, kind), mut t)| {
            Some(CastlingFigures {
                side,
                kind: kind.to_string(),
                count: t.count,
                games: Rate::wilson(t.games.len() as u64, n),
                move_number: Summary::of(&mut t.moves)?,
                by_move: t.by_move,
            })
        })
        .collect();

    let mut reasons: BTreeMap<&str, u64> = BTreeMap::new();
    for g in games {
        *reasons.entry(g.termination.as_str()).or_default() += 1;
    }
    let mut terminations: Vec<TerminationFigures> = reasons
        .into_iter()
        .map(|(reason, c)| TerminationFigures {
            reason: reason.to_string(),
            games: Rate::wilson(c, n),
        })
        .collect();
    terminations.sort_by(|a, b| {
        b.games
            .count
            .cmp(&a.games.count)
            .then(a.reason.cmp(&b.reason))
    });

    Some(RulesetFigures {
        ruleset: id.to_string(),
        games: n,
        white_wins,
        draws,
        black_wins,
        white_score: score,
        white_score_ci: [(score - half).max(0.0), (score + half).min(1.0)],
        white_score_variance: variance,
        draw_rate: Rate::wilson(draws, n),
        decisive_rate: Rate::wilson(white_wins + black_wins, n),
        plies: Summary::of(&mut plies)?,
        castling,
        terminations,
    })
}

/// Two-sided p-value of a z statistic; a zero standard error gives 1 for a zero difference
/// and 0 otherwise (a certain difference), never NaN.
fn p_value(diff: f64, se: f64) -> f64 {
    if se > 0.0 {
        2.0 * phi(-(diff.abs() / se))
    } else if diff == 0.0 {
        1.0
    } else {
        0.0
    }
}

/// Compare `a` with the baseline `b`.
pub fn compare_pair(a: &RulesetFigures, b: &RulesetFigures) -> Comparison {
    let z = z975();
    let (na, nb) = (a.games as f64, b.games as f64);
    // White's score: Welch's unpooled z.
    let d = a.white_score - b.white_score;
    let se = (a.white_score_variance / na + b.white_score_variance / nb).sqrt();
    let white_score = Difference {
        estimate: d,
        ci: [d - z * se, d + z * se],
        p_value: p_value(d, se),
    };
    // Draw rate: Newcombe's hybrid score interval from the two Wilson intervals; p-value from
    // the pooled two-proportion z-test.
    let (pa, pb) = (a.draw_rate.rate, b.draw_rate.rate);
    let (la, ua) = (a.draw_rate.ci[0], a.draw_rate.ci[1]);
    let (lb, ub) = (b.draw_rate.ci[0], b.draw_rate.ci[1]);
    let dd = pa - pb;
    let lo = dd - ((pa - la).powi(2) + (ub - pb).powi(2)).sqrt();
    let hi = dd + ((ua - pa).powi(2) + (pb - lb).powi(2)).sqrt();
    let pooled = (a.draws + b.draws) as f64 / (na + nb);
    let se_pooled = (pooled * (1.0 - pooled) * (1.0 / na + 1.0 / nb)).sqrt();
    Comparison {
        ruleset: a.ruleset.clone(),
        baseline: b.ruleset.clone(),
        white_score,
        draw_rate: Difference {
            estimate: dd,
            ci: [lo, hi],
            p_value: p_value(dd, se_pooled),
        },
    }
}

/// Figures for every rule-set and, with a baseline, every other rule-set compared with it.
pub fn study(records: &[GameRecord], baseline: Option<&str>) -> Result<Study, StudyError> {
    let rulesets = ruleset_figures(records);
    let comparisons = match baseline {
        None => Vec::new(),
        Some(id) => {
            let base = rulesets
                .iter()
                .find(|r| r.ruleset == id)
                .ok_or_else(|| StudyError::UnknownBaseline(id.to_string()))?;
            rulesets
                .iter()
                .filter(|r| r.ruleset != id)
                .map(|r| compare_pair(r, base))
                .collect()
        }
    };
    Ok(Study {
        rulesets,
        comparisons,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(
        ruleset: &str,
        result: Outcome,
        plies: u32,
        castlings: Vec<CastlingEvent>,
    ) -> GameRecord {
        GameRecord {
            ruleset: ruleset.into(),
            result,
            plies,
            termination: if result == Outcome::Draw {
                "repetition"
            } else {
                "checkmate"
            }
            .into(),
            castlings,
        }
    }

    fn castle(side: Side, kind: &str, move_number: u32) -> CastlingEvent {
        CastlingEvent {
            side,
            kind: kind.into(),
            move_number,
        }
    }

    #[test]
    fn figures_of_a_small_study() {
        let records = vec![
            game(
                "std",
                Outcome::WhiteWin,
                80,
                vec![castle(Side::White, "O-O", 8), castle(Side::Black, "O-O", 9)],
            ),
            game(
                "std",
                Outcome::Draw,
                100,
                vec![castle(Side::White, "O-O", 10)],
            ),
            game("std", Outcome::BlackWin, 60, vec![]),
            game(
                "std",
                Outcome::Draw,
                120,
                vec![castle(Side::White, "O-O-O", 12)],
            ),
            game(
                "latte",
                Outcome::WhiteWin,
                70,
                vec![castle(Side::White, "long", 7)],
            ),
            game("latte", Outcome::WhiteWin, 90, vec![]),
        ];
        let s = study(&records, Some("std")).unwrap();
        assert_eq!(s.rulesets.len(), 2);
        let std = s.rulesets.iter().find(|r| r.ruleset == "std").unwrap();
        assert_eq!(
            (std.games, std.white_wins, std.draws, std.black_wins),
            (4, 1, 2, 1)
        );
        assert_eq!(std.white_score, 0.5);
        assert_eq!(std.plies.median, 90.0);
        assert_eq!(std.plies.q1, 75.0);
        assert_eq!(std.plies.q3, 105.0);
        assert_eq!(std.draw_rate.rate, 0.5);
        assert!(std.draw_rate.ci[0] > 0.0 && std.draw_rate.ci[1] < 1.0);
        let oo = std
            .castling
            .iter()
            .find(|c| c.side == Side::White && c.kind == "O-O")
            .unwrap();
        assert_eq!(oo.count, 2);
        assert_eq!(oo.games.rate, 0.5);
        assert_eq!(oo.move_number.mean, 9.0);
        assert_eq!(std.terminations[0].games.count, 2);
        assert_eq!(s.comparisons.len(), 1);
        let c = &s.comparisons[0];
        assert_eq!(c.ruleset, "latte");
        assert_eq!(c.white_score.estimate, 0.5);
        assert!(c.white_score.ci[0] < 0.5 && 0.5 < c.white_score.ci[1]);
        assert!((0.0..=1.0).contains(&c.white_score.p_value));
        assert!(
            c.draw_rate.ci[0] <= c.draw_rate.estimate && c.draw_rate.estimate <= c.draw_rate.ci[1]
        );
    }

    #[test]
    fn degenerate_studies_give_numbers_not_nan() {
        let records = vec![
            game("a", Outcome::Draw, 10, vec![]),
            game("b", Outcome::Draw, 10, vec![]),
        ];
        let s = study(&records, Some("a")).unwrap();
        let c = &s.comparisons[0];
        assert_eq!(c.white_score.p_value, 1.0);
        assert_eq!(c.draw_rate.p_value, 1.0);
        for x in [
            c.white_score.ci[0],
            c.white_score.ci[1],
            c.draw_rate.ci[0],
            c.draw_rate.ci[1],
        ] {
            assert!(x.is_finite());
        }
        assert!(study(&[], None).unwrap().rulesets.is_empty());
        assert_eq!(
            study(&records, Some("zzz")).unwrap_err(),
            StudyError::UnknownBaseline("zzz".into())
        );
    }

    #[test]
    fn wilson_matches_a_textbook_value() {
        // 81 of 263: Wilson 95% interval ≈ [0.2553, 0.3662] (Newcombe 1998, example).
        let r = Rate::wilson(81, 263);
        assert!((r.ci[0] - 0.2553).abs() < 1e-4 && (r.ci[1] - 0.3662).abs() < 1e-4);
    }
}
