//! Game results as fishtest counts them: trinomial (per game) and pentanomial (per game pair).

use crate::error::StatsError;
use serde::{Deserialize, Serialize};

/// Win/draw/loss counts of single games, from the point of view of the tested engine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Trinomial {
    /// Games won.
    pub wins: u64,
    /// Games drawn.
    pub draws: u64,
    /// Games lost.
    pub losses: u64,
}

impl Trinomial {
    /// Counts in fishtest's order, low score first: `[losses, draws, wins]`.
    pub fn counts(&self) -> [u64; 3] {
        [self.losses, self.draws, self.wins]
    }

    /// Number of games.
    pub fn games(&self) -> u64 {
        self.wins + self.draws + self.losses
    }

    /// The share of the points scored, a draw counting half: `None` before any game.
    pub fn score(&self) -> Option<f64> {
        let games = self.games();
        (games > 0).then(|| (self.wins as f64 + 0.5 * self.draws as f64) / games as f64)
    }
}

/// How many game pairs (same opening, colours swapped) scored 0, ½, 1, 1½ and 2 points for the
/// tested engine: `[LL, LD, DD+WL, WD, WW]` (fastchess' `Ptnml(0-2)`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Pentanomial(pub [u64; 5]);

impl Pentanomial {
    /// Counts, low score first.
    pub fn counts(&self) -> [u64; 5] {
        self.0
    }

    /// Number of game pairs.
    pub fn pairs(&self) -> u64 {
        self.0.iter().sum()
    }

    /// Number of games (two per pair).
    pub fn games(&self) -> u64 {
        2 * self.pairs()
    }

    /// Count one more pair.
    pub fn add(&mut self, score: PairScore) {
        self.0[usize::from(score.half_points())] += 1;
    }
}

/// The score of one game pair in half points, 0 (lost both) to 4 (won both).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "u8", into = "u8")]
pub struct PairScore(u8);

impl PairScore {
    /// A pair score from half points; `None` above 4.
    pub fn from_half_points(half_points: u8) -> Option<Self> {
        (half_points <= 4).then_some(Self(half_points))
    }

    /// The score of a pair made of these two games (tested engine's view).
    pub fn from_games(first: GameResult, second: GameResult) -> Self {
        Self(first.half_points() + second.half_points())
    }

    /// Half points scored, 0..=4.
    pub fn half_points(self) -> u8 {
        self.0
    }

    /// Wins minus losses over the pair, -2..=2 (the SPSA signal).
    pub fn wins_minus_losses(self) -> i8 {
        // Half points 0..4 map to W-L -2..2 whatever the split (WL and DD both give 0).
        self.0 as i8 - 2
    }
}

impl TryFrom<u8> for PairScore {
    type Error = String;
    fn try_from(value: u8) -> Result<Self, Self::Error> {
        Self::from_half_points(value).ok_or_else(|| format!("pair score {value} is above 4"))
    }
}

impl From<PairScore> for u8 {
    fn from(value: PairScore) -> Self {
        value.0
    }
}

/// One game's result for the tested engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum GameResult {
    /// Lost.
    Loss,
    /// Drawn.
    Draw,
    /// Won.
    Win,
}

impl GameResult {
    /// Half points: 0, 1 or 2.
    pub fn half_points(self) -> u8 {
        match self {
            Self::Loss => 0,
            Self::Draw => 1,
            Self::Win => 2,
        }
    }
}

/// Results of a match, either per game or per game pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Results {
    /// Per-game counts.
    Trinomial(Trinomial),
    /// Per-pair counts.
    Pentanomial(Pentanomial),
}

impl Results {
    /// Build from counts in fishtest's order, low score first (`[L, D, W]` or `[LL .. WW]`).
    pub fn from_counts(counts: &[u64]) -> Result<Self, StatsError> {
        match *counts {
            [losses, draws, wins] => Ok(Self::Trinomial(Trinomial {
                wins,
                draws,
                losses,
            })),
            [a, b, c, d, e] => Ok(Self::Pentanomial(Pentanomial([a, b, c, d, e]))),
            _ => Err(StatsError::WrongCountLength(counts.len())),
        }
    }

    /// Counts, low score first.
    pub fn counts(&self) -> Vec<u64> {
        match self {
            Self::Trinomial(t) => t.counts().to_vec(),
            Self::Pentanomial(p) => p.counts().to_vec(),
        }
    }

    /// Number of samples: games for trinomial, pairs for pentanomial.
    pub fn samples(&self) -> u64 {
        self.counts().iter().sum()
    }

    /// Number of games.
    pub fn games(&self) -> u64 {
        match self {
            Self::Trinomial(t) => t.games(),
            Self::Pentanomial(p) => p.games(),
        }
    }

    /// Whether these are pair counts.
    pub fn is_pentanomial(&self) -> bool {
        matches!(self, Self::Pentanomial(_))
    }

    /// The same match seen from the opponent: wins and losses swapped.
    pub fn mirrored(&self) -> Self {
        match *self {
            Self::Trinomial(t) => Self::Trinomial(Trinomial {
                wins: t.losses,
                draws: t.draws,
                losses: t.wins,
            }),
            Self::Pentanomial(Pentanomial(mut c)) => {
                c.reverse();
                Self::Pentanomial(Pentanomial(c))
            }
        }
    }

    /// Refuse an empty match: every statistic of it would be an artefact of regularisation.
    pub(crate) fn require_games(&self) -> Result<(), StatsError> {
        if self.samples() == 0 {
            Err(StatsError::NoGames)
        } else {
            Ok(())
        }
    }

    /// fishtest's `regularize`: every zero count becomes 0.001, so that logarithms and
    /// maximum-likelihood fits stay finite for one-sided results.
    pub(crate) fn regularized(&self) -> Vec<f64> {
        regularize(&self.counts())
    }
}

/// Replace each zero count by 0.001 (fishtest's `LLRcalc.regularize`).
pub(crate) fn regularize(counts: &[u64]) -> Vec<f64> {
    counts
        .iter()
        .map(|&c| if c == 0 { 1e-3 } else { c as f64 })
        .collect()
}

impl From<Trinomial> for Results {
    fn from(value: Trinomial) -> Self {
        Self::Trinomial(value)
    }
}

impl From<Pentanomial> for Results {
    fn from(value: Pentanomial) -> Self {
        Self::Pentanomial(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn score_counts_a_draw_as_half_a_point() {
        let t = Trinomial {
            wins: 3,
            draws: 2,
            losses: 5,
        };
        assert_eq!(t.score(), Some(0.4));
        assert_eq!(Trinomial::default().score(), None);
    }
}
