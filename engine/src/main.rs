//! The `engine` binary: a UCI engine when started without arguments; perft, bench, EPD
//! suites and the tunable parameters as subcommands.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
