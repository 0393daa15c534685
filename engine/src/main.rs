//! The `engine` binary: perft tools now, UCI later (with no arguments).

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
