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
//!
//! A long-running study need not keep its games: [`StudyTally`] (per rule-set, a
//! [`RulesetTally`]) holds running totals, updated one game at a time, mergeable and
//! serialisable, whose size depends on the number of distinct values seen (game lengths,
//! castling kinds and move numbers, termination reasons), not on the number of games. Its
//! figures are bit for bit those that [`study`] computes from the same records.

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

    /// [`Summary::of`] the values a histogram (value → how often) holds, without expanding it.
    ///
    /// Bit for bit the same: order statistics are the same numbers, the interpolation is the
    /// same expression, and the mean's sum is exact in both (integers below 2^53, which a
    /// sum of game lengths or move numbers never reaches).
    fn of_histogram(histogram: &BTreeMap<u32, u64>) -> Option<Self> {
        let n: u64 = histogram.values().sum();
        if n == 0 {
            return None;
        }
        // The k-th smallest value (0-based), k < n.
        let nth = |k: u64| {
            let mut below = 0u64;
            histogram
                .iter()
                .find(|(_, &c)| {
                    below += c;
                    k < below
                })
                .map_or(f64::NAN, |(&v, _)| f64::from(v))
        };
        let q = |p: f64| {
            let h = (n - 1) as f64 * p;
            let lo = h.floor();
            let (at_lo, at_hi) = (nth(lo as u64), nth(h.ceil() as u64));
            at_lo + (h - lo) * (at_hi - at_lo)
        };
        let sum: u128 = histogram
            .iter()
            .map(|(&v, &c)| u128::from(v) * u128::from(c))
            .sum();
        Some(Self {
            mean: sum as f64 / n as f64,
            median: q(0.5),
            q1: q(0.25),
            q3: q(0.75),
            min: nth(0),
            max: nth(n - 1),
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

/// Games won by White, drawn and won by Black.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
struct OutcomeCounts {
    white_wins: u64,
    draws: u64,
    black_wins: u64,
}

impl OutcomeCounts {
    fn add(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::WhiteWin => self.white_wins += 1,
            Outcome::Draw => self.draws += 1,
            Outcome::BlackWin => self.black_wins += 1,
        }
    }

    fn merge(&mut self, other: &Self) {
        self.white_wins += other.white_wins;
        self.draws += other.draws;
        self.black_wins += other.black_wins;
    }

    fn games(&self) -> u64 {
        self.white_wins + self.draws + self.black_wins
    }

    /// White's mean score per game and the per-game variance of the score (`games` > 0).
    ///
    /// The mean is exact (a sum of halves). The variance is summed per outcome, three
    /// products, rather than per game: a per-game sum rounds differently for each order of the
    /// same games, so no running total could reproduce it, and three products round less than
    /// thousands of additions.
    fn white_score_moments(&self) -> (f64, f64) {
        let n = self.games() as f64;
        let (w, d, b) = (
            self.white_wins as f64,
            self.draws as f64,
            self.black_wins as f64,
        );
        let score = (w + 0.5 * d) / n;
        let variance =
            (w * (1.0 - score).powi(2) + d * (0.5 - score).powi(2) + b * score.powi(2)) / n;
        (score, variance)
    }
}

/// Per (side, castling kind), from a rule-set's records.
#[derive(Default)]
struct CastlingOfRecords {
    count: u64,
    games: BTreeSet<usize>,
    moves: Vec<f64>,
    by_move: BTreeMap<u32, u64>,
}

fn figures_of(id: &str, games: &[&GameRecord]) -> Option<RulesetFigures> {
    let n = games.len() as u64;
    let count = |o: Outcome| games.iter().filter(|g| g.result == o).count() as u64;
    let outcomes = OutcomeCounts {
        white_wins: count(Outcome::WhiteWin),
        draws: count(Outcome::Draw),
        black_wins: count(Outcome::BlackWin),
    };
    let mut plies: Vec<f64> = games.iter().map(|g| f64::from(g.plies)).collect();

    let mut castling: BTreeMap<(Side, &str), CastlingOfRecords> = BTreeMap::new();
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
    let reasons = reasons.into_iter().map(|(r, c)| (r.to_string(), c));
    Some(assemble(
        id,
        outcomes,
        Summary::of(&mut plies)?,
        castling,
        reasons,
    ))
}

/// The figures of a rule-set with `outcomes.games()` > 0 from its counts, however they were
/// counted.
fn assemble(
    id: &str,
    outcomes: OutcomeCounts,
    plies: Summary,
    castling: Vec<CastlingFigures>,
    reasons: impl IntoIterator<Item = (String, u64)>,
) -> RulesetFigures {
    let n = outcomes.games();
    let (score, variance) = outcomes.white_score_moments();
    let half = z975() * (variance / n as f64).sqrt();
    let mut terminations: Vec<TerminationFigures> = reasons
        .into_iter()
        .map(|(reason, c)| TerminationFigures {
            reason,
            games: Rate::wilson(c, n),
        })
        .collect();
    terminations.sort_by(|a, b| {
        b.games
            .count
            .cmp(&a.games.count)
            .then(a.reason.cmp(&b.reason))
    });
    let OutcomeCounts {
        white_wins,
        draws,
        black_wins,
    } = outcomes;
    RulesetFigures {
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
        plies,
        castling,
        terminations,
    }
}

/// Running totals of one rule-set's games: what [`RulesetFigures`] needs, in memory bounded by
/// the number of distinct values seen (game lengths, castling kinds and move numbers,
/// termination reasons), whatever the number of games.
///
/// Update it with [`add`](Self::add) per game, combine partial tallies with
/// [`merge`](Self::merge), store it with serde (JSON round trips are lossless: only integer
/// counts and strings), and read [`figures`](Self::figures), equal bit for bit to
/// [`ruleset_figures`] of the same records.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RulesetTally {
    results: OutcomeCounts,
    /// Game length in plies → games.
    plies: BTreeMap<u32, u64>,
    /// Side → castling kind → counts (nested rather than keyed by a pair, so that the JSON
    /// keys are strings).
    castling: BTreeMap<Side, BTreeMap<String, CastlingTally>>,
    /// Termination reason → games.
    terminations: BTreeMap<String, u64>,
}

/// Running totals of one side's castling kind.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct CastlingTally {
    /// Castling moves.
    count: u64,
    /// Games with at least one such move.
    games: u64,
    /// Move number → castling moves on it.
    by_move: BTreeMap<u32, u64>,
}

impl CastlingTally {
    fn merge(&mut self, other: &Self) {
        self.count += other.count;
        self.games += other.games;
        add_counts(&mut self.by_move, &other.by_move);
    }
}

fn add_counts<K: Ord + Clone>(into: &mut BTreeMap<K, u64>, from: &BTreeMap<K, u64>) {
    for (k, &c) in from {
        *into.entry(k.clone()).or_default() += c;
    }
}

impl RulesetTally {
    /// An empty tally.
    pub fn new() -> Self {
        Self::default()
    }

    /// Count one game (its `ruleset` is not looked at: the caller chose the tally).
    pub fn add(&mut self, game: &GameRecord) {
        self.results.add(game.result);
        *self.plies.entry(game.plies).or_default() += 1;
        *self
            .terminations
            .entry(game.termination.clone())
            .or_default() += 1;
        for (i, c) in game.castlings.iter().enumerate() {
            // A game counts once per (side, kind) however often it castles so; games have a
            // handful of castlings, so a look back beats a set.
            let first = !game.castlings[..i]
                .iter()
                .any(|e| e.side == c.side && e.kind == c.kind);
            let t = self
                .castling
                .entry(c.side)
                .or_default()
                .entry(c.kind.clone())
                .or_default();
            t.count += 1;
            t.games += u64::from(first);
            *t.by_move.entry(c.move_number).or_default() += 1;
        }
    }

    /// Add another tally's games to this one (the tally of the union of both sets of games).
    pub fn merge(&mut self, other: &RulesetTally) {
        self.results.merge(&other.results);
        add_counts(&mut self.plies, &other.plies);
        add_counts(&mut self.terminations, &other.terminations);
        for (side, kinds) in &other.castling {
            let mine = self.castling.entry(*side).or_default();
            for (kind, t) in kinds {
                mine.entry(kind.clone()).or_default().merge(t);
            }
        }
    }

    /// Games counted.
    pub fn games(&self) -> u64 {
        self.results.games()
    }

    /// The figures of the games counted, as rule-set `ruleset`; `None` without games.
    pub fn figures(&self, ruleset: &str) -> Option<RulesetFigures> {
        let n = self.games();
        if n == 0 {
            return None;
        }
        let castling = self
            .castling
            .iter()
            .flat_map(|(side, kinds)| kinds.iter().map(move |(kind, t)| (*side, kind, t)))
            .filter_map(|(side, kind, t)| {
                Some(CastlingFigures {
                    side,
                    kind: kind.clone(),
                    count: t.count,
                    games: Rate::wilson(t.games, n),
                    move_number: Summary::of_histogram(&t.by_move)?,
                    by_move: t.by_move.clone(),
                })
            })
            .collect();
        let reasons = self.terminations.iter().map(|(r, &c)| (r.clone(), c));
        Some(assemble(
            ruleset,
            self.results,
            Summary::of_histogram(&self.plies)?,
            castling,
            reasons,
        ))
    }
}

/// Running totals of a whole study: a [`RulesetTally`] per rule-set id.
///
/// [`study`](Self::study) gives what [`study`](fn@study) gives for the same records, bit for
/// bit, in time and memory that do not grow with the number of games.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct StudyTally {
    rulesets: BTreeMap<String, RulesetTally>,
}

impl StudyTally {
    /// An empty tally.
    pub fn new() -> Self {
        Self::default()
    }

    /// Count one game under its rule-set.
    pub fn add(&mut self, game: &GameRecord) {
        // Look up before inserting: the rule-set is nearly always there already.
        match self.rulesets.get_mut(&game.ruleset) {
            Some(t) => t.add(game),
            None => self
                .rulesets
                .entry(game.ruleset.clone())
                .or_default()
                .add(game),
        }
    }

    /// Add another tally's games to this one.
    pub fn merge(&mut self, other: &StudyTally) {
        for (id, t) in &other.rulesets {
            self.rulesets.entry(id.clone()).or_default().merge(t);
        }
    }

    /// The tally of one rule-set, if it has one.
    pub fn ruleset(&self, id: &str) -> Option<&RulesetTally> {
        self.rulesets.get(id)
    }

    /// Games counted, over all rule-sets.
    pub fn games(&self) -> u64 {
        self.rulesets.values().map(RulesetTally::games).sum()
    }

    /// Whether no game has been counted.
    pub fn is_empty(&self) -> bool {
        self.games() == 0
    }

    /// Figures per rule-set, ordered by rule-set id (as [`ruleset_figures`]).
    pub fn ruleset_figures(&self) -> Vec<RulesetFigures> {
        self.rulesets
            .iter()
            .filter_map(|(id, t)| t.figures(id))
            .collect()
    }

    /// Figures for every rule-set and, with a baseline, every other rule-set compared with it
    /// (as [`study`](fn@study)).
    pub fn study(&self, baseline: Option<&str>) -> Result<Study, StudyError> {
        study_of(self.ruleset_figures(), baseline)
    }
}

impl<'a> Extend<&'a GameRecord> for StudyTally {
    fn extend<I: IntoIterator<Item = &'a GameRecord>>(&mut self, games: I) {
        for g in games {
            self.add(g);
        }
    }
}

impl<'a> FromIterator<&'a GameRecord> for StudyTally {
    fn from_iter<I: IntoIterator<Item = &'a GameRecord>>(games: I) -> Self {
        let mut t = Self::new();
        t.extend(games);
        t
    }
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
    study_of(ruleset_figures(records), baseline)
}

fn study_of(rulesets: Vec<RulesetFigures>, baseline: Option<&str>) -> Result<Study, StudyError> {
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
    fn score_moments_match_the_per_game_definition() {
        for (w, d, b) in [
            (1, 0, 0),
            (0, 3, 0),
            (37, 41, 29),
            (1000, 1, 999),
            (5, 0, 5),
        ] {
            let o = OutcomeCounts {
                white_wins: w,
                draws: d,
                black_wins: b,
            };
            let scores: Vec<f64> = [(1.0, w), (0.5, d), (0.0, b)]
                .iter()
                .flat_map(|&(s, c)| std::iter::repeat_n(s, c as usize))
                .collect();
            let n = scores.len() as f64;
            let mean = scores.iter().sum::<f64>() / n;
            let per_game = scores.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / n;
            // Exact: (n(4w + d) − (2w + d)²) / 4n², integers until one division.
            let (wi, di, ni) = (u128::from(w), u128::from(d), u128::from(w + d + b));
            let exact = (ni * (4 * wi + di) - (2 * wi + di).pow(2)) as f64 / (4 * ni * ni) as f64;
            let (score, variance) = o.white_score_moments();
            assert_eq!(score, mean);
            assert!((variance - exact).abs() <= 1e-16, "{variance} vs {exact}");
            assert!((per_game - exact).abs() <= 1e-14, "{per_game} vs {exact}");
        }
    }

    #[test]
    fn a_second_castling_of_a_kind_is_a_move_not_a_game() {
        let twice = game(
            "ext",
            Outcome::Draw,
            90,
            vec![
                castle(Side::White, "O-O", 8),
                castle(Side::Black, "O-O", 9),
                castle(Side::White, "O-O", 20),
            ],
        );
        let once = game("ext", Outcome::WhiteWin, 50, vec![]);
        let mut t = RulesetTally::new();
        t.add(&twice);
        t.add(&once);
        let f = t.figures("ext").unwrap();
        let white = &f.castling[0];
        assert_eq!(
            (white.side, white.count, white.games.count),
            (Side::White, 2, 1)
        );
        assert_eq!(white.move_number.mean, 14.0);
        assert_eq!(Some(f), ruleset_figures(&[twice, once]).pop());
        assert_eq!(RulesetTally::new().figures("ext"), None);
        assert_eq!(t.plies.len(), 2);
    }

    #[test]
    fn wilson_matches_a_textbook_value() {
        // 81 of 263: Wilson 95% interval ≈ [0.2553, 0.3662] (Newcombe 1998, example).
        let r = Rate::wilson(81, 263);
        assert!((r.ci[0] - 0.2553).abs() < 1e-4 && (r.ci[1] - 0.3662).abs() < 1e-4);
    }
}
