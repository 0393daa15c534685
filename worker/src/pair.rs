//! One opening played twice with colours reversed: the unit of work of a match and of the
//! cluster.
//!
//! [`PairSession`] keeps its two players (searchers, engine processes) across pairs, so a
//! worker slot starts its engines once; [`play_pair`] is the one-shot form. Both are blocking:
//! call them from a blocking thread (`tokio::task::spawn_blocking`), never on the async
//! runtime.

use engine::dispatch::{with_search_position, WithSearchPosition};
use engine::eval::SearchPosition;
use engine::Rules;

use crate::error::WorkerError;
use crate::pgn::{write_game, PgnOptions};
use crate::player::{build, Player, PlayerSpec};
use crate::record::{GameRecord, PairResult};
use crate::runner::{play_game, GameConfig};

/// Everything one pair needs: plain values that can travel to a worker.
#[derive(Clone, Debug)]
pub struct PairSpec {
    /// Variant and rule-set.
    pub rules: Rules,
    /// The opening position.
    pub opening_fen: String,
    /// The two players; the first has White in the first game.
    pub players: [PlayerSpec; 2],
    /// Limits and adjudication.
    pub game: GameConfig,
    /// The pair's index in its run.
    pub pair_index: u64,
    /// The run's seed (recorded with the result).
    pub seed: u64,
    /// Write PGN into the result with these tags.
    pub pgn: Option<PgnOptions>,
}

/// Plays one pair with freshly started players.
pub fn play_pair(spec: &PairSpec) -> Result<PairResult, WorkerError> {
    let mut session = PairSession::new(spec.rules, &spec.players)?;
    session.play_pair(
        spec.pair_index,
        spec.seed,
        &spec.opening_fen,
        &spec.game,
        spec.pgn.as_ref(),
    )
}

trait Games: Send {
    /// The two games: `fens[0]` with the first player White, `fens[1]` with it Black.
    fn play(
        &mut self,
        fens: [&str; 2],
        config: &GameConfig,
    ) -> Result<[GameRecord; 2], WorkerError>;
}

struct Typed<P: SearchPosition> {
    rules: Rules,
    players: [Box<dyn Player<P>>; 2],
}

impl<P: SearchPosition> Games for Typed<P> {
    fn play(
        &mut self,
        fens: [&str; 2],
        config: &GameConfig,
    ) -> Result<[GameRecord; 2], WorkerError> {
        let [a, b] = &mut self.players;
        let first = play_game(self.rules, fens[0], [a.as_mut(), b.as_mut()], config)?;
        let second = play_game(self.rules, fens[1], [b.as_mut(), a.as_mut()], config)?;
        Ok([first, second])
    }
}

struct Build<'a> {
    players: &'a [PlayerSpec; 2],
}

impl WithSearchPosition for Build<'_> {
    type Output = Result<Box<dyn Games>, WorkerError>;
    fn run<P: SearchPosition>(self, rules: Rules) -> Self::Output {
        let a = build::<P>(&self.players[0], rules)?;
        let b = build::<P>(&self.players[1], rules)?;
        Ok(Box::new(Typed {
            rules,
            players: [a, b],
        }))
    }
}

/// Two players of one variant, kept across pairs.
pub struct PairSession {
    rules: Rules,
    games: Box<dyn Games>,
}

impl PairSession {
    /// Builds both players (starting engine processes, which must speak UCI and play `rules`).
    pub fn new(rules: Rules, players: &[PlayerSpec; 2]) -> Result<Self, WorkerError> {
        Ok(PairSession {
            rules,
            games: with_search_position(rules, Build { players })?,
        })
    }

    /// Plays the pair: the first player has White in the first game and Black in the second.
    pub fn play_pair(
        &mut self,
        pair_index: u64,
        seed: u64,
        opening_fen: &str,
        config: &GameConfig,
        pgn: Option<&PgnOptions>,
    ) -> Result<PairResult, WorkerError> {
        self.play_pair_from(pair_index, seed, [opening_fen, opening_fen], config, pgn)
    }

    /// Plays the pair from two openings, one per game. A study's engine plays itself: from
    /// the same opening with colours reversed it would replay the first game move for move,
    /// so a study pair's second game starts from an opening of its own.
    pub fn play_pair_from(
        &mut self,
        pair_index: u64,
        seed: u64,
        fens: [&str; 2],
        config: &GameConfig,
        pgn: Option<&PgnOptions>,
    ) -> Result<PairResult, WorkerError> {
        let games = self.games.play(fens, config)?;
        let pgn = pgn.map(|options| {
            let mut text = String::new();
            for (i, g) in games.iter().enumerate() {
                let round = format!("{}.{}", pair_index + 1, i + 1);
                text.push_str(&write_game(g, self.rules, config.tc, options, &round));
            }
            text
        });
        Ok(PairResult {
            pair_index,
            seed,
            variant: self.rules.variant().id().to_string(),
            ruleset: self.rules.ruleset().id().to_string(),
            opening_fen: games[0].start_fen.clone(),
            games,
            pgn,
        })
    }
}
