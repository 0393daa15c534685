//! Texel tuning of the learned piece-square tables ([`squares`](crate::eval::squares)) and,
//! in its `weights` module, of the evaluation's named weights.
//!
//! SPSA tunes a few dozen weights by games; a full table per role and phase (768 values on the
//! 8x8 board) is far beyond what games can tune. It is fitted instead to positions whose game
//! results are known: the evaluation of a quiet position, through a logistic curve, should
//! predict the result of the game it came from. Every other term of the evaluation is held
//! fixed (computed once per position with `SquareTableScale` at zero), so the table's values
//! are exactly the residual that those terms leave, and the fit is a smooth least-squares
//! problem in the table alone, solved by Adam on the whole data set.
//!
//! The positions come from `worker positions` (games' PGN to `FEN [result]` lines), the format
//! most tuners read, so other data sets serve too. A tenth of the games (every tenth pair of
//! games, their positions told apart as [`Samples::read`] says; see [`held_out_game`]) is held
//! out: its loss, printed beside the training loss, says whether the table learned chess or
//! the data set. Whole games, because a game's positions share its result: holding out every
//! tenth line let the rejected chess fit test itself on the games it had learned.

pub(crate) mod emit;
mod fit;
pub mod net;
mod samples;
mod weights;

pub use emit::table_source;
pub use fit::{fit_scale, Fit, FitConfig, Progress};
pub use samples::{parse_line, quiet_positions, Counts, Labelled, Samples};
pub use weights::{evaluate_all, Losses, Positions, Round, WeightConfig};

use thiserror::Error;

use crate::error::FenError;

/// Why tuning could not start.
#[derive(Debug, Error)]
pub enum TuneError {
    /// A line of the positions file that is not `FEN [result]`.
    #[error("positions line {line}: {detail}")]
    Syntax {
        /// 1-based line.
        line: usize,
        /// What is wrong.
        detail: String,
    },
    /// A FEN the rules refuse.
    #[error("positions line {line}: {source}")]
    Fen {
        /// 1-based line.
        line: usize,
        /// What is wrong.
        source: FenError,
    },
    /// The rules have no learned table to tune.
    #[error(
        "{0} has no learned square table (only the 8x8 board's games, chess and Latte, have one)"
    )]
    NoTable(crate::variant::Rules),
    /// The rules' board carries no network.
    #[error(
        "{0} has no evaluation network (only the 8x8 board's games, chess and Latte, can have one)"
    )]
    NoNetwork(crate::variant::Rules),
    /// A network width the engine is not built to read.
    #[error(
        "--hidden {0}: the network's width must be one of {widths:?} units a view",
        widths = crate::board8::net::WIDTHS
    )]
    NetWidth(usize),
    /// A batch of no positions.
    #[error("--batch must be at least 1 position")]
    Batch,
    /// A weight named to fit that the variant's evaluation never reads.
    #[error("{name} does not apply to {rules} (engine params --variant {variant} lists those that do)", variant = rules.variant())]
    NotInVariant {
        /// The weight.
        name: &'static str,
        /// The variant of the positions.
        rules: crate::variant::Rules,
    },
    /// A parameter named to leave out that does not exist.
    #[error("no parameter named {0:?} (engine params lists them)")]
    UnknownParam(String),
    /// A learning rate no fit can step by.
    #[error("--learning-rate must be a positive number, not {0}")]
    LearningRate(f64),
    /// Too few positions to fit or to check the fit.
    #[error("only {found} quiet positions in the file; tuning needs at least {needed}")]
    TooFew {
        /// Quiet positions found.
        found: usize,
        /// The least that is accepted.
        needed: usize,
    },
}

/// Whether game `game` (numbered as [`quiet_positions`] numbers them) is held out when every
/// `holdout`-th is (0: none). Games go by pairs: `worker match` plays each opening twice,
/// colours reversed, one game after the other, so games 2k and 2k + 1 share their opening's
/// positions; holding out one of a pair and training on the other tested a fit on positions
/// it had learned. The `holdout`-th pair of every `holdout` is held out whole.
pub fn held_out_game(game: u32, holdout: usize) -> bool {
    holdout > 0 && (game as usize / 2) % holdout == holdout - 1
}

/// The fewest quiet positions a fit is run on: fewer fit noise.
pub const MIN_POSITIONS: usize = 1000;

/// Refuses a data set of fewer than [`MIN_POSITIONS`] quiet positions.
pub fn enough_positions(found: usize) -> Result<(), TuneError> {
    if found < MIN_POSITIONS {
        return Err(TuneError::TooFew {
            found,
            needed: MIN_POSITIONS,
        });
    }
    Ok(())
}

/// Refuses a learning rate that is not a positive number: NaN or a negative step would fit
/// nothing and write the result as if it had.
pub fn check_learning_rate(rate: f64) -> Result<(), TuneError> {
    if rate.is_finite() && rate > 0.0 {
        Ok(())
    } else {
        Err(TuneError::LearningRate(rate))
    }
}

#[cfg(test)]
mod tests {
    use super::held_out_game;

    /// The two games of a pair (one opening, both colours) are held out together or trained
    /// on together, and every `holdout`-th pair is held out.
    #[test]
    fn pairs_of_games_are_held_out_whole() {
        for game in (0..1000u32).step_by(2) {
            assert_eq!(
                held_out_game(game, 10),
                held_out_game(game + 1, 10),
                "{game}"
            );
        }
        let held = (0..1000u32).filter(|&g| held_out_game(g, 10)).count();
        assert_eq!(held, 100);
        assert!(held_out_game(18, 10) && held_out_game(19, 10));
        assert!(!held_out_game(9, 10));
        assert!((0..1000u32).all(|g| !held_out_game(g, 0)));
    }
}
