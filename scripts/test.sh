#!/usr/bin/env bash
# The project's test command (README), and exactly what CI's .ci/run calls: formatting, lints
# as errors, then every test of the workspace optimised (the perft suites and the
# engine-playing tests need it), in the `ci` profile: release without LTO.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
# The engine changes waiting for their SPRT (engine/pending) must still apply to this tree
# and build with it.
bash scripts/check-pending.sh
cargo clippy --workspace --all-targets -- -D warnings
# Doc comments are read as documentation: a link to nothing, or to what the reader cannot
# see, is an error too.
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet
cargo test --workspace --profile ci
# What deploy/ ships, checked against the real schemas and validators, then a run across
# network namespaces with TLS, a lossy link and a cut one (root only; skipped with a message
# otherwise). Both use the binaries the tests just built (integration tests build their
# package's binaries); built here only if missing, since a plain build unifies features
# differently and would compile the workspace again.
if [ ! -x target/ci/coordinator ] || [ ! -x target/ci/worker ]; then
    cargo build --workspace --profile ci --bins
fi
bash deploy/tests/validate.sh target/ci
bash deploy/tests/multihost.sh target/ci
