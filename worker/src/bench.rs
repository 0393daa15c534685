//! `bench-games`: games per minute with our engine in process against the same match with the
//! engine's UCI binary driven as an external engine by the same runner.
//!
//! Both runs play the same openings at the same fixed nodes with the same adjudication, so
//! they play the same games move for move (the engine is deterministic at fixed nodes): the
//! difference in time is exactly the cost of processes, pipes and the text protocol.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use engine::Rules;

use crate::book::Book;
use crate::error::WorkerError;
use crate::limits::TimeControl;
use crate::matches::{run_match, MatchConfig};
use crate::player::{PlayerSpec, UciSpec};
use crate::record::PairResult;
use crate::runner::GameConfig;

/// What to measure.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    /// Variant and rule-set.
    pub rules: Rules,
    /// The engine's UCI binary.
    pub engine: PathBuf,
    /// Node counts per move.
    pub nodes: Vec<u64>,
    /// Games per measurement.
    pub games: u64,
    /// Games at once.
    pub concurrency: usize,
}

/// One measurement.
#[derive(Clone, Debug)]
pub struct BenchRow {
    /// Nodes per move.
    pub nodes: u64,
    /// Games played by each run.
    pub games: u64,
    /// Wall time in process.
    pub in_process: Duration,
    /// Wall time through UCI.
    pub uci: Duration,
    /// CPU time (this process) in process.
    pub in_process_cpu: Duration,
    /// CPU time (this process and the engine processes) through UCI.
    pub uci_cpu: Duration,
    /// Whether both runs played the same moves in every game.
    pub same_games: bool,
}

impl BenchRow {
    fn per_minute(games: u64, d: Duration) -> f64 {
        games as f64 * 60.0 / d.as_secs_f64().max(1e-9)
    }
}

fn cpu_time() -> Duration {
    use nix::sys::resource::{getrusage, UsageWho};
    let mut total = Duration::ZERO;
    for who in [UsageWho::RUSAGE_SELF, UsageWho::RUSAGE_CHILDREN] {
        if let Ok(u) = getrusage(who) {
            for tv in [u.user_time(), u.system_time()] {
                total += Duration::from_secs(tv.tv_sec().max(0) as u64)
                    + Duration::from_micros(tv.tv_usec().max(0) as u64);
            }
        }
    }
    total
}

fn run(config: MatchConfig) -> Result<(Vec<PairResult>, Duration, Duration), WorkerError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(WorkerError::Runtime)?;
    let cpu = cpu_time();
    let start = Instant::now();
    let mut pairs = Vec::new();
    runtime.block_on(run_match(config, Arc::new(AtomicBool::new(false)), |p| {
        pairs.push(p.clone())
    }))?;
    let wall = start.elapsed();
    // The engine processes were reaped when their sessions ended: their time is in.
    let cpu = cpu_time().saturating_sub(cpu);
    pairs.sort_by_key(|p| p.pair_index);
    Ok((pairs, wall, cpu))
}

/// Runs the benchmark, reporting progress lines to `progress`.
pub fn bench_games(
    config: &BenchConfig,
    mut progress: impl FnMut(&str),
) -> Result<Vec<BenchRow>, WorkerError> {
    if !config.engine.is_file() {
        return Err(WorkerError::EngineStart {
            name: "engine".into(),
            detail: format!(
                "{} does not exist; build it with `cargo build --release -p engine`",
                config.engine.display()
            ),
        });
    }
    let book = Book::builtin(config.rules)?;
    let pairs = config.games.div_ceil(2).max(1);
    let mut rows = Vec::new();
    for &nodes in &config.nodes {
        let base = |players: [PlayerSpec; 2]| MatchConfig {
            rules: config.rules,
            book: book.clone(),
            pairs,
            players,
            game: GameConfig::new(TimeControl::Nodes(nodes)),
            concurrency: config.concurrency,
            seed: 1,
            pgn: None,
        };
        progress(&format!(
            "{nodes} nodes: {} games in process ...",
            pairs * 2
        ));
        let (a, in_process, in_process_cpu) = run(base([
            PlayerSpec::internal("engine"),
            PlayerSpec::internal("engine#2"),
        ]))?;
        progress(&format!(
            "{nodes} nodes: {} games through UCI ...",
            pairs * 2
        ));
        let uci = |name: &str| {
            let mut u = UciSpec::new(name, &config.engine);
            u.options.push((
                "Hash".into(),
                crate::player::spec::DEFAULT_HASH_MIB.to_string(),
            ));
            PlayerSpec::Uci(u)
        };
        let (b, uci_wall, uci_cpu) = run(base([uci("engine"), uci("engine#2")]))?;
        let same_games = a.len() == b.len()
            && a.iter().zip(&b).all(|(x, y)| {
                x.games.iter().zip(&y.games).all(|(g, h)| {
                    g.moves
                        .iter()
                        .map(|m| &m.uci)
                        .eq(h.moves.iter().map(|m| &m.uci))
                })
            });
        rows.push(BenchRow {
            nodes,
            games: pairs * 2,
            in_process,
            uci: uci_wall,
            in_process_cpu,
            uci_cpu,
            same_games,
        });
    }
    Ok(rows)
}

/// The results as a table: wall-clock games per minute (depends on what else the machine
/// runs) and CPU seconds per game with the games per minute one core gives at that cost (does
/// not).
pub fn table(rows: &[BenchRow]) -> String {
    let mut out = String::from(
        "nodes  games | wall games/min: in-process    UCI  ratio | CPU s/game: in-process    UCI | games/min per core: in-process    UCI  ratio | same games\n",
    );
    for r in rows {
        let a = BenchRow::per_minute(r.games, r.in_process);
        let b = BenchRow::per_minute(r.games, r.uci);
        let ca = r.in_process_cpu.as_secs_f64() / r.games as f64;
        let cb = r.uci_cpu.as_secs_f64() / r.games as f64;
        let (pa, pb) = (60.0 / ca.max(1e-9), 60.0 / cb.max(1e-9));
        out.push_str(&format!(
            "{:<6} {:<5} | {:>26.1} {:>6.1} {:>5.2}x | {:>22.4} {:>6.4} | {:>30.1} {:>6.1} {:>5.2}x | {}\n",
            r.nodes,
            r.games,
            a,
            b,
            a / b.max(1e-9),
            ca,
            cb,
            pa,
            pb,
            pa / pb.max(1e-9),
            if r.same_games { "yes" } else { "no" }
        ));
    }
    out
}
