//! Alpha-beta search, generic over the position type (monomorphised per geometry):
//! iterative deepening, principal-variation search with aspiration windows, a transposition
//! table, quiescence with SEE pruning, null-move pruning, late-move reductions, reverse
//! futility and late-move pruning, killer and history ordering, check extension, mate and draw
//! scores, repetition and 50-move detection.
//!
//! Deterministic: with the same history, parameters, depth or node limit and a cleared table,
//! the same move and node count come out. Time only enters through time limits.

pub mod limits;
pub mod tt;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::eval::{see_value, PawnCache, SearchPosition};
use crate::params::Params;
use crate::position::MoveList;
pub use limits::{Limits, TimeBudget};
use tt::{Bound, TranspositionTable};

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
    };
}

/// Reduction table for late moves, by depth and move number.
fn lmr_reduction(depth: i32, moves: usize) -> i32 {
    let d = (depth.max(1) as f64).ln();
    let m = (moves.max(1) as f64).ln();
    (0.75 + d * m / 2.25) as i32
}

const HISTORY_SIZE: usize = 128 * 128;
const HISTORY_MAX: i32 = 16_384;

/// A searcher for one geometry: the table and move-ordering memory persist across moves of a
/// game and are cleared by [`Searcher::new_game`].
pub struct Searcher<P: SearchPosition> {
    tt: TranspositionTable,
    /// Pawn-structure features by pawn key: this thread's evaluation cache.
    pawns: PawnCache,
    history: Vec<i32>,
    killers: Vec<[Option<P::Move>; 2]>,
    pv: Vec<Vec<P::Move>>,
    keys: Vec<u64>,
    nodes: u64,
    seldepth: usize,
    node_limit: u64,
    hard_deadline: Option<Instant>,
    start: Instant,
    stop: Arc<AtomicBool>,
    stopped: bool,
    /// Evaluation weights.
    pub params: Params,
    /// Search features.
    pub features: Features,
}

impl<P: SearchPosition> Searcher<P> {
    /// A searcher with a table of `hash_mib` MiB.
    pub fn new(hash_mib: usize, params: Params) -> Self {
        Searcher {
            tt: TranspositionTable::new(hash_mib),
            pawns: PawnCache::new(),
            history: vec![0; 2 * HISTORY_SIZE],
            killers: vec![[None; 2]; MAX_PLY + 2],
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
            stopped: false,
            params,
            features: Features::default(),
        }
    }

    /// Resizes the table (clearing it).
    pub fn resize(&mut self, hash_mib: usize) {
        self.tt = TranspositionTable::new(hash_mib);
    }

    /// Forgets everything learnt: the next search depends only on its inputs.
    pub fn new_game(&mut self) {
        self.tt.clear();
        self.pawns.clear();
        self.history.iter_mut().for_each(|h| *h = 0);
        self.killers.iter_mut().for_each(|k| *k = [None; 2]);
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
        self.nodes = 0;
        self.stopped = false;
        self.tt.new_search();
        self.node_limit = limits.nodes.unwrap_or(u64::MAX);
        let budget = limits.budget(pos.turn());
        self.hard_deadline = budget.map(|b| self.start + b.hard);
        self.keys.clear();
        self.keys.extend_from_slice(history);
        for k in self.killers.iter_mut() {
            *k = [None; 2];
        }

        let mut pos = pos.clone();
        let root_moves = pos.legal_move_list();
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
            .unwrap_or(MAX_PLY as u32 - 8)
            .clamp(1, MAX_PLY as u32 - 8);
        let mut score = 0;
        for depth in 1..=max_depth {
            self.seldepth = 0;
            let d = depth as i32;
            let mut delta = 25;
            let (mut alpha, mut beta) = if self.features.aspiration && depth >= 4 {
                (score - delta, score + delta)
            } else {
                (-INF, INF)
            };
            let iteration_score = loop {
                let s = self.negamax(&mut pos, d, 0, alpha, beta, true);
                if self.stopped {
                    break s;
                }
                if s <= alpha {
                    beta = (alpha + beta) / 2;
                    alpha = (s - delta).max(-INF);
                } else if s >= beta {
                    beta = (s + delta).min(INF);
                } else {
                    break s;
                }
                delta += delta / 2;
            };
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
            score = iteration_score;
            result = SearchResult {
                best: self.pv[0].first().copied().or(result.best),
                score,
                depth,
                nodes: self.nodes,
                pv: self.pv[0].clone(),
            };
            on_info(&Info {
                depth,
                seldepth: self.seldepth as u32,
                score: Score::from_internal(score),
                nodes: self.nodes,
                elapsed: self.start.elapsed(),
                pv: result.pv.clone(),
                hashfull: self.tt.hashfull(),
            });
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
                if self.start.elapsed() >= b.soft * 6 / 10 {
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

    #[inline]
    fn check_stop(&mut self) {
        if self.nodes >= self.node_limit {
            self.stopped = true;
        } else if self.nodes & 1023 == 0 {
            if self.stop.load(Ordering::Relaxed) {
                self.stopped = true;
            } else if let Some(deadline) = self.hard_deadline {
                if Instant::now() >= deadline {
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

    fn history_index(pos: &P, mv: P::Move) -> usize {
        let info = pos.move_info(mv);
        pos.turn().index() * HISTORY_SIZE
            + P::square_index(info.from) * 128
            + P::square_index(info.to)
    }

    fn update_history(&mut self, idx: usize, bonus: i32) {
        let h = &mut self.history[idx];
        *h += bonus - *h * bonus.abs() / HISTORY_MAX;
    }

    /// Orders moves: table move, good captures and promotions by victim, killers, quiets by
    /// history, then captures that lose material.
    fn score_moves(
        &self,
        pos: &P,
        moves: &MoveList<P::Move>,
        tt_move: u32,
        ply: usize,
        scores: &mut [i32],
    ) {
        let killers = self.killers[ply];
        for (i, &mv) in moves.iter().enumerate() {
            scores[i] = if tt_move != 0 && P::move_code(mv) == tt_move {
                4_000_000
            } else {
                let info = pos.move_info(mv);
                if let Some(victim) = info.capture {
                    let mvv = see_value(victim, &self.params) * 8
                        - see_value(info.role, &self.params) / 8;
                    if pos.see_ge(mv, 0, &self.params) {
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
                } else if self.features.ordering {
                    self.history[Self::history_index(pos, mv)]
                } else {
                    0
                }
            };
        }
    }

    fn negamax(
        &mut self,
        pos: &mut P,
        mut depth: i32,
        ply: usize,
        mut alpha: i32,
        mut beta: i32,
        pv_node: bool,
    ) -> i32 {
        self.pv[ply].clear();
        if ply > 0 {
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
        let in_check = pos.in_check();
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

        let key = pos.key();
        let entry = self.tt.probe(key);
        let tt_move = entry.map_or(0, |e| e.mv);
        if let Some(e) = entry {
            if self.features.tt_cutoffs && !pv_node && i32::from(e.depth) >= depth {
                let s = score_from_tt(e.score, ply);
                match e.bound {
                    Bound::Exact => return s,
                    Bound::Lower if s >= beta => return s,
                    Bound::Upper if s <= alpha => return s,
                    _ => {}
                }
            }
        }

        let static_eval = if in_check {
            -INF
        } else {
            pos.evaluate(&self.params, &mut self.pawns)
        };
        if !pv_node
            && !in_check
            && self.features.pruning
            && depth <= 6
            && static_eval - 90 * depth >= beta
            && beta.abs() < MATE_BOUND
        {
            return static_eval;
        }
        if self.features.null_move
            && !pv_node
            && !in_check
            && depth >= 3
            && static_eval >= beta
            && ply > 0
            && pos.has_non_pawn_material()
        {
            let r = 3 + depth / 4;
            let undo = pos.make_null();
            self.keys.push(key);
            let s = -self.negamax(pos, depth - 1 - r, ply + 1, -beta, -beta + 1, false);
            self.keys.pop();
            pos.unmake_null(undo);
            if self.stopped {
                return 0;
            }
            if s >= beta {
                return if s >= MATE_BOUND { beta } else { s };
            }
        }

        let mut moves = MoveList::new();
        pos.legal_moves(&mut moves);
        if moves.is_empty() {
            return if in_check { -MATE + ply as i32 } else { 0 };
        }
        let mut scores = [0i32; crate::position::MAX_MOVES];
        self.score_moves(pos, &moves, tt_move, ply, &mut scores);

        let original_alpha = alpha;
        let mut best = -INF;
        let mut best_move: Option<P::Move> = None;
        let mut quiets_tried: MoveList<P::Move> = MoveList::new();
        for i in 0..moves.len() {
            let n = moves.len();
            let mv = pick_next(&mut moves[..], &mut scores[..n], i);
            let info = pos.move_info(mv);
            let quiet = info.capture.is_none() && info.promotion.is_none();

            if self.features.pruning
                && !pv_node
                && !in_check
                && quiet
                && depth <= 3
                && i > 3 + (depth * depth * 2) as usize
                && best > -MATE_BOUND
            {
                continue;
            }

            let undo = pos.make_move(mv);
            self.keys.push(key);
            let gives_check = pos.in_check();
            let new_depth = depth - 1;
            let score = if i == 0 {
                -self.negamax(pos, new_depth, ply + 1, -beta, -alpha, pv_node)
            } else {
                let mut reduction = 0;
                if self.features.lmr
                    && depth >= 3
                    && quiet
                    && !in_check
                    && !gives_check
                    && i >= if pv_node { 4 } else { 2 }
                {
                    reduction = lmr_reduction(depth, i);
                    if pv_node {
                        reduction -= 1;
                    }
                    if scores[i] > 0 {
                        reduction -= 1;
                    }
                    reduction = reduction.clamp(0, new_depth - 1);
                }
                let mut s = -self.negamax(
                    pos,
                    new_depth - reduction,
                    ply + 1,
                    -alpha - 1,
                    -alpha,
                    false,
                );
                if s > alpha && reduction > 0 {
                    s = -self.negamax(pos, new_depth, ply + 1, -alpha - 1, -alpha, false);
                }
                if s > alpha && s < beta && pv_node {
                    s = -self.negamax(pos, new_depth, ply + 1, -beta, -alpha, true);
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
                        if quiet && self.features.ordering {
                            let k = &mut self.killers[ply];
                            if k[0] != Some(mv) {
                                k[1] = k[0];
                                k[0] = Some(mv);
                            }
                            let bonus = (depth * depth).min(1200);
                            self.update_history(Self::history_index(pos, mv), bonus);
                            for &q in &quiets_tried {
                                self.update_history(Self::history_index(pos, q), -bonus);
                            }
                        }
                        break;
                    }
                }
            }
            if quiet {
                quiets_tried.push(mv);
            }
        }
        let bound = if best >= beta {
            Bound::Lower
        } else if alpha > original_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        self.tt.store(
            key,
            best_move.map_or(0, P::move_code),
            score_to_tt(best, ply),
            depth,
            bound,
        );
        best
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
        let in_check = pos.in_check();
        let mut best = -INF;
        if !in_check {
            best = pos.evaluate(&self.params, &mut self.pawns);
            if best >= beta || ply >= MAX_PLY {
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
            return pos.evaluate(&self.params, &mut self.pawns);
        }
        let mut scores = [0i32; crate::position::MAX_MOVES];
        let mut n = 0;
        for i in 0..moves.len() {
            let info = pos.move_info(moves[i]);
            let tactical = info.capture.is_some()
                || info.promotion.is_some_and(|r| {
                    see_value(r, &self.params) >= see_value(crate::types::Role::Queen, &self.params)
                });
            if in_check || (tactical && pos.see_ge(moves[i], 0, &self.params)) {
                moves.swap(n, i);
                scores[n] = info.capture.map_or(0, |v| see_value(v, &self.params) * 8)
                    - see_value(info.role, &self.params) / 8
                    + info.promotion.map_or(0, |p| see_value(p, &self.params));
                n += 1;
            }
        }
        for i in 0..n {
            let mv = pick_next(&mut moves[..n], &mut scores[..n], i);
            let undo = pos.make_move(mv);
            let score = -self.qsearch(pos, ply + 1, -beta, -alpha);
            pos.unmake_move(mv, undo);
            if self.stopped {
                return 0;
            }
            if score > best {
                best = score;
                if score > alpha {
                    alpha = score;
                    if score >= beta {
                        break;
                    }
                }
            }
        }
        best
    }
}

/// Selection sort, one step: moves the best-scored move from `i` on to `i` and returns it.
/// Lazy, because most nodes cut off after the first few moves.
#[inline]
fn pick_next<M: Copy>(moves: &mut [M], scores: &mut [i32], i: usize) -> M {
    let mut j = i;
    for k in i + 1..moves.len() {
        if scores[k] > scores[j] {
            j = k;
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
