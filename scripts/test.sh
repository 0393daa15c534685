#!/usr/bin/env bash
# The project's test command (README), and exactly what CI's .ci/run calls: formatting, lints
# as errors, then every test of the workspace optimised (the perft suites and the
# engine-playing tests need it), in the `ci` profile: release without LTO.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
cargo test --workspace --profile ci
