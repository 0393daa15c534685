#!/usr/bin/env bash
# The engine changes waiting for their SPRT (engine/pending/*.patch) must still apply to this
# tree and build with it, or the next test of one fails hours later, at its build, or worse,
# in the middle of a session. Applying is not enough: a patch that calls a function whose
# signature `main` changed applies cleanly and does not compile (ProbCut after the cut-node
# search did). Each patch is applied in turn to a scratch worktree of HEAD and the engine
# crate (its tests too) type-checked there, with a target folder of its own that the
# patches share, so after the first only the engine crate is checked again.
#
# Called by scripts/test.sh. Checks HEAD (the commit, not uncommitted changes). Outside a
# git clone (a source tarball has no history to make a worktree from) it says it skipped.
{
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    echo "not a git clone: engine/pending patches not checked"
    exit 0
fi
shopt -s nullglob
patches=(engine/pending/*.patch)
[ ${#patches[@]} -gt 0 ] || exit 0
scratch=$(mktemp -d "${TMPDIR:-/tmp}/pending-check.XXXXXX")
cleanup() {
    git -C "$root" worktree remove --force "$scratch/tree" 2>/dev/null || true
    rm -rf "$scratch"
}
trap cleanup EXIT
git worktree add --quiet --detach "$scratch/tree" HEAD
failed=0
for p in "${patches[@]}"; do
    git -C "$scratch/tree" checkout --quiet -- .
    git -C "$scratch/tree" clean --quiet -fd
    if ! git -C "$scratch/tree" apply "$root/$p"; then
        echo "$p no longer applies: rebase it (engine/pending/README.md)" >&2
        failed=1
        continue
    fi
    if ! (cd "$scratch/tree" && CARGO_TARGET_DIR=$root/target/pending-check \
        cargo check --quiet -p engine --all-targets); then
        echo "$p applies but does not build: rebase it (engine/pending/README.md)" >&2
        failed=1
    fi
done
[ "$failed" = 0 ] && echo "engine/pending: ${#patches[@]} patches apply and build"
exit "$failed"
}
