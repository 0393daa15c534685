//! Plays one game between two players and records it.

use std::time::Duration;

use engine::eval::SearchPosition;
use engine::fen_fields::split_fields;
use engine::san::to_san;
use engine::{Color, Game, MoveInfo, Piece, Position, Role, Rules, SquareName};
use stats::study::{Milestone, MilestoneKind, Side};

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
        milestones: Vec::new(),
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
    let mut watch = MilestoneWatch::new(game.position());
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
        let move_number = pos.fullmove_number();
        if let Some(castle) = info.castle {
            record.castlings.push(CastlingFact {
                side: side(mover),
                kind: castle.id().to_string(),
                ply: record.moves.len() as u32 + 1,
                move_number,
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
        // Before the end checks: the last move's milestones (a mating king walk) count too.
        watch.after_move(
            mover,
            &info,
            move_number,
            game.position(),
            &mut record.milestones,
        );
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

/// Notices the milestones of [`stats::study::Milestone`] as a game goes, one move at a time.
///
/// Rights are read from the castling field of the position's FEN (upper-case letters are
/// White's rights, lower-case Black's): the one place every geometry and rule-set (Latte's
/// G/B letters included) states them. The FEN is written only while some side can still lose
/// its rights without having castled: once both have castled or lost them (most games, early),
/// a move costs two comparisons here.
struct MilestoneWatch {
    /// Per side (`Color::index`): holds a castling right, has not castled and has no
    /// rights-lost milestone yet, so its next loss of rights is one to record.
    live: [bool; 2],
    /// Per side: its king-corner milestone is recorded (only the first counts).
    cornered: [bool; 2],
    /// The board's last file and last rank (0-based): where the corners are.
    last_file: u8,
    last_rank: u8,
}

impl MilestoneWatch {
    /// Starts from the game's start position: a side that starts without rights can lose
    /// none, and a king that starts on a corner has not arrived there.
    fn new<P: Position>(start: &P) -> Self {
        let (last_file, last_rank) = P::squares()
            .iter()
            .fold((0, 0), |(f, r), sq| (f.max(sq.file()), r.max(sq.rank())));
        MilestoneWatch {
            live: castling_rights(&start.to_fen()).unwrap_or([false; 2]),
            cornered: [false; 2],
            last_file,
            last_rank,
        }
    }

    /// Records what `mover`'s move `info` (played on full move `move_number`, giving
    /// `after`) made happen, to either side.
    fn after_move<P: Position>(
        &mut self,
        mover: Color,
        info: &MoveInfo<P::Square>,
        move_number: u32,
        after: &P,
        out: &mut Vec<Milestone>,
    ) {
        let me = mover.index();
        if info.castle.is_some() {
            // Castling spends the rights; it is not losing them.
            self.live[me] = false;
        }
        if self.live.contains(&true) {
            self.rights_lost(mover, info, move_number, after, out);
        }
        // `info.to` is the king's destination for castling too; the board confirms it.
        let king_arrived = (info.role == Role::King || info.castle.is_some())
            && self.is_home_corner(mover, info.to)
            && after.piece_at(info.to) == Some(Piece::new(mover, Role::King));
        if king_arrived && !self.cornered[me] {
            self.cornered[me] = true;
            out.push(milestone(mover, MilestoneKind::KingCorner, move_number));
        }
    }

    /// A rights-lost milestone for each live side left without rights: the mover's own king
    /// or rook moved, or the opponent took the rook.
    fn rights_lost<P: Position>(
        &mut self,
        mover: Color,
        info: &MoveInfo<P::Square>,
        move_number: u32,
        after: &P,
        out: &mut Vec<Milestone>,
    ) {
        // A FEN this crate's engine wrote always splits; if it ever did not, recording
        // nothing is better than recording a loss that did not happen.
        let Some(rights) = castling_rights(&after.to_fen()) else {
            return;
        };
        for color in [Color::White, Color::Black] {
            let c = color.index();
            if !self.live[c] || rights[c] {
                continue;
            }
            self.live[c] = false;
            // Only king and rook moves and rook captures take rights away; a mover's move
            // that is not a king move is therefore its rook's.
            let kind = if color != mover {
                MilestoneKind::RightsLostRookCaptured
            } else if info.role == Role::King {
                MilestoneKind::RightsLostKingMoved
            } else {
                MilestoneKind::RightsLostRookMoved
            };
            out.push(milestone(color, kind, move_number));
        }
    }

    /// Whether `sq` is a corner of `color`'s own back rank.
    fn is_home_corner<S: SquareName>(&self, color: Color, sq: S) -> bool {
        let home_rank = match color {
            Color::White => 0,
            Color::Black => self.last_rank,
        };
        sq.rank() == home_rank && (sq.file() == 0 || sq.file() == self.last_file)
    }
}

fn milestone(color: Color, kind: MilestoneKind, move_number: u32) -> Milestone {
    Milestone {
        side: side(color),
        kind,
        move_number,
    }
}

/// Per side (`Color::index`), whether a FEN's castling field gives it any right; `None` for a
/// FEN that does not split into fields.
fn castling_rights(fen: &str) -> Option<[bool; 2]> {
    let field = split_fields(fen).ok()?.castling;
    Some([
        field.bytes().any(|b| b.is_ascii_uppercase()),
        field.bytes().any(|b| b.is_ascii_lowercase()),
    ])
}
