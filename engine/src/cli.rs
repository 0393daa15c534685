//! Command-line edge of the engine: argument parsing, printing, exit codes.
//! Exit status 0 on success, 1 when a check fails (a perft mismatch), 2 on bad input.

use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};

use engine::dispatch::{with_position, WithPosition};
use engine::params::{specs_for, spsa_lines, Params};
use engine::perft::{divide, perft};
use engine::search::Limits;
use engine::suite::{check_record, parse_records, Record};
use engine::{Position, Rules, Variant};
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "engine",
    version,
    about = "Chess, Latte Chess and Secutor Chess engine"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Count the leaves of the legal move tree of one position.
    Perft(PerftArgs),
    /// Check every record of perft files in JSON Lines format.
    PerftSuite {
        /// The .jsonl files.
        #[arg(required = true)]
        files: Vec<String>,
        /// Worker threads (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
        /// Skip records with more nodes than this.
        #[arg(long)]
        max_nodes: Option<u64>,
    },
    /// Time perft on fixed positions of every variant and rule-set (bulk-counted last ply).
    PerftBench {
        /// Run only the benchmark lines whose name contains this text.
        #[arg(long)]
        filter: Option<String>,
    },
    /// Search fixed positions of every variant to a fixed depth: prints the node signature
    /// and the nodes per CPU second of the searching thread.
    Bench {
        /// Depth.
        #[arg(default_value_t = engine::bench::DEFAULT_DEPTH)]
        depth: u32,
        /// Search only this variant's positions (chess, latte or secutor): its figures, or a
        /// profile of its search, alone. The node total is then not the engine's signature.
        #[arg(long)]
        variant: Option<Variant>,
        /// Search threads per position (UCI `Threads`: the leader and Lazy SMP helpers):
        /// prints the wall time to the depth instead of the signature, to compare with
        /// `--threads 1`'s. With more than one the node total is not the engine's signature.
        #[arg(long, value_parser = clap::value_parser!(u16).range(1..=256))]
        threads: Option<u16>,
    },
    /// List the tunable evaluation and search parameters of a variant.
    Params {
        /// chess, latte or secutor.
        #[arg(long, default_value = "chess")]
        variant: String,
        /// json (name, default, min, max, c_end, r_end, scope: `all`, `board8` or `secutor`)
        /// or spsa (fishtest lines).
        #[arg(long, default_value = "json")]
        format: String,
    },
    /// Fit the learned piece-square table to labelled positions (Texel's method).
    TuneSquares(crate::tune_cli::TuneArgs),
    /// Fit the evaluation's named weights to labelled positions (Texel's method).
    TuneWeights(crate::weights_cli::WeightsArgs),
    /// Fit the evaluation's small network to labelled positions.
    TuneNet(crate::net_cli::NetArgs),
    /// Write a built-in network (chess's, Latte's) as a network file (the UCI option
    /// EvalFile reads one).
    ExportNet(crate::net_cli::ExportArgs),
    /// Make a network file the built-in network of its game: writes its Rust source
    /// (engine/src/board8/tables/<variant>_net.rs) for the next build.
    ImportNet(crate::net_cli::ImportArgs),
    /// Run an EPD test suite with bm/am opcodes and report solved / total.
    Epd {
        /// The .epd file.
        file: String,
        /// Milliseconds per position.
        #[arg(long)]
        movetime: Option<u64>,
        /// Nodes per position (deterministic).
        #[arg(long)]
        nodes: Option<u64>,
        /// Depth per position.
        #[arg(long)]
        depth: Option<u32>,
        /// Variant for lines without a `variant` opcode.
        #[arg(long, default_value = "chess")]
        variant: String,
        /// Rule-set for lines without a `ruleset` opcode.
        #[arg(long)]
        ruleset: Option<String>,
        /// Hash per search in MiB.
        #[arg(long, default_value_t = 64)]
        hash: usize,
        /// Positions searched at once (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
        /// Print every position's result, not only the failures.
        #[arg(long)]
        verbose: bool,
    },
}

#[derive(Args)]
struct PerftArgs {
    /// chess, latte or secutor.
    #[arg(long, default_value = "chess")]
    variant: String,
    /// The rule-set (default: the variant's default).
    #[arg(long)]
    ruleset: Option<String>,
    /// A FEN; otherwise the start position.
    #[arg(long, conflicts_with = "startpos")]
    fen: Option<String>,
    /// Use the start position (the default when no FEN is given).
    #[arg(long)]
    startpos: bool,
    /// Plies.
    #[arg(long)]
    depth: u32,
    /// Print the count after each root move.
    #[arg(long)]
    divide: bool,
}

/// Runs the CLI and maps errors to exit status 2.
pub(crate) fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Perft(args)) => run_perft(args),
        Some(Command::PerftSuite {
            files,
            threads,
            max_nodes,
        }) => run_suite(&files, threads, max_nodes),
        Some(Command::PerftBench { filter }) => run_bench(filter.as_deref()),
        Some(Command::Bench {
            depth,
            variant,
            threads,
        }) => run_search_bench(depth, variant, threads.map(usize::from)),
        Some(Command::Params { variant, format }) => run_params(&variant, &format),
        Some(Command::TuneSquares(args)) => crate::tune_cli::run(&args),
        Some(Command::TuneWeights(args)) => crate::weights_cli::run(&args),
        Some(Command::TuneNet(args)) => crate::net_cli::run(&args),
        Some(Command::ExportNet(args)) => crate::net_cli::export(&args),
        Some(Command::ImportNet(args)) => crate::net_cli::import(&args),
        Some(Command::Epd {
            file,
            movetime,
            nodes,
            depth,
            variant,
            ruleset,
            hash,
            threads,
            verbose,
        }) => {
            let limits = Limits {
                movetime: movetime.map(Duration::from_millis),
                nodes,
                depth,
                ..Limits::default()
            };
            if limits.movetime.is_none() && limits.nodes.is_none() && limits.depth.is_none() {
                eprintln!(
                    "error: give a limit per position: --movetime MS, --nodes N or --depth D"
                );
                return ExitCode::from(2);
            }
            Rules::parse(&variant, ruleset.as_deref())
                .map_err(anyhow::Error::from)
                .and_then(|rules| run_epd(&file, rules, &limits, hash, threads, verbose))
        }
        None => {
            engine::uci::run_stdio();
            Ok(ExitCode::SUCCESS)
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", engine::error::chain_message(e.as_ref()));
            ExitCode::from(2)
        }
    }
}

struct PerftJob {
    fen: Option<String>,
    depth: u32,
    divide: bool,
}

impl WithPosition for PerftJob {
    type Output = Result<()>;
    fn run<P: Position>(self, rules: Rules) -> Result<()> {
        let mut pos = match &self.fen {
            Some(fen) => P::from_fen(rules, fen)?,
            None => P::startpos(rules)?,
        };
        let start = Instant::now();
        let nodes = if self.divide {
            let split = divide(&mut pos, self.depth);
            for (mv, n) in &split {
                println!("{mv}: {n}");
            }
            println!();
            split.iter().map(|(_, n)| n).sum()
        } else {
            perft(&mut pos, self.depth)
        };
        let secs = start.elapsed().as_secs_f64();
        println!("nodes {nodes}");
        println!(
            "time {:.3} s, {:.1} Mnps",
            secs,
            nodes as f64 / secs.max(1e-9) / 1e6
        );
        Ok(())
    }
}

fn run_perft(args: PerftArgs) -> Result<ExitCode> {
    let rules = Rules::parse(&args.variant, args.ruleset.as_deref())?;
    with_position(
        rules,
        PerftJob {
            fen: args.fen,
            depth: args.depth,
            divide: args.divide,
        },
    )?;
    Ok(ExitCode::SUCCESS)
}

fn run_suite(files: &[String], threads: Option<usize>, max_nodes: Option<u64>) -> Result<ExitCode> {
    let mut records: Vec<(String, usize, Record)> = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).with_context(|| format!("cannot read {file}"))?;
        let parsed = parse_records(&text).with_context(|| format!("in {file}"))?;
        records.extend(parsed.into_iter().map(|(line, r)| (file.clone(), line, r)));
    }
    let skipped = records.len();
    records.retain(|(_, _, r)| max_nodes.is_none_or(|m| r.nodes <= m));
    let skipped = skipped - records.len();
    // Largest first, so the long lines do not end up last on one thread.
    records.sort_by_key(|(_, _, r)| std::cmp::Reverse(r.nodes));

    let threads = threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let next = AtomicUsize::new(0);
    let passed = AtomicUsize::new(0);
    let failures: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let errors: Mutex<Vec<anyhow::Error>> = Mutex::new(Vec::new());
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((file, line, r)) = records.get(i) else {
                    break;
                };
                match check_record(r, *line) {
                    Ok(c) if c.passed(r) => {
                        passed.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(c) => {
                        let mut msg = format!(
                            "FAIL {file}:{line} {} {} {} depth {}: expected {}, got {}\n  fen {}",
                            r.id, r.variant, r.ruleset, r.depth, r.nodes, c.nodes, r.fen
                        );
                        for (mv, want, got) in &c.differences {
                            let show =
                                |x: &Option<u64>| x.map_or("-".to_string(), |n| n.to_string());
                            msg.push_str(&format!(
                                "\n  {mv}: expected {}, got {}",
                                show(want),
                                show(got)
                            ));
                        }
                        println!("{msg}");
                        failures.lock().unwrap_or_else(|p| p.into_inner()).push(msg);
                    }
                    Err(e) => errors
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push(anyhow::Error::new(e).context(format!("in {file}"))),
                }
            });
        }
    });
    let errors = errors.into_inner().unwrap_or_else(|p| p.into_inner());
    if let Some(e) = errors.into_iter().next() {
        return Err(e);
    }
    let failed = failures
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .len();
    let passed = passed.into_inner();
    eprintln!(
        "{:.1} s on {threads} threads{}",
        start.elapsed().as_secs_f64(),
        if skipped > 0 {
            format!(", {skipped} records over --max-nodes skipped")
        } else {
            String::new()
        }
    );
    println!("{passed} passed, {failed} failed");
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The benchmark lines of the perft goal: name, variant, rule-set, FEN (None: start), depth.
const BENCH: &[(&str, &str, &str, Option<&str>, u32)] = &[
    ("chess start", "chess", "normal", None, 6),
    (
        "chess kiwipete",
        "chess",
        "normal",
        Some("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"),
        5,
    ),
    ("latte start normal", "latte", "normal", None, 5),
    ("latte start luft", "latte", "luft", None, 5),
    ("latte start tworooks", "latte", "tworooks", None, 5),
    ("latte start both", "latte", "both", None, 5),
    ("latte start normal", "latte", "normal", None, 6),
    ("secutor start extended", "secutor", "extended", None, 6),
    ("secutor start orthodox", "secutor", "orthodox", None, 5),
    (
        "secutor middlegame",
        "secutor",
        "extended",
        Some("s1n2kb1rs/*r4npp*/*1pp1b1N1*/*P2pp3*/*1Q1P1pPq*/*P6P*/*2PBPP2*/SRN2KB1RS w k - 0 16"),
        5,
    ),
];

struct BenchJob<'a>(Option<&'a str>, u32);

impl WithPosition for BenchJob<'_> {
    type Output = Result<(u64, f64)>;
    fn run<P: Position>(self, rules: Rules) -> Self::Output {
        let mut pos = match self.0 {
            Some(fen) => P::from_fen(rules, fen)?,
            None => P::startpos(rules)?,
        };
        let start = cpu_time();
        let nodes = perft(&mut pos, self.1);
        Ok((nodes, cpu_time() - start))
    }
}

/// CPU seconds of this process: fair on a shared machine, where wall time is not.
fn cpu_time() -> f64 {
    cpu_time::ProcessTime::now().as_duration().as_secs_f64()
}

fn run_bench(filter: Option<&str>) -> Result<ExitCode> {
    engine::board8::attacks::init();
    println!(
        "{:<26} {:>14} {:>9} {:>9}",
        "position", "nodes", "cpu s", "Mnps"
    );
    let (mut total_nodes, mut total_secs) = (0u64, 0.0);
    // (nodes, seconds) of the 8x8 board (chess, Latte) and of the Gustavian one (Secutor).
    let mut boards = [(0u64, 0.0f64); 2];
    for &(name, variant, ruleset, fen, depth) in BENCH {
        if filter.is_some_and(|f| !name.contains(f)) {
            continue;
        }
        let rules = Rules::parse(variant, Some(ruleset))?;
        let (nodes, secs) = with_position(rules, BenchJob(fen, depth))?;
        if secs < 0.0 {
            bail!("CPU clock went backwards");
        }
        println!(
            "{:<26} {:>14} {:>9.2} {:>9.1}",
            format!("{name} d{depth}"),
            nodes,
            secs,
            nodes as f64 / secs.max(0.01) / 1e6
        );
        total_nodes += nodes;
        total_secs += secs;
        let board = &mut boards[usize::from(variant == "secutor")];
        board.0 += nodes;
        board.1 += secs;
    }
    let mnps = |(nodes, secs): (u64, f64)| nodes as f64 / secs.max(0.01) / 1e6;
    if boards.iter().all(|b| b.0 > 0) {
        // The two boards side by side from one run, as a ratio (machines are noisy).
        println!(
            "8x8 {:.1} Mnps, Gustavian {:.1} Mnps: ratio {:.2}",
            mnps(boards[0]),
            mnps(boards[1]),
            mnps(boards[1]) / mnps(boards[0])
        );
    }
    println!(
        "{total_nodes} nodes {:.0} nps",
        total_nodes as f64 / total_secs.max(0.01)
    );
    Ok(ExitCode::SUCCESS)
}

fn run_search_bench(
    depth: u32,
    variant: Option<Variant>,
    threads: Option<usize>,
) -> Result<ExitCode> {
    engine::board8::attacks::init();
    let lines =
        engine::bench::run_threads(depth, &Params::default(), variant, threads.unwrap_or(1))?;
    if let Some(threads) = threads {
        print_threaded_bench(&lines, threads);
        return Ok(ExitCode::SUCCESS);
    }
    let (mut nodes, mut secs) = (0u64, 0.0);
    for (i, l) in lines.iter().enumerate() {
        println!(
            "position {:>2} {:<18} nodes {:>10} cpu {:>7.3} s",
            i + 1,
            l.rules.to_string(),
            l.nodes,
            l.cpu.as_secs_f64()
        );
        nodes += l.nodes;
        secs += l.cpu.as_secs_f64();
    }
    // Speed per variant: the boards differ (u64 against u128 bitboards, the Secutor's
    // collisions), so one total hides which board got faster or slower.
    for (v, n, t) in by_variant(&lines, |l| (l.nodes, l.cpu)) {
        println!(
            "variant {:<8} nodes {n:>10} {:.0} nps",
            v.id(),
            n as f64 / t.max(1e-6)
        );
    }
    println!("{nodes} nodes {:.0} nps", nodes as f64 / secs.max(1e-6));
    Ok(ExitCode::SUCCESS)
}

/// Bench lines summed per variant, in the order the variants first appear: the nodes and
/// seconds `figures` reads off each line.
fn by_variant(
    lines: &[engine::bench::BenchLine],
    figures: impl Fn(&engine::bench::BenchLine) -> (u64, Duration),
) -> Vec<(Variant, u64, f64)> {
    let mut per_variant: Vec<(Variant, u64, f64)> = Vec::new();
    for l in lines {
        let (v, (n, t)) = (l.rules.variant(), figures(l));
        match per_variant.iter_mut().find(|(x, _, _)| *x == v) {
            Some(e) => {
                e.1 += n;
                e.2 += t.as_secs_f64();
            }
            None => per_variant.push((v, n, t.as_secs_f64())),
        }
    }
    per_variant
}

/// The figures of a bench with several threads: wall time to the depth per position and per
/// variant, and the nodes of every thread per wall second.
fn print_threaded_bench(lines: &[engine::bench::BenchLine], threads: usize) {
    for (i, l) in lines.iter().enumerate() {
        println!(
            "position {:>2} {:<18} nodes {:>10} (all threads) wall {:>7.3} s",
            i + 1,
            l.rules.to_string(),
            l.all_nodes,
            l.wall.as_secs_f64()
        );
    }
    let per_variant = by_variant(lines, |l| (l.all_nodes, l.wall));
    for (v, n, t) in &per_variant {
        println!(
            "variant {:<8} wall {t:>7.3} s to the depth, {:.0} nps over {threads} threads",
            v.id(),
            *n as f64 / t.max(1e-6)
        );
    }
    let wall: f64 = per_variant.iter().map(|e| e.2).sum();
    let signature = if threads == 1 {
        "the signature: engine bench without --threads"
    } else {
        "not a signature: the threads race"
    };
    println!("{threads} threads: {wall:.3} s to the depth ({signature})");
}

fn run_params(variant: &str, format: &str) -> Result<ExitCode> {
    let variant: Variant = variant.parse()?;
    match format {
        "spsa" => print!("{}", spsa_lines(variant)),
        "json" => {
            let list: Vec<serde_json::Value> = specs_for(variant)
                .map(|s| {
                    serde_json::json!({
                        "name": s.name, "default": s.default, "min": s.min, "max": s.max,
                        "c_end": s.c_end, "r_end": s.r_end, "scope": s.scope.id(),
                    })
                })
                .collect();
            println!("{}", serde_json::to_string_pretty(&list)?);
        }
        other => bail!("unknown format {other:?} (expected json or spsa)"),
    }
    Ok(ExitCode::SUCCESS)
}

fn run_epd(
    file: &str,
    rules: Rules,
    limits: &Limits,
    hash: usize,
    threads: Option<usize>,
    verbose: bool,
) -> Result<ExitCode> {
    let text = std::fs::read_to_string(file).with_context(|| format!("cannot read {file}"))?;
    let records = engine::epd::parse(&text).with_context(|| format!("in {file}"))?;
    let params = Params::default();
    let threads = threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let next = AtomicUsize::new(0);
    let results = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(rec) = records.get(i) else { break };
                let r = engine::epd::solve(rec, rules, limits, &params, hash);
                results
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push((i, r));
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_else(|p| p.into_inner());
    results.sort_by_key(|(i, _)| *i);
    let mut solved = 0;
    for (i, r) in results {
        let o = r.with_context(|| format!("in {file}"))?;
        let rec = &records[i];
        if o.solved {
            solved += 1;
        }
        if verbose || !o.solved {
            println!(
                "{} {} {}: played {}, expected {}{}",
                if o.solved { "ok  " } else { "FAIL" },
                o.id,
                rec.fen,
                o.played,
                rec.best.join(" "),
                if rec.avoid.is_empty() {
                    String::new()
                } else {
                    format!(", avoid {}", rec.avoid.join(" "))
                }
            );
        }
    }
    println!("solved {solved} / {}", records.len());
    Ok(ExitCode::SUCCESS)
}
