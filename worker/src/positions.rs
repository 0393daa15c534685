//! Labelled positions from games: what `engine tune-squares` fits its table to.
//!
//! Every position of a game is labelled with the game's result from White's side and written
//! as `FEN [1.0]` (`[0.5]`, `[0.0]`), the format most evaluation tuners read. A position is kept
//! only where a static evaluation can be judged against the result: past the opening's first
//! plies (which the book chose, not the players), not in check, and not one where the move
//! played captures or promotes (the evaluation would miss the material in flight) or the
//! mover's score was a mate (the result was decided, whatever the evaluation says).
//!
//! A game that repeats an earlier one move for move is skipped: a deterministic engine
//! playing itself at a fixed node count plays the same game with colours reversed, so half of
//! such a match would otherwise be written twice, and labelled twice by `worker label`.

use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::io::Write;

use engine::dispatch::{with_position, WithPosition};
use engine::{Position, Rules};

use crate::pgn::{PgnError, PgnGame};

/// Which positions of a game are kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Filter {
    /// The rules a game must be played under; others are skipped.
    pub rules: Rules,
    /// Plies from the game's start position that are never kept.
    pub skip_plies: usize,
}

/// What reading some games gave.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Games whose positions were written.
    pub games: usize,
    /// Games skipped: other rules, or no result (`*`).
    pub skipped_games: usize,
    /// Games skipped because an earlier game had the same start, moves and result.
    pub repeated_games: usize,
    /// Positions written.
    pub positions: usize,
}

/// The games written so far, by a hash of their start position, moves and result: eight
/// bytes a game, not a copy of its positions.
#[derive(Debug, Default)]
pub struct SeenGames(HashSet<u64>);

impl SeenGames {
    /// Whether `game` is new (and now seen).
    fn insert(&mut self, game: &PgnGame) -> bool {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        game.tag("FEN").hash(&mut h);
        game.moves.hash(&mut h);
        game.result.hash(&mut h);
        self.0.insert(h.finish())
    }
}

/// The label of a result token, from White's side.
fn label(result: &str) -> Option<&'static str> {
    match result {
        "1-0" => Some("1.0"),
        "1/2-1/2" => Some("0.5"),
        "0-1" => Some("0.0"),
        _ => None,
    }
}

/// Writes the kept positions of `games` to `out`, adding to `tally`; a game already in `seen`
/// (from these games or earlier ones) is counted and skipped. `first` is the 1-based number
/// of `games[0]` in its file, for error messages. A game that does not replay is an error
/// naming it: its positions would be wrong.
pub fn write_positions(
    games: &[PgnGame],
    first: usize,
    filter: Filter,
    seen: &mut SeenGames,
    out: &mut impl Write,
    tally: &mut Tally,
) -> Result<(), PositionsError> {
    for (i, game) in games.iter().enumerate() {
        let number = first + i;
        let rules = game.rules().map_err(|source| PgnError::Rules {
            game: number,
            source,
        })?;
        let Some(label) = label(&game.result).filter(|_| rules == filter.rules) else {
            tally.skipped_games += 1;
            continue;
        };
        if !seen.insert(game) {
            tally.repeated_games += 1;
            continue;
        }
        let lines = with_position(
            rules,
            Extract {
                game,
                number,
                skip: filter.skip_plies,
            },
        )?;
        for fen in &lines {
            writeln!(out, "{fen} [{label}]").map_err(PositionsError::Write)?;
        }
        tally.games += 1;
        tally.positions += lines.len();
    }
    Ok(())
}

/// Why positions could not be written.
#[derive(Debug, thiserror::Error)]
pub enum PositionsError {
    /// A game that does not read or replay.
    #[error(transparent)]
    Pgn(#[from] PgnError),
    /// The output could not be written.
    #[error("cannot write positions: {0}")]
    Write(std::io::Error),
}

struct Extract<'a> {
    game: &'a PgnGame,
    number: usize,
    skip: usize,
}

impl WithPosition for Extract<'_> {
    type Output = Result<Vec<String>, PgnError>;
    fn run<P: Position>(self, rules: Rules) -> Self::Output {
        let mut kept = Vec::new();
        self.game
            .replay_in::<P>(rules, self.number, |ply, pos: &P, mv| {
                let info = pos.move_info(mv);
                let mate = self
                    .game
                    .comments
                    .get(ply)
                    .and_then(|c| c.as_deref())
                    .is_some_and(|c| c.contains('M'));
                if ply >= self.skip
                    && !pos.in_check()
                    && info.capture.is_none()
                    && info.promotion.is_none()
                    && !mate
                {
                    kept.push(pos.to_fen());
                }
            })?;
        Ok(kept)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pgn::read;

    const GAME: &str = r#"[Event "t"]
[Result "1-0"]
[VariantFamily "chess"]
[Ruleset "normal"]

1. e4 {+0.20/5} d5 {-0.10/5} 2. exd5 {+0.30/5} Qxd5 {-0.20/5} 3. Nc3 {+0.40/5} Qe5+ {-0.30/5}
4. Be2 {+M5/5} Kd8 1-0

[Event "t"]
[Result "*"]

1. e4 *

"#;

    fn run(skip: usize) -> (String, Tally) {
        let games = read(GAME).expect("reads");
        let filter = Filter {
            rules: Rules::default_for(engine::Variant::Chess),
            skip_plies: skip,
        };
        let mut out = Vec::new();
        let mut tally = Tally::default();
        write_positions(
            &games,
            1,
            filter,
            &mut SeenGames::default(),
            &mut out,
            &mut tally,
        )
        .expect("writes");
        (String::from_utf8(out).expect("text"), tally)
    }

    #[test]
    fn quiet_positions_are_labelled_with_the_result() {
        let (text, tally) = run(0);
        let lines: Vec<&str> = text.lines().collect();
        // Kept: before 1. e4, 1... d5, 3. Nc3, 3... Qe5+ and 4... Kd8; not before the
        // captures 2. exd5 and 2... Qxd5, nor before 4. Be2 (in check, and a mate score).
        assert_eq!(tally.games, 1);
        assert_eq!(tally.skipped_games, 1, "the unfinished game");
        assert_eq!(tally.positions, lines.len());
        assert!(lines.iter().all(|l| l.ends_with(" [1.0]")), "{text}");
        assert!(lines[0].starts_with("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w"));
        assert!(!text.contains("/3p4/4P3/"), "before 2. exd5: {text}");
        assert_eq!(lines.len(), 5, "{text}");
    }

    #[test]
    fn the_opening_plies_are_skipped() {
        let (text, tally) = run(4);
        assert_eq!(tally.positions, 3, "{text}");
        assert!(!text.contains("RNBQKBNR w KQkq - 0 1"));
    }

    #[test]
    fn a_game_that_does_not_replay_is_named() {
        let games = read("[Result \"1-0\"]\n\n1. e4 e5 2. Ke3 1-0\n\n").expect("reads");
        let filter = Filter {
            rules: Rules::default_for(engine::Variant::Chess),
            skip_plies: 0,
        };
        let e = write_positions(
            &games,
            7,
            filter,
            &mut SeenGames::default(),
            &mut Vec::new(),
            &mut Tally::default(),
        )
        .expect_err("refused");
        assert!(e.to_string().contains("game 7, ply 3 (Ke3)"), "{e}");
    }

    #[test]
    fn a_game_played_again_move_for_move_is_written_once() {
        let twice = format!("{GAME}{GAME}");
        let games = read(&twice).expect("reads");
        let filter = Filter {
            rules: Rules::default_for(engine::Variant::Chess),
            skip_plies: 0,
        };
        let mut seen = SeenGames::default();
        let mut tally = Tally::default();
        let mut out = Vec::new();
        write_positions(&games, 1, filter, &mut seen, &mut out, &mut tally).expect("writes");
        assert_eq!((tally.games, tally.repeated_games), (1, 1), "{tally:?}");
        assert_eq!(tally.positions, 5);
        // Across calls (a second PGN file) too; another result is another game.
        let other = GAME.replace("1-0", "0-1");
        let more = read(&format!("{GAME}{other}")).expect("reads");
        write_positions(&more, 1, filter, &mut seen, &mut out, &mut tally).expect("writes");
        assert_eq!((tally.games, tally.repeated_games), (2, 2), "{tally:?}");
    }
}
