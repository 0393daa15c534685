#!/usr/bin/env bash
# An SPRT of an engine change against a base revision, as this project keeps its engine
# changes: both builds come from clean worktrees of this repository (the working tree is never
# touched), then `coordinator local` plays examples/sprt-engines.toml (or the plan given) with
# them as the external engines `patch` and `master`.
#
#   scripts/sprt-patch.sh engine/pending/outposts.patch          # a patch file, on HEAD
#   scripts/sprt-patch.sh my-branch                             # a revision
#   scripts/sprt-patch.sh my-branch --base v1 --plan my.toml -- --workers 1
#   scripts/sprt-patch.sh engine/pending/a.patch engine/pending/b.patch   # a bundle, as one change
#
# Several patch files are tested as one change, applied in the order given (three-way, so
# patches written against the same base each can follow one another): what fishtest does with
# a branch of two ideas, and the way to decide changes each too small for the machine to tell
# apart alone.
#
# Each build prints its bench signature first: a patch meant to change nothing but speed must
# show the base's. Two builds with the same code stop the script: the change does not
# reach the engine. Arguments after `--` go to `coordinator local` (e.g. `--scale 0.1`;
# `--seed N` repeats the test on other openings, in a state folder of its own).
#
# The state folder (default .cluster-local/sprt-<change>-vs-<base>, one per change and base)
# keeps the games and both engine builds, so the same command after Ctrl-C resumes the test
# with the same builds instead of building again; `coordinator local` refuses to resume a run
# with any other build.
#
# The whole script is one { } block, read before it runs: bash otherwise reads a script as it
# goes, and an edit to this file during a test hours long (a pull, a rebase) would run
# whatever text lands at the old offset when the games end.
{
set -euo pipefail
usage() {
    echo "usage: $0 PATCH-FILE...|REVISION [--base REVISION] [--plan PLAN.toml] [--state DIR] [-- coordinator-local-args]" >&2
    exit 2
}
[ $# -ge 1 ] || usage
changes=()
while [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; do
    changes+=("$1")
    shift
done
[ ${#changes[@]} -ge 1 ] || usage
change=${changes[0]}
# The change as given, for the hint that resumes it: the folder's name for a patch is its
# base name, which may also be a branch's (engine/pending/x.patch and a branch x), and a hint
# naming that would test the branch.
given=$(printf ' %q' "${changes[@]}")
base=HEAD
root=$(cd "$(dirname "$0")/.." && pwd)
plan=$root/examples/sprt-engines.toml
state=
while [ $# -gt 0 ]; do
    case $1 in
    --base) [ $# -ge 2 ] || usage; base=$2; shift 2 ;;
    --plan) [ $# -ge 2 ] || usage; plan=$(realpath "$2"); shift 2 ;;
    --state) [ $# -ge 2 ] || usage; state=$(realpath -m "$2"); shift 2 ;;
    --) shift; break ;;
    *) usage ;;
    esac
done
[ -f "$plan" ] || { echo "$0: no plan file $plan" >&2; exit 2; }
git -C "$root" rev-parse --verify --quiet "$base^{commit}" >/dev/null \
    || { echo "$0: '$base' is not a revision of this repository" >&2; exit 2; }
base_sha=$(git -C "$root" rev-parse --short=12 "$base^{commit}")
patch_files=()
if [ ${#changes[@]} -gt 1 ] || [ -f "$change" ]; then
    names=()
    for c in "${changes[@]}"; do
        [ -f "$c" ] || { echo "$0: '$c' is not a patch file (a bundle is made of patch files only)" >&2; exit 2; }
        patch_files+=("$(realpath "$c")")
        names+=("$(basename "$c" .patch)")
    done
    # The folder names every patch, in order, and the hash of their text: a changed patch or
    # another order is another change.
    change=$(IFS=+; echo "${names[*]}")
    change_id=$change-$(cat "${patch_files[@]}" | sha256sum | cut -c1-12)
else
    git -C "$root" rev-parse --verify --quiet "$change^{commit}" >/dev/null \
        || { echo "$0: '$change' is neither a patch file nor a revision" >&2; exit 2; }
    change_id=$(git -C "$root" rev-parse --short=12 "$change^{commit}")
fi
# What the engine build of a revision is made of: the engine crate's sources and manifest and
# the workspace's manifest, lock file and cargo settings (not engine/pending or the tests).
# Two revisions that agree on these build the same engine.
engine_inputs() {
    local path
    for path in engine/src engine/Cargo.toml Cargo.toml Cargo.lock rust-toolchain.toml .cargo; do
        git -C "$root" rev-parse --verify --quiet "$1:$path" || echo "no $path"
    done
}
# A repeat on another seed (`-- --seed N`) is another test: its folder says so, and the plain
# test's folder (whose stored run refuses another seed) is left to it.
args=("$@")
for i in "${!args[@]}"; do
    case ${args[$i]} in
    --seed) change_id=$change_id-seed${args[$((i + 1))]:-} ;;
    --seed=*) change_id=$change_id-seed${args[$i]#--seed=} ;;
    esac
done
if [ -z "$state" ]; then
    state=$root/.cluster-local/sprt-$change_id-vs-$base_sha
    # A commit since the last run of this change moves HEAD, and with it the default folder.
    # A commit that left the engine alone (the coordinator's, the docs') keeps the test: its
    # games were played by the very builds this base would give, so it resumes there. Any
    # other earlier test is named instead of silently starting again.
    if [ ! -d "$state" ]; then
        ours=$(engine_inputs "$base_sha")
        for earlier in "$root"/.cluster-local/sprt-"$change_id"-vs-*; do
            [ -d "$earlier" ] || continue
            earlier_base=${earlier##*-vs-}
            if git -C "$root" rev-parse --verify --quiet "$earlier_base^{commit}" >/dev/null \
                && [ "$(engine_inputs "$earlier_base")" = "$ours" ]; then
                echo "note: $earlier_base builds the same engine as $base_sha: resuming its test in $earlier" >&2
                state=$earlier
                break
            fi
            echo "note: $change was tested before against $earlier_base; its games are kept in $earlier" >&2
            echo "      to resume that test instead: $0$given --base $earlier_base" >&2
        done
    fi
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/sprt-patch.XXXXXX")
cleanup() {
    git -C "$root" worktree remove --force "$work/master" 2>/dev/null || true
    git -C "$root" worktree remove --force "$work/patch" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
# The coordinator that plays the games is this working tree's, built first and copied: a tree
# that does not build fails here, in seconds, instead of after both engine builds (which is
# how a test started during an edit once died unseen in its log), and an edit or a build
# after this point cannot change the coordinator under a running test.
(cd "$root" && cargo build --quiet --release --bin coordinator)
cp "${CARGO_TARGET_DIR:-$root/target}/release/coordinator" "$work/coordinator"
if [ -x "$state/engine-master" ] && [ -x "$state/engine-patch" ]; then
    echo "resuming in $state with the builds kept there"
else
    git -C "$root" worktree add --quiet --detach "$work/master" "$base"
    if [ ${#patch_files[@]} -gt 0 ]; then
        git -C "$root" worktree add --quiet --detach "$work/patch" "$base"
        applied=
        for f in "${patch_files[@]}"; do
            before=$(git -C "$work/patch" write-tree)
            git -C "$work/patch" apply --3way "$f" \
                || { echo "$0: $(basename "$f") does not apply to $base${applied:+ after$applied}" >&2; exit 1; }
            # A three-way apply takes a change the tree already holds (landed, or given twice)
            # as cleanly applied: refused, or the test would measure less than it names.
            [ "$(git -C "$work/patch" write-tree)" != "$before" ] \
                || { echo "$0: $(basename "$f") changes nothing on $base${applied:+ after$applied}: already there" >&2; exit 1; }
            applied="$applied $(basename "$f")"
        done
    else
        git -C "$root" worktree add --quiet --detach "$work/patch" "$change"
    fi
    # A target folder per build: cargo hashes a workspace by its path relative to the
    # workspace root and judges freshness by file times, so in one shared folder the second
    # build (whose sources were written before the first build ended) would be taken as
    # fresh, and both engines would be the first build. That happened: two SPRTs of a
    # change against itself.
    for side in master patch; do
        (cd "$work/$side" && CARGO_TARGET_DIR=$work/target-$side cargo build --quiet --release -p engine)
        cp "$work/target-$side/release/engine" "$work/engine-$side"
    done
    # Compared without debug information and build id, which hold each worktree's path.
    for side in master patch; do
        strip --strip-debug --remove-section=.note.gnu.build-id \
            -o "$work/code-$side" "$work/engine-$side"
    done
    if cmp -s "$work/code-master" "$work/code-patch"; then
        echo "$0: the two builds have the same code: $change does not change the engine" >&2
        exit 1
    fi
    mkdir -p "$state"
    cp "$work/engine-master" "$work/engine-patch" "$state/"
fi
for side in master patch; do
    echo "$side: bench $("$state/engine-$side" bench 2>/dev/null | tail -n 1)"
done
cd "$root"
"$work/coordinator" local "$plan" \
    --state "$state" --engine patch="$state/engine-patch" --engine master="$state/engine-master" "$@"
exit
}
