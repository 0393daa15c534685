//! A game: a position with the history that repetition needs, and the end-of-game rules
//! (checkmate, stalemate, 50-move rule, threefold repetition, insufficient material).

use crate::error::{FenError, MoveError};
use crate::notation::parse_uci;
use crate::position::Position;
use crate::san::parse_san;
use crate::types::Color;
use crate::variant::Rules;

/// Why a game ended by the rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The side to move is mated; `winner` is the other side.
    Checkmate {
        /// Who gave mate.
        winner: Color,
    },
    /// The side to move has no legal move and is not in check.
    Stalemate,
    /// 100 plies without a capture or pawn move.
    FiftyMoves,
    /// The same position (placement, side, rights, legal en passant) for the third time.
    Threefold,
    /// Neither side can mate.
    InsufficientMaterial,
}

impl Outcome {
    /// The winner, or `None` for a draw.
    pub const fn winner(self) -> Option<Color> {
        match self {
            Outcome::Checkmate { winner } => Some(winner),
            _ => None,
        }
    }

    /// A stable id for statistics and PGN `Termination` tags.
    pub const fn id(self) -> &'static str {
        match self {
            Outcome::Checkmate { .. } => "checkmate",
            Outcome::Stalemate => "stalemate",
            Outcome::FiftyMoves => "fifty-moves",
            Outcome::Threefold => "threefold",
            Outcome::InsufficientMaterial => "insufficient-material",
        }
    }
}

/// A position with its game history.
#[derive(Clone, Debug)]
pub struct Game<P: Position> {
    position: P,
    start_fen: String,
    moves: Vec<P::Move>,
    /// Keys of every position of the game, the current one last.
    keys: Vec<u64>,
}

impl<P: Position> Game<P> {
    /// A game from the start position of `rules`.
    pub fn new(rules: Rules) -> Result<Self, FenError> {
        Self::from_fen(rules, rules.start_fen())
    }

    /// A game from a FEN.
    pub fn from_fen(rules: Rules, fen: &str) -> Result<Self, FenError> {
        let position = P::from_fen(rules, fen)?;
        let key = position.key();
        Ok(Game {
            start_fen: position.to_fen(),
            position,
            moves: Vec::new(),
            keys: vec![key],
        })
    }

    /// The current position.
    pub fn position(&self) -> &P {
        &self.position
    }

    /// The FEN the game started from (as written by this program).
    pub fn start_fen(&self) -> &str {
        &self.start_fen
    }

    /// The moves played.
    pub fn moves(&self) -> &[P::Move] {
        &self.moves
    }

    /// Keys of the positions before the current one, oldest first: the history a search needs
    /// to see repetitions.
    pub fn history_keys(&self) -> &[u64] {
        &self.keys[..self.keys.len().saturating_sub(1)]
    }

    /// Plays a move known to be legal (from this position's legal move list).
    pub fn play(&mut self, mv: P::Move) {
        self.position.make_move(mv);
        self.moves.push(mv);
        self.keys.push(self.position.key());
    }

    /// Plays a move in coordinate notation, refusing an illegal one.
    pub fn play_uci(&mut self, text: &str) -> Result<P::Move, MoveError> {
        let mv = parse_uci(&self.position, text)?;
        self.play(mv);
        Ok(mv)
    }

    /// Plays a move in SAN, refusing an illegal or ambiguous one.
    pub fn play_san(&mut self, text: &str) -> Result<P::Move, MoveError> {
        let mv = parse_san(&self.position, text)?;
        self.play(mv);
        Ok(mv)
    }

    /// How often the current position has occurred, this time included. Only positions since
    /// the last capture or pawn move can repeat it.
    pub fn repetitions(&self) -> usize {
        let Some(&current) = self.keys.last() else {
            return 0;
        };
        let window = (self.position.halfmove_clock() as usize + 1).min(self.keys.len());
        self.keys[self.keys.len() - window..]
            .iter()
            .rev()
            .step_by(2)
            .filter(|&&k| k == current)
            .count()
    }

    /// The outcome if the game has ended by the rules. Mate and stalemate take precedence: a
    /// mate given on the 100th quiet ply is a mate.
    pub fn outcome(&self) -> Option<Outcome> {
        if self.position.legal_move_list().is_empty() {
            return Some(if self.position.in_check() {
                Outcome::Checkmate {
                    winner: !self.position.turn(),
                }
            } else {
                Outcome::Stalemate
            });
        }
        if self.position.halfmove_clock() >= 100 {
            Some(Outcome::FiftyMoves)
        } else if self.repetitions() >= 3 {
            Some(Outcome::Threefold)
        } else if self.position.is_insufficient_material() {
            Some(Outcome::InsufficientMaterial)
        } else {
            None
        }
    }
}
