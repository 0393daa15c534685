//! Rule-set study figures: how a rule-set (a castling rule variant, say) changes the game.
//!
//! Input is one plain [`GameRecord`] per game, filled by the worker. Output, per rule-set:
//! results, White's score with a 95% interval, draw and decisive rates with Wilson intervals,
//! game length (mean, median, quartiles), how often each castling kind is played by each side
//! and on which move, and termination reasons; and for each rule-set against a baseline, the
//! difference in White's score and in draw rate with a 95% interval and a two-sided p-value.
//!
//! Per side ([`SideFigures`]) they answer the inventor's question, "does this castling rule-set
//! make castling easier, and what does it do to the balance?": how often and how soon a side
//! castles, how often it loses the right first (and why), how often its king reaches a corner,
//! and how the side scored after each castling choice; compared with the baseline, the
//! differences in the castling and rights-lost rates.
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
    /// What else happened to each side's king on the way (at most one of each kind per side):
    /// what answers "could a side that wanted to castle not?" and "how soon does a king reach
    /// a corner?". Absent in records from before they were kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub milestones: Vec<Milestone>,
}

/// A moment in a side's game that castling studies ask about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Milestone {
    /// Whose.
    pub side: Side,
    /// What happened.
    pub kind: MilestoneKind,
    /// Full-move number of the move that made it happen.
    pub move_number: u32,
}

/// What a [`Milestone`] records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MilestoneKind {
    /// The side lost its last castling right without having castled, by moving its king.
    RightsLostKingMoved,
    /// ... by moving the rook that kept the last right.
    RightsLostRookMoved,
    /// ... because the opponent captured that rook.
    RightsLostRookCaptured,
    /// The side's king first stood on a corner square of its own back rank (a1/h1 on 8x8,
    /// a1/j1 on the Gustavian board; a8/h8, a8/j8 for Black), by castling or otherwise.
    KingCorner,
}

impl MilestoneKind {
    /// Every kind, in a fixed order.
    pub const ALL: [Self; 4] = [
        Self::RightsLostKingMoved,
        Self::RightsLostRookMoved,
        Self::RightsLostRookCaptured,
        Self::KingCorner,
    ];

    /// The stable id (as serialised and in the wire protocol).
    pub fn id(self) -> &'static str {
        match self {
            Self::RightsLostKingMoved => "rights-lost-king-moved",
            Self::RightsLostRookMoved => "rights-lost-rook-moved",
            Self::RightsLostRookCaptured => "rights-lost-rook-captured",
            Self::KingCorner => "king-corner",
        }
    }

    /// The kind of an id.
    pub fn from_id(id: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.id() == id)
    }

    /// True for the three ways of losing the right to castle without castling.
    pub fn is_rights_lost(self) -> bool {
        !matches!(self, Self::KingCorner)
    }
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
    /// Castling, lost rights, corners and scores per side (White first). Empty in figures from
    /// before they were computed, and in those of a tally kept since then that has counted no
    /// game since.
    #[serde(default)]
    pub sides: Vec<SideFigures>,
}

/// One side's castling figures in one rule-set: whether the rule-set lets it castle, and how
/// its games went after each choice.
///
/// A side's game falls in one of three groups: it castled, it lost its last castling right
/// without castling, or it kept a right to the end without using it. The three rates add up to
/// one unless a record has both a castling and a rights-lost milestone for the side (the
/// worker never writes such records; the figures still count them, in both groups).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SideFigures {
    /// Whose figures.
    pub side: Side,
    /// Games these figures are over (the denominator of every rate below): all the rule-set's
    /// games, except in a tally kept from before side figures were counted, where they are
    /// the games counted since.
    pub games: u64,
    /// Share of games in which the side castled at all, any kind (Wilson interval).
    pub castled: Rate,
    /// Move number of the side's first castling, over the games in which it castled; `None`
    /// if it never did.
    pub castled_move: Option<Summary>,
    /// Share of games in which the side lost its last castling right without having castled,
    /// by any cause (Wilson interval).
    pub rights_lost: Rate,
    /// The same per cause: one entry per rights-lost [`MilestoneKind`], in the order of
    /// [`MilestoneKind::ALL`], zero counts included so that tables line up.
    pub rights_lost_by_cause: Vec<CauseFigures>,
    /// Move number on which the side lost its rights, over the games in which it did; `None`
    /// if it never did.
    pub rights_lost_move: Option<Summary>,
    /// Share of games in which the side neither castled nor lost its rights: the game ended
    /// first (Wilson interval).
    pub never_castled_kept_rights: Rate,
    /// Share of games in which the side's king reached a corner of its back rank (Wilson
    /// interval).
    pub king_corner: Rate,
    /// Move number on which the king first got there, over the games in which it did; `None`
    /// if it never did.
    pub king_corner_move: Option<Summary>,
    /// The side's results after each castling choice, "did not castle" first, then by kind id.
    ///
    /// An observational association, not an effect of the choice: the engine castles, or
    /// not, because of the position, and the position also decides the result, so a choice
    /// that scores better here need not be the better choice.
    pub by_choice: Vec<ChoiceFigures>,
}

/// How often a side lost its castling rights for one reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CauseFigures {
    /// The reason (one of the rights-lost kinds).
    pub cause: MilestoneKind,
    /// Share of games in which the side lost its rights so (Wilson interval).
    pub games: Rate,
}

/// A side's results in the games in which it made one castling choice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChoiceFigures {
    /// The kind id of the side's first castling in the game (the earliest move; on one move,
    /// the smallest id); `None` for the games in which the side did not castle.
    pub kind: Option<String>,
    /// Games in which the side chose so.
    pub games: u64,
    /// The side's wins in them.
    pub wins: u64,
    /// Draws in them.
    pub draws: u64,
    /// The side's losses in them.
    pub losses: u64,
    /// The side's mean score per game (1 win, ½ draw, 0 loss).
    pub score: f64,
    /// 95% interval of the score (normal approximation, clamped to [0, 1], as
    /// [`RulesetFigures::white_score_ci`]).
    pub score_ci: [f64; 2],
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
    /// Standard error of the estimate, unpooled (for rates, with each rate moved half a game
    /// toward 1/2 so that it is never zero): what the sequential tests
    /// ([`crate::sequential`]) weigh the estimate by. Zero in figures saved before it existed.
    #[serde(default)]
    pub se: f64,
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
    /// Per side (White first), differences in the castling figures; a side appears when both
    /// rule-sets have its [`SideFigures`]. Empty in comparisons from before they were made.
    #[serde(default)]
    pub sides: Vec<SideComparison>,
}

/// One side's castling figures of a rule-set against the baseline's.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SideComparison {
    /// Whose figures.
    pub side: Side,
    /// Difference in [`SideFigures::castled`] (Newcombe interval, pooled two-proportion
    /// z-test): does the rule-set make castling easier?
    pub castled: Difference,
    /// Difference in [`SideFigures::rights_lost`] (the same test): does it make losing the
    /// right without castling likelier?
    pub rights_lost: Difference,
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

    /// The counts as `side` sees them, its wins first: Black's are White's mirrored, so that
    /// [`white_score_moments`](Self::white_score_moments) gives the side's score.
    fn seen_by(self, side: Side) -> Self {
        match side {
            Side::White => self,
            Side::Black => Self {
                white_wins: self.black_wins,
                draws: self.draws,
                black_wins: self.white_wins,
            },
        }
    }
}

/// 95% normal interval of a mean score over `n` games, clamped to the scores' range [0, 1].
fn score_ci(score: f64, variance: f64, n: u64) -> [f64; 2] {
    let half = z975() * (variance / n as f64).sqrt();
    [(score - half).max(0.0), (score + half).min(1.0)]
}

/// The sides, in the order of [`RulesetFigures::sides`].
const SIDES: [Side; 2] = [Side::White, Side::Black];

/// The ways of losing the castling rights, in the order of
/// [`SideFigures::rights_lost_by_cause`].
const CAUSES: [MilestoneKind; 3] = [
    MilestoneKind::RightsLostKingMoved,
    MilestoneKind::RightsLostRookMoved,
    MilestoneKind::RightsLostRookCaptured,
];

/// What one game amounts to for one side's figures: the single definition that both the
/// direct path and the tally count, so that they can only differ in how they add up.
struct SideGame<'a> {
    /// Move number and kind of the side's first castling (earliest move; on one move, the
    /// smallest kind id, so that the choice does not depend on the order of the events).
    first_castling: Option<(u32, &'a str)>,
    /// Earliest move on which the side lost its castling rights without castling, any cause.
    rights_lost: Option<u32>,
    /// Which causes the record names, as [`CAUSES`].
    causes: [bool; 3],
    /// Earliest move on which the side's king stood on a corner.
    king_corner: Option<u32>,
}

impl<'a> SideGame<'a> {
    fn of(game: &'a GameRecord, side: Side) -> Self {
        let first_castling = game
            .castlings
            .iter()
            .filter(|c| c.side == side)
            .map(|c| (c.move_number, c.kind.as_str()))
            .min();
        let mine = || game.milestones.iter().filter(move |m| m.side == side);
        let earliest = |wanted: fn(MilestoneKind) -> bool| {
            mine()
                .filter(|m| wanted(m.kind))
                .map(|m| m.move_number)
                .min()
        };
        Self {
            first_castling,
            rights_lost: earliest(MilestoneKind::is_rights_lost),
            causes: CAUSES.map(|k| mine().any(|m| m.kind == k)),
            king_corner: earliest(|k| k == MilestoneKind::KingCorner),
        }
    }

    /// The castling kind chosen, `None` for "did not castle".
    fn choice(&self) -> Option<&'a str> {
        self.first_castling.map(|(_, kind)| kind)
    }

    /// Neither castled nor lost the rights: the game ended first.
    fn kept_rights(&self) -> bool {
        self.first_castling.is_none() && self.rights_lost.is_none()
    }
}

/// One side's figures before the rates are made, however they were counted.
struct SideParts {
    side: Side,
    games: u64,
    /// Games in which the side castled, and the summary of its first castling's move number.
    castled: (u64, Option<Summary>),
    /// The same for losing the rights.
    rights_lost: (u64, Option<Summary>),
    /// Games per cause, as [`CAUSES`].
    causes: [u64; 3],
    kept_rights: u64,
    /// The same as `castled` for the king reaching a corner.
    king_corner: (u64, Option<Summary>),
    /// Results per choice, in the order of [`SideFigures::by_choice`].
    choices: Vec<(Option<String>, OutcomeCounts)>,
}

/// The figures of one side from its counts (`games` > 0).
fn assemble_side(p: SideParts) -> SideFigures {
    let n = p.games;
    SideFigures {
        side: p.side,
        games: n,
        castled: Rate::wilson(p.castled.0, n),
        castled_move: p.castled.1,
        rights_lost: Rate::wilson(p.rights_lost.0, n),
        rights_lost_by_cause: CAUSES
            .iter()
            .zip(p.causes)
            .map(|(&cause, c)| CauseFigures {
                cause,
                games: Rate::wilson(c, n),
            })
            .collect(),
        rights_lost_move: p.rights_lost.1,
        never_castled_kept_rights: Rate::wilson(p.kept_rights, n),
        king_corner: Rate::wilson(p.king_corner.0, n),
        king_corner_move: p.king_corner.1,
        by_choice: p
            .choices
            .into_iter()
            .filter(|(_, o)| o.games() > 0)
            .map(|(kind, o)| choice_figures(p.side, kind, o))
            .collect(),
    }
}

/// A side's results after one choice, from the game counts (`outcomes.games()` > 0).
fn choice_figures(side: Side, kind: Option<String>, outcomes: OutcomeCounts) -> ChoiceFigures {
    let mine = outcomes.seen_by(side);
    let games = mine.games();
    let (score, variance) = mine.white_score_moments();
    ChoiceFigures {
        kind,
        games,
        wins: mine.white_wins,
        draws: mine.draws,
        losses: mine.black_wins,
        score,
        score_ci: score_ci(score, variance, games),
    }
}

/// One side's figures from a rule-set's records (`games` not empty).
fn side_figures_of(side: Side, games: &[&GameRecord]) -> SideFigures {
    let per_game: Vec<(SideGame<'_>, Outcome)> = games
        .iter()
        .map(|g| (SideGame::of(g, side), g.result))
        .collect();
    let count =
        |hit: &dyn Fn(&SideGame<'_>) -> bool| per_game.iter().filter(|(s, _)| hit(s)).count();
    let occurrence = |at: fn(&SideGame<'_>) -> Option<u32>| {
        let mut moves: Vec<f64> = per_game
            .iter()
            .filter_map(|(s, _)| at(s))
            .map(f64::from)
            .collect();
        (moves.len() as u64, Summary::of(&mut moves))
    };
    let mut choices: BTreeMap<Option<&str>, OutcomeCounts> = BTreeMap::new();
    for (s, outcome) in &per_game {
        choices.entry(s.choice()).or_default().add(*outcome);
    }
    assemble_side(SideParts {
        side,
        games: per_game.len() as u64,
        castled: occurrence(|s| s.first_castling.map(|(m, _)| m)),
        rights_lost: occurrence(|s| s.rights_lost),
        causes: std::array::from_fn(|i| count(&|s| s.causes[i]) as u64),
        kept_rights: count(&|s| s.kept_rights()) as u64,
        king_corner: occurrence(|s| s.king_corner),
        choices: choices
            .into_iter()
            .map(|(k, o)| (k.map(str::to_string), o))
            .collect(),
    })
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
    let sides = SIDES.map(|side| side_figures_of(side, games)).to_vec();
    Some(assemble(
        id,
        outcomes,
        Summary::of(&mut plies)?,
        castling,
        reasons,
        sides,
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
    sides: Vec<SideFigures>,
) -> RulesetFigures {
    let n = outcomes.games();
    let (score, variance) = outcomes.white_score_moments();
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
        white_score_ci: score_ci(score, variance, n),
        white_score_variance: variance,
        draw_rate: Rate::wilson(draws, n),
        decisive_rate: Rate::wilson(white_wins + black_wins, n),
        plies,
        castling,
        terminations,
        sides,
    }
}

/// Running totals of one rule-set's games: what [`RulesetFigures`] needs, in memory bounded by
/// the number of distinct values seen (game lengths, castling kinds and move numbers,
/// milestone move numbers, termination reasons), whatever the number of games.
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
    /// Side → what its games amounted to. Absent from tallies stored before it was kept:
    /// those load with it empty, and count from then on (their side figures are over the
    /// games counted since, see [`SideFigures::games`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    sides: BTreeMap<Side, SideTally>,
}

/// Running totals of one side's games: [`SideFigures`] in counts and histograms.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct SideTally {
    /// Games counted.
    games: u64,
    /// Move number of the side's first castling → games.
    castled: BTreeMap<u32, u64>,
    /// Move number on which the side lost its rights → games.
    rights_lost: BTreeMap<u32, u64>,
    /// Rights-lost cause → games (causes never seen are absent).
    rights_lost_by_cause: BTreeMap<MilestoneKind, u64>,
    /// Games in which the side neither castled nor lost its rights.
    kept_rights: u64,
    /// Move number on which the king first reached a corner → games.
    king_corner: BTreeMap<u32, u64>,
    /// Kind of the side's first castling → results of those games.
    choices: BTreeMap<String, OutcomeCounts>,
    /// Results of the games in which the side did not castle.
    not_castled: OutcomeCounts,
}

impl SideTally {
    fn add(&mut self, game: &SideGame<'_>, outcome: Outcome) {
        self.games += 1;
        match game.first_castling {
            Some((move_number, kind)) => {
                *self.castled.entry(move_number).or_default() += 1;
                self.choices
                    .entry(kind.to_string())
                    .or_default()
                    .add(outcome);
            }
            None => self.not_castled.add(outcome),
        }
        if let Some(move_number) = game.rights_lost {
            *self.rights_lost.entry(move_number).or_default() += 1;
        }
        for (&cause, hit) in CAUSES.iter().zip(game.causes) {
            if hit {
                *self.rights_lost_by_cause.entry(cause).or_default() += 1;
            }
        }
        self.kept_rights += u64::from(game.kept_rights());
        if let Some(move_number) = game.king_corner {
            *self.king_corner.entry(move_number).or_default() += 1;
        }
    }

    fn merge(&mut self, other: &Self) {
        self.games += other.games;
        add_counts(&mut self.castled, &other.castled);
        add_counts(&mut self.rights_lost, &other.rights_lost);
        add_counts(&mut self.rights_lost_by_cause, &other.rights_lost_by_cause);
        self.kept_rights += other.kept_rights;
        add_counts(&mut self.king_corner, &other.king_corner);
        for (kind, o) in &other.choices {
            self.choices.entry(kind.clone()).or_default().merge(o);
        }
        self.not_castled.merge(&other.not_castled);
    }

    /// The side's figures (`games` > 0).
    fn figures(&self, side: Side) -> SideFigures {
        let occurrence = |h: &BTreeMap<u32, u64>| (h.values().sum(), Summary::of_histogram(h));
        let choices = std::iter::once((None, self.not_castled))
            .chain(self.choices.iter().map(|(k, &o)| (Some(k.clone()), o)))
            .collect();
        assemble_side(SideParts {
            side,
            games: self.games,
            castled: occurrence(&self.castled),
            rights_lost: occurrence(&self.rights_lost),
            causes: CAUSES.map(|c| self.rights_lost_by_cause.get(&c).copied().unwrap_or(0)),
            kept_rights: self.kept_rights,
            king_corner: occurrence(&self.king_corner),
            choices,
        })
    }
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
        for side in SIDES {
            self.sides
                .entry(side)
                .or_default()
                .add(&SideGame::of(game, side), game.result);
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
        for (side, t) in &other.sides {
            self.sides.entry(*side).or_default().merge(t);
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
        let sides = self
            .sides
            .iter()
            .filter(|(_, t)| t.games > 0)
            .map(|(&side, t)| t.figures(side))
            .collect();
        Some(assemble(
            ruleset,
            self.results,
            Summary::of_histogram(&self.plies)?,
            castling,
            reasons,
            sides,
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
        se,
    };
    let sides = a
        .sides
        .iter()
        .filter_map(|sa| {
            let sb = b.sides.iter().find(|sb| sb.side == sa.side)?;
            Some(SideComparison {
                side: sa.side,
                castled: rate_difference(&sa.castled, &sb.castled),
                rights_lost: rate_difference(&sa.rights_lost, &sb.rights_lost),
            })
        })
        .collect();
    Comparison {
        ruleset: a.ruleset.clone(),
        baseline: b.ruleset.clone(),
        white_score,
        draw_rate: rate_difference(&a.draw_rate, &b.draw_rate),
        sides,
    }
}

/// Rate `a` minus rate `b` (both with `total` > 0): Newcombe's hybrid score interval from the
/// two Wilson intervals, which unlike the Wald interval behaves at rates near 0 or 1 (a side
/// that nearly always castles); p-value from the pooled two-proportion z-test.
fn rate_difference(a: &Rate, b: &Rate) -> Difference {
    let (na, nb) = (a.total as f64, b.total as f64);
    let (pa, pb) = (a.rate, b.rate);
    let (la, ua) = (a.ci[0], a.ci[1]);
    let (lb, ub) = (b.ci[0], b.ci[1]);
    let d = pa - pb;
    let lo = d - ((pa - la).powi(2) + (ub - pb).powi(2)).sqrt();
    let hi = d + ((ua - pa).powi(2) + (pb - lb).powi(2)).sqrt();
    let pooled = (a.count + b.count) as f64 / (na + nb);
    let se_pooled = (pooled * (1.0 - pooled) * (1.0 / na + 1.0 / nb)).sqrt();
    let shrunk = |r: &Rate| {
        let p = (r.count as f64 + 0.5) / (r.total as f64 + 1.0);
        p * (1.0 - p) / r.total.max(1) as f64
    };
    Difference {
        estimate: d,
        ci: [lo, hi],
        p_value: p_value(d, se_pooled),
        se: (shrunk(a) + shrunk(b)).sqrt(),
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
            milestones: Vec::new(),
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

    fn milestone(side: Side, kind: MilestoneKind, move_number: u32) -> Milestone {
        Milestone {
            side,
            kind,
            move_number,
        }
    }

    /// Five games whose side figures are counted by hand in
    /// [`side_figures_of_a_handful_of_games`].
    fn castling_study() -> Vec<GameRecord> {
        use MilestoneKind::*;
        use Side::*;
        let with = |mut g: GameRecord, milestones: Vec<Milestone>| {
            g.milestones = milestones;
            g
        };
        vec![
            with(
                game(
                    "r",
                    Outcome::WhiteWin,
                    70,
                    vec![castle(White, "O-O", 8), castle(Black, "O-O-O", 12)],
                ),
                vec![milestone(White, KingCorner, 20)],
            ),
            with(
                game("r", Outcome::Draw, 80, vec![castle(White, "O-O", 10)]),
                vec![
                    milestone(Black, RightsLostKingMoved, 6),
                    milestone(Black, KingCorner, 15),
                ],
            ),
            with(
                game("r", Outcome::BlackWin, 90, vec![castle(Black, "O-O", 9)]),
                vec![milestone(White, RightsLostRookCaptured, 14)],
            ),
            game("r", Outcome::Draw, 100, vec![]),
            // A second castling (extended rules): the choice is the first, on move 6.
            with(
                game(
                    "r",
                    Outcome::WhiteWin,
                    110,
                    vec![castle(White, "O-O", 20), castle(White, "O-O-O", 6)],
                ),
                vec![milestone(Black, RightsLostRookMoved, 11)],
            ),
        ]
    }

    /// A choice as (kind, games, wins, draws, losses, score).
    type Choice<'a> = (Option<&'a str>, u64, u64, u64, u64, f64);

    fn choices(s: &SideFigures) -> Vec<Choice<'_>> {
        s.by_choice
            .iter()
            .map(|c| {
                let kind = c.kind.as_deref();
                (kind, c.games, c.wins, c.draws, c.losses, c.score)
            })
            .collect()
    }

    #[test]
    fn side_figures_of_a_handful_of_games() {
        let records = castling_study();
        let f = ruleset_figures(&records).pop().unwrap();
        let [white, black] = [&f.sides[0], &f.sides[1]];
        assert_eq!((white.side, white.games), (Side::White, 5));
        assert_eq!((black.side, black.games), (Side::Black, 5));

        // White castled in games 1, 2, 5 (first on moves 8, 10, 6), lost its rights in game 3
        // (rook captured, move 14), kept them in game 4, reached a corner in game 1.
        assert_eq!((white.castled.count, white.castled.total), (3, 5));
        let m = white.castled_move.unwrap();
        assert_eq!((m.median, m.q1, m.q3, m.mean), (8.0, 7.0, 9.0, 8.0));
        assert_eq!(white.rights_lost.count, 1);
        assert_eq!(white.rights_lost_move.unwrap().median, 14.0);
        let causes: Vec<_> = white
            .rights_lost_by_cause
            .iter()
            .map(|c| (c.cause, c.games.count))
            .collect();
        assert_eq!(
            causes,
            [
                (MilestoneKind::RightsLostKingMoved, 0),
                (MilestoneKind::RightsLostRookMoved, 0),
                (MilestoneKind::RightsLostRookCaptured, 1)
            ]
        );
        assert_eq!(white.never_castled_kept_rights.count, 1);
        assert_eq!(white.king_corner.count, 1);
        assert_eq!(white.king_corner_move.unwrap().max, 20.0);
        assert_eq!(
            choices(white),
            [
                (None, 2, 0, 1, 1, 0.25),
                (Some("O-O"), 2, 1, 1, 0, 0.75),
                (Some("O-O-O"), 1, 1, 0, 0, 1.0)
            ]
        );
        // Scores 1 and ½: variance 1/16, half-width 1.96 · √(1/32).
        let ci = white.by_choice[1].score_ci;
        assert!((ci[0] - 0.40352).abs() < 1e-5 && ci[1] == 1.0, "{ci:?}");

        // Black castled in games 1 and 3 (moves 12, 9), lost its rights in games 2 (king, move
        // 6) and 5 (rook, move 11), kept them in game 4, reached a corner in game 2.
        assert_eq!(black.castled.count, 2);
        assert_eq!(black.castled_move.unwrap().median, 10.5);
        assert_eq!(black.rights_lost.count, 2);
        assert_eq!(black.rights_lost_move.unwrap().median, 8.5);
        let causes: Vec<u64> = black
            .rights_lost_by_cause
            .iter()
            .map(|c| c.games.count)
            .collect();
        assert_eq!(causes, [1, 1, 0]);
        assert_eq!(black.never_castled_kept_rights.count, 1);
        assert_eq!(black.king_corner_move.unwrap().min, 15.0);
        assert_eq!(
            choices(black),
            [
                (None, 3, 0, 2, 1, 1.0 / 3.0),
                (Some("O-O"), 1, 1, 0, 0, 1.0),
                (Some("O-O-O"), 1, 0, 0, 1, 0.0)
            ]
        );

        let tally: StudyTally = records.iter().collect();
        assert_eq!(tally.ruleset_figures(), vec![f]);
    }

    #[test]
    fn side_comparisons_with_a_baseline() {
        let mut records = castling_study();
        // Nobody castles in the baseline; White always loses its rights (king, move 5).
        for _ in 0..5 {
            let mut g = game("base", Outcome::Draw, 60, vec![]);
            g.milestones = vec![milestone(
                Side::White,
                MilestoneKind::RightsLostKingMoved,
                5,
            )];
            records.push(g);
        }
        let s = study(&records, Some("base")).unwrap();
        let sides = &s.comparisons[0].sides;
        assert_eq!(sides.len(), 2);
        let close = |d: &Difference, estimate: f64| {
            assert!((d.estimate - estimate).abs() < 1e-12, "{d:?}");
            assert!(d.ci[0] <= d.estimate && d.estimate <= d.ci[1], "{d:?}");
            assert!((0.0..=1.0).contains(&d.p_value), "{d:?}");
        };
        let [white, black] = [&sides[0], &sides[1]];
        assert_eq!((white.side, black.side), (Side::White, Side::Black));
        close(&white.castled, 0.6);
        close(&white.rights_lost, -0.8);
        close(&black.castled, 0.4);
        close(&black.rights_lost, 0.4);
        // 3 of 5 against 0 of 5: pooled p = 0.3, z = 0.6 / √(0.3 · 0.7 · 0.4) ≈ 2.070.
        assert!((white.castled.p_value - 0.03843).abs() < 1e-4, "{white:?}");
        assert_eq!(
            s.comparisons[0].draw_rate,
            rate_difference(&s.rulesets[1].draw_rate, &s.rulesets[0].draw_rate)
        );
    }

    #[test]
    fn wilson_matches_a_textbook_value() {
        // 81 of 263: Wilson 95% interval ≈ [0.2553, 0.3662] (Newcombe 1998, example).
        let r = Rate::wilson(81, 263);
        assert!((r.ci[0] - 0.2553).abs() < 1e-4 && (r.ci[1] - 0.3662).abs() < 1e-4);
    }
}
