//! Positions labelled by an engine's evaluation: `worker label`.
//!
//! `worker positions` labels every position of a game with the game's result, and a game's
//! sixty positions share one label: most of what a fit to them learns is which games were won,
//! not which positions were good (this project's first chess table fitted 12,000 self-play
//! games and lost 300 Elo). A stronger engine's evaluation of each position is a label of its
//! own: here each `FEN [result]` line is searched by a player (any UCI engine, Stockfish say, or
//! ours) to a fixed node count or depth, and written back as `FEN [p]`, where `p` is the
//! engine's score from White's side through the logistic curve `1 / (1 + 10^(-cp / scale))`,
//! blended with the game's result as `lambda * p + (1 - lambda) * result` (`lambda` 1: the
//! engine alone). `engine tune-squares` reads such scores as it reads results.
//!
//! A line may also be a bare FEN (what `worker positions --walk` writes: a position off the
//! game's line has no result of its own); such a line is labelled by the engine alone, so it
//! is refused when `lambda` is below 1.
//!
//! The work is streamed: positions are read, searched by `concurrency` players (one engine
//! process each) and written in input order, with at most [`MAX_WAITING`] finished lines held
//! back behind a slow one, so a file of millions of lines needs no more memory than a few.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use engine::dispatch::{with_search_position, WithSearchPosition};
use engine::eval::SearchPosition;
use engine::search::MATE_BOUND;
use engine::tune::parse_line;
use engine::{Color, Game, Rules};
use thiserror::Error;

use crate::limits::TimeControl;
use crate::player::{self, GoRequest, PlayerSpec};

/// Finished lines held back at most while an earlier one is still being searched.
pub const MAX_WAITING: usize = 4096;

/// How positions are labelled.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LabelConfig {
    /// The rules every position is read under.
    pub rules: Rules,
    /// The search of each position: a node count or a depth, so that labels do not depend on
    /// the machine's load.
    pub tc: TimeControl,
    /// Centipawns per factor of ten in the odds: `p = 1 / (1 + 10^(-cp / scale))`.
    pub scale: f64,
    /// The engine's share of the label; the game's result has the rest.
    pub lambda: f64,
    /// Players searching at once, one engine process each.
    pub concurrency: usize,
}

impl LabelConfig {
    /// The defaults: 400 centipawns a factor of ten (the Elo curve's scale), the engine's
    /// label alone, one player.
    pub fn new(rules: Rules, tc: TimeControl) -> Self {
        LabelConfig {
            rules,
            tc,
            scale: 400.0,
            lambda: 1.0,
            concurrency: 1,
        }
    }

    /// Refuses settings that would write labels the tuner cannot use or that depend on time.
    pub fn check(&self) -> Result<(), LabelError> {
        if self.tc.is_timed() {
            return Err(LabelError::Config(format!(
                "the search must be nodes=N or depth=N, not {}: a timed search labels the \
                 same position differently on a busy machine",
                self.tc
            )));
        }
        if !(self.scale.is_finite() && self.scale > 0.0) {
            return Err(LabelError::Config(format!(
                "scale {} must be a positive number of centipawns",
                self.scale
            )));
        }
        if !(0.0..=1.0).contains(&self.lambda) {
            return Err(LabelError::Config(format!(
                "lambda {} must be from 0 (the game's result alone) to 1 (the engine's alone)",
                self.lambda
            )));
        }
        if self.concurrency == 0 {
            return Err(LabelError::Config("concurrency must be at least 1".into()));
        }
        Ok(())
    }

    /// The label of a White-side score `cp` (internal scale: mates beyond [`MATE_BOUND`]) for
    /// a position whose game ended `result`.
    pub fn label(&self, cp: i32, result: f32) -> f64 {
        let p = if cp >= MATE_BOUND {
            1.0
        } else if cp <= -MATE_BOUND {
            0.0
        } else {
            1.0 / (1.0 + 10f64.powf(-f64::from(cp) / self.scale))
        };
        self.lambda * p + (1.0 - self.lambda) * f64::from(result)
    }
}

/// What labelling did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LabelTally {
    /// Positions written.
    pub positions: usize,
    /// Of them, positions the engine scored as a mate.
    pub mates: usize,
}

/// Why labelling stopped. Nothing is written for a line that fails, and the lines after it
/// are not searched: a labelled file is either whole or stops before the line named.
#[derive(Debug, Error)]
pub enum LabelError {
    /// A setting out of range.
    #[error("{0}")]
    Config(String),
    /// A line that is not `FEN [result]`.
    #[error(transparent)]
    Syntax(#[from] engine::tune::TuneError),
    /// A bare FEN where the label is to blend the game's result (`lambda` below 1).
    #[error(
        "positions line {line}: a FEN without a result, which a lambda of {lambda} would blend \
         into the label; label such lines with lambda 1 (the engine alone)"
    )]
    NoResult {
        /// 1-based line.
        line: usize,
        /// The blend asked for.
        lambda: f64,
    },
    /// A FEN that is not a legal position of the rules.
    #[error("positions line {line}: {detail}")]
    Fen {
        /// 1-based line.
        line: usize,
        /// What is wrong.
        detail: String,
    },
    /// The player could not start.
    #[error(transparent)]
    Start(#[from] crate::WorkerError),
    /// The player failed on a position, or gave no score for it.
    #[error("positions line {line}: {detail}")]
    Player {
        /// 1-based line.
        line: usize,
        /// What happened.
        detail: String,
    },
    /// Reading the input or writing the output failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// One position to search.
struct Job {
    line: usize,
    fen: String,
    result: f32,
}

/// A searched position: its output line, or why it has none.
type Done = (usize, Result<(String, bool), LabelError>);

/// Labels every line of `input` with `player`'s evaluation and writes them to `out` in input
/// order.
pub fn label(
    input: impl BufRead,
    out: &mut impl Write,
    player: &PlayerSpec,
    config: &LabelConfig,
) -> Result<LabelTally, LabelError> {
    config.check()?;
    with_search_position(
        config.rules,
        Run {
            input,
            out,
            player,
            config,
        },
    )
}

struct Run<'a, R, W> {
    input: R,
    out: &'a mut W,
    player: &'a PlayerSpec,
    config: &'a LabelConfig,
}

impl<R: BufRead, W: Write> WithSearchPosition for Run<'_, R, W> {
    type Output = Result<LabelTally, LabelError>;

    fn run<P: SearchPosition>(self, rules: Rules) -> Self::Output {
        let config = *self.config;
        // Each player starts here, before a line is read: a player that cannot start is an
        // error before any output.
        let mut players = Vec::with_capacity(config.concurrency);
        for _ in 0..config.concurrency {
            players.push(player::build::<P>(self.player, rules)?);
        }
        let (job_tx, job_rx) = mpsc::sync_channel::<Job>(config.concurrency * 2);
        let job_rx = Arc::new(Mutex::new(job_rx));
        let (done_tx, done_rx) = mpsc::channel::<Done>();
        std::thread::scope(|scope| {
            for mut p in players {
                let (jobs, done) = (Arc::clone(&job_rx), done_tx.clone());
                scope.spawn(move || loop {
                    // A poisoned lock means another searcher panicked: stop taking work.
                    let next = match jobs.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => return,
                    };
                    let Ok(job) = next else { return };
                    let line = job.line;
                    let answer = search::<P>(p.as_mut(), rules, &config, job);
                    if done.send((line, answer)).is_err() {
                        return;
                    }
                });
            }
            drop(done_tx);
            let outcome = feed(self.input, self.out, job_tx, &done_rx, config.lambda);
            // Dropping the job sender (inside `feed`) ends the searchers once they finish.
            outcome
        })
    }
}

/// Searches one position and formats its output line (and whether it was a mate).
fn search<P: SearchPosition>(
    player: &mut dyn player::Player<P>,
    rules: Rules,
    config: &LabelConfig,
    job: Job,
) -> Result<(String, bool), LabelError> {
    let game = ready::<P>(rules, job.line, &job.fen)?;
    let failed = |detail: String| LabelError::Player {
        line: job.line,
        detail,
    };
    player.new_game(&game).map_err(|e| failed(e.to_string()))?;
    let request = GoRequest {
        tc: config.tc,
        clocks: None,
        inc: Duration::ZERO,
        deadline: None,
    };
    let reply = player
        .go(&game, &request)
        .map_err(|e| failed(e.to_string()))?;
    let score = reply
        .score
        .ok_or_else(|| failed(format!("{} gave no score", player.name())))?;
    let white = if game.position().turn() == Color::White {
        score
    } else {
        -score
    };
    let p = config.label(white, job.result);
    Ok((format!("{} [{p:.4}]", job.fen), white.abs() >= MATE_BOUND))
}

/// The FEN and result of a line (`None` for a blank line or a comment): `FEN [result]`, or a
/// bare FEN when the engine's score is the whole label (its result then never read).
fn read_line(line: usize, text: &str, lambda: f64) -> Result<Option<(&str, f32)>, LabelError> {
    let t = text.trim();
    if !t.is_empty() && !t.starts_with('#') && !t.contains('[') {
        if lambda < 1.0 {
            return Err(LabelError::NoResult { line, lambda });
        }
        return Ok(Some((t, 0.5)));
    }
    Ok(parse_line(line, text)?.map(|l| (l.fen, l.result)))
}

/// The game of line `line`'s FEN: refused if it is no position of `rules` or the game is over
/// in it (nothing to search).
fn ready<P: SearchPosition>(rules: Rules, line: usize, fen: &str) -> Result<Game<P>, LabelError> {
    let game = Game::<P>::from_fen(rules, fen).map_err(|e| LabelError::Fen {
        line,
        detail: e.to_string(),
    })?;
    if game.outcome().is_some() {
        return Err(LabelError::Player {
            line,
            detail: "the game is over in this position: nothing to search".into(),
        });
    }
    Ok(game)
}

/// Reads every line of `input` as [`label`] would, searching nothing: its syntax, its FEN and
/// whether the game goes on in it; the number of positions. Labelling 200,000 positions takes
/// hours, and a finished position on line 1,348 stopped such a run after half a minute (a
/// line at 150,000 would have stopped it after hours): the command checks the whole file
/// first. One line at a time, like the labelling itself, so no file is too big for it.
pub fn check_input(input: impl BufRead, config: &LabelConfig) -> Result<usize, LabelError> {
    with_search_position(
        config.rules,
        Check {
            input,
            lambda: config.lambda,
        },
    )
}

struct Check<R> {
    input: R,
    lambda: f64,
}

impl<R: BufRead> WithSearchPosition for Check<R> {
    type Output = Result<usize, LabelError>;

    fn run<P: SearchPosition>(self, rules: Rules) -> Self::Output {
        let mut positions = 0;
        for (i, text) in self.input.lines().enumerate() {
            let text = text?;
            let line = i + 1;
            let Some((fen, _)) = read_line(line, &text, self.lambda)? else {
                continue;
            };
            ready::<P>(rules, line, fen)?;
            positions += 1;
        }
        Ok(positions)
    }
}

/// Keeps a finished line until its turn to be written; a failed one ends the labelling.
fn take(
    (line, answer): Done,
    waiting: &mut BTreeMap<usize, (String, bool)>,
) -> Result<(), LabelError> {
    waiting.insert(line, answer?);
    Ok(())
}

/// Reads the jobs, hands them out and writes the finished lines in order.
fn feed(
    input: impl BufRead,
    out: &mut impl Write,
    jobs: mpsc::SyncSender<Job>,
    done: &mpsc::Receiver<Done>,
    lambda: f64,
) -> Result<LabelTally, LabelError> {
    let mut tally = LabelTally::default();
    let mut waiting: BTreeMap<usize, (String, bool)> = BTreeMap::new();
    // Lines handed out, in order; the first is the next to write.
    let mut sent: std::collections::VecDeque<usize> = std::collections::VecDeque::new();
    let mut write_ready = |waiting: &mut BTreeMap<usize, (String, bool)>,
                           sent: &mut std::collections::VecDeque<usize>,
                           out: &mut dyn Write|
     -> Result<(), LabelError> {
        while let Some(&next) = sent.front() {
            let Some((text, mate)) = waiting.remove(&next) else {
                break;
            };
            writeln!(out, "{text}")?;
            tally.positions += 1;
            tally.mates += usize::from(mate);
            sent.pop_front();
        }
        Ok(())
    };
    for (i, text) in input.lines().enumerate() {
        let text = text?;
        let line = i + 1;
        let Some((fen, result)) = read_line(line, &text, lambda)? else {
            continue;
        };
        let job = Job {
            line,
            fen: fen.to_string(),
            result,
        };
        sent.push_back(line);
        if jobs.send(job).is_err() {
            // Every searcher has stopped: their answers say why.
            break;
        }
        while let Ok(d) = done.try_recv() {
            take(d, &mut waiting)?;
        }
        // Behind a slow line, finished ones wait; never more than MAX_WAITING of them.
        while waiting.len() >= MAX_WAITING {
            match done.recv() {
                Ok(d) => take(d, &mut waiting)?,
                Err(_) => break,
            }
            write_ready(&mut waiting, &mut sent, out)?;
        }
        write_ready(&mut waiting, &mut sent, out)?;
    }
    drop(jobs);
    while !sent.is_empty() {
        match done.recv() {
            Ok(d) => take(d, &mut waiting)?,
            Err(_) => {
                return Err(LabelError::Player {
                    line: sent.front().copied().unwrap_or(0),
                    detail: "the searchers stopped before answering".into(),
                })
            }
        }
        write_ready(&mut waiting, &mut sent, out)?;
    }
    out.flush()?;
    Ok(tally)
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::Variant;

    fn config() -> LabelConfig {
        LabelConfig::new(Rules::default_for(Variant::Chess), TimeControl::Nodes(500))
    }

    /// The check reads every line as the labelling does and names the first it would stop
    /// at: a bad label, a FEN the rules refuse, a finished game.
    #[test]
    fn the_check_counts_positions_and_names_the_line_labelling_would_stop_at() {
        let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        let good = format!("{start} [0.5]\n# a comment\n\n{start} [1.0]\n");
        assert_eq!(check_input(good.as_bytes(), &config()).expect("good"), 2);
        for (bad, needle) in [
            (format!("{start} [2]\n"), "positions line 1: result"),
            ("8/8/8 w - - 0 1 [0.5]\n".to_string(), "positions line 1"),
            (
                format!("{start} [0.5]\n4k3/8/8/8/8/8/8/4K3 w - - 100 80 [0.5]\n"),
                "positions line 2: the game is over",
            ),
        ] {
            let e = check_input(bad.as_bytes(), &config()).expect_err("refused");
            assert!(e.to_string().contains(needle), "{bad}: {e}");
        }
    }

    /// A bare FEN (a walked position, no result of its own) is read when the engine's score
    /// is the whole label, and refused by name when a lambda below 1 would blend a result in.
    #[test]
    fn a_bare_fen_is_labelled_by_the_engine_alone() {
        let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        let text = format!("{start}\n{start} [1.0]\n");
        assert_eq!(check_input(text.as_bytes(), &config()).expect("read"), 2);
        let (out, tally) = run(&text, &config()).expect("labels");
        assert_eq!(tally.positions, 2);
        let first = out.lines().next().expect("a line");
        let parsed = parse_line(1, first).expect("readable").expect("a position");
        assert_eq!(parsed.fen, start);
        let blend = LabelConfig {
            lambda: 0.5,
            ..config()
        };
        let e = check_input(text.as_bytes(), &blend).expect_err("refused");
        assert!(matches!(e, LabelError::NoResult { line: 1, .. }), "{e}");
        assert!(
            e.to_string()
                .contains("positions line 1: a FEN without a result"),
            "{e}"
        );
        let e = run(&text, &blend).expect_err("refused");
        assert!(matches!(e, LabelError::NoResult { line: 1, .. }), "{e}");
    }

    #[test]
    fn scores_become_labels_on_the_logistic_curve_blended_with_the_result() {
        let c = config();
        assert_eq!(c.label(0, 1.0), 0.5);
        assert!((c.label(400, 0.0) - 10.0 / 11.0).abs() < 1e-12);
        assert!((c.label(-400, 0.0) - 1.0 / 11.0).abs() < 1e-12);
        assert_eq!(c.label(MATE_BOUND, 0.0), 1.0);
        assert_eq!(c.label(-MATE_BOUND - 5, 1.0), 0.0);
        let half = LabelConfig { lambda: 0.5, ..c };
        assert!((half.label(0, 1.0) - 0.75).abs() < 1e-12);
        let result_only = LabelConfig { lambda: 0.0, ..c };
        assert_eq!(result_only.label(900, 0.0), 0.0);
    }

    #[test]
    fn settings_that_cannot_label_are_refused_with_what_is_wrong() {
        let c = config();
        assert!(c.check().is_ok());
        let cases = [
            (
                LabelConfig {
                    tc: TimeControl::MoveTime(Duration::from_millis(100)),
                    ..c
                },
                "must be nodes=N or depth=N",
            ),
            (LabelConfig { scale: 0.0, ..c }, "scale 0"),
            (
                LabelConfig {
                    scale: f64::NAN,
                    ..c
                },
                "scale NaN",
            ),
            (LabelConfig { lambda: 1.5, ..c }, "lambda 1.5"),
            (
                LabelConfig {
                    lambda: f64::NAN,
                    ..c
                },
                "lambda NaN",
            ),
            (
                LabelConfig {
                    concurrency: 0,
                    ..c
                },
                "concurrency",
            ),
        ];
        for (bad, want) in cases {
            let e = bad.check().expect_err("refused");
            assert!(e.to_string().contains(want), "{e} should say {want}");
        }
    }

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    /// White is a queen up; Black to move.
    const QUEEN_UP: &str = "rnb1kbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 3";

    fn run(text: &str, config: &LabelConfig) -> Result<(String, LabelTally), LabelError> {
        let mut out = Vec::new();
        let tally = label(
            text.as_bytes(),
            &mut out,
            &PlayerSpec::internal("ours"),
            config,
        )?;
        Ok((String::from_utf8(out).expect("utf-8"), tally))
    }

    #[test]
    fn every_line_is_labelled_from_whites_side_in_input_order() {
        let mut text = String::from("# comment\n\n");
        for i in 0..40 {
            let fen = if i % 2 == 0 { START } else { QUEEN_UP };
            text.push_str(&format!("{fen} [0.0]\n"));
        }
        let c = LabelConfig {
            concurrency: 3,
            ..config()
        };
        let (out, tally) = run(&text, &c).expect("labels");
        assert_eq!(tally.positions, 40);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 40);
        for (i, l) in lines.iter().enumerate() {
            let parsed = parse_line(i + 1, l).expect("readable").expect("a position");
            let fen = if i % 2 == 0 { START } else { QUEEN_UP };
            assert_eq!(parsed.fen, fen, "line {i} in order");
            if i % 2 == 1 {
                // A queen up for White although Black is to move: White's side.
                assert!(parsed.result > 0.9, "line {i}: {l}");
            } else {
                assert!((0.3..0.7).contains(&parsed.result), "line {i}: {l}");
            }
        }
        // The same input labels the same way: nodes-limited, one fresh search a position.
        let (again, _) = run(&text, &c).expect("labels");
        assert_eq!(again, out);
    }

    #[test]
    fn a_bad_line_stops_labelling_at_that_line() {
        let c = config();
        let cases = [
            (format!("{START} [0.5]\n{START} [2]\n"), "positions line 2"),
            (
                format!("{START} [0.5]\n8/8/8 w - - 0 1 [1.0]\n"),
                "positions line 2",
            ),
            (
                // Checkmated: nothing to search.
                "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3 [0.0]\n".into(),
                "positions line 1: the game is over",
            ),
        ];
        for (text, want) in cases {
            let e = run(&text, &c).expect_err("refused");
            assert!(e.to_string().contains(want), "{e} should say {want}");
        }
    }
}
