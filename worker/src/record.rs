//! What a game and a game pair leave behind: plain serialisable records, the same for a local
//! match and for the cluster.

use std::fmt;

use serde::{Deserialize, Serialize};
use stats::results::{GameResult as StatsGameResult, PairScore};
use stats::study::{CastlingEvent, Milestone, Outcome as StudyOutcome, Side};

/// A game's result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GameResult {
    /// White won.
    WhiteWins,
    /// Black won.
    BlackWins,
    /// Drawn.
    Draw,
}

impl GameResult {
    /// The PGN result token.
    pub fn pgn(self) -> &'static str {
        match self {
            GameResult::WhiteWins => "1-0",
            GameResult::BlackWins => "0-1",
            GameResult::Draw => "1/2-1/2",
        }
    }

    /// A win for `side` (0 = White, 1 = Black).
    pub fn win_for(side: usize) -> GameResult {
        if side == 0 {
            GameResult::WhiteWins
        } else {
            GameResult::BlackWins
        }
    }

    /// The result seen by the player of colour `side` (0 = White, 1 = Black).
    pub fn for_side(self, side: usize) -> StatsGameResult {
        match (self, side) {
            (GameResult::Draw, _) => StatsGameResult::Draw,
            (GameResult::WhiteWins, 0) | (GameResult::BlackWins, 1) => StatsGameResult::Win,
            _ => StatsGameResult::Loss,
        }
    }

    /// The study crate's outcome.
    pub fn study(self) -> StudyOutcome {
        match self {
            GameResult::WhiteWins => StudyOutcome::WhiteWin,
            GameResult::BlackWins => StudyOutcome::BlackWin,
            GameResult::Draw => StudyOutcome::Draw,
        }
    }
}

/// Why a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Termination {
    /// Checkmate.
    Checkmate,
    /// Stalemate.
    Stalemate,
    /// 100 plies without capture or pawn move.
    FiftyMoves,
    /// Threefold repetition.
    Threefold,
    /// Neither side can mate.
    InsufficientMaterial,
    /// Both players' scores agreed that one side is winning.
    ResignAdjudication,
    /// Both players' scores stayed near zero.
    DrawAdjudication,
    /// The game reached the maximum length.
    MaxMoves,
    /// A flag fell (a draw if the opponent could not mate).
    TimeForfeit,
    /// An engine did not answer within its timeout.
    Timeout,
    /// An engine process died or closed its output.
    Crash,
    /// An engine sent an illegal or unreadable move.
    IllegalMove,
}

impl Termination {
    /// Every termination.
    pub const ALL: [Termination; 12] = [
        Termination::Checkmate,
        Termination::Stalemate,
        Termination::FiftyMoves,
        Termination::Threefold,
        Termination::InsufficientMaterial,
        Termination::ResignAdjudication,
        Termination::DrawAdjudication,
        Termination::MaxMoves,
        Termination::TimeForfeit,
        Termination::Timeout,
        Termination::Crash,
        Termination::IllegalMove,
    ];

    /// The stable id (also the `Termination` tag of our PGN and the study crate's reason).
    pub fn id(self) -> &'static str {
        match self {
            Termination::Checkmate => "checkmate",
            Termination::Stalemate => "stalemate",
            Termination::FiftyMoves => "fifty-moves",
            Termination::Threefold => "threefold",
            Termination::InsufficientMaterial => "insufficient-material",
            Termination::ResignAdjudication => "resign-adjudication",
            Termination::DrawAdjudication => "draw-adjudication",
            Termination::MaxMoves => "max-moves",
            Termination::TimeForfeit => "time-forfeit",
            Termination::Timeout => "timeout",
            Termination::Crash => "crash",
            Termination::IllegalMove => "illegal-move",
        }
    }

    /// Parses an id.
    pub fn from_id(id: &str) -> Option<Termination> {
        Termination::ALL.into_iter().find(|t| t.id() == id)
    }

    /// Whether an engine failed (the game says nothing about strength).
    pub fn is_failure(self) -> bool {
        matches!(
            self,
            Termination::Timeout | Termination::Crash | Termination::IllegalMove
        )
    }
}

impl From<engine::Outcome> for Termination {
    fn from(o: engine::Outcome) -> Self {
        match o {
            engine::Outcome::Checkmate { .. } => Termination::Checkmate,
            engine::Outcome::Stalemate => Termination::Stalemate,
            engine::Outcome::FiftyMoves => Termination::FiftyMoves,
            engine::Outcome::Threefold => Termination::Threefold,
            engine::Outcome::InsufficientMaterial => Termination::InsufficientMaterial,
        }
    }
}

impl fmt::Display for Termination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// One move of a game.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveRecord {
    /// Coordinate notation (`e2e4`, `e1g1l`).
    pub uci: String,
    /// SAN as RULES.md spells it.
    pub san: String,
    /// The mover's score: centipawns, or beyond `engine::search::MATE_BOUND` for mates.
    pub score: Option<i32>,
    /// Search depth reported.
    pub depth: Option<u32>,
    /// Nodes reported.
    pub nodes: Option<u64>,
    /// Thinking time in milliseconds.
    pub time_ms: u64,
}

/// A castling move played in a game.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CastlingFact {
    /// Who castled.
    pub side: Side,
    /// The castling kind's stable id (`king`, `luft-queen`, `extended-king`, ...).
    pub kind: String,
    /// 1-based ply of the game (from its start position) at which it was played.
    pub ply: u32,
    /// The full-move number of the castling move.
    pub move_number: u32,
}

/// One finished game.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameRecord {
    /// White's name.
    pub white: String,
    /// Black's name.
    pub black: String,
    /// The start position.
    pub start_fen: String,
    /// The result.
    pub result: GameResult,
    /// Why the game ended.
    pub termination: Termination,
    /// Plies played from the start position.
    pub plies: u32,
    /// Every move.
    pub moves: Vec<MoveRecord>,
    /// The castling moves, in the order played.
    pub castlings: Vec<CastlingFact>,
    /// What castling studies ask about each side's king (lost rights, a corner reached), in
    /// the order it happened; at most one of each kind per side. Absent from records written
    /// before they were kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub milestones: Vec<Milestone>,
}

impl GameRecord {
    /// The per-game facts the study statistics read.
    pub fn study_record(&self, ruleset: &str) -> stats::study::GameRecord {
        stats::study::GameRecord {
            ruleset: ruleset.to_string(),
            result: self.result.study(),
            plies: self.plies,
            termination: self.termination.id().to_string(),
            castlings: self
                .castlings
                .iter()
                .map(|c| CastlingEvent {
                    side: c.side,
                    kind: c.kind.clone(),
                    move_number: c.move_number,
                })
                .collect(),
            milestones: self.milestones.clone(),
        }
    }
}

/// One opening played twice with colours reversed: the first player has White in `games[0]`
/// and Black in `games[1]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairResult {
    /// The pair's index in the run (which opening, which seed stream).
    pub pair_index: u64,
    /// The seed the pair was played with.
    pub seed: u64,
    /// Variant id.
    pub variant: String,
    /// Rule-set id.
    pub ruleset: String,
    /// The opening position.
    pub opening_fen: String,
    /// Both games.
    pub games: [GameRecord; 2],
    /// PGN of both games, when asked for.
    pub pgn: Option<String>,
}

impl PairResult {
    /// The first player's result in each game.
    pub fn first_player_results(&self) -> [StatsGameResult; 2] {
        [
            self.games[0].result.for_side(0),
            self.games[1].result.for_side(1),
        ]
    }

    /// The pair's score for the first player (the pentanomial cell).
    pub fn score(&self) -> PairScore {
        let [a, b] = self.first_player_results();
        PairScore::from_games(a, b)
    }

    /// Whether an engine failed in either game.
    pub fn has_failure(&self) -> bool {
        self.games.iter().any(|g| g.termination.is_failure())
    }

    /// Both games' facts for the study statistics.
    pub fn study_records(&self) -> [stats::study::GameRecord; 2] {
        [
            self.games[0].study_record(&self.ruleset),
            self.games[1].study_record(&self.ruleset),
        ]
    }
}
