//! Our engine in process: a `Searcher` with its own `Params`, called directly on the game's
//! position. No process, no text protocol: the only per-move costs beyond the search are a
//! position clone and the history slice.

use std::time::{Duration, Instant};

use engine::eval::SearchPosition;
use engine::search::{Limits, Searcher};
use engine::{Game, Rules};

use super::spec::InternalSpec;
use super::{GoRequest, Player, PlayerError, Reply};
use crate::limits::TimeControl;
use crate::WorkerError;

/// Our engine playing in this process.
pub struct InternalPlayer<P: SearchPosition> {
    name: String,
    searcher: Searcher<P>,
}

impl<P: SearchPosition> InternalPlayer<P> {
    /// A player with the spec's parameters, table size and network, for games under `rules`
    /// (refused when the spec's network is for another game).
    pub fn new(spec: &InternalSpec, rules: Rules) -> Result<Self, WorkerError> {
        let mut searcher = Searcher::new(spec.hash_mib, spec.params.clone());
        if let Some(loaded) = &spec.network {
            let network = P::network(loaded, rules).map_err(|source| WorkerError::Network {
                player: spec.name.clone(),
                source,
            })?;
            searcher.set_network(Some(network));
        }
        Ok(InternalPlayer {
            name: spec.name.clone(),
            searcher,
        })
    }
}

/// The engine's search limits for a request.
pub fn engine_limits(request: &GoRequest) -> Limits {
    let mut limits = Limits::default();
    match request.tc {
        TimeControl::Nodes(n) => limits.nodes = Some(n),
        TimeControl::Depth(d) => limits.depth = Some(d),
        TimeControl::MoveTime(t) => limits.movetime = Some(t),
        TimeControl::Clock { .. } => {
            let clocks = request.clocks.unwrap_or([Duration::ZERO; 2]);
            limits.time = [Some(clocks[0]), Some(clocks[1])];
            limits.inc = [request.inc; 2];
        }
    }
    limits
}

impl<P: SearchPosition> Player<P> for InternalPlayer<P> {
    fn name(&self) -> &str {
        &self.name
    }

    fn new_game(&mut self, _game: &Game<P>) -> Result<(), PlayerError> {
        self.searcher.new_game();
        Ok(())
    }

    fn go(&mut self, game: &Game<P>, request: &GoRequest) -> Result<Reply<P::Move>, PlayerError> {
        let limits = engine_limits(request);
        let start = Instant::now();
        let result = self
            .searcher
            .search(game.position(), game.history_keys(), &limits, |_| {});
        let elapsed = start.elapsed();
        let mv = result
            .best
            .ok_or_else(|| PlayerError::IllegalMove("(none)".into()))?;
        Ok(Reply {
            mv,
            score: (result.depth > 0).then_some(result.score),
            depth: Some(result.depth),
            nodes: Some(result.nodes),
            elapsed,
        })
    }
}
