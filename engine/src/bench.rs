//! `engine bench`: a fixed list of positions from every variant searched to a fixed depth with
//! a fresh table each. Its total node count is the engine's signature: a change of it is a
//! change of behaviour.

use std::time::{Duration, Instant};

use cpu_time::ThreadTime;

use crate::dispatch::{with_search_position, WithSearchPosition};
use crate::error::FenError;
use crate::eval::SearchPosition;
use crate::params::Params;
use crate::search::{Limits, Searcher};
use crate::variant::{Rules, Variant};

/// The bench positions: variant, rule-set, FEN.
pub const POSITIONS: &[(&str, &str, &str)] = &[
    (
        "chess",
        "normal",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    ),
    (
        "chess",
        "normal",
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    ),
    (
        "chess",
        "normal",
        "r1b1k2r/p2p1p2/npp1pp1Q/1Nb5/6Pp/1P3B2/P1P1PP1P/R3K1NR w KQkq - 2 13",
    ),
    (
        "chess",
        "normal",
        "2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - 0 1",
    ),
    (
        "chess",
        "normal",
        "8/7p/5k2/5p2/p1p2P2/Pr1pPK2/1P1R3P/8 b - - 0 1",
    ),
    (
        "chess",
        "normal",
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    ),
    (
        "latte",
        "normal",
        "rrnqknrr/nbbppbbn/ppp2ppp/8/8/PPP2PPP/NBBPPBBN/RRNQKNRR w KQkq - 0 1",
    ),
    (
        "latte",
        "both",
        "rrnqknrr/nbbppbbn/ppp2ppp/8/8/PPP2PPP/NBBPPBBN/RRNQKNRR w KQGBkqgb - 0 1",
    ),
    (
        "latte",
        "both",
        "rr2k1rr/nqbppbbn/pp2nppp/1Q1B4/1pNP2P1/P1P1nPNP/NB3BBN/RR2K1RR b KQGBkqgb - 0 15",
    ),
    (
        "latte",
        "luft",
        "rr1qk1rr/nbbppbbn/pppnnppp/8/1P3P2/P1P1N1PP/NBBPPBBN/RRNQK1RR b KQGBkqgb - 0 3",
    ),
    (
        "latte",
        "normal",
        "rr1qknrr/nbb1p1bP/pp1p1pp1/1np1N3/8/PPP1PbP1/1BBPQBBN/RRN1KNRR w KQkq - 0 10",
    ),
    (
        "secutor",
        "extended",
        "srnbqkbnrs/*pppppppp*/*8*/*8*/*8*/*8*/*PPPPPPPP*/SRNBQKBNRS w KQkq - 0 1",
    ),
    (
        "secutor",
        "orthodox",
        "srnbqk1nrs/*2p5*/*3ppp1b*/*1P5P*/*4PB1P*/*2PP4*/*P7*/SRN1QKBNRS w KQkq - 0 12",
    ),
    (
        "secutor",
        "extended",
        "s2bk1b2s/*3P1r2*/*1r6*/*3pnqP1*/*p2Pp1Pp*/*N2Q1p1N*/*2B5*/SR3K2RS w KQ - 2 32",
    ),
    (
        "secutor",
        "extended",
        "3b2bn2/*1p1pk2r*/*2p3p1*/*S6p*/*P7*/*RP3K1P*/*2P1P1P1*/1s3QBNR1 b - - 0 22",
    ),
];

/// The default bench depth.
pub const DEFAULT_DEPTH: u32 = 13;

/// One bench line.
#[derive(Debug, Clone)]
pub struct BenchLine {
    /// Variant/rule-set.
    pub rules: Rules,
    /// Nodes the leading thread searched (with one thread, the signature's).
    pub nodes: u64,
    /// CPU time of the searching thread in the search: on a machine busy with other work (an
    /// SPRT's games, a build) wall time counts the waits for a core, and two builds benched
    /// one after the other would differ by the load, not the code. The fresh table's pages
    /// are touched before the clock starts: their zeroing is a game's once, not a search's.
    pub cpu: Duration,
    /// Nodes of every thread (`nodes` with one).
    pub all_nodes: u64,
    /// Wall-clock time to the depth: what more threads shorten (CPU time cannot show it).
    pub wall: Duration,
}

/// One position's search with a fresh searcher, its tables touched before the clock starts.
/// The table sits on huge pages, so the first touch of each 2 MiB zeroes all of it: 16 MiB a
/// position, 1 to 4 ms against searches of 11 to 70 ms on the 8x8 board, which a game pays
/// once, not at each move. Stockfish's bench likewise leaves its `ucinewgame` (the table's
/// clearing) out of the time.
struct Run<'a> {
    fen: &'a str,
    depth: u32,
    params: &'a Params,
    /// Search threads: the leader and its Lazy SMP helpers.
    threads: usize,
}

impl WithSearchPosition for Run<'_> {
    type Output = Result<BenchLine, FenError>;
    fn run<P: SearchPosition>(self, rules: Rules) -> Self::Output {
        let pos = P::from_fen(rules, self.fen)?;
        let mut searcher = Searcher::<P>::new(16, self.params.clone());
        // Writes every table's memory (already zero: the search's result is the same).
        searcher.new_game();
        let mut helpers: Vec<Searcher<P>> = (1..self.threads).map(|_| searcher.helper()).collect();
        let limits = Limits {
            depth: Some(self.depth),
            ..Limits::default()
        };
        let wall = Instant::now();
        let start = ThreadTime::now();
        let (result, helper_nodes) =
            searcher.search_with_helpers(&mut helpers, &pos, &[], &limits, |_| {});
        let (nodes, cpu) = (result.nodes, start.elapsed());
        Ok(BenchLine {
            rules,
            nodes,
            cpu,
            all_nodes: nodes + helper_nodes,
            wall: wall.elapsed(),
        })
    }
}

/// Searches every bench position to `depth`.
pub fn run(depth: u32, params: &Params) -> Result<Vec<BenchLine>, crate::error::FenError> {
    run_variant(depth, params, None)
}

/// Searches the bench positions of `only` (every variant's with `None`) to `depth`: one
/// board's figures, or a profile of one variant's search, without the others'.
pub fn run_variant(
    depth: u32,
    params: &Params,
    only: Option<Variant>,
) -> Result<Vec<BenchLine>, crate::error::FenError> {
    run_threads(depth, params, only, 1)
}

/// [`run_variant`] with `threads` search threads per position (UCI `Threads`): the leader's
/// nodes are then no signature (the threads race for the table), the wall time to the depth
/// is the figure to compare with one thread's.
pub fn run_threads(
    depth: u32,
    params: &Params,
    only: Option<Variant>,
    threads: usize,
) -> Result<Vec<BenchLine>, crate::error::FenError> {
    let mut out = Vec::new();
    for &(variant, ruleset, fen) in POSITIONS {
        let rules = Rules::parse(variant, Some(ruleset))?;
        if only.is_some_and(|v| v != rules.variant()) {
            continue;
        }
        let run = Run {
            fen,
            depth,
            params,
            threads: threads.max(1),
        };
        out.push(with_search_position(rules, run)?);
    }
    Ok(out)
}
