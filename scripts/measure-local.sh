#!/usr/bin/env bash
# Run `coordinator local PLAN --scale S` on a fresh state directory and print wall time,
# games per second, bytes the process wrote to disk (/proc/PID/io write_bytes) and its peak
# resident memory (/usr/bin/time). Usage: scripts/measure-local.sh PLAN [SCALE] [WORKERS]
set -euo pipefail
plan=${1:?plan file}
scale=${2:-1}
workers=${3:-2}
bin=${COORDINATOR:-target/release/coordinator}
state=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$state"' EXIT
start=$(date +%s.%N)
/usr/bin/time -f "%M" -o "$state/maxrss" "$bin" local "$plan" --scale "$scale" \
    --workers "$workers" --state "$state/s" --quiet >"$state/out" 2>"$state/err" &
wrapper=$!
sleep 0.2
pid=$(pgrep -P "$wrapper" | head -1 || true)
written=0
while kill -0 "$wrapper" 2>/dev/null; do
    if [ -n "$pid" ] && [ -r "/proc/$pid/io" ]; then
        w=$(awk '/^write_bytes/ {print $2}' "/proc/$pid/io" 2>/dev/null || echo "$written")
        written=${w:-$written}
    fi
    sleep 0.2
done
wait "$wrapper" || { cat "$state/err" >&2; exit 1; }
end=$(date +%s.%N)
games=$(grep -oE 'games: W [0-9]+ D [0-9]+ L [0-9]+' "$state/out" | head -1 \
    | awk '{print $3 + $5 + $7}')
games=${games:-0}
secs=$(echo "$end - $start" | bc -l)
db=$(du -b "$state/s/cluster.db" 2>/dev/null | cut -f1 || echo 0)
printf 'games %s  wall %.1f s  games/s %.0f  written %.1f MB (%.0f B/game)  db %.1f MB  peak RSS %.0f MB\n' \
    "$games" "$secs" "$(echo "$games / $secs" | bc -l)" "$(echo "$written / 1000000" | bc -l)" \
    "$(echo "$written / ($games + 0.0001)" | bc -l)" "$(echo "$db / 1000000" | bc -l)" \
    "$(echo "$(cat "$state/maxrss") / 1024" | bc -l)"
