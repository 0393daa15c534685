#!/usr/bin/env bash
# The project's test command (README), and exactly what CI's .ci/run calls: formatting, lints
# as errors, then every test of the workspace in release mode (the perft suites and the
# engine-playing tests need optimised code).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
cargo test --workspace --release
