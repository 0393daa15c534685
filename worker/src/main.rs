//! The `worker` binary: see `worker::cli`.

fn main() -> std::process::ExitCode {
    worker::cli::main()
}
