#!/usr/bin/env bash
# An SPRT of an engine change against a base revision, as this project keeps its engine
# changes: both builds come from clean worktrees of this repository (the working tree is never
# touched), then `coordinator local` plays examples/sprt-engines.toml (or the plan given) with
# them as the external engines `patch` and `master`.
#
#   scripts/sprt-patch.sh engine/pending/hanging.patch          # a patch file, on HEAD
#   scripts/sprt-patch.sh my-branch                             # a revision
#   scripts/sprt-patch.sh my-branch --base v1 --plan my.toml -- --workers 1
#
# Each build prints its bench signature first: a patch meant to change nothing but speed must
# show the base's. Arguments after `--` go to `coordinator local` (e.g. `--scale 0.1`).
set -euo pipefail
usage() {
    echo "usage: $0 PATCH-FILE|REVISION [--base REVISION] [--plan PLAN.toml] [-- coordinator-local-args]" >&2
    exit 2
}
[ $# -ge 1 ] || usage
change=$1
shift
base=HEAD
root=$(cd "$(dirname "$0")/.." && pwd)
plan=$root/examples/sprt-engines.toml
while [ $# -gt 0 ]; do
    case $1 in
    --base) [ $# -ge 2 ] || usage; base=$2; shift 2 ;;
    --plan) [ $# -ge 2 ] || usage; plan=$(realpath "$2"); shift 2 ;;
    --) shift; break ;;
    *) usage ;;
    esac
done
[ -f "$plan" ] || { echo "$0: no plan file $plan" >&2; exit 2; }
git -C "$root" rev-parse --verify --quiet "$base^{commit}" >/dev/null \
    || { echo "$0: '$base' is not a revision of this repository" >&2; exit 2; }
if [ -f "$change" ]; then
    patch_file=$(realpath "$change")
else
    git -C "$root" rev-parse --verify --quiet "$change^{commit}" >/dev/null \
        || { echo "$0: '$change' is neither a patch file nor a revision" >&2; exit 2; }
    patch_file=
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/sprt-patch.XXXXXX")
cleanup() {
    git -C "$root" worktree remove --force "$work/master" 2>/dev/null || true
    git -C "$root" worktree remove --force "$work/patch" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
git -C "$root" worktree add --quiet --detach "$work/master" "$base"
if [ -n "$patch_file" ]; then
    git -C "$root" worktree add --quiet --detach "$work/patch" "$base"
    git -C "$work/patch" apply "$patch_file" \
        || { echo "$0: $change does not apply to $base" >&2; exit 1; }
else
    git -C "$root" worktree add --quiet --detach "$work/patch" "$change"
fi
# One target folder for both builds (the dependencies compile once), removed at the end
# with the rest; the coordinator below builds in the repository's own.
for side in master patch; do
    (cd "$work/$side" && CARGO_TARGET_DIR=$work/target cargo build --quiet --release -p engine)
    cp "$work/target/release/engine" "$work/engine-$side"
    echo "$side: bench $("$work/engine-$side" bench 2>/dev/null | tail -n 1)"
done
cd "$root"
cargo run --quiet --release --bin coordinator -- local "$plan" \
    --engine patch="$work/engine-patch" --engine master="$work/engine-master" "$@"
