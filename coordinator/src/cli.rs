//! Command line of the `coordinator` binary.
//!
//! Exit status: 0 on success, 1 when a check finds mismatches, 2 on bad input (clap's usage
//! errors use 2 as well), with the message on stderr as `error: ...`.

use crate::stats_cli::{self, StatsArgs};
use clap::{Parser, Subcommand};
use std::io::Write;
use std::process::ExitCode;

/// Distributed engine testing and tuning: coordinator.
#[derive(Debug, Parser)]
#[command(name = "coordinator", version, about, propagate_version = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Top-level commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Statistics: Elo/nElo/SPRT calculator and the fishtest vector checker.
    Stats(StatsArgs),
    /// Run the coordinator server.
    Serve(crate::cli_cluster::ServeArgs),
    /// Manage runs over gRPC (needs an admin token).
    Run(crate::cli_cluster::RunArgs),
    /// Manage tokens in the database file.
    Token(crate::cli_cluster::TokenArgs),
    /// Run a plan on this machine: a local coordinator, local workers, reports at the end.
    Local(crate::local::LocalArgs),
    /// Load-test a coordinator child process with simulated workers; check what it stored.
    BenchLoad(crate::bench_load::BenchLoadArgs),
}

/// What a command produced: text for stdout and the exit status.
#[derive(Debug)]
pub struct Outcome {
    /// Text for stdout.
    pub stdout: String,
    /// Exit status.
    pub code: u8,
}

/// Run a parsed command line. Errors are bad input (exit status 2).
pub fn run(cli: Cli) -> anyhow::Result<Outcome> {
    match cli.command {
        Command::Stats(args) => stats_cli::run(args),
        Command::Serve(args) => crate::cli_cluster::serve(args),
        Command::Run(args) => crate::cli_cluster::run(args),
        Command::Token(args) => crate::cli_cluster::token(args),
        Command::Local(args) => crate::local::run(args),
        Command::BenchLoad(args) => crate::bench_load::run(args),
    }
}

/// Parse the process arguments, run, print, and turn the result into an exit status.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // clap prints `error: ...` with usage and exits 2 (0 for --help/--version).
        Err(e) => e.exit(),
    };
    match run(cli) {
        Ok(out) => {
            let mut stdout = std::io::stdout().lock();
            // A closed pipe (`| head`) is not an error worth reporting.
            let _ = stdout.write_all(out.stdout.as_bytes());
            let _ = stdout.flush();
            ExitCode::from(out.code)
        }
        Err(e) => {
            eprintln!("error: {}", engine::error::chain_message(e.as_ref()));
            ExitCode::from(2)
        }
    }
}
