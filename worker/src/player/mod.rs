//! Players: something that, given a game and a limit, answers with a move.
//!
//! [`internal::InternalPlayer`] is our engine in process (a `Searcher` with its own `Params`:
//! no process and no text protocol in the hot path); [`uci::UciPlayer`] drives any UCI engine
//! process. Both are built from a [`PlayerSpec`], a plain value that can travel to a worker.

pub mod internal;
pub mod spec;
pub mod uci;

use std::time::Duration;

use engine::eval::SearchPosition;
use engine::Game;
use thiserror::Error;

use crate::limits::TimeControl;
pub use spec::{PlayerSpec, UciSpec};

/// What a player is asked for one move.
#[derive(Clone, Copy, Debug)]
pub struct GoRequest {
    /// The limit.
    pub tc: TimeControl,
    /// Remaining clock time of White and Black (clock controls only).
    pub clocks: Option<[Duration; 2]>,
    /// Increment per move (clock controls only).
    pub inc: Duration,
    /// How long the runner waits for the answer before the player has lost on time or hung.
    /// `None`: the player's own timeout for untimed limits applies.
    pub deadline: Option<Duration>,
}

/// A player's answer.
#[derive(Clone, Debug)]
pub struct Reply<M> {
    /// The move, legal in the position asked about.
    pub mv: M,
    /// The mover's score (internal scale: centipawns, mates beyond `MATE_BOUND`).
    pub score: Option<i32>,
    /// Depth reported.
    pub depth: Option<u32>,
    /// Nodes reported.
    pub nodes: Option<u64>,
    /// Time from the request to the answer.
    pub elapsed: Duration,
}

/// Why a player gave no move; the runner turns each into a lost game.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum PlayerError {
    /// The process died, closed its output, or could not be (re)started.
    #[error("engine crashed: {0}")]
    Crash(String),
    /// No answer before the deadline.
    #[error("engine did not answer within {0:?}")]
    Timeout(Duration),
    /// The answer was not a legal move of the position.
    #[error("illegal move {0:?}")]
    IllegalMove(String),
}

/// A player of one geometry.
pub trait Player<P: SearchPosition>: Send {
    /// The name written into PGN.
    fn name(&self) -> &str;
    /// Prepares for a new game starting at `game`'s position.
    fn new_game(&mut self, game: &Game<P>) -> Result<(), PlayerError>;
    /// Chooses a move in `game`'s current position (which has a legal move).
    fn go(&mut self, game: &Game<P>, request: &GoRequest) -> Result<Reply<P::Move>, PlayerError>;
}

/// Builds the player a spec describes, for the position type `P`.
pub fn build<P: SearchPosition>(
    spec: &PlayerSpec,
    rules: engine::Rules,
) -> Result<Box<dyn Player<P>>, crate::WorkerError> {
    Ok(match spec {
        PlayerSpec::Internal(i) => Box::new(internal::InternalPlayer::<P>::new(i, rules)?),
        PlayerSpec::Uci(u) => Box::new(uci::UciPlayer::start(u.clone(), rules)?),
    })
}
