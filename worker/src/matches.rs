//! A match: many opening pairs played concurrently, results streamed as pairs finish.
//!
//! Each of `concurrency` slots is a blocking thread (`spawn_blocking`) owning one
//! [`PairSession`] (its two players, started once); slots take the next pair index from a
//! shared counter and send each [`PairResult`] to the async side through a channel. Pair `i`
//! always plays opening `order[i % len]` of the book shuffled by the seed, and in-process
//! players are deterministic at fixed nodes or depth, so a seed's games do not depend on
//! which slot plays them or when.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use engine::Rules;
use stats::results::{GameResult as StatsGameResult, Pentanomial, Results, Trinomial};
use tokio::sync::mpsc;

use crate::book::Book;
use crate::error::WorkerError;
use crate::pair::PairSession;
use crate::pgn::PgnOptions;
use crate::player::PlayerSpec;
use crate::record::PairResult;
use crate::runner::GameConfig;
use crate::usage::{self, Usage};

/// A match's settings.
#[derive(Clone, Debug)]
pub struct MatchConfig {
    /// Variant and rule-set.
    pub rules: Rules,
    /// Openings.
    pub book: Book,
    /// Pairs to play (two games each).
    pub pairs: u64,
    /// The players; results are the first player's.
    pub players: [PlayerSpec; 2],
    /// Limits and adjudication.
    pub game: GameConfig,
    /// Games played at once.
    pub concurrency: usize,
    /// Opening order and the seed recorded with each pair.
    pub seed: u64,
    /// PGN tags, when PGN is wanted.
    pub pgn: Option<PgnOptions>,
}

/// The number of cores, the default concurrency.
pub fn default_concurrency() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Running totals of a match from the first player's view.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Win/draw/loss counts.
    pub trinomial: Trinomial,
    /// Pair counts.
    pub pentanomial: Pentanomial,
    /// Games by termination id.
    pub terminations: BTreeMap<String, u64>,
    /// How each player (first, second) spent its clock and searched.
    pub usage: [Usage; 2],
}

impl Tally {
    /// Counts a finished pair.
    pub fn add(&mut self, pair: &PairResult) {
        for r in pair.first_player_results() {
            match r {
                StatsGameResult::Win => self.trinomial.wins += 1,
                StatsGameResult::Draw => self.trinomial.draws += 1,
                StatsGameResult::Loss => self.trinomial.losses += 1,
            }
        }
        self.pentanomial.add(pair.score());
        for g in &pair.games {
            *self
                .terminations
                .entry(g.termination.id().to_string())
                .or_default() += 1;
        }
        usage::add_pair(&mut self.usage, pair);
    }

    /// Games counted.
    pub fn games(&self) -> u64 {
        self.trinomial.games()
    }

    /// Logistic Elo from the pair counts, with its 95% interval (`None` before any pair).
    pub fn elo(&self) -> Option<stats::EloEstimate> {
        stats::logistic_elo(&Results::Pentanomial(self.pentanomial)).ok()
    }

    /// Normalised Elo from the pair counts.
    pub fn nelo(&self) -> Option<stats::NeloEstimate> {
        stats::normalized_elo(&Results::Pentanomial(self.pentanomial)).ok()
    }

    /// A short line for progress displays.
    pub fn short_line(&self) -> String {
        let t = self.trinomial;
        match self.elo() {
            Some(e) => format!(
                "Elo {:+.1} ± {:.1}  W {} D {} L {}",
                e.elo, e.elo95, t.wins, t.draws, t.losses
            ),
            None => format!("W {} D {} L {}", t.wins, t.draws, t.losses),
        }
    }

    /// The final report.
    pub fn report(&self, names: [&str; 2]) -> String {
        let t = self.trinomial;
        let p = self.pentanomial.counts();
        let mut out = format!(
            "Results of {} vs {} ({} games)\n\
             W/D/L: {} / {} / {}\n\
             Ptnml(0-2): [{}, {}, {}, {}, {}]\n",
            names[0],
            names[1],
            self.games(),
            t.wins,
            t.draws,
            t.losses,
            p[0],
            p[1],
            p[2],
            p[3],
            p[4]
        );
        if let Some(e) = self.elo() {
            out.push_str(&format!(
                "Elo: {:+.2} ± {:.2} (95%: [{:+.2}, {:+.2}]), LOS: {:.1}%\n",
                e.elo,
                e.elo95,
                e.ci[0],
                e.ci[1],
                e.los * 100.0
            ));
        }
        if let Some(n) = self.nelo() {
            out.push_str(&format!(
                "nElo: {:+.2} (95%: [{:+.2}, {:+.2}])\n",
                n.nelo, n.ci[0], n.ci[1]
            ));
        }
        let terms: Vec<String> = self
            .terminations
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        out.push_str(&format!("Terminations: {}\n", terms.join(", ")));
        out.push_str(&usage::report(&self.usage, names));
        out
    }
}

/// Plays the match, calling `on_pair` with each pair as it finishes (in finishing order).
/// Setting `stop` lets running pairs finish and starts no new ones. An engine that cannot be
/// started, or a book position that is not legal, ends the match with an error.
pub async fn run_match(
    config: MatchConfig,
    stop: Arc<AtomicBool>,
    mut on_pair: impl FnMut(&PairResult),
) -> Result<Tally, WorkerError> {
    if config.book.positions.is_empty() {
        return Err(WorkerError::EmptyBook(config.book.name.clone()));
    }
    let order = Arc::new(config.book.order(config.seed));
    let next = Arc::new(AtomicU64::new(0));
    let slots = config.concurrency.max(1).min(config.pairs.max(1) as usize);
    let (tx, mut rx) = mpsc::channel::<Result<PairResult, WorkerError>>(slots * 2);
    let config = Arc::new(config);
    let mut handles = Vec::with_capacity(slots);
    for slot in 0..slots {
        let (tx, config, order, next, stop) = (
            tx.clone(),
            Arc::clone(&config),
            Arc::clone(&order),
            Arc::clone(&next),
            Arc::clone(&stop),
        );
        handles.push(tokio::task::spawn_blocking(move || {
            let mut session = match PairSession::new(config.rules, &config.players) {
                Ok(s) => s,
                Err(e) => {
                    let _ = tx.blocking_send(Err(e));
                    return;
                }
            };
            tracing::debug!(slot, "slot ready");
            while !stop.load(Ordering::Relaxed) {
                let index = next.fetch_add(1, Ordering::Relaxed);
                if index >= config.pairs {
                    break;
                }
                let opening = &config.book.positions[order[(index % order.len() as u64) as usize]];
                let result = session.play_pair(
                    index,
                    config.seed,
                    opening,
                    &config.game,
                    config.pgn.as_ref(),
                );
                let failed = result.is_err();
                if tx.blocking_send(result).is_err() || failed {
                    break;
                }
            }
        }));
    }
    drop(tx);
    let mut tally = Tally::default();
    let mut error = None;
    while let Some(result) = rx.recv().await {
        match result {
            Ok(pair) => {
                tally.add(&pair);
                on_pair(&pair);
            }
            Err(e) => {
                stop.store(true, Ordering::Relaxed);
                error.get_or_insert(e);
            }
        }
    }
    for h in handles {
        // A panicking slot is a bug; its pairs are missing from the tally, the rest stands.
        if let Err(e) = h.await {
            tracing::error!(error = %e, "match slot panicked");
        }
    }
    match error {
        Some(e) => Err(e),
        None => Ok(tally),
    }
}

/// Writes pairs in index order as they arrive out of order: keeps the ones that arrive early
/// until the gap before them is filled, so output does not depend on thread timing.
#[derive(Debug, Default)]
pub struct InOrder {
    next: u64,
    waiting: BTreeMap<u64, PairResult>,
}

impl InOrder {
    /// Takes a pair and returns the pairs now ready, in index order.
    pub fn push(&mut self, pair: PairResult) -> Vec<PairResult> {
        self.waiting.insert(pair.pair_index, pair);
        let mut ready = Vec::new();
        while let Some(p) = self.waiting.remove(&self.next) {
            ready.push(p);
            self.next += 1;
        }
        ready
    }

    /// Pairs still waiting for a gap (after a stop, the ones after a missing index).
    pub fn drain(&mut self) -> Vec<PairResult> {
        std::mem::take(&mut self.waiting).into_values().collect()
    }
}
