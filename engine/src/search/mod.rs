//! Alpha-beta search, generic over the position type (monomorphised per geometry):
//! iterative deepening, principal-variation search with aspiration windows, a transposition
//! table (also probed by quiescence), quiescence with SEE pruning, null-move pruning, razoring,
//! reverse futility, futility, late-move, history and SEE pruning, internal iterative
//! reduction, late-move reductions adjusted by history and by whether the side is improving,
//! singular and check extensions, killer, counter-move, butterfly and continuation-history
//! ordering, a static evaluation corrected by pawn-structure and piece-placement correction
//! histories, mate and draw scores, repetition and 50-move detection.
//!
//! Deterministic: with the same history, parameters, depth or node limit and a cleared table,
//! the same move and node count come out. Time only enters through time limits.

mod evals;
pub mod history;
pub mod limits;
mod prefetch;
mod reductions;
pub mod tt;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::eval::{pst, see_value, PawnCache, SearchPosition};
use crate::params::Params;
use crate::position::{MoveInfo, MoveList, MAX_MOVES};
use crate::types::Role;
use evals::EvalCache;
use history::{stat_bonus, Histories, PieceTo, Previous, Quiet, CONTINUATION_PLIES};
pub use limits::{Limits, TimeBudget};
use reductions::Reductions;
use tt::{Bound, TranspositionTable, NO_EVAL};

/// Move-ordering scores, one per generated move. Filled as the moves are scored, never
/// initialised first: a zeroed array of [`MAX_MOVES`] was 2 KiB of stores at every node.
type Scores = arrayvec::ArrayVec<i32, MAX_MOVES>;

/// The score of being mated now; mate in n plies scores `MATE - n`.
pub const MATE: i32 = 32_000;
/// Scores beyond this are mate scores.
pub const MATE_BOUND: i32 = MATE - 1_000;
const INF: i32 = 32_500;
/// The deepest ply the search reaches.
pub const MAX_PLY: usize = 120;

/// A score as UCI reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    /// Centipawns from the mover's side.
    Cp(i32),
    /// Mate in this many moves (negative: being mated).
    Mate(i32),
}

impl Score {
    /// Converts an internal score.
    pub fn from_internal(s: i32) -> Score {
        if s >= MATE_BOUND {
            Score::Mate((MATE - s + 1) / 2)
        } else if s <= -MATE_BOUND {
            Score::Mate(-(MATE + s + 1) / 2)
        } else {
            Score::Cp(s)
        }
    }
}

impl std::fmt::Display for Score {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Score::Cp(c) => write!(f, "cp {c}"),
            Score::Mate(m) => write!(f, "mate {m}"),
        }
    }
}

/// Progress of an iteration, for UCI `info` lines.
#[derive(Clone, Debug)]
pub struct Info<M> {
    /// Completed depth.
    pub depth: u32,
    /// Deepest ply reached.
    pub seldepth: u32,
    /// Score of the best move.
    pub score: Score,
    /// Nodes so far.
    pub nodes: u64,
    /// Time so far.
    pub elapsed: Duration,
    /// Principal variation.
    pub pv: Vec<M>,
    /// Transposition-table fill, per mille.
    pub hashfull: u32,
    /// The line's rank (1 = best) when the search reports several ([`Searcher::multipv`]);
    /// `None` when it reports one.
    pub multipv: Option<u32>,
}

/// The outcome of a search.
#[derive(Clone, Debug)]
pub struct SearchResult<M> {
    /// The move to play (`None` only when there is no legal move).
    pub best: Option<M>,
    /// Its score (internal scale).
    pub score: i32,
    /// Completed depth.
    pub depth: u32,
    /// Nodes searched.
    pub nodes: u64,
    /// The principal variation.
    pub pv: Vec<M>,
}

/// Which search features are on; all by default. Turning some off gives the baselines the
/// strength measurements compare with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Features {
    /// Null-move pruning.
    pub null_move: bool,
    /// Late-move reductions.
    pub lmr: bool,
    /// Reverse futility and late-move pruning.
    pub pruning: bool,
    /// Aspiration windows.
    pub aspiration: bool,
    /// Transposition-table cutoffs.
    pub tt_cutoffs: bool,
    /// Killer and history ordering.
    pub ordering: bool,
    /// ProbCut: a capture that beats beta by a margin at reduced depth cuts the node.
    pub probcut: bool,
}

impl Default for Features {
    fn default() -> Self {
        Features {
            null_move: true,
            lmr: true,
            pruning: true,
            aspiration: true,
            tt_cutoffs: true,
            ordering: true,
            probcut: true,
        }
    }
}

impl Features {
    /// Plain alpha-beta with quiescence: the baseline.
    pub const PLAIN: Features = Features {
        null_move: false,
        lmr: false,
        pruning: false,
        aspiration: false,
        tt_cutoffs: false,
        ordering: false,
        probcut: false,
    };
}

/// What a node of the search is expected to be, as the window and its parent say: the
/// principal variation (an exact score wanted), a cut node (expected to fail high: one good
/// move suffices, so late moves are searched with less care), or an all node (expected to
/// fail low: every move must be refuted). Children alternate between cut and all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Node {
    Pv,
    Cut,
    All,
}

impl Node {
    /// The expected type of a zero-window child that is not a reduced late move.
    fn flipped(self) -> Node {
        match self {
            Node::Cut => Node::All,
            Node::Pv | Node::All => Node::Cut,
        }
    }
}

/// What the search keeps per ply of the current line.
#[derive(Clone, Copy, Debug)]
struct Frame<M> {
    /// The corrected static evaluation ([`NONE`] in check).
    static_eval: i32,
    /// The move played from this ply, as the continuation tables key it.
    played: PieceTo,
    /// Whether the move played from this ply was a null move.
    null: bool,
    /// The move a singular-extension search leaves out here.
    excluded: Option<M>,
    /// The key of the last position whose check status was asked at this ply, and that
    /// status: the parent asks whether its move gives check, then the child, its quiescence
    /// and its razoring ask again of the same position (see [`Searcher::checked`]).
    check: Option<(u64, bool)>,
    /// How many double extensions the line to this ply took.
    double_extensions: u8,
}

/// How far below the singular beta the other moves must stay for the table's move to be
/// extended two plies instead of one.
const DOUBLE_EXTENSION_MARGIN: i32 = 20;
/// The most double extensions one line may take: each adds a ply the iteration did not ask
/// for, so without a bound a line of singular moves would grow without end.
const MAX_DOUBLE_EXTENSIONS: u8 = 6;

/// The extension of the table's move from its singular search: `v` is the best score of the
/// other moves searched against `singular_beta`; `tt_beats_beta` whether the table's score
/// alone beats this node's beta. `None` when the node can be cut at `singular_beta` (another
/// move beats beta too).
fn singular_extension(
    v: i32,
    singular_beta: i32,
    beta: i32,
    tt_beats_beta: bool,
    node: Node,
    double_extensions: u8,
) -> Option<i32> {
    if v < singular_beta {
        // Only the table's move holds: two plies more when the others fall clearly short,
        // outside the principal variation and while the line has double extensions left.
        let double = node != Node::Pv
            && v < singular_beta - DOUBLE_EXTENSION_MARGIN
            && double_extensions < MAX_DOUBLE_EXTENSIONS;
        Some(if double { 2 } else { 1 })
    } else if singular_beta >= beta {
        None
    } else if tt_beats_beta {
        Some(-1)
    } else {
        Some(0)
    }
}

/// How far above the best score so far a reduced late move's search must fail high for its
/// full-depth search to go a ply deeper.
const DEEPER_MARGIN: i32 = 50;

/// "No static evaluation": the frame of a position in check.
const NONE: i32 = -INF - 1;

/// A searcher for one geometry: the table and move-ordering memory persist across moves of a
/// game and are cleared by [`Searcher::new_game`].
pub struct Searcher<P: SearchPosition> {
    /// Shared with this searcher's helpers ([`Searcher::helper`]).
    tt: Arc<TranspositionTable>,
    /// Whether this searcher helps another (UCI `Threads`): it searches the same position
    /// into the shared table and its result is not played.
    helper: bool,
    /// Nodes the helpers searched in the current search, added every 1024 (so the leading
    /// searcher's `info nodes` counts every thread).
    helper_nodes: Arc<AtomicU64>,
    /// Pawn-structure features by pawn key: this thread's evaluation cache.
    pawns: PawnCache,
    /// Static evaluations by position key: this thread's other evaluation cache.
    evals: EvalCache,
    histories: Histories<P::Move>,
    killers: Vec<[Option<P::Move>; 2]>,
    stack: Vec<Frame<P::Move>>,
    pv: Vec<Vec<P::Move>>,
    keys: Vec<u64>,
    nodes: u64,
    seldepth: usize,
    node_limit: u64,
    hard_deadline: Option<Instant>,
    start: Instant,
    stop: Arc<AtomicBool>,
    /// Set while the search ponders (UCI `go ponder` until `ponderhit`): the clock's budget
    /// does not end it; after `ponderhit` the budget counts from the `go`, as the GUI's clock
    /// did not run for the move pondered on.
    pondering: Arc<AtomicBool>,
    stopped: bool,
    /// Evaluation weights.
    pub params: Params,
    /// The piece-square weights of `params`, laid out once at the start of each search.
    pst: pst::Table,
    /// The late-move reductions under `params`, rebuilt with it.
    reductions: Reductions,
    /// Search features.
    pub features: Features,
    /// The network searches evaluate with instead of the position's own, if any.
    network: Option<P::Network>,
    /// Lines searched and reported per iteration (UCI `MultiPV`): the best move, then the
    /// best of the rest, and so on. 1 (the default) is the plain search; more is analysis.
    pub multipv: usize,
    /// The root moves searches choose among (UCI `go searchmoves`); empty means all of them.
    /// A move not legal in the searched position is not among the root's moves, so a list of
    /// none legal leaves the search no move to choose (`best` is `None`): the caller refuses
    /// such a list first (the UCI front end names the move).
    pub search_moves: Vec<P::Move>,
    /// Root moves the current line does not search: those outside `go searchmoves` and the
    /// earlier lines' moves. Empty in a plain search, so the root costs nothing more.
    root_skip: Vec<P::Move>,
}

/// One line of a several-line iteration: its score and principal variation.
struct Line<M> {
    score: i32,
    pv: Vec<M>,
}

impl<P: SearchPosition> Searcher<P> {
    /// A searcher with a table of `hash_mib` MiB.
    pub fn new(hash_mib: usize, params: Params) -> Self {
        Self::with_table(Arc::new(TranspositionTable::new(hash_mib)), params)
    }

    /// A searcher reading and writing `tt` (its own, or a leader's for a helper).
    fn with_table(tt: Arc<TranspositionTable>, params: Params) -> Self {
        Searcher {
            tt,
            helper: false,
            helper_nodes: Arc::new(AtomicU64::new(0)),
            pawns: PawnCache::new(),
            evals: EvalCache::new(),
            histories: Histories::new(),
            killers: vec![[None; 2]; MAX_PLY + 2],
            stack: vec![
                Frame {
                    static_eval: NONE,
                    played: PieceTo::NONE,
                    null: false,
                    excluded: None,
                    check: None,
                    double_extensions: 0,
                };
                MAX_PLY + 2
            ],
            pv: (0..MAX_PLY + 2)
                .map(|_| Vec::with_capacity(MAX_PLY))
                .collect(),
            keys: Vec::with_capacity(1024),
            nodes: 0,
            seldepth: 0,
            node_limit: u64::MAX,
            hard_deadline: None,
            start: Instant::now(),
            stop: Arc::new(AtomicBool::new(false)),
            pondering: Arc::new(AtomicBool::new(false)),
            stopped: false,
            pst: pst::Table::new(&params),
            reductions: Reductions::new(&params),
            params,
            features: Features::default(),
            network: None,
            multipv: 1,
            search_moves: Vec::new(),
            root_skip: Vec::new(),
        }
    }

    /// Evaluates with `network` (from a file: [`SearchPosition::network`]) in every search from
    /// now on, instead of each position's own; `None` goes back to the positions' own.
    /// Evaluations cached under another network are forgotten.
    pub fn set_network(&mut self, network: Option<P::Network>) {
        if network != self.network {
            self.evals.clear();
            self.network = network;
        }
    }

    /// The network set by [`Searcher::set_network`].
    pub fn network(&self) -> Option<P::Network> {
        self.network
    }

    /// Resizes the table (clearing it). Helpers made before share the old table: make them
    /// anew.
    pub fn resize(&mut self, hash_mib: usize) {
        self.tt = Arc::new(TranspositionTable::new(hash_mib));
    }

    /// A searcher that helps this one (Lazy SMP): it shares the table, has move-ordering
    /// memory and caches of its own, and is searched on another thread over the same position
    /// while this one searches; what it stores in the table deepens and reorders this one's
    /// search. Its parameters, features and network are set like this one's before each
    /// search.
    pub fn helper(&self) -> Searcher<P> {
        let mut h = Searcher::with_table(Arc::clone(&self.tt), self.params.clone());
        h.helper = true;
        h.helper_nodes = Arc::clone(&self.helper_nodes);
        h.features = self.features;
        h.network = self.network;
        h
    }

    /// Forgets everything learnt: the next search depends only on its inputs. A helper leaves
    /// the shared table to its leader (eight threads would otherwise clear it eight times).
    pub fn new_game(&mut self) {
        if !self.helper {
            self.tt.clear();
        }
        self.pawns.clear();
        self.evals.clear();
        self.histories.clear();
        self.killers.iter_mut().for_each(|k| *k = [None; 2]);
    }

    /// The flag that says the search ponders (set before the search, cleared from another
    /// thread at `ponderhit`): while it is set the time budget does not end the search.
    pub fn ponder_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.pondering)
    }

    /// The flag that stops a running search from another thread.
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.stop)
    }

    /// Searches `pos`, whose earlier positions' keys are `history` (oldest first, the current
    /// position's key excluded), reporting each finished iteration to `on_info`.
    pub fn search(
        &mut self,
        pos: &P,
        history: &[u64],
        limits: &Limits,
        mut on_info: impl FnMut(&Info<P::Move>),
    ) -> SearchResult<P::Move> {
        self.start = Instant::now();
        // `params` is public and may have changed since the last search.
        self.pst = pst::Table::new(&self.params);
        self.reductions.set(&self.params);
        self.evals.prepare(&self.params, pos.rules());
        self.nodes = 0;
        self.stopped = false;
        if !self.helper {
            // The leading searcher alone ages the shared table.
            self.tt.new_search();
        }
        self.node_limit = limits.nodes.unwrap_or(u64::MAX);
        let budget = limits.budget(pos.turn(), &self.params);
        self.hard_deadline = budget.map(|b| self.start + b.hard);
        self.keys.clear();
        self.keys.extend_from_slice(history);
        for k in self.killers.iter_mut() {
            *k = [None; 2];
        }
        for f in self.stack.iter_mut() {
            f.static_eval = NONE;
            f.played = PieceTo::NONE;
            f.null = false;
            f.excluded = None;
            f.double_extensions = 0;
        }

        let mut pos = pos.clone();
        if let Some(network) = self.network {
            pos.use_network(network);
        }
        let mut root_moves = pos.legal_move_list();
        self.root_skip.clear();
        if !self.search_moves.is_empty() {
            // `go searchmoves`: the others are skipped at the root.
            let mut keep = MoveList::new();
            for &m in &root_moves {
                if self.search_moves.contains(&m) {
                    keep.push(m);
                } else {
                    self.root_skip.push(m);
                }
            }
            root_moves = keep;
        }
        let base_skip = self.root_skip.len();
        let lines_wanted = self.multipv.clamp(1, root_moves.len().max(1));
        // The last complete iteration's lines beyond the first (their scores centre the
        // next iteration's windows).
        let mut lines: Vec<Line<P::Move>> = Vec::new();
        let mut result = SearchResult {
            best: root_moves.first().copied(),
            score: 0,
            depth: 0,
            nodes: 0,
            pv: Vec::new(),
        };
        if root_moves.is_empty() {
            return result;
        }
        let max_depth = limits
            .depth
            .or(limits.mate.map(|n| 2 * n))
            .unwrap_or(MAX_PLY as u32 - 8)
            .clamp(1, MAX_PLY as u32 - 8);
        let mut score = 0;
        // Iterations in a row that kept the best move: a stable choice needs less time.
        let mut stable = 0u32;
        for depth in 1..=max_depth {
            self.seldepth = 0;
            let d = depth as i32;
            let iteration_score = self.aspirated(&mut pos, d, score);
            // An interrupted iteration still counts if it found a best move to keep.
            if self.stopped && depth > 1 {
                if let Some(&best) = self.pv[0].first() {
                    if iteration_score > -INF && Some(best) != result.best && !self.pv[0].is_empty()
                    {
                        result.best = Some(best);
                        result.pv = self.pv[0].clone();
                    }
                }
                break;
            }
            let previous_score = score;
            score = iteration_score;
            let best_now = self.pv[0].first().copied().or(result.best);
            stable = if best_now == result.best {
                stable + 1
            } else {
                0
            };
            result = SearchResult {
                best: self.pv[0].first().copied().or(result.best),
                score,
                depth,
                nodes: self.nodes,
                pv: self.pv[0].clone(),
            };
            if lines_wanted == 1 {
                on_info(&Info {
                    depth,
                    seldepth: self.seldepth as u32,
                    score: Score::from_internal(score),
                    nodes: self.all_nodes(),
                    elapsed: self.start.elapsed(),
                    pv: result.pv.clone(),
                    hashfull: self.tt.hashfull(),
                    multipv: None,
                });
            } else {
                let Some(found) = self.more_lines(&mut pos, d, &result, &lines, lines_wanted)
                else {
                    // Stopped inside the later lines: the first line's move stands.
                    self.root_skip.truncate(base_skip);
                    break;
                };
                self.root_skip.truncate(base_skip);
                lines = found;
                // The best line first, as a GUI lists them; it is the move to play.
                if let Some(first) = lines.first() {
                    score = first.score;
                    result.score = first.score;
                    result.best = first.pv.first().copied().or(result.best);
                    result.pv = first.pv.clone();
                }
                for (rank, line) in lines.iter().enumerate() {
                    on_info(&Info {
                        depth,
                        seldepth: self.seldepth as u32,
                        score: Score::from_internal(line.score),
                        nodes: self.all_nodes(),
                        elapsed: self.start.elapsed(),
                        pv: line.pv.clone(),
                        hashfull: self.tt.hashfull(),
                        multipv: Some(rank as u32 + 1),
                    });
                }
            }
            // `go mate N`: the mate asked for is found.
            if limits.mate.is_some_and(
                |n| matches!(Score::from_internal(score), Score::Mate(m) if m > 0 && m as u32 <= n),
            ) {
                break;
            }
            if score.abs() >= MATE_BOUND
                && limits.depth.is_none()
                && limits.nodes.is_none()
                && !limits.infinite
            {
                // A forced mate found: further iterations cannot change the move.
                if (MATE - score.abs()) as u32 <= depth {
                    break;
                }
            }
            if let Some(b) = budget {
                // Another iteration takes about as long as all before it: start one only
                // while it may finish within the soft budget. A best move that keeps changing,
                // or a score that fell, earns more of it; a settled one, less.
                let mut share = match stable {
                    0 => 100,
                    1 => self.params.time_stable1,
                    2 => self.params.time_stable2,
                    _ => self.params.time_stable3,
                };
                if depth > 4 && score < previous_score - self.params.time_drop_margin {
                    share += self.params.time_score_drop;
                }
                let share = u32::try_from(share).unwrap_or(0);
                if self.start.elapsed() >= b.soft * share / 100
                    && !self.pondering.load(Ordering::Relaxed)
                {
                    break;
                }
            }
            if self.nodes >= self.node_limit {
                break;
            }
        }
        result.nodes = self.nodes;
        result
    }

    /// The reply expected to `result`'s move in `pos` (what UCI's `bestmove ... ponder` names,
    /// for a GUI to ponder on): the principal variation's second move, or, when the search
    /// ended with a one-move line, the table's move for the position after it if it is legal
    /// there. `None` when neither is known, or when the move ends the game.
    pub fn ponder_move(&self, pos: &P, result: &SearchResult<P::Move>) -> Option<P::Move> {
        let best = result.best?;
        if result.pv.first() == Some(&best) {
            if let Some(&reply) = result.pv.get(1) {
                return Some(reply);
            }
        }
        let mut after = pos.clone();
        after.make_move(best);
        let code = self.tt.probe(after.key())?.mv;
        after
            .legal_move_list()
            .iter()
            .copied()
            .find(|&m| code != 0 && P::move_code(m) == code)
    }

    /// Searches as [`Searcher::search`] while `helpers` (made by [`Searcher::helper`]) search
    /// the same position on threads of their own until this search ends, whatever its limit
    /// (UCI `Threads`). The helpers take this searcher's parameters, features, network and
    /// root moves (`search_moves`).
    /// Returns this search's result and the nodes the helpers searched.
    pub fn search_with_helpers(
        &mut self,
        helpers: &mut [Searcher<P>],
        pos: &P,
        history: &[u64],
        limits: &Limits,
        on_info: impl FnMut(&Info<P::Move>),
    ) -> (SearchResult<P::Move>, u64) {
        let until_stopped = Limits {
            infinite: true,
            ..Limits::default()
        };
        // Counted anew before the helpers start (they count into it from their first nodes).
        self.helper_nodes.store(0, Ordering::Relaxed);
        std::thread::scope(|scope| {
            let running: Vec<_> = helpers
                .iter_mut()
                .map(|h| {
                    h.params = self.params.clone();
                    h.features = self.features;
                    h.search_moves.clone_from(&self.search_moves);
                    h.set_network(self.network);
                    let flag = h.stop_flag();
                    flag.store(false, Ordering::Relaxed);
                    let limits = &until_stopped;
                    let handle = scope.spawn(move || h.search(pos, history, limits, |_| {}).nodes);
                    (handle, flag)
                })
                .collect();
            let result = self.search(pos, history, limits, on_info);
            for (_, flag) in &running {
                flag.store(true, Ordering::Relaxed);
            }
            // A helper that panicked counts no nodes; the leader's result stands.
            let helper_nodes = running
                .into_iter()
                .map(|(handle, _)| handle.join().unwrap_or(0))
                .sum();
            (result, helper_nodes)
        })
    }

    /// The root searched to `depth` in a window around `centre` (the last iteration's score)
    /// that widens on the side it failed until the score falls inside: the iteration's
    /// score, or where it was when the search was stopped.
    fn aspirated(&mut self, pos: &mut P, depth: i32, centre: i32) -> i32 {
        let mut delta = self.params.aspiration_window;
        let (mut alpha, mut beta) = if self.features.aspiration && depth >= 4 {
            (centre - delta, centre + delta)
        } else {
            (-INF, INF)
        };
        loop {
            let s = self.negamax(pos, depth, 0, alpha, beta, Node::Pv);
            if self.stopped {
                return s;
            }
            if s <= alpha {
                beta = (alpha + beta) / 2;
                alpha = (s - delta).max(-INF);
            } else if s >= beta {
                beta = (s + delta).min(INF);
            } else {
                return s;
            }
            delta += delta / 2;
        }
    }

    /// The lines after the first of an iteration at `depth` (whose first line `first` holds),
    /// each the best move among those the earlier lines did not take, all `wanted` of them
    /// sorted best first; `None` when the search was stopped before they were complete.
    fn more_lines(
        &mut self,
        pos: &mut P,
        depth: i32,
        first: &SearchResult<P::Move>,
        previous: &[Line<P::Move>],
        wanted: usize,
    ) -> Option<Vec<Line<P::Move>>> {
        let mut found = vec![Line {
            score: first.score,
            pv: first.pv.clone(),
        }];
        for k in 1..wanted {
            // The previous line's move (the first line's is its best move even when its
            // principal variation came back empty).
            let taken = found[k - 1].pv.first().copied();
            if let Some(m) = taken.or(if k == 1 { first.best } else { None }) {
                self.root_skip.push(m);
            }
            // Centred on the line's score of the last iteration, as the first line's window is.
            let centre = previous.get(k).map_or(first.score, |l| l.score);
            let score = self.aspirated(pos, depth, centre);
            if self.stopped {
                return None;
            }
            found.push(Line {
                score,
                pv: self.pv[0].clone(),
            });
        }
        // Stable: of equal scores the earlier line (searched as the better) stays ahead.
        found.sort_by_key(|l| std::cmp::Reverse(l.score));
        Some(found)
    }

    /// Nodes searched so far by this searcher and its helpers.
    fn all_nodes(&self) -> u64 {
        self.nodes + self.helper_nodes.load(Ordering::Relaxed)
    }

    #[inline]
    fn check_stop(&mut self) {
        if self.nodes >= self.node_limit {
            self.stopped = true;
        } else if self.nodes & 1023 == 0 {
            if self.helper {
                self.helper_nodes.fetch_add(1024, Ordering::Relaxed);
            }
            if self.stop.load(Ordering::Relaxed) {
                self.stopped = true;
            } else if let Some(deadline) = self.hard_deadline {
                if Instant::now() >= deadline && !self.pondering.load(Ordering::Relaxed) {
                    self.stopped = true;
                }
            }
        }
    }

    /// Whether the current position (key on top of the stack) repeats an earlier one within
    /// the reversible plies: scored as a draw inside the tree.
    fn is_repetition(&self, pos: &P) -> bool {
        let n = self.keys.len();
        let key = pos.key();
        let window = (pos.halfmove_clock() as usize).min(n);
        self.keys[n - window..]
            .iter()
            .rev()
            .skip(1)
            .step_by(2)
            .any(|&k| k == key)
    }

    /// The continuation keys of the moves [`CONTINUATION_PLIES`] before `ply`.
    #[inline]
    fn previous(&self, ply: usize) -> Previous {
        CONTINUATION_PLIES.map(|back| {
            if ply >= back {
                self.stack[ply - back].played
            } else {
                PieceTo::NONE
            }
        })
    }

    #[inline]
    fn piece_to(pos: &P, info: &MoveInfo<P::Square>) -> PieceTo {
        PieceTo::new(pos.turn(), info.role, P::square_index(info.to))
    }

    /// A quiet move of the side to move, as the history tables key it.
    #[inline]
    fn quiet(pos: &P, info: &MoveInfo<P::Square>) -> Quiet {
        Quiet {
            side: pos.turn(),
            from: P::square_index(info.from),
            to: P::square_index(info.to),
            piece_to: Self::piece_to(pos, info),
        }
    }

    #[inline]
    fn quiet_score(&self, pos: &P, info: &MoveInfo<P::Square>, prev: Previous) -> i32 {
        self.histories.quiet_score(Self::quiet(pos, info), prev)
    }

    /// The capture history of a capture of `victim`.
    #[inline]
    fn capture_score(&self, pos: &P, info: &MoveInfo<P::Square>, victim: Role) -> i32 {
        if self.features.ordering {
            self.histories
                .capture_score(Self::piece_to(pos, info), victim)
        } else {
            0
        }
    }

    /// Orders moves: table move, good captures and promotions by victim, killers, the counter
    /// move, quiets by history, then captures that lose material.
    fn score_moves(
        &self,
        pos: &P,
        moves: &MoveList<P::Move>,
        tt_move: u32,
        ply: usize,
        scores: &mut Scores,
    ) {
        let killers = self.killers[ply];
        let prev = self.previous(ply);
        let counter = self.histories.counter(prev[0]);
        for &mv in moves.iter() {
            // As many scores as moves, and a move list holds at most MAX_MOVES.
            scores.push(if tt_move != 0 && P::move_code(mv) == tt_move {
                4_000_000
            } else {
                let info = pos.move_info(mv);
                if let Some(victim) = info.capture {
                    let mvv = see_value(victim, &self.params) * 8
                        - see_value(info.role, &self.params) / 8
                        + self.capture_score(pos, &info, victim) / 16;
                    if pos.see_ge_info(info, 0, &self.params) {
                        2_000_000 + mvv
                    } else {
                        -1_000_000 + mvv
                    }
                } else if let Some(p) = info.promotion {
                    1_500_000 + see_value(p, &self.params)
                } else if self.features.ordering && killers[0] == Some(mv) {
                    1_000_000
                } else if self.features.ordering && killers[1] == Some(mv) {
                    900_000
                } else if self.features.ordering && counter == Some(mv) {
                    800_000
                } else if self.features.ordering {
                    self.quiet_score(pos, &info, prev)
                } else {
                    0
                }
            });
        }
    }

    /// Prefetches what the position with `key` will read first: its table bucket and its
    /// cached evaluation's slot.
    #[inline]
    fn prefetch(&self, key: u64) {
        self.tt.prefetch(key);
        self.evals.prefetch(key);
    }

    /// The static evaluation of `pos` (not in check), from the cache when it holds it.
    #[inline]
    fn evaluate(&mut self, pos: &P) -> i32 {
        let key = pos.key();
        if let Some(v) = self.evals.get(key) {
            return v;
        }
        let v = pos.evaluate_with(&self.params, &self.pst, &mut self.pawns);
        self.evals.put(key, v);
        v
    }

    /// The static evaluation corrected by what searches of similar pawn structures found.
    #[inline]
    fn corrected(&self, pos: &P, raw: i32) -> i32 {
        if !self.features.pruning {
            return raw;
        }
        let c = self
            .histories
            .correction(pos.turn(), pos.eval_sums().correction_keys());
        (raw + c).clamp(-MATE_BOUND + 1, MATE_BOUND - 1)
    }

    /// Whether the side to move in `pos`, at `ply`, is in check: answered once per position
    /// and ply, however many of the parent's, the node's and its quiescence's questions ask it.
    /// The 64-bit key tells a position apart from the sibling asked before it at this ply, as
    /// it tells positions apart in the table (beyond the stack's plies, as deep checks in
    /// quiescence may go, the answer is simply computed).
    #[inline]
    fn checked(&mut self, pos: &P, ply: usize) -> bool {
        let key = pos.key();
        match self.stack.get_mut(ply) {
            Some(frame) => match frame.check {
                Some((k, c)) if k == key => c,
                _ => {
                    let c = pos.in_check();
                    frame.check = Some((key, c));
                    c
                }
            },
            None => pos.in_check(),
        }
    }

    /// Whether the side to move stands better than two plies ago (when it was last to move):
    /// pruning may then be bolder, and reductions larger when it is not.
    fn improving(&self, ply: usize, static_eval: i32) -> bool {
        if static_eval == NONE {
            return false;
        }
        for back in [2, 4] {
            if ply >= back {
                let then = self.stack[ply - back].static_eval;
                if then != NONE {
                    return static_eval > then;
                }
            }
        }
        true
    }

    fn negamax(
        &mut self,
        pos: &mut P,
        mut depth: i32,
        ply: usize,
        mut alpha: i32,
        mut beta: i32,
        node: Node,
    ) -> i32 {
        let pv_node = node == Node::Pv;
        self.pv[ply].clear();
        let root = ply == 0;
        let excluded = self.stack[ply].excluded;
        if !root {
            if pos.halfmove_clock() >= 100
                || self.is_repetition(pos)
                || pos.is_insufficient_material()
            {
                return 0;
            }
            // Mate distance pruning.
            alpha = alpha.max(-MATE + ply as i32);
            beta = beta.min(MATE - ply as i32 - 1);
            if alpha >= beta {
                return alpha;
            }
        }
        let in_check = self.checked(pos, ply);
        if in_check {
            depth += 1;
        }
        if depth <= 0 || ply >= MAX_PLY {
            return self.qsearch(pos, ply, alpha, beta);
        }
        self.nodes += 1;
        self.seldepth = self.seldepth.max(ply);
        self.check_stop();
        if self.stopped {
            return 0;
        }
        self.stack[ply + 1].excluded = None;
        self.stack[ply + 1].double_extensions = self.stack[ply].double_extensions;

        let key = pos.key();
        // A singular search of this node must not read (or overwrite) what the full search of
        // it stores.
        let entry = if excluded.is_none() {
            self.tt.probe(key)
        } else {
            None
        };
        let tt_move = entry.map_or(0, |e| e.mv);
        let tt_score = entry.map(|e| score_from_tt(e.score, ply));
        if let (Some(e), Some(s)) = (entry, tt_score) {
            if self.features.tt_cutoffs && !pv_node && i32::from(e.depth) >= depth {
                match e.bound {
                    Bound::Exact => return s,
                    Bound::Lower if s >= beta => return s,
                    Bound::Upper if s <= alpha => return s,
                    _ => {}
                }
            }
        }

        let pruning = self.features.pruning;
        let (raw_eval, static_eval) = if in_check {
            (NONE, NONE)
        } else if excluded.is_some() {
            // The same position as the full search of this node: its evaluation stands.
            let s = self.stack[ply].static_eval;
            (s, s)
        } else {
            let raw = match entry {
                Some(e) if e.eval != NO_EVAL => i32::from(e.eval),
                _ => self.evaluate(pos),
            };
            (raw, self.corrected(pos, raw))
        };
        self.stack[ply].static_eval = static_eval;
        // The table's score is a better guess than the static evaluation when its bound says
        // which side of it the truth lies.
        let mut eval = static_eval;
        if let (Some(e), Some(s)) = (entry, tt_score) {
            if !in_check
                && s.abs() < MATE_BOUND
                && match e.bound {
                    Bound::Exact => true,
                    Bound::Lower => s > eval,
                    Bound::Upper => s < eval,
                }
            {
                eval = s;
            }
        }
        let improving = self.improving(ply, static_eval);

        if pruning && !pv_node && !in_check && excluded.is_none() {
            // Reverse futility: far enough above beta that a quiet move will not lose it.
            if depth <= 8
                && eval - self.params.rfp_margin * (depth - i32::from(improving)) >= beta
                && eval.abs() < MATE_BOUND
            {
                return eval;
            }
            // Razoring: far below alpha, only a tactic can help.
            if depth <= 3 && eval + self.params.razor_base + self.params.razor_depth * depth < alpha
            {
                let s = self.qsearch(pos, ply, alpha, alpha + 1);
                if self.stopped {
                    return 0;
                }
                if s <= alpha {
                    return s;
                }
            }
        }
        if self.features.null_move
            && !pv_node
            && !in_check
            && excluded.is_none()
            && depth >= 3
            && eval >= beta
            && static_eval >= beta
            && !root
            && !self.stack[ply - 1].null
            && pos.has_non_pawn_material()
        {
            let r = 3 + depth / 3 + ((eval - beta) / self.params.null_move_divisor.max(1)).min(3);
            let undo = pos.make_null();
            self.keys.push(key);
            self.stack[ply].played = PieceTo::NONE;
            self.stack[ply].null = true;
            let s = -self.negamax(
                pos,
                depth - 1 - r,
                ply + 1,
                -beta,
                -beta + 1,
                node.flipped(),
            );
            self.stack[ply].null = false;
            self.keys.pop();
            pos.unmake_null(undo);
            if self.stopped {
                return 0;
            }
            if s >= beta {
                return if s >= MATE_BOUND { beta } else { s };
            }
        }
        // ProbCut: a capture whose quiescence and then a search four plies shallower both
        // beat beta by a clear margin would, with high probability, beat beta at full depth:
        // the node is cut without searching its quiet moves. Skipped when the table already
        // says a search nearly as deep stayed below that margin.
        let probcut_beta = beta + 200 - 50 * i32::from(improving);
        if self.features.probcut
            && !pv_node
            && !in_check
            && excluded.is_none()
            && depth >= 5
            && beta.abs() < MATE_BOUND
            && !matches!((entry, tt_score),
                (Some(e), Some(s)) if i32::from(e.depth) >= depth - 3 && s < probcut_beta)
        {
            let mut captures = MoveList::new();
            pos.tactical_moves(&mut captures);
            for &mv in captures.iter() {
                if !pos.see_ge(mv, probcut_beta - static_eval, &self.params) {
                    continue;
                }
                let info = pos.move_info(mv);
                let played = Self::piece_to(pos, &info);
                let undo = pos.make_move(mv);
                self.keys.push(key);
                self.stack[ply].played = played;
                let mut s = -self.qsearch(pos, ply + 1, -probcut_beta, -probcut_beta + 1);
                if s >= probcut_beta {
                    s = -self.negamax(
                        pos,
                        depth - 4,
                        ply + 1,
                        -probcut_beta,
                        -probcut_beta + 1,
                        node.flipped(),
                    );
                }
                self.keys.pop();
                pos.unmake_move(mv, undo);
                if self.stopped {
                    return 0;
                }
                if s >= probcut_beta {
                    self.tt.store(
                        key,
                        P::move_code(mv),
                        score_to_tt(s, ply),
                        tt_eval(raw_eval),
                        depth - 3,
                        Bound::Lower,
                    );
                    return s;
                }
            }
        }
        // Internal iterative reduction: without a table move, ordering is poor and a full
        // search here is likely wasted; a shallower one fills the table for the next visit.
        if pruning && tt_move == 0 && depth >= 4 && excluded.is_none() {
            depth -= 1;
        }

        let mut moves = MoveList::new();
        pos.legal_moves(&mut moves);
        if moves.is_empty() {
            return if in_check { -MATE + ply as i32 } else { 0 };
        }
        let mut scores = Scores::new();
        self.score_moves(pos, &moves, tt_move, ply, &mut scores);
        let prev = self.previous(ply);

        let original_alpha = alpha;
        let mut best = -INF;
        let mut best_move: Option<P::Move> = None;
        let mut quiets_tried: MoveList<P::Move> = MoveList::new();
        let mut captures_tried: MoveList<P::Move> = MoveList::new();
        let mut searched = 0usize;
        let mut skip_quiets = false;
        // Whether the table's move, tried first, is a capture or promotion: the node's best
        // line is then likely tactical, and a quiet move is less likely to beat it.
        let mut tt_tactical = false;
        let may_prune = pruning && !root && pos.has_non_pawn_material();
        for i in 0..moves.len() {
            let mv = pick_next(&mut moves, &mut scores, i);
            if Some(mv) == excluded || (root && self.root_skip.contains(&mv)) {
                continue;
            }
            let info = pos.move_info(mv);
            let quiet = info.capture.is_none() && info.promotion.is_none();
            if !quiet && tt_move != 0 && P::move_code(mv) == tt_move {
                tt_tactical = true;
            }
            let history = if quiet {
                self.quiet_score(pos, &info, prev)
            } else {
                0
            };

            if may_prune && best > -MATE_BOUND && alpha < MATE_BOUND {
                if quiet {
                    if skip_quiets {
                        continue;
                    }
                    // Late-move pruning: enough quiet moves seen at this depth.
                    let late = (self.params.lmp_base + depth * depth) as usize
                        / if improving { 1 } else { 2 };
                    if !in_check && searched >= late {
                        skip_quiets = true;
                        continue;
                    }
                    let lmr_depth = (depth - 1 - self.reductions.of(depth, searched + 1)).max(0);
                    // Futility: a quiet move cannot lift a hopeless static evaluation to alpha.
                    if !in_check
                        && lmr_depth <= 8
                        && static_eval
                            + self.params.futility_base
                            + self.params.futility_depth * lmr_depth
                            <= alpha
                    {
                        skip_quiets = true;
                        continue;
                    }
                    if lmr_depth <= 4 && history < -self.params.history_prune * depth {
                        continue;
                    }
                    let margin = -self.params.see_quiet_margin * lmr_depth * lmr_depth;
                    if lmr_depth <= 8 && !pos.see_ge_info(info, margin, &self.params) {
                        continue;
                    }
                } else if depth <= 8
                    && scores[i] < 0
                    && !pos.see_ge_info(info, -self.params.see_capture_margin * depth, &self.params)
                {
                    continue;
                }
            }

            // Singular extension: when the table's move is much better than every other, a
            // line through it deserves more depth; when another move also beats beta, this
            // node is a cut node twice over.
            let mut extension = 0;
            if pruning
                && !root
                && depth >= 8
                && excluded.is_none()
                && tt_move != 0
                && P::move_code(mv) == tt_move
            {
                if let (Some(e), Some(s)) = (entry, tt_score) {
                    if e.bound != Bound::Upper
                        && i32::from(e.depth) >= depth - 3
                        && s.abs() < MATE_BOUND
                    {
                        let singular_beta = s - 2 * depth;
                        self.stack[ply].excluded = Some(mv);
                        let v = self.negamax(
                            pos,
                            (depth - 1) / 2,
                            ply,
                            singular_beta - 1,
                            singular_beta,
                            node,
                        );
                        self.stack[ply].excluded = None;
                        if self.stopped {
                            return 0;
                        }
                        match singular_extension(
                            v,
                            singular_beta,
                            beta,
                            s >= beta,
                            node,
                            self.stack[ply].double_extensions,
                        ) {
                            Some(e) => extension = e,
                            None => return singular_beta,
                        }
                    }
                }
            }

            self.prefetch(pos.key_after(&info));
            let played = Self::piece_to(pos, &info);
            self.stack[ply + 1].double_extensions =
                self.stack[ply].double_extensions + u8::from(extension == 2);
            let undo = pos.make_move(mv);
            self.tt.prefetch(pos.key());
            self.keys.push(key);
            self.stack[ply].played = played;
            let gives_check = self.checked(pos, ply + 1);
            let new_depth = depth - 1 + extension;
            searched += 1;
            let score = if searched == 1 {
                let child = if pv_node { Node::Pv } else { node.flipped() };
                -self.negamax(pos, new_depth, ply + 1, -beta, -alpha, child)
            } else {
                let mut reduction = 0;
                if self.features.lmr
                    && depth >= 3
                    && !in_check
                    && (quiet || scores[i] < 0)
                    && searched > if pv_node { 3 } else { 1 }
                {
                    reduction = self.reductions.of(depth, searched);
                    if pv_node {
                        reduction -= 1;
                    }
                    if !improving {
                        reduction += 1;
                    }
                    if gives_check {
                        reduction -= 1;
                    }
                    // At an expected cut node a late move matters only if the first ones
                    // all failed: it gets less depth, except the move that cut here before.
                    if node == Node::Cut && self.killers[ply][0] != Some(mv) {
                        reduction += 2;
                    }
                    if quiet && tt_tactical {
                        reduction += 1;
                    }
                    if quiet {
                        if scores[i] >= 800_000 {
                            reduction -= 1;
                        } else {
                            reduction -= history / self.params.lmr_history_divisor.max(1);
                        }
                    }
                    reduction = reduction.clamp(0, (new_depth - 1).max(0));
                }
                // A reduced late move is expected to fail low, so its child to fail high.
                let mut s = -self.negamax(
                    pos,
                    new_depth - reduction,
                    ply + 1,
                    -alpha - 1,
                    -alpha,
                    if reduction > 0 {
                        Node::Cut
                    } else {
                        node.flipped()
                    },
                );
                if s > alpha && reduction > 0 {
                    // The reduced search failed high: how far above the best so far says
                    // how much the full-depth search deserves, a ply more or a ply less.
                    let deeper = s > best + DEEPER_MARGIN + 2 * new_depth;
                    let shallower = s < best + new_depth;
                    let depth = new_depth + i32::from(deeper) - i32::from(shallower);
                    if depth > new_depth - reduction {
                        s = -self.negamax(pos, depth, ply + 1, -alpha - 1, -alpha, node.flipped());
                    }
                }
                if s > alpha && s < beta && pv_node {
                    s = -self.negamax(pos, new_depth, ply + 1, -beta, -alpha, Node::Pv);
                }
                s
            };
            self.keys.pop();
            pos.unmake_move(mv, undo);
            if self.stopped {
                return 0;
            }
            if score > best {
                best = score;
                if score > alpha {
                    best_move = Some(mv);
                    alpha = score;
                    if pv_node {
                        let (head, tail) = self.pv.split_at_mut(ply + 1);
                        head[ply].clear();
                        head[ply].push(mv);
                        head[ply].extend_from_slice(&tail[0]);
                    }
                    if score >= beta {
                        if self.features.ordering {
                            if quiet {
                                self.reward_quiet(pos, ply, mv, &info, prev, depth, &quiets_tried);
                            }
                            self.reward_capture(pos, &info, depth, &captures_tried);
                        }
                        break;
                    }
                }
            }
            if quiet {
                quiets_tried.push(mv);
            } else if info.capture.is_some() {
                captures_tried.push(mv);
            }
        }
        if searched == 0 {
            // Every move was pruned or excluded.
            return if excluded.is_some() {
                alpha
            } else {
                best.max(alpha)
            };
        }
        let bound = Bound::of(best, original_alpha, alpha, beta);
        // A root searched without some of its moves (a later line, `searchmoves`) must not
        // leave its partial answer where the whole root's is kept.
        let whole = !root || self.root_skip.is_empty();
        if excluded.is_none() && whole {
            let best_is_quiet = best_move.is_none_or(|m| {
                let info = pos.move_info(m);
                info.capture.is_none() && info.promotion.is_none()
            });
            if pruning
                && !in_check
                && best_is_quiet
                && best.abs() < MATE_BOUND
                && !(bound == Bound::Lower && best <= static_eval)
                && !(bound == Bound::Upper && best >= static_eval)
            {
                self.histories.update_correction(
                    pos.turn(),
                    pos.eval_sums().correction_keys(),
                    best - static_eval,
                    depth,
                );
            }
            self.tt.store(
                key,
                best_move.map_or(0, P::move_code),
                score_to_tt(best, ply),
                tt_eval(raw_eval),
                depth,
                bound,
            );
        }
        best
    }

    /// A quiet move cut off: it becomes a killer and the counter move, and its histories rise
    /// while those of the quiet moves tried before it fall.
    #[allow(clippy::too_many_arguments)]
    fn reward_quiet(
        &mut self,
        pos: &P,
        ply: usize,
        mv: P::Move,
        info: &MoveInfo<P::Square>,
        prev: Previous,
        depth: i32,
        tried: &MoveList<P::Move>,
    ) {
        let k = &mut self.killers[ply];
        if k[0] != Some(mv) {
            k[1] = k[0];
            k[0] = Some(mv);
        }
        self.histories.set_counter(prev[0], mv);
        let bonus = stat_bonus(depth);
        self.histories
            .update_quiet(Self::quiet(pos, info), prev, bonus);
        for &q in tried {
            let qi = pos.move_info(q);
            self.histories
                .update_quiet(Self::quiet(pos, &qi), prev, -bonus);
        }
    }

    /// A move cut off: a capture's history rises, and whichever move it was, the captures
    /// tried before it (which did not cut off) fall.
    fn reward_capture(
        &mut self,
        pos: &P,
        info: &MoveInfo<P::Square>,
        depth: i32,
        tried: &MoveList<P::Move>,
    ) {
        let bonus = stat_bonus(depth);
        if let Some(victim) = info.capture {
            self.histories
                .update_capture(Self::piece_to(pos, info), victim, bonus);
        }
        for &c in tried {
            let ci = pos.move_info(c);
            if let Some(victim) = ci.capture {
                self.histories
                    .update_capture(Self::piece_to(pos, &ci), victim, -bonus);
            }
        }
    }

    fn qsearch(&mut self, pos: &mut P, ply: usize, mut alpha: i32, beta: i32) -> i32 {
        self.pv[ply].clear();
        self.nodes += 1;
        self.seldepth = self.seldepth.max(ply);
        self.check_stop();
        if self.stopped {
            return 0;
        }
        if pos.is_insufficient_material() {
            return 0;
        }
        let key = pos.key();
        let entry = self.tt.probe(key);
        if let Some(e) = entry {
            if self.features.tt_cutoffs {
                let s = score_from_tt(e.score, ply);
                match e.bound {
                    Bound::Exact => return s,
                    Bound::Lower if s >= beta => return s,
                    Bound::Upper if s <= alpha => return s,
                    _ => {}
                }
            }
        }
        let in_check = self.checked(pos, ply);
        let original_alpha = alpha;
        let mut best = -INF;
        let mut raw_eval = NONE;
        if !in_check {
            raw_eval = match entry {
                Some(e) if e.eval != NO_EVAL => i32::from(e.eval),
                _ => self.evaluate(pos),
            };
            best = self.corrected(pos, raw_eval);
            if best >= beta || ply >= MAX_PLY {
                if entry.is_none() {
                    self.tt.store(
                        key,
                        0,
                        score_to_tt(best, ply),
                        tt_eval(raw_eval),
                        0,
                        Bound::Lower,
                    );
                }
                return best;
            }
            alpha = alpha.max(best);
        }
        let mut moves = MoveList::new();
        if in_check {
            pos.legal_moves(&mut moves);
            if moves.is_empty() {
                return -MATE + ply as i32;
            }
        } else {
            // Stalemates are not detected here: quiescence only looks at tactical moves.
            pos.tactical_moves(&mut moves);
        }
        if ply >= MAX_PLY {
            return self.evaluate(pos);
        }
        // The kept moves come first in `moves`, one score each: `scores.len()` of them.
        let mut scores = Scores::new();
        for i in 0..moves.len() {
            let info = pos.move_info(moves[i]);
            let tactical = info.capture.is_some()
                || info.promotion.is_some_and(|r| {
                    see_value(r, &self.params) >= see_value(crate::types::Role::Queen, &self.params)
                });
            // Delta pruning: a capture that, even winning its victim outright, leaves the
            // stand-pat score short of alpha by a margin (`DeltaMargin`: what an exchange may
            // swing beyond its victim's value) cannot raise it; skipped before the costlier
            // exchange evaluation.
            let hopeless = !in_check
                && self.features.pruning
                && info.promotion.is_none()
                && info.capture.is_some_and(|v| {
                    best + see_value(v, &self.params) + self.params.delta_margin <= alpha
                });
            if in_check || (tactical && !hopeless && pos.see_ge_info(info, 0, &self.params)) {
                self.prefetch(pos.key_after(&info));
                moves.swap(scores.len(), i);
                scores.push(
                    info.capture.map_or(0, |v| see_value(v, &self.params) * 8)
                        - see_value(info.role, &self.params) / 8
                        + info.promotion.map_or(0, |p| see_value(p, &self.params)),
                );
            }
        }
        let n = scores.len();
        let mut best_move = None;
        for i in 0..n {
            let mv = pick_next(&mut moves[..n], &mut scores[..n], i);
            let undo = pos.make_move(mv);
            self.tt.prefetch(pos.key());
            let score = -self.qsearch(pos, ply + 1, -beta, -alpha);
            pos.unmake_move(mv, undo);
            if self.stopped {
                return 0;
            }
            if score > best {
                best = score;
                if score > alpha {
                    alpha = score;
                    best_move = Some(mv);
                    if score >= beta {
                        break;
                    }
                }
            }
        }
        let bound = Bound::of(best, original_alpha, alpha, beta);
        self.tt.store(
            key,
            best_move.map_or(0, P::move_code),
            score_to_tt(best, ply),
            tt_eval(raw_eval),
            0,
            bound,
        );
        best
    }
}

/// The static evaluation as the table stores it.
#[inline]
fn tt_eval(raw: i32) -> i16 {
    if raw == NONE {
        NO_EVAL
    } else {
        raw.clamp(-30_000, 30_000) as i16
    }
}

/// Selection sort, one step: moves the best-scored move from `i` on to `i` and returns it.
/// Lazy, because most nodes cut off after the first few moves.
#[inline]
fn pick_next<M: Copy>(moves: &mut [M], scores: &mut [i32], i: usize) -> M {
    // The best score so far is kept in a register and the slice walked without index
    // checks; strictly greater, so the first of equal scores wins as before.
    let (mut j, mut best) = (i, scores[i]);
    for (k, &s) in scores.iter().enumerate().skip(i + 1) {
        if s > best {
            (j, best) = (k, s);
        }
    }
    moves.swap(i, j);
    scores.swap(i, j);
    moves[i]
}

fn score_to_tt(s: i32, ply: usize) -> i32 {
    if s >= MATE_BOUND {
        s + ply as i32
    } else if s <= -MATE_BOUND {
        s - ply as i32
    } else {
        s
    }
}

fn score_from_tt(s: i32, ply: usize) -> i32 {
    if s >= MATE_BOUND {
        s - ply as i32
    } else if s <= -MATE_BOUND {
        s + ply as i32
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::{Node, Searcher};
    use crate::board8::Board;
    use crate::notation::parse_uci;
    use crate::params::Params;
    use crate::position::Position;
    use crate::variant::Rules;

    /// The per-ply check answer follows the position asked, not the ply: siblings at one ply,
    /// one in check and one not, each get their own answer, asked in any order and again; and
    /// a ply beyond the stack is answered too.
    #[test]
    fn check_status_follows_the_position_at_each_ply() {
        let rules = Rules::parse("chess", None).expect("chess");
        let checked = Board::from_fen(rules, "4k3/8/8/8/8/8/4q3/4K3 w - - 0 1").expect("fen");
        let free = Board::from_fen(rules, "4k3/8/8/8/8/8/3q4/7K w - - 0 1").expect("fen");
        assert!(checked.in_check() && !free.in_check());
        let mut s = Searcher::<Board>::new(1, Params::default());
        for _ in 0..2 {
            for ply in [3, 3, 4] {
                assert!(s.checked(&checked, ply));
                assert!(!s.checked(&free, ply));
                assert!(!s.checked(&free, ply));
                assert!(s.checked(&checked, ply));
            }
        }
        let beyond = s.stack.len() + 5;
        assert!(s.checked(&checked, beyond) && !s.checked(&free, beyond));
    }

    #[test]
    fn singular_extensions_follow_their_rules() {
        use super::{singular_extension, DOUBLE_EXTENSION_MARGIN as M, MAX_DOUBLE_EXTENSIONS};
        let (sb, beta) = (100, 150);
        // The others fail low by little: one ply; by more than the margin: two, outside the
        // principal variation and while the line has double extensions left.
        assert_eq!(
            singular_extension(sb - 1, sb, beta, false, Node::Cut, 0),
            Some(1)
        );
        assert_eq!(
            singular_extension(sb - M - 1, sb, beta, false, Node::Cut, 0),
            Some(2)
        );
        assert_eq!(
            singular_extension(sb - M - 1, sb, beta, false, Node::All, 5),
            Some(2)
        );
        assert_eq!(
            singular_extension(sb - M - 1, sb, beta, false, Node::Pv, 0),
            Some(1)
        );
        assert_eq!(
            singular_extension(
                sb - M - 1,
                sb,
                beta,
                false,
                Node::Cut,
                MAX_DOUBLE_EXTENSIONS
            ),
            Some(1)
        );
        // Another move holds too: a cut when that beats beta, else no extension, or one ply
        // less when the table's score beats beta.
        assert_eq!(singular_extension(sb, sb, sb, false, Node::Cut, 0), None);
        assert_eq!(
            singular_extension(sb, sb, beta, false, Node::Cut, 0),
            Some(0)
        );
        assert_eq!(
            singular_extension(sb, sb, beta, true, Node::Cut, 0),
            Some(-1)
        );
    }

    /// `search_moves` restricts the root to its moves, helpers included; a list with none
    /// legal in the position searched leaves no move to choose rather than all of them.
    #[test]
    fn search_moves_restrict_the_root() {
        use super::Limits;
        let rules = Rules::parse("chess", None).expect("chess");
        let start = Board::from_fen(rules, rules.start_fen()).expect("start");
        let named = |uci: &str| parse_uci(&start, uci).expect("legal");
        let (a3, h4) = (named("a2a3"), named("h2h4"));
        let limits = Limits {
            depth: Some(5),
            ..Limits::default()
        };
        let mut s = Searcher::<Board>::new(1, Params::default());
        let mut helpers = vec![s.helper()];
        s.search_moves = vec![a3, h4];
        let (r, _) = s.search_with_helpers(&mut helpers, &start, &[], &limits, |_| {});
        assert!(r.best == Some(a3) || r.best == Some(h4), "{:?}", r.best);
        // e7e5 is legal only after a White move: not one of the start's.
        let mut after = start.clone();
        after.make_move(a3);
        let e5 = parse_uci(&after, "e7e5").expect("legal after a3");
        s.search_moves = vec![e5];
        assert_eq!(s.search(&start, &[], &limits, |_| {}).best, None);
        s.search_moves.clear();
        assert!(s.search(&start, &[], &limits, |_| {}).best.is_some());
    }

    /// The reply to ponder on comes from the principal variation, or from the table when the
    /// line holds the best move alone; no best move, no reply.
    #[test]
    fn the_ponder_move_follows_the_line_or_the_table() {
        use super::{Limits, SearchResult};
        let rules = Rules::parse("chess", None).expect("chess");
        let start = Board::from_fen(rules, rules.start_fen()).expect("start");
        let mut s = Searcher::<Board>::new(1, Params::default());
        let limits = Limits {
            depth: Some(6),
            ..Limits::default()
        };
        let r = s.search(&start, &[], &limits, |_| {});
        assert!(r.pv.len() >= 2, "{:?}", r.pv);
        assert_eq!(s.ponder_move(&start, &r), Some(r.pv[1]));
        // A line cut to its first move: the table still knows the position after it.
        let cut = SearchResult {
            pv: r.pv[..1].to_vec(),
            ..r.clone()
        };
        let reply = s.ponder_move(&start, &cut).expect("the table's move");
        let mut after = start.clone();
        after.make_move(r.pv[0]);
        assert!(after.legal_move_list().contains(&reply));
        let none = SearchResult {
            best: None,
            pv: Vec::new(),
            ..r
        };
        assert_eq!(s.ponder_move(&start, &none), None);
    }

    #[test]
    fn zero_window_children_alternate_between_cut_and_all() {
        // Below the principal variation the first child of a PV node's late moves is a cut
        // node; from there cut and all alternate, so the extra reduction lands every other ply.
        assert_eq!(Node::Pv.flipped(), Node::Cut);
        assert_eq!(Node::Cut.flipped(), Node::All);
        assert_eq!(Node::All.flipped(), Node::Cut);
    }
}
