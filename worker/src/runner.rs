//! Plays one game between two players and records it.

use std::time::Duration;

use engine::eval::SearchPosition;
use engine::san::to_san;
use engine::{Color, Game, Position, Role, Rules};
use stats::study::Side;

use crate::adjudication::{Adjudication, Tracker, Verdict};
use crate::error::WorkerError;
use crate::limits::TimeControl;
use crate::player::{GoRequest, Player, PlayerError};
use crate::record::{CastlingFact, GameRecord, GameResult, MoveRecord, Termination};

/// How games are played.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GameConfig {
    /// The limit per move.
    pub tc: TimeControl,
    /// Adjudication rules.
    pub adjudication: Adjudication,
    /// Time an answer may arrive after a timed deadline without losing (process and pipe
    /// latency).
    pub time_margin: Duration,
}

impl GameConfig {
    /// Default adjudication and a 50 ms time margin.
    pub fn new(tc: TimeControl) -> Self {
        GameConfig {
            tc,
            adjudication: Adjudication::default(),
            time_margin: Duration::from_millis(50),
        }
    }
}

fn side(c: Color) -> Side {
    match c {
        Color::White => Side::White,
        Color::Black => Side::Black,
    }
}

/// Whether `color` has the material to mate at all (used when the opponent's flag falls):
/// any pawn, rook, queen or Secutor; two minor pieces; or one minor piece while the other side
/// has something besides its king to block with.
pub fn can_mate<P: Position>(pos: &P, color: Color) -> bool {
    let mut minors = 0;
    let mut other_has_pieces = false;
    for &sq in P::squares() {
        let Some(piece) = pos.piece_at(sq) else {
            continue;
        };
        if piece.color == color {
            match piece.role {
                Role::King => {}
                Role::Knight | Role::Bishop => minors += 1,
                _ => return true,
            }
        } else if piece.role != Role::King {
            other_has_pieces = true;
        }
    }
    minors >= 2 || (minors == 1 && other_has_pieces)
}

/// Plays a game from `start_fen`; `players[0]` has White. Player failures are results (the
/// failing side loses), never errors: the only error is a start position that is not legal.
pub fn play_game<P: SearchPosition>(
    rules: Rules,
    start_fen: &str,
    players: [&mut dyn Player<P>; 2],
    config: &GameConfig,
) -> Result<GameRecord, WorkerError> {
    let mut game = Game::<P>::from_fen(rules, start_fen).map_err(|source| WorkerError::Fen {
        context: format!("start position {start_fen:?}"),
        source,
    })?;
    let [white, black] = players;
    let mut players: [&mut dyn Player<P>; 2] = [white, black];
    let names = [players[0].name().to_string(), players[1].name().to_string()];
    let mut record = GameRecord {
        white: names[0].clone(),
        black: names[1].clone(),
        start_fen: game.start_fen().to_string(),
        result: GameResult::Draw,
        termination: Termination::Checkmate,
        plies: 0,
        moves: Vec::new(),
        castlings: Vec::new(),
    };
    let finish = |record: &mut GameRecord, result: GameResult, termination: Termination| {
        record.result = result;
        record.termination = termination;
        record.plies = record.moves.len() as u32;
    };
    let failure = |e: &PlayerError| match e {
        PlayerError::Crash(_) => Termination::Crash,
        PlayerError::Timeout(_) => Termination::Timeout,
        PlayerError::IllegalMove(_) => Termination::IllegalMove,
    };

    for (i, p) in players.iter_mut().enumerate() {
        if let Err(e) = p.new_game(&game) {
            tracing::warn!(engine = %names[i], error = %e, "engine failed at game start");
            finish(&mut record, GameResult::win_for(1 - i), failure(&e));
            return Ok(record);
        }
    }

    let mut clocks = match config.tc {
        TimeControl::Clock { base, .. } => Some([base; 2]),
        _ => None,
    };
    let inc = match config.tc {
        TimeControl::Clock { inc, .. } => inc,
        _ => Duration::ZERO,
    };
    let mut tracker = Tracker::new(config.adjudication);
    let mut outcome = game.outcome();
    while outcome.is_none() {
        let mover = game.position().turn();
        let me = mover.index();
        // The longest this move may take before its flag falls.
        let allowed = match config.tc {
            TimeControl::Clock { .. } => clocks.map(|c| c[me] + config.time_margin),
            TimeControl::MoveTime(t) => Some(t + config.time_margin),
            _ => None,
        };
        let request = GoRequest {
            tc: config.tc,
            clocks,
            inc,
            deadline: allowed,
        };
        let flag_fall = |record: &mut GameRecord, game: &Game<P>| {
            let result = if can_mate(game.position(), !mover) {
                GameResult::win_for(1 - me)
            } else {
                GameResult::Draw
            };
            finish(record, result, Termination::TimeForfeit);
        };
        let reply = match players[me].go(&game, &request) {
            Ok(r) => r,
            Err(PlayerError::Timeout(_)) if allowed.is_some() => {
                flag_fall(&mut record, &game);
                return Ok(record);
            }
            Err(e) => {
                tracing::warn!(engine = %names[me], error = %e, "engine failed");
                finish(&mut record, GameResult::win_for(1 - me), failure(&e));
                return Ok(record);
            }
        };
        if let Some(a) = allowed {
            if reply.elapsed > a {
                flag_fall(&mut record, &game);
                return Ok(record);
            }
        }
        if let Some(c) = clocks.as_mut() {
            c[me] = c[me].saturating_sub(reply.elapsed) + inc;
        }
        let pos = game.position();
        let info = pos.move_info(reply.mv);
        let san = to_san(pos, reply.mv);
        if let Some(castle) = info.castle {
            record.castlings.push(CastlingFact {
                side: side(mover),
                kind: castle.id().to_string(),
                ply: record.moves.len() as u32 + 1,
                move_number: pos.fullmove_number(),
            });
        }
        record.moves.push(MoveRecord {
            uci: info.uci(),
            san,
            score: reply.score,
            depth: reply.depth,
            nodes: reply.nodes,
            time_ms: reply.elapsed.as_millis() as u64,
        });
        game.play(reply.mv);
        outcome = game.outcome();
        if outcome.is_some() {
            break;
        }
        let pos = game.position();
        match tracker.update(
            mover,
            reply.score,
            pos.halfmove_clock(),
            pos.fullmove_number(),
        ) {
            None => {}
            Some(Verdict::Resign { winner }) => {
                finish(
                    &mut record,
                    GameResult::win_for(winner.index()),
                    Termination::ResignAdjudication,
                );
                return Ok(record);
            }
            Some(Verdict::Draw) => {
                finish(&mut record, GameResult::Draw, Termination::DrawAdjudication);
                return Ok(record);
            }
            Some(Verdict::MaxMoves) => {
                finish(&mut record, GameResult::Draw, Termination::MaxMoves);
                return Ok(record);
            }
        }
    }
    if let Some(o) = outcome {
        let result = match o.winner() {
            Some(c) => GameResult::win_for(c.index()),
            None => GameResult::Draw,
        };
        finish(&mut record, result, o.into());
    }
    Ok(record)
}
