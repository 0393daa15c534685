//! The `worker` command line: `match`, `book`, `bench-games` and `positions`.
//!
//! Bad input (an unknown variant, a bad parameters file or engine spec, a missing book, an
//! engine that does not start) is reported as `error: ...` naming the problem, with exit
//! status 2.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use engine::Rules;

use crate::adjudication::{Adjudication, DrawRule, ResignRule};
use crate::bench::{bench_games, BenchConfig};
use crate::book::{generate, Book, BookConfig};
use crate::error::WorkerError;
use crate::limits::TimeControl;
use crate::matches::{default_concurrency, run_match, InOrder, MatchConfig, Tally};
use crate::pgn::PgnOptions;
use crate::player::spec::read_params_file;
use crate::player::PlayerSpec;
use crate::runner::GameConfig;

#[derive(Parser, Debug)]
#[command(
    name = "worker",
    version,
    about = "Engine-vs-engine games for chess, Latte Chess and Secutor Chess"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    cluster: crate::cluster::ClusterArgs,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Play a match of opening pairs between two players and report W/D/L, pentanomial, Elo.
    Match(Box<MatchArgs>),
    /// Generate an opening book: random plies, then a short search keeps balanced positions.
    Book(BookArgs),
    /// Games per minute in process against the same match through the engine's UCI binary.
    BenchGames(BenchArgs),
    /// Labelled positions (`FEN [result]`) from PGN games, for `engine tune-squares`.
    Positions(PositionsArgs),
    /// Positions relabelled by an engine's evaluation (`FEN [p]`), for `engine tune-squares`.
    Label(LabelArgs),
}

#[derive(Args, Debug)]
struct LabelArgs {
    #[command(flatten)]
    rules: RulesArgs,
    /// `FEN [result]` lines (what `worker positions` writes).
    #[arg(long)]
    positions: PathBuf,
    /// Output file: the same lines, each labelled `[p]` by the engine.
    #[arg(long)]
    out: PathBuf,
    /// The engine that labels: `cmd=/usr/games/stockfish,option.Hash=16` or our engine
    /// (`internal`), as `worker match --engine1` takes it.
    #[arg(long, default_value = "internal")]
    engine: String,
    /// Nodes searched per position.
    #[arg(long, conflicts_with = "depth")]
    nodes: Option<u64>,
    /// Depth searched per position (instead of nodes).
    #[arg(long)]
    depth: Option<u32>,
    /// Centipawns per factor of ten in the odds, `p = 1 / (1 + 10^(-cp / scale))`.
    #[arg(long, default_value_t = 400.0)]
    scale: f64,
    /// The engine's share of each label; the game's result has the rest.
    #[arg(long, default_value_t = 1.0)]
    lambda: f64,
    /// Engines searching at once (default: every core).
    #[arg(long)]
    concurrency: Option<usize>,
}

#[derive(Args, Debug)]
struct PositionsArgs {
    #[command(flatten)]
    rules: RulesArgs,
    /// PGN files (games under other rules are skipped).
    #[arg(long, required = true)]
    pgn: Vec<PathBuf>,
    /// Plies from each game's start that are never kept (the book's, not the players').
    #[arg(long, default_value_t = 8)]
    skip_plies: usize,
    /// Instead of each kept position, write one 1 to WALK random legal moves off it (not in
    /// check, no winning capture or promotion to play), unlabelled, for `worker label` to
    /// score: the positions a search meets besides the game's own line.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=40))]
    walk: Option<u16>,
    /// The seed of the walks (with each game's number: the same files and seed write the
    /// same positions).
    #[arg(long, default_value_t = 1, requires = "walk")]
    walk_seed: u64,
    /// Output file.
    #[arg(long)]
    out: PathBuf,
}

#[derive(Args, Debug)]
struct RulesArgs {
    /// chess, latte or secutor.
    #[arg(long, default_value = "latte")]
    variant: String,
    /// Rule-set (the variant's default when omitted).
    #[arg(long)]
    ruleset: Option<String>,
}

impl RulesArgs {
    fn rules(&self) -> Result<Rules, WorkerError> {
        Ok(Rules::parse(&self.variant, self.ruleset.as_deref())?)
    }
}

#[derive(Args, Debug)]
struct MatchArgs {
    #[command(flatten)]
    rules: RulesArgs,
    /// Games to play (rounded up to whole pairs).
    #[arg(long, default_value_t = 200)]
    games: u64,
    /// Nodes per move.
    #[arg(long, conflicts_with_all = ["depth", "movetime", "tc"])]
    nodes: Option<u64>,
    /// Depth per move.
    #[arg(long, conflicts_with_all = ["movetime", "tc"])]
    depth: Option<u32>,
    /// Seconds per move.
    #[arg(long, conflicts_with = "tc")]
    movetime: Option<f64>,
    /// Clock: BASE+INC in seconds (e.g. 10+0.1), or nodes=N, depth=N, movetime=S.
    #[arg(long)]
    tc: Option<String>,
    /// Games at once (default: all cores).
    #[arg(long)]
    concurrency: Option<usize>,
    /// Write the games here, in pair order.
    #[arg(long)]
    pgn: Option<PathBuf>,
    /// Write one JSON pair result per line here.
    #[arg(long)]
    results: Option<PathBuf>,
    /// First player (the one whose results are reported): `internal` (default) or
    /// `cmd=PATH,option.NAME=VALUE,...`; either may add `name=`, `hash=`, `params=FILE` and
    /// `net=FILE` (a network file: our engine evaluates with it; a UCI engine gets it as
    /// `EvalFile`).
    #[arg(long, default_value = "internal")]
    engine1: String,
    /// Second player.
    #[arg(long, default_value = "internal")]
    engine2: String,
    /// Parameters of the first player: `name=value` lines or a JSON object.
    #[arg(long)]
    params1: Option<PathBuf>,
    /// Parameters of the second player.
    #[arg(long)]
    params2: Option<PathBuf>,
    /// Opening book (default: the one shipped for the variant and rule-set).
    #[arg(long)]
    book: Option<PathBuf>,
    /// Seed of the opening order.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Resign adjudication: `movecount=N,score=CP` or `off`.
    #[arg(long, default_value = "movecount=3,score=600")]
    resign: String,
    /// Draw adjudication: `movenumber=M,movecount=N,score=CP` or `off`.
    #[arg(long, default_value = "movenumber=34,movecount=8,score=20")]
    draw: String,
    /// Maximum game length in moves of each side (a draw).
    #[arg(long)]
    maxmoves: Option<u32>,
    /// Milliseconds an answer may come after a timed deadline without losing.
    #[arg(long, default_value_t = 50)]
    time_margin: u64,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

#[derive(Args, Debug)]
struct BookArgs {
    #[command(flatten)]
    rules: RulesArgs,
    /// Positions wanted.
    #[arg(long, default_value_t = 300)]
    count: usize,
    /// Random stream seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Nodes of the checking search.
    #[arg(long, default_value_t = 5000)]
    nodes: u64,
    /// Fewest random plies.
    #[arg(long, default_value_t = 6)]
    min_plies: u32,
    /// Most random plies.
    #[arg(long, default_value_t = 9)]
    max_plies: u32,
    /// Largest absolute score kept (centipawns).
    #[arg(long, default_value_t = 100)]
    max_score: i32,
    /// Output file (default: standard output).
    #[arg(long, conflicts_with = "out_dir")]
    out: Option<PathBuf>,
    /// One book per rule-set of the variant into this folder (`VARIANT-RULESET.epd`), all with
    /// the same positions (random plies that never castle): the books a study compares
    /// rule-sets on.
    #[arg(long)]
    out_dir: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct BenchArgs {
    #[command(flatten)]
    rules: RulesArgs,
    /// The engine's UCI binary.
    #[arg(long, default_value = "target/release/engine")]
    engine: PathBuf,
    /// Node counts to measure, comma-separated.
    #[arg(long, default_value = "1000,10000", value_delimiter = ',')]
    nodes: Vec<u64>,
    /// Games per measurement (rounded up to pairs).
    #[arg(long, default_value_t = 40)]
    games: u64,
    /// Games at once (default: all cores).
    #[arg(long)]
    concurrency: Option<usize>,
}

/// Runs the command line; returns the process exit status.
pub fn main() -> ExitCode {
    init_tracing();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    ExitCode::SUCCESS
                }
                _ => ExitCode::from(2),
            };
        }
    };
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn init_tracing() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}

fn run(cli: Cli) -> Result<(), WorkerError> {
    let Some(command) = cli.command else {
        return crate::cluster::run_cli(cli.cluster);
    };
    match command {
        Command::Match(a) => run_match_command(*a),
        Command::Book(a) => run_book(a),
        Command::Positions(a) => run_positions(a),
        Command::Label(a) => run_label(a),
        Command::BenchGames(a) => {
            let rules = a.rules.rules()?;
            let config = BenchConfig {
                rules,
                engine: a.engine,
                nodes: a.nodes,
                games: a.games,
                concurrency: a.concurrency.unwrap_or_else(default_concurrency),
            };
            let rows = bench_games(&config, |line| println!("{line}"))?;
            println!("{}", crate::bench::table(&rows));
            Ok(())
        }
    }
}

/// Parses `key=value,...` into pairs, refusing keys not in `allowed`.
fn key_values(what: &str, text: &str, allowed: &[&str]) -> Result<Vec<(String, i64)>, WorkerError> {
    let bad = |detail: String| WorkerError::Invalid(format!("bad --{what} {text:?}: {detail}"));
    text.split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|item| {
            let (k, v) = item
                .split_once('=')
                .ok_or_else(|| bad(format!("{item:?} is not key=value")))?;
            let k = k.trim();
            if !allowed.contains(&k) {
                return Err(bad(format!(
                    "unknown key {k:?} (expected {})",
                    allowed.join(", ")
                )));
            }
            let v: i64 = v
                .trim()
                .parse()
                .ok()
                .filter(|v| *v >= 0)
                .ok_or_else(|| bad(format!("{k} {v:?} is not a non-negative integer")))?;
            Ok((k.to_string(), v))
        })
        .collect()
}

fn to_u32(v: i64) -> u32 {
    v.clamp(0, i64::from(u32::MAX)) as u32
}

fn parse_resign(text: &str) -> Result<Option<ResignRule>, WorkerError> {
    if text.trim() == "off" {
        return Ok(None);
    }
    let mut rule = ResignRule {
        move_count: 3,
        score: 600,
    };
    for (k, v) in key_values("resign", text, &["movecount", "score"])? {
        match k.as_str() {
            "movecount" => rule.move_count = to_u32(v).max(1),
            _ => rule.score = v.min(100_000) as i32,
        }
    }
    Ok(Some(rule))
}

fn parse_draw(text: &str) -> Result<Option<DrawRule>, WorkerError> {
    if text.trim() == "off" {
        return Ok(None);
    }
    let mut rule = DrawRule {
        move_number: 34,
        move_count: 8,
        score: 20,
    };
    for (k, v) in key_values("draw", text, &["movenumber", "movecount", "score"])? {
        match k.as_str() {
            "movenumber" => rule.move_number = to_u32(v),
            "movecount" => rule.move_count = to_u32(v).max(1),
            _ => rule.score = v.min(100_000) as i32,
        }
    }
    Ok(Some(rule))
}

fn player(
    spec: &str,
    params: Option<&Path>,
    default_name: &str,
) -> Result<PlayerSpec, WorkerError> {
    let mut p = PlayerSpec::parse(spec, default_name)?;
    if let Some(path) = params {
        let entries = read_params_file(path)?;
        p.apply_params(path, &entries)?;
        if matches!(p, PlayerSpec::Internal(_)) && !spec.contains("name=") {
            if let Some(stem) = path.file_stem() {
                p.set_name(stem.to_string_lossy().into_owned());
            }
        }
    }
    Ok(p)
}

fn create(path: &Path) -> Result<BufWriter<File>, WorkerError> {
    File::create(path)
        .map(BufWriter::new)
        .map_err(|source| WorkerError::Output {
            path: path.to_path_buf(),
            source,
        })
}

/// The limit of `--nodes N` or `--depth D`, checked as a `--tc nodes=N` / `depth=D` is
/// (zero nodes, or a depth outside 1..=100, is refused); `None` when neither is given.
/// Clap keeps the two options apart, so `nodes` wins only in a call from code.
fn node_or_depth(
    nodes: Option<u64>,
    depth: Option<u32>,
) -> Result<Option<TimeControl>, WorkerError> {
    match (nodes, depth) {
        (Some(n), _) => Ok(Some(format!("nodes={n}").parse()?)),
        (None, Some(d)) => Ok(Some(format!("depth={d}").parse()?)),
        (None, None) => Ok(None),
    }
}

/// Why the second game of each pair will repeat the first move for move, if it will: our
/// engine against itself under a limit that leaves no room for chance. A user generating
/// training games that way gets half the games they paid for (`worker positions` drops the
/// repeats), and a match's intervals count each game twice.
fn replayed_pairs(players: &[PlayerSpec; 2], tc: TimeControl) -> Option<String> {
    let fixed = match tc {
        TimeControl::Nodes(n) => format!("{n} nodes"),
        TimeControl::Depth(d) => format!("depth {d}"),
        TimeControl::MoveTime(_) | TimeControl::Clock { .. } => return None,
    };
    players[0].same_engine(&players[1]).then(|| {
        format!(
            "both players are our engine with the same parameters at a fixed {fixed} a move, \
             where its search is deterministic: each pair's second game repeats its first move \
             for move. For distinct games, give the players different parameters (e.g. \
             --params2 with Tempo one off) or a clock (--tc)."
        )
    })
}

fn run_match_command(a: MatchArgs) -> Result<(), WorkerError> {
    let rules = a.rules.rules()?;
    let tc = if let Some(tc) = node_or_depth(a.nodes, a.depth)? {
        tc
    } else if let Some(t) = a.movetime {
        format!("movetime={t}").parse()?
    } else if let Some(tc) = &a.tc {
        tc.parse()?
    } else {
        TimeControl::Nodes(5000)
    };
    let mut players = [
        player(&a.engine1, a.params1.as_deref(), "engine1")?,
        player(&a.engine2, a.params2.as_deref(), "engine2")?,
    ];
    if players[0].name() == players[1].name() {
        let n = format!("{}#2", players[1].name());
        players[1].set_name(n);
    }
    let book = match &a.book {
        Some(path) => Book::load(path, rules)?,
        None => Book::builtin(rules)?,
    };
    let mut game = GameConfig::new(tc);
    game.adjudication = Adjudication {
        resign: parse_resign(&a.resign)?,
        draw: parse_draw(&a.draw)?,
        max_moves: a.maxmoves,
    };
    game.time_margin = Duration::from_millis(a.time_margin);
    let concurrency = a.concurrency.unwrap_or_else(default_concurrency);
    if concurrency == 0 {
        return Err(WorkerError::Invalid(
            "--concurrency must be at least 1".into(),
        ));
    }
    let pairs = a.games.div_ceil(2).max(1);
    let mut pgn_out = a.pgn.as_deref().map(create).transpose()?;
    let mut json_out = a.results.as_deref().map(create).transpose()?;
    let names = [players[0].name().to_string(), players[1].name().to_string()];
    let config = MatchConfig {
        rules,
        book,
        pairs,
        players,
        game,
        concurrency,
        seed: a.seed,
        pgn: pgn_out.as_ref().map(|_| PgnOptions {
            event: format!("{} {} {}", names[0], names[1], rules),
            ..PgnOptions::default()
        }),
    };
    eprintln!(
        "{} vs {}: {} games of {} at {}, {} at once, book {} ({} positions)",
        names[0],
        names[1],
        pairs * 2,
        rules,
        tc,
        concurrency,
        config.book.name,
        config.book.positions.len()
    );

    if let Some(note) = replayed_pairs(&config.players, config.game.tc) {
        eprintln!("note: {note}");
    }

    let bar = if a.quiet {
        indicatif::ProgressBar::hidden()
    } else {
        let bar = indicatif::ProgressBar::new(pairs * 2);
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "{bar:30} {pos}/{len} games  {msg}  [{elapsed_precise}<{eta_precise}]",
        ) {
            bar.set_style(style);
        }
        bar
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(WorkerError::Runtime)?;
    let stop = Arc::new(AtomicBool::new(false));
    let mut order = InOrder::default();
    let mut write_error: Option<WorkerError> = None;
    let mut live = Tally::default();
    let out_path = a
        .pgn
        .clone()
        .or_else(|| a.results.clone())
        .unwrap_or_default();
    let result = runtime.block_on(async {
        let flag = Arc::clone(&stop);
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                flag.store(true, Ordering::Relaxed);
                eprintln!("\nstopping after the running pairs; Ctrl-C again aborts");
                if tokio::signal::ctrl_c().await.is_ok() {
                    crate::player::uci::kill_all_engines();
                    std::process::exit(130);
                }
            }
        });
        run_match(config, Arc::clone(&stop), |pair| {
            live.add(pair);
            bar.set_position(live.games());
            bar.set_message(live.short_line());
            for p in order.push(pair.clone()) {
                if let Err(source) = write_pair(&p, pgn_out.as_mut(), json_out.as_mut()) {
                    stop.store(true, Ordering::Relaxed);
                    write_error.get_or_insert(WorkerError::Output {
                        path: out_path.clone(),
                        source,
                    });
                }
            }
        })
        .await
    });
    bar.finish_and_clear();
    // After a stop, pairs beyond a gap are still worth keeping.
    for p in order.drain() {
        write_pair(&p, pgn_out.as_mut(), json_out.as_mut()).map_err(|source| {
            WorkerError::Output {
                path: out_path.clone(),
                source,
            }
        })?;
    }
    for (out, path) in [(pgn_out.as_mut(), &a.pgn), (json_out.as_mut(), &a.results)] {
        if let (Some(w), Some(path)) = (out, path) {
            w.flush().map_err(|source| WorkerError::Output {
                path: path.clone(),
                source,
            })?;
        }
    }
    runtime.shutdown_timeout(Duration::from_secs(1));
    let tally = result?;
    if let Some(e) = write_error {
        return Err(e);
    }
    print!("{}", tally.report([&names[0], &names[1]]));
    Ok(())
}

fn write_pair(
    pair: &crate::record::PairResult,
    pgn: Option<&mut BufWriter<File>>,
    json: Option<&mut BufWriter<File>>,
) -> std::io::Result<()> {
    if let (Some(w), Some(text)) = (pgn, &pair.pgn) {
        w.write_all(text.as_bytes())?;
    }
    if let Some(w) = json {
        let mut slim = pair.clone();
        slim.pgn = None;
        let line = serde_json::to_string(&slim).map_err(std::io::Error::other)?;
        writeln!(w, "{line}")?;
    }
    Ok(())
}

fn run_positions(a: PositionsArgs) -> Result<(), WorkerError> {
    let filter = crate::positions::Filter {
        rules: a.rules.rules()?,
        skip_plies: a.skip_plies,
        walk: a.walk.map(|plies| crate::positions::Walk {
            max_plies: plies.into(),
            seed: a.walk_seed,
        }),
    };
    let output = |source| WorkerError::Output {
        path: a.out.clone(),
        source,
    };
    let mut out = BufWriter::new(File::create(&a.out).map_err(output)?);
    let mut tally = crate::positions::Tally::default();
    let mut seen = crate::positions::SeenGames::default();
    for path in &a.pgn {
        let text = std::fs::read_to_string(path)
            .map_err(|e| WorkerError::Invalid(format!("cannot read {}: {e}", path.display())))?;
        let games = crate::pgn::read(&text)
            .map_err(|e| WorkerError::Invalid(format!("{}: {e}", path.display())))?;
        crate::positions::write_positions(&games, 1, filter, &mut seen, &mut out, &mut tally)
            .map_err(|e| WorkerError::Invalid(format!("{}: {e}", path.display())))?;
    }
    out.flush().map_err(output)?;
    println!(
        "{} positions from {} games ({} skipped: other rules or unfinished; {} repeating an \
         earlier game move for move) written to {}",
        tally.positions,
        tally.games,
        tally.skipped_games,
        tally.repeated_games,
        a.out.display()
    );
    if let Some(plies) = a.walk {
        println!(
            "each a walk of 1 to {plies} random moves off a game's position, unlabelled \
             ({} positions given up after {} walks): score them with `worker label`",
            tally.unwalked,
            crate::positions::WALK_TRIES
        );
    }
    if tally.repeated_games > 0 {
        // The data a user meant to collect is halved: say why and how to get it whole.
        println!(
            "note: an engine playing itself at fixed nodes or depth plays each pair's second \
             game as its first; for distinct games make the players differ a little, e.g. \
             `worker match --params2 p2.txt` with `Tempo=19` in p2.txt"
        );
    }
    Ok(())
}

fn run_label(a: LabelArgs) -> Result<(), WorkerError> {
    let tc = node_or_depth(a.nodes, a.depth)?.unwrap_or(TimeControl::Nodes(20_000));
    let mut config = crate::label::LabelConfig::new(a.rules.rules()?, tc);
    config.scale = a.scale;
    config.lambda = a.lambda;
    config.concurrency = a.concurrency.unwrap_or_else(default_concurrency);
    let engine = player(&a.engine, None, "labeller")?;
    let open = || {
        File::open(&a.positions)
            .map(std::io::BufReader::new)
            .map_err(|e| {
                WorkerError::Invalid(format!("cannot read {}: {e}", a.positions.display()))
            })
    };
    // The whole file is read once before any engine starts or any output is written: a bad
    // line is named at once, not after hours of labelling the lines before it.
    config
        .check()
        .map_err(|e| WorkerError::Invalid(e.to_string()))?;
    crate::label::check_input(open()?, &config)
        .map_err(|e| WorkerError::Invalid(format!("{}: {e}", a.positions.display())))?;
    let input = open()?;
    let mut out = create(&a.out)?;
    let tally = crate::label::label(input, &mut out, &engine, &config)
        .map_err(|e| WorkerError::Invalid(format!("{}: {e}", a.positions.display())))?;
    println!(
        "{} positions labelled by {} at {} ({} scored as mates) written to {}",
        tally.positions,
        engine.name(),
        tc,
        tally.mates,
        a.out.display()
    );
    Ok(())
}

fn run_book(a: BookArgs) -> Result<(), WorkerError> {
    let rules = a.rules.rules()?;
    let mut config = BookConfig::new(rules, a.count, a.seed);
    config.nodes = a.nodes.max(1);
    config.min_plies = a.min_plies;
    config.max_plies = a.max_plies;
    config.max_score = a.max_score;
    if let Some(dir) = &a.out_dir {
        for (r, positions) in crate::book::generate_shared(&config)? {
            let mut text = format!(
                "# {r} opening book: {} positions shared by every {} rule-set (random plies \
                 that never castle), {}-{} random plies, |score| <= {} cp at {} nodes, seed {}\n",
                a.count,
                r.variant().id(),
                a.min_plies,
                a.max_plies,
                a.max_score,
                config.nodes,
                a.seed
            );
            for p in &positions {
                text.push_str(p);
                text.push('\n');
            }
            let path = dir.join(crate::book::builtin_name(r));
            std::fs::write(&path, text).map_err(|source| WorkerError::Output { path, source })?;
        }
        return Ok(());
    }
    let positions = generate(&config)?;
    let mut text = format!(
        "# {} opening book: {} positions, {}-{} random plies, |score| <= {} cp at {} nodes, seed {}\n",
        rules, a.count, a.min_plies, a.max_plies, a.max_score, config.nodes, a.seed
    );
    for p in &positions {
        text.push_str(p);
        text.push('\n');
    }
    match &a.out {
        Some(path) => std::fs::write(path, text).map_err(|source| WorkerError::Output {
            path: path.clone(),
            source,
        })?,
        None => print!("{text}"),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_or_depth_are_checked_as_a_time_control_is() {
        assert_eq!(
            node_or_depth(Some(5000), None).expect("nodes"),
            Some(TimeControl::Nodes(5000))
        );
        assert_eq!(
            node_or_depth(None, Some(12)).expect("depth"),
            Some(TimeControl::Depth(12))
        );
        assert_eq!(node_or_depth(None, None).expect("neither"), None);
        for (nodes, depth, named) in [
            (Some(0), None, "nodes=0"),
            (None, Some(0), "depth=0"),
            (None, Some(101), "depth=101"),
        ] {
            let e = node_or_depth(nodes, depth).expect_err(named).to_string();
            assert!(e.contains(named), "{named}: {e}");
        }
    }
}
