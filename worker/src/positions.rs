//! Labelled positions from games: what `engine tune-squares` fits its table to.
//!
//! Every position of a game is labelled with the game's result from White's side and written
//! as `FEN [1.0]` (`[0.5]`, `[0.0]`), the format most evaluation tuners read. A position is kept
//! only where a static evaluation can be judged against the result: past the opening's first
//! plies (which the book chose, not the players), not in check, and not one where the move
//! played captures or promotes (the evaluation would miss the material in flight) or the
//! mover's score was a mate (the result was decided, whatever the evaluation says).
//!
//! With a walk ([`Walk`]), each kept position is replaced by one a few random legal moves off
//! it, written as a bare FEN for `worker label` to score: the games' own positions are the few
//! a search's tree passes through, and a network fitted to them alone learned nothing of the
//! rest (the loose pieces and odd structures a search meets at every node). A walk ends in a
//! position a static evaluation can judge (not in check, the game going on, no promotion and
//! no capture winning material by SEE for the side to move) or is tried again, at most
//! [`WALK_TRIES`] times. The walk of each game is drawn from the seed and the game's number
//! alone, so the same files and seed write the same positions.
//!
//! A game that repeats an earlier one move for move is skipped: a deterministic engine
//! playing itself at a fixed node count plays the same game with colours reversed, so half of
//! such a match would otherwise be written twice, and labelled twice by `worker label`.

use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::io::Write;

use engine::dispatch::{with_search_position, WithSearchPosition};
use engine::eval::SearchPosition;
use engine::params::Params;
use engine::{Game, Rules};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::pgn::{PgnError, PgnGame};

/// Which positions of a game are kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Filter {
    /// The rules a game must be played under; others are skipped.
    pub rules: Rules,
    /// Plies from the game's start position that are never kept.
    pub skip_plies: usize,
    /// Write a position a random walk off each kept one instead (unlabelled).
    pub walk: Option<Walk>,
}

/// A random walk off each kept position: 1 to `max_plies` random legal moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Walk {
    /// The longest walk, in plies (at least 1).
    pub max_plies: usize,
    /// The seed the walks are drawn from (with each game's number).
    pub seed: u64,
}

/// Walks tried from one position before it is given up (counted in [`Tally::unwalked`]).
pub const WALK_TRIES: usize = 8;

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
    /// Kept positions none of whose walks ended in a position to write.
    pub unwalked: usize,
    /// Games read so far, written or skipped: the number each game's walk is seeded by.
    pub read: u64,
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
        tally.read += 1;
        let walk = filter.walk.map(|w| {
            let seed = w.seed ^ tally.read.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            (w, Xoshiro256PlusPlus::seed_from_u64(seed))
        });
        let walking = walk.is_some();
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
        let (lines, unwalked) = with_search_position(
            rules,
            Extract {
                game,
                number,
                skip: filter.skip_plies,
                walk,
            },
        )?;
        for fen in &lines {
            if walking {
                writeln!(out, "{fen}")
            } else {
                writeln!(out, "{fen} [{label}]")
            }
            .map_err(PositionsError::Write)?;
        }
        tally.games += 1;
        tally.positions += lines.len();
        tally.unwalked += unwalked;
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
    /// The walk and the generator seeded for this game.
    walk: Option<(Walk, Xoshiro256PlusPlus)>,
}

impl WithSearchPosition for Extract<'_> {
    /// The FENs to write, and the kept positions whose walks all failed.
    type Output = Result<(Vec<String>, usize), PgnError>;
    fn run<P: SearchPosition>(mut self, rules: Rules) -> Self::Output {
        let mut kept = Vec::new();
        let params = Params::default();
        let mut unwalked = 0;
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
                    match &mut self.walk {
                        Some((walk, rng)) => match walk_off(pos, rules, *walk, rng, &params) {
                            Some(fen) => kept.push(fen),
                            None => unwalked += 1,
                        },
                        None => kept.push(pos.to_fen()),
                    }
                }
            })?;
        Ok((kept, unwalked))
    }
}

/// The FEN of a position 1 to `walk.max_plies` random legal moves off `from` that a static
/// evaluation can judge, if one of [`WALK_TRIES`] walks ends in one.
fn walk_off<P: SearchPosition>(
    from: &P,
    rules: Rules,
    walk: Walk,
    rng: &mut Xoshiro256PlusPlus,
    params: &Params,
) -> Option<String> {
    for _ in 0..WALK_TRIES {
        let mut pos = from.clone();
        let plies = rng.gen_range(1..=walk.max_plies.max(1));
        let mut moved = true;
        for _ in 0..plies {
            let moves = pos.legal_move_list();
            if moves.is_empty() {
                moved = false;
                break;
            }
            pos.make_move(moves[rng.gen_range(0..moves.len())]);
        }
        if moved && judgeable(&pos, params) {
            let fen = pos.to_fen();
            // What `worker label` refuses (a draw by the fifty-move rule or by material)
            // is not written.
            let going_on = Game::<P>::from_fen(rules, &fen).is_ok_and(|g| g.outcome().is_none());
            if going_on {
                return Some(fen);
            }
        }
    }
    None
}

/// Not in check, and no promotion nor any capture that wins material by SEE for the side to
/// move: a position whose value a static evaluation can read without a search.
fn judgeable<P: SearchPosition>(pos: &P, params: &Params) -> bool {
    !pos.in_check()
        && pos.legal_move_list().iter().all(|&mv| {
            let info = pos.move_info(mv);
            info.promotion.is_none()
                && (info.capture.is_none() || !pos.see_ge_info(info, 1, params))
        })
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
        run_with(skip, None)
    }

    fn run_with(skip: usize, walk: Option<Walk>) -> (String, Tally) {
        let games = read(GAME).expect("reads");
        let filter = Filter {
            rules: Rules::default_for(engine::Variant::Chess),
            skip_plies: skip,
            walk,
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

    /// Walked positions replace the kept ones, unlabelled; each is a legal chess position that
    /// a static evaluation can judge (not in check, nothing winning to capture or promote) and
    /// not one of the game's own; the same seed writes the same positions, another seed others.
    #[test]
    fn walks_write_unlabelled_judgeable_positions_off_the_line_from_the_seed() {
        let rules = Rules::default_for(engine::Variant::Chess);
        let walked = |seed: u64| run_with(0, Some(Walk { max_plies: 3, seed }));
        let (plain, _) = run(0);
        let (text, tally) = walked(5);
        assert_eq!(tally.positions + tally.unwalked, 5, "{tally:?}");
        assert!(tally.positions >= 3, "{tally:?}");
        let params = Params::default();
        for fen in text.lines() {
            assert!(!fen.contains('['), "unlabelled: {fen}");
            assert!(!plain.contains(fen), "off the game's line: {fen}");
            let p = engine::board8::Board::from_fen(rules, fen).expect("a legal position");
            assert!(judgeable(&p, &params), "{fen}");
        }
        assert_eq!(walked(5).0, text);
        assert_ne!(walked(6).0, text);
    }

    /// A capture that wins material, a promotion, or check: not judgeable; a quiet position is.
    #[test]
    fn judgeable_positions_have_nothing_to_win_at_once() {
        let rules = Rules::default_for(engine::Variant::Chess);
        let params = Params::default();
        let judge = |fen: &str| {
            judgeable(
                &engine::board8::Board::from_fen(rules, fen).expect("fen"),
                &params,
            )
        };
        assert!(judge(
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
        ));
        // A knight en prise to a pawn, a loose rook, a pawn to promote, check.
        assert!(!judge(
            "rnbqkb1r/pppppppp/8/8/4n3/3P4/PPP1PPPP/RNBQKBNR w KQkq - 0 3"
        ));
        assert!(!judge("4k3/8/8/8/8/8/r7/R3K3 w - - 0 1"));
        assert!(!judge("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1"));
        assert!(!judge("4k3/8/8/8/8/8/8/r3K3 w - - 0 1"));
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
            walk: None,
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
            walk: None,
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
