//! The UCI front end. Reads commands line by line; a search runs on its own thread so `stop`,
//! `isready` and `quit` are answered while it thinks. Bad input is answered with
//! `info string error: ...` and the engine keeps running.

use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use thiserror::Error;

use crate::board8::net_file::{self, LoadedNet, NetFileError};
use crate::board8::Board;
use crate::error::{FenError, MoveError, RulesError};
use crate::eval::{PawnCache, SearchPosition};
use crate::game::Game;
use crate::gustavian;
use crate::notation::parse_uci;
use crate::params::{self, ParamError, Params};
use crate::perft::divide;
use crate::position::Position as _;
use crate::search::limits::{DEFAULT_OVERHEAD, MAX_OVERHEAD_MS};
use crate::search::{Features, Info, Limits, Searcher};
use crate::types::Color;
use crate::variant::{Geometry, Rules, Ruleset, Variant};

/// Default transposition table size in MiB.
pub const DEFAULT_HASH_MIB: usize = 16;

/// Why a UCI command was refused.
#[derive(Debug, Error)]
pub enum UciError {
    /// Not a command this engine knows.
    #[error("unknown command {0:?}")]
    UnknownCommand(String),
    /// A `go` or `position` argument that is missing or malformed.
    #[error("bad argument for {command}: {detail}")]
    BadArgument {
        /// The command.
        command: &'static str,
        /// What is wrong.
        detail: String,
    },
    /// An option this engine does not have.
    #[error("unknown option {0:?}")]
    UnknownOption(String),
    /// Variant or rule-set.
    #[error(transparent)]
    Rules(#[from] RulesError),
    /// A FEN.
    #[error(transparent)]
    Fen(#[from] FenError),
    /// A move of `position ... moves`.
    #[error(transparent)]
    Move(#[from] MoveError),
    /// A parameter value.
    #[error(transparent)]
    Param(#[from] ParamError),
    /// `go` while a search runs.
    #[error("a search is already running; send stop first")]
    Busy,
    /// A network file (`EvalFile`).
    #[error(transparent)]
    Network(#[from] NetFileError),
}

/// The `EvalFile` value that means each game's built-in network.
pub const BUILTIN_NETWORK: &str = "<builtin>";

/// Where output goes: shared between the command loop and the search thread.
pub type Output = Arc<Mutex<dyn Write + Send>>;

fn say(out: &Output, line: &str) {
    let mut w = out.lock().unwrap_or_else(|p| p.into_inner());
    // A closed stdout means the GUI is gone; nothing useful can be done about it.
    let _ = writeln!(w, "{line}");
    let _ = w.flush();
}

/// The keywords of `go`: where a `searchmoves` list ends.
const GO_KEYWORDS: &[&str] = &[
    "searchmoves",
    "ponder",
    "wtime",
    "btime",
    "winc",
    "binc",
    "movestogo",
    "depth",
    "nodes",
    "mate",
    "movetime",
    "infinite",
];

/// The most lines `MultiPV` asks for (a position has rarely a hundred legal moves).
pub const MAX_MULTIPV: usize = 256;

/// The value of a `spin` option `name`: a number within `range`, or an error that names
/// what the option holds (`what`, "a size in MiB") and its bounds.
fn spin<T>(
    value: &str,
    range: std::ops::RangeInclusive<T>,
    name: &str,
    what: &str,
) -> Result<T, UciError>
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display,
{
    value
        .trim()
        .parse()
        .ok()
        .filter(|n| range.contains(n))
        .ok_or_else(|| UciError::BadArgument {
            command: "setoption",
            detail: format!(
                "{name} {value:?} is not {what} between {} and {}",
                range.start(),
                range.end()
            ),
        })
}

/// The most search threads `Threads` asks for.
pub const MAX_THREADS: usize = 256;

/// A `go` command: the search's limits and what the front end itself acts on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Go {
    /// What bounds the search.
    pub limits: Limits,
    /// `go ponder`: the search ponders on the opponent's expected move, and its clock counts
    /// only after `ponderhit`. The front end sets the searcher's ponder flag from this before
    /// the search thread starts, so a `ponderhit` that comes first is not lost.
    pub ponder: bool,
    /// `go searchmoves`, as given: the root moves to choose among (empty: all). The front
    /// end resolves them against the position, refusing one that is not legal there.
    pub searchmoves: Vec<String>,
}

/// Parses the arguments of `go`.
pub fn parse_go(tokens: &[&str]) -> Result<Go, UciError> {
    let mut go = Go::default();
    let l = &mut go.limits;
    let mut i = 0;
    let bad = |detail: String| UciError::BadArgument {
        command: "go",
        detail,
    };
    while i < tokens.len() {
        let key = tokens[i];
        let num = |i: usize| -> Result<u64, UciError> {
            let v = tokens
                .get(i + 1)
                .ok_or_else(|| bad(format!("{key} needs a value")))?;
            // Clocks may go negative in some GUIs after a flag fall: treat as zero.
            match v.parse::<i64>() {
                Ok(n) => Ok(n.max(0) as u64),
                Err(_) => Err(bad(format!("{key} {v:?} is not a number"))),
            }
        };
        match key {
            "infinite" => {
                l.infinite = true;
                i += 1;
                continue;
            }
            "searchmoves" => {
                let list: Vec<String> = tokens[i + 1..]
                    .iter()
                    .take_while(|t| !GO_KEYWORDS.contains(t))
                    .map(|t| t.to_string())
                    .collect();
                if list.is_empty() {
                    return Err(bad("searchmoves needs at least one move".into()));
                }
                i += 1 + list.len();
                go.searchmoves = list;
                continue;
            }
            "ponder" => {
                go.ponder = true;
                i += 1;
                continue;
            }
            "wtime" => l.time[0] = Some(Duration::from_millis(num(i)?)),
            "btime" => l.time[1] = Some(Duration::from_millis(num(i)?)),
            "winc" => l.inc[0] = Duration::from_millis(num(i)?),
            "binc" => l.inc[1] = Duration::from_millis(num(i)?),
            "movestogo" => l.movestogo = Some(num(i)?.min(1000) as u32),
            "depth" => l.depth = Some(num(i)?.clamp(1, 100) as u32),
            "nodes" => l.nodes = Some(num(i)?.max(1)),
            "movetime" => l.movetime = Some(Duration::from_millis(num(i)?)),
            "mate" => l.mate = Some(num(i)?.clamp(1, 50) as u32),
            other => return Err(bad(format!("unknown token {other:?}"))),
        }
        i += 2;
    }
    Ok(go)
}

/// What the options set for each search.
struct SearchSettings {
    params: Params,
    features: Features,
    multipv: usize,
}

/// A search's leading searcher and its helpers, handed to the search thread and back.
type Searchers<P> = (Searcher<P>, Vec<Searcher<P>>);

/// A search on its thread.
struct Running<P: SearchPosition> {
    handle: JoinHandle<Searchers<P>>,
    /// Set to stop it.
    stop: Arc<AtomicBool>,
    /// Set while it ponders; cleared by `ponderhit`.
    pondering: Arc<AtomicBool>,
    /// Set just before it says `bestmove`: from then on the thread only hands its searchers
    /// back, so a command that needs them (the GUI's next `go`, sent the moment it reads the
    /// move) waits for that instead of being refused as busy.
    done: Arc<AtomicBool>,
}

/// One geometry's game and searcher.
struct Session<P: SearchPosition> {
    game: Game<P>,
    searcher: Option<Searcher<P>>,
    /// The searchers that help `searcher` (`Threads` minus one), sharing its table.
    helpers: Vec<Searcher<P>>,
    running: Option<Running<P>>,
    /// The network of `EvalFile`, when it is for this session's game.
    network: Option<P::Network>,
}

impl<P: SearchPosition> Session<P> {
    fn new(rules: Rules, hash: usize, params: Params) -> Result<Self, UciError> {
        Ok(Session {
            game: Game::new(rules)?,
            searcher: Some(Searcher::new(hash, params)),
            helpers: Vec::new(),
            running: None,
            network: None,
        })
    }

    /// Evaluates with `loaded` from the next search on, if it is for `rules`' game; else with
    /// the game's own network, and hands back why `loaded` is not used.
    fn set_network(&mut self, loaded: Option<&LoadedNet>, rules: Rules) -> Option<NetFileError> {
        let (network, unused) = match loaded.map(|l| P::network(l, rules)) {
            None => (None, None),
            Some(Ok(n)) => (Some(n), None),
            Some(Err(e)) => (None, Some(e)),
        };
        self.network = network;
        unused
    }

    /// The current position, reading the session's network.
    fn position(&self) -> P {
        let mut pos = self.game.position().clone();
        if let Some(n) = self.network {
            pos.use_network(n);
        }
        pos
    }

    /// Waits for a running search and takes its searcher back.
    fn finish(&mut self) {
        if let Some(running) = self.running.take() {
            if let Ok((s, helpers)) = running.handle.join() {
                self.searcher = Some(s);
                self.helpers = helpers;
            }
        }
    }

    /// Searches with `threads` threads from the next `go` on.
    fn set_threads(&mut self, threads: usize) -> Result<(), UciError> {
        let main = self.searcher()?;
        let helpers = (1..threads).map(|_| main.helper()).collect();
        self.helpers = helpers;
        Ok(())
    }

    fn stop(&mut self) {
        if let Some(running) = &self.running {
            running.stop.store(true, Ordering::Relaxed);
        }
        self.finish();
    }

    fn searcher(&mut self) -> Result<&mut Searcher<P>, UciError> {
        if self
            .running
            .as_ref()
            .is_some_and(|r| !r.handle.is_finished() && !r.done.load(Ordering::Acquire))
        {
            return Err(UciError::Busy);
        }
        self.finish();
        self.searcher.as_mut().ok_or(UciError::Busy)
    }

    fn set_position(
        &mut self,
        rules: Rules,
        fen: Option<&str>,
        moves: &[&str],
    ) -> Result<(), UciError> {
        let mut game = match fen {
            Some(f) => Game::from_fen(rules, f)?,
            None => Game::new(rules)?,
        };
        for m in moves {
            game.play_uci(m)?;
        }
        self.game = game;
        Ok(())
    }

    /// The moves of `go searchmoves` in the current position: each must be legal here (one
    /// that is not is a GUI's or a user's mistake to name, not to drop).
    fn search_moves(&self, names: &[String]) -> Result<Vec<P::Move>, UciError> {
        let root = self.game.position();
        names
            .iter()
            .map(|name| {
                parse_uci(root, name).map_err(|_| UciError::BadArgument {
                    command: "go",
                    detail: format!("searchmoves {name} is not a legal move in this position"),
                })
            })
            .collect()
    }

    /// Starts the search `go` asks for on its own thread, saying `debug` first (`debug on`)
    /// once the command is accepted.
    fn go(
        &mut self,
        go: &Go,
        search: &SearchSettings,
        debug: Option<&str>,
        out: &Output,
    ) -> Result<(), UciError> {
        let search_moves = self.search_moves(&go.searchmoves)?;
        let limits = go.limits.clone();
        let mut searcher = match self.searcher() {
            Ok(_) => self.searcher.take().ok_or(UciError::Busy)?,
            Err(e) => return Err(e),
        };
        if let Some(line) = debug {
            say(out, line);
        }
        searcher.params = search.params.clone();
        searcher.features = search.features;
        searcher.multipv = search.multipv;
        searcher.search_moves = search_moves;
        searcher.set_network(self.network);
        let mut helpers = std::mem::take(&mut self.helpers);
        let stop = searcher.stop_flag();
        stop.store(false, Ordering::Relaxed);
        let pondering = searcher.ponder_flag();
        pondering.store(go.ponder, Ordering::Relaxed);
        let (stopped, ponder) = (Arc::clone(&stop), Arc::clone(&pondering));
        let pos = self.game.position().clone();
        let history = self.game.history_keys().to_vec();
        let out = Arc::clone(out);
        let done = Arc::new(AtomicBool::new(false));
        let finished = Arc::clone(&done);
        let handle = std::thread::spawn(move || {
            let (result, _) =
                searcher.search_with_helpers(&mut helpers, &pos, &history, &limits, |info| {
                    say(&out, &info_line(&pos, info))
                });
            // A ponder search says its move only after `ponderhit` or `stop`, even when it
            // ended before (a depth reached, a mate found): the GUI is not waiting for it yet.
            while ponder.load(Ordering::Relaxed) && !stopped.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(1));
            }
            let best = result
                .best
                .map_or("0000".to_string(), |m| pos.move_info(m).uci());
            // The reply to ponder on, named in the position after the best move.
            let ponder = searcher.ponder_move(&pos, &result).map(|reply| {
                let mut after = pos.clone();
                if let Some(m) = result.best {
                    after.make_move(m);
                }
                format!(" ponder {}", after.move_info(reply).uci())
            });
            finished.store(true, Ordering::Release);
            say(
                &out,
                &format!("bestmove {best}{}", ponder.unwrap_or_default()),
            );
            (searcher, helpers)
        });
        self.running = Some(Running {
            handle,
            stop,
            pondering,
            done,
        });
        Ok(())
    }

    /// The opponent played the move pondered on: the search goes on under its clock.
    fn ponderhit(&self) {
        if let Some(running) = &self.running {
            running.pondering.store(false, Ordering::Relaxed);
        }
    }

    fn new_game(&mut self) -> Result<(), UciError> {
        self.searcher()?.new_game();
        for h in &mut self.helpers {
            h.new_game();
        }
        Ok(())
    }

    fn resize(&mut self, mib: usize) -> Result<(), UciError> {
        self.searcher()?.resize(mib);
        // The helpers must share the new table.
        self.set_threads(self.helpers.len() + 1)
    }

    fn perft(&self, depth: u32, out: &Output) {
        let mut pos = self.game.position().clone();
        let split = divide(&mut pos, depth);
        for (m, n) in &split {
            say(out, &format!("{m}: {n}"));
        }
        say(
            out,
            &format!(
                "\nNodes searched: {}\n",
                split.iter().map(|(_, n)| n).sum::<u64>()
            ),
        );
    }

    fn fen(&self) -> String {
        self.game.position().to_fen()
    }

    /// The static evaluation, with a cache of its own: the searcher's may be on its thread.
    fn eval(&self, params: &Params) -> i32 {
        self.position().evaluate(params, &mut PawnCache::new())
    }
}

/// PV moves in coordinate notation, played out on a copy of the root.
fn info_line<P: SearchPosition>(root: &P, info: &Info<P::Move>) -> String {
    let mut pos = root.clone();
    let mut pv = String::new();
    for &m in &info.pv {
        pv.push(' ');
        pv.push_str(&pos.move_info(m).uci());
        pos.make_move(m);
    }
    let ms = info.elapsed.as_millis().max(1);
    let rank = info
        .multipv
        .map_or(String::new(), |k| format!(" multipv {k}"));
    format!(
        "info depth {} seldepth {}{rank} score {} nodes {} nps {} hashfull {} time {} pv{}",
        info.depth,
        info.seldepth,
        info.score,
        info.nodes,
        u128::from(info.nodes) * 1000 / ms,
        info.hashfull,
        info.elapsed.as_millis(),
        pv
    )
}

/// One per UCI process, made once: the 8x8 board's (with its network's sums) being a few
/// hundred bytes bigger costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
enum AnySession {
    Board8(Session<Board>),
    Gustavian(Session<gustavian::Position>),
}

macro_rules! each {
    ($s:expr, $x:ident => $body:expr) => {
        match $s {
            AnySession::Board8($x) => $body,
            AnySession::Gustavian($x) => $body,
        }
    };
}

/// The engine's UCI state.
pub struct Uci {
    variant: Variant,
    ruleset: Ruleset,
    hash: usize,
    params: Params,
    features: Features,
    session: AnySession,
    /// The network `EvalFile` loaded, used in positions of its game.
    eval_file: Option<LoadedNet>,
    /// Lines each search reports (`MultiPV`).
    multipv: usize,
    /// Search threads (`Threads`).
    threads: usize,
    /// Time each timed search leaves for the GUI (`Move Overhead`).
    overhead: Duration,
    /// UCI `debug on`: each `go` first says, as `info string`, what it searches with.
    debug: bool,
    out: Output,
}

impl Uci {
    /// An engine playing orthodox chess from the start position.
    pub fn new(out: Output) -> Self {
        let rules = Rules::default_for(Variant::Chess);
        let session = match Session::new(rules, DEFAULT_HASH_MIB, Params::default()) {
            Ok(s) => s,
            Err(_) => unreachable!("the built-in start position is valid"),
        };
        Uci {
            variant: Variant::Chess,
            ruleset: rules.ruleset(),
            hash: DEFAULT_HASH_MIB,
            params: Params::default(),
            features: Features::default(),
            session: AnySession::Board8(session),
            eval_file: None,
            multipv: 1,
            threads: 1,
            overhead: DEFAULT_OVERHEAD,
            debug: false,
            out,
        }
    }

    fn rules(&self) -> Result<Rules, UciError> {
        Ok(Rules::new(self.variant, self.ruleset)?)
    }

    fn reset_session(&mut self) -> Result<(), UciError> {
        each!(&mut self.session, s => s.stop());
        let rules = self.rules()?;
        self.session = match rules.variant().geometry() {
            Geometry::Square8 => {
                AnySession::Board8(Session::new(rules, self.hash, self.params.clone())?)
            }
            Geometry::Gustavian => {
                AnySession::Gustavian(Session::new(rules, self.hash, self.params.clone())?)
            }
        };
        let threads = self.threads;
        each!(&mut self.session, s => s.set_threads(threads)?);
        self.apply_network()
    }

    /// Hands `EvalFile`'s network to the session, saying so when its game is not the one
    /// played (its positions are then evaluated with their own network).
    fn apply_network(&mut self) -> Result<(), UciError> {
        let rules = self.rules()?;
        let loaded = self.eval_file.as_ref();
        if let Some(unused) = each!(&mut self.session, s => s.set_network(loaded, rules)) {
            say(
                &self.out,
                &format!("info string EvalFile not used in {rules}: {unused}"),
            );
        }
        Ok(())
    }

    /// `setoption name EvalFile value <path>`: loads and checks the file, or with
    /// [`BUILTIN_NETWORK`] goes back to each game's own network.
    fn set_eval_file(&mut self, value: &str) -> Result<(), UciError> {
        each!(&mut self.session, s => s.stop());
        let value = value.trim();
        if value.is_empty() || value == BUILTIN_NETWORK {
            self.eval_file = None;
            say(
                &self.out,
                "info string EvalFile: each game's built-in network",
            );
        } else {
            let loaded = net_file::load(std::path::Path::new(value))?;
            say(
                &self.out,
                &format!(
                    "info string EvalFile: {} network {} from {value}",
                    loaded.variant,
                    loaded.name()
                ),
            );
            self.eval_file = Some(loaded);
        }
        self.apply_network()
    }

    /// Handles one command line. Returns `false` after `quit`.
    pub fn handle(&mut self, line: &str) -> bool {
        match self.dispatch(line) {
            Ok(go_on) => go_on,
            Err(e) => {
                say(&self.out, &format!("info string error: {e}"));
                true
            }
        }
    }

    fn dispatch(&mut self, line: &str) -> Result<bool, UciError> {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let Some((&cmd, args)) = tokens.split_first() else {
            return Ok(true);
        };
        match cmd {
            "uci" => {
                let out = &self.out;
                say(
                    out,
                    concat!("id name variant-engine ", env!("CARGO_PKG_VERSION")),
                );
                say(out, "id author the variant-cluster developers");
                say(out, "option name UCI_Variant type combo default chess var chess var latte var secutor");
                let rulesets: String = Ruleset::ALL
                    .iter()
                    .map(|r| format!(" var {}", r.id()))
                    .collect();
                say(
                    out,
                    &format!("option name Ruleset type combo default normal{rulesets}"),
                );
                say(
                    out,
                    &format!(
                        "option name Hash type spin default {DEFAULT_HASH_MIB} min 1 max 65536"
                    ),
                );
                say(out, "option name Clear Hash type button");
                say(
                    out,
                    &format!("option name EvalFile type string default {BUILTIN_NETWORK}"),
                );
                say(
                    out,
                    "option name Search type combo default full var full var plain",
                );
                say(
                    out,
                    &format!("option name MultiPV type spin default 1 min 1 max {MAX_MULTIPV}"),
                );
                say(
                    out,
                    &format!("option name Threads type spin default 1 min 1 max {MAX_THREADS}"),
                );
                say(out, "option name Ponder type check default false");
                say(
                    out,
                    &format!(
                        "option name Move Overhead type spin default {} min 0 max {MAX_OVERHEAD_MS}",
                        DEFAULT_OVERHEAD.as_millis()
                    ),
                );
                for l in params::uci_options().lines() {
                    say(out, l);
                }
                say(out, "uciok");
            }
            "isready" => say(&self.out, "readyok"),
            "debug" => {
                self.debug = match args {
                    ["on"] => true,
                    ["off"] => false,
                    _ => {
                        return Err(UciError::BadArgument {
                            command: "debug",
                            detail: format!("expected on or off, got {:?}", args.join(" ")),
                        })
                    }
                }
            }
            // This engine needs no registration, so a GUI has no reason to send it; one that
            // does anyway (`register later`, a name and code) is not refused.
            "register" => {}
            "ucinewgame" => each!(&mut self.session, s => { s.stop(); s.new_game()? }),
            "setoption" => self.setoption(args)?,
            "position" => self.position(args)?,
            "go" => {
                if args.first() == Some(&"perft") {
                    let depth =
                        args.get(1)
                            .and_then(|d| d.parse::<u32>().ok())
                            .ok_or_else(|| UciError::BadArgument {
                                command: "go perft",
                                detail: "needs a depth".into(),
                            })?;
                    let out = Arc::clone(&self.out);
                    each!(&self.session, s => s.perft(depth, &out));
                } else {
                    let mut go = parse_go(args)?;
                    go.limits.overhead = Some(self.overhead);
                    let search = SearchSettings {
                        params: self.params.clone(),
                        features: self.features,
                        multipv: self.multipv,
                    };
                    let out = Arc::clone(&self.out);
                    let debug = self.debug.then(|| {
                        let turn = each!(&self.session, s => s.game.position().turn());
                        self.debug_line(&go, turn)
                    });
                    each!(&mut self.session, s => s.go(&go, &search, debug.as_deref(), &out)?);
                }
            }
            "stop" => each!(&mut self.session, s => s.stop()),
            "ponderhit" => each!(&self.session, s => s.ponderhit()),
            "quit" => {
                each!(&mut self.session, s => s.stop());
                return Ok(false);
            }
            "d" => {
                let fen = each!(&self.session, s => s.fen());
                say(
                    &self.out,
                    &format!(
                        "info string variant {} ruleset {} fen {fen}",
                        self.variant, self.ruleset
                    ),
                );
            }
            "eval" => {
                let e = each!(&self.session, s => s.eval(&self.params));
                say(
                    &self.out,
                    &format!("info string eval {e} cp (side to move)"),
                );
            }
            other => return Err(UciError::UnknownCommand(other.to_string())),
        }
        Ok(true)
    }

    /// What a `go` searches with, for `debug on`: the game, the threads, the table, the
    /// lines, the reserve and the time budget the clock gives the side to move (`turn`), so
    /// a user can see why the engine spent the time it did.
    fn debug_line(&self, go: &Go, turn: Color) -> String {
        let budget = match go.limits.budget(turn, &self.params) {
            Some(b) => format!(
                "soft {} ms hard {} ms",
                b.soft.as_millis(),
                b.hard.as_millis()
            ),
            None => "untimed".to_string(),
        };
        format!(
            "info string debug: variant {} ruleset {} threads {} hash {} MiB multipv {} \
             overhead {} ms ponder {} budget {budget}",
            self.variant,
            self.ruleset,
            self.threads,
            self.hash,
            self.multipv,
            self.overhead.as_millis(),
            go.ponder
        )
    }

    fn setoption(&mut self, args: &[&str]) -> Result<(), UciError> {
        let bad = |detail: &str| UciError::BadArgument {
            command: "setoption",
            detail: detail.to_string(),
        };
        if args.first() != Some(&"name") {
            return Err(bad("expected: setoption name <id> [value <x>]"));
        }
        let value_at = args.iter().position(|&t| t == "value");
        let name = args[1..value_at.unwrap_or(args.len())].join(" ");
        let value = value_at.map(|i| args[i + 1..].join(" "));
        let value_or = |v: &Option<String>| {
            v.clone()
                .ok_or_else(|| bad(&format!("option {name} needs a value")))
        };
        match name.to_ascii_lowercase().as_str() {
            "uci_variant" => {
                let v = value_or(&value)?;
                self.variant = v.parse()?;
                // A rule-set of another variant gives way to the new variant's default; an
                // explicit Ruleset option after this one is still checked.
                if !self.variant.rulesets().contains(&self.ruleset) {
                    self.ruleset = self.variant.default_ruleset();
                    say(
                        &self.out,
                        &format!("info string ruleset set to {}", self.ruleset),
                    );
                }
                self.reset_session()?;
            }
            "ruleset" => {
                let v = value_or(&value)?;
                let rules = Rules::parse(self.variant.id(), Some(&v))?;
                self.ruleset = rules.ruleset();
                self.reset_session()?;
            }
            "hash" => {
                let mib = spin(&value_or(&value)?, 1..=65536, "Hash", "a size in MiB")?;
                self.hash = mib;
                each!(&mut self.session, s => s.resize(mib)?);
            }
            "clear hash" => each!(&mut self.session, s => s.new_game()?),
            "evalfile" => self.set_eval_file(value.as_deref().unwrap_or(""))?,
            // `plain`: alpha-beta with quiescence only, the baseline that shows what the
            // search features are worth.
            "search" => {
                self.features = match value_or(&value)?.as_str() {
                    "full" => Features::default(),
                    "plain" => Features::PLAIN,
                    other => {
                        return Err(bad(&format!("Search {other:?} is neither full nor plain")))
                    }
                };
            }
            "multipv" => {
                let v = value_or(&value)?;
                self.multipv = spin(&v, 1..=MAX_MULTIPV, "MultiPV", "a number of lines")?;
            }
            "threads" => {
                let v = value_or(&value)?;
                let threads = spin(&v, 1..=MAX_THREADS, "Threads", "a number of threads")?;
                each!(&mut self.session, s => s.set_threads(threads)?);
                self.threads = threads;
            }
            "move overhead" => {
                let v = value_or(&value)?;
                let ms = spin(&v, 0..=MAX_OVERHEAD_MS, "Move Overhead", "a time in ms")?;
                self.overhead = Duration::from_millis(ms);
            }
            // `Ponder` only tells the engine that `go ponder` may come. Chess960 (not offered,
            // but sent by some GUIs whatever the engine says) is a game this engine does not
            // play, so only its "off" is accepted.
            "ponder" => {
                let v = value_or(&value)?;
                if !matches!(v.trim(), "true" | "false") {
                    return Err(bad(&format!("Ponder {v:?} is neither true nor false")));
                }
            }
            "uci_chess960" => {
                let v = value_or(&value)?;
                if v.trim() != "false" {
                    return Err(bad(&format!(
                        "UCI_Chess960 {v:?}: this engine does not play Chess960"
                    )));
                }
            }
            _ => {
                let v = value_or(&value)?;
                if Params::spec(&name).is_none() {
                    return Err(UciError::UnknownOption(name));
                }
                self.params.set_text(&name, &v)?;
            }
        }
        Ok(())
    }

    fn position(&mut self, args: &[&str]) -> Result<(), UciError> {
        let bad = |d: &str| UciError::BadArgument {
            command: "position",
            detail: d.to_string(),
        };
        let moves_at = args.iter().position(|&t| t == "moves");
        let moves: &[&str] = moves_at.map_or(&[], |i| &args[i + 1..]);
        let head = &args[..moves_at.unwrap_or(args.len())];
        let fen = match head.first() {
            Some(&"startpos") if head.len() == 1 => None,
            Some(&"fen") if head.len() > 1 => Some(head[1..].join(" ")),
            _ => return Err(bad("expected: position startpos|fen <fen> [moves ...]")),
        };
        let rules = self.rules()?;
        each!(&mut self.session, s => {
            s.stop();
            s.set_position(rules, fen.as_deref(), moves)?
        });
        Ok(())
    }
}

/// Runs the UCI loop on standard input and output until `quit` or end of input.
pub fn run_stdio() {
    let out: Output = Arc::new(Mutex::new(std::io::stdout()));
    let mut uci = Uci::new(out);
    let stdin = std::io::stdin();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if !uci.handle(&line) {
            return;
        }
    }
    uci.handle("quit");
}
