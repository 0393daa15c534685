//! The `engine` binary: a UCI engine when started without arguments; perft, bench, EPD
//! suites, the tunable parameters and the fit of the learned square tables as subcommands.

mod cli;
mod fit_args;
mod net_cli;
mod tune_cli;
mod weights_cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
