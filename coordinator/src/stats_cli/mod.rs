//! `coordinator stats ...`: the user-facing statistics commands.

mod check;
mod counts;
mod elo;

use crate::cli::Outcome;
use clap::{Args, Subcommand};

pub use check::CheckArgs;
pub use elo::EloArgs;

/// Arguments of `coordinator stats`.
#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Which statistics command.
    #[command(subcommand)]
    pub command: StatsCommand,
}

/// Statistics commands.
#[derive(Debug, Subcommand)]
pub enum StatsCommand {
    /// Elo, LOS, nElo and (with --elo0/--elo1) the SPRT of a match, like fishtest's
    /// calculator.
    Elo(EloArgs),
    /// Recompute every figure of fishtest reference-vector files and report mismatches.
    Check(CheckArgs),
}

/// Run a statistics command.
pub fn run(args: StatsArgs) -> anyhow::Result<Outcome> {
    match args.command {
        StatsCommand::Elo(a) => elo::run(&a),
        StatsCommand::Check(a) => check::run(&a),
    }
}
