//! The `coordinator` binary: everything lives in the library, see `coordinator::cli`.
#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    coordinator::cli::main()
}
