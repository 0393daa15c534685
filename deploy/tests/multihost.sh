#!/usr/bin/env bash
# A real multi-host run on one machine: network namespaces joined by veth pairs and a bridge,
# the coordinator on one "host" (TLS, certificates made here by openssl), three workers on
# three others, talking over those addresses only (the workers find the coordinator by the
# name in its certificate, from their namespace's own /etc/hosts). Worker 2's link gets
# latency and loss: tc netem where the kernel has it; otherwise a delaying TCP relay in its
# namespace (delay_relay.py) and random drops by nftables on its interface, both said so in
# the output. Worker 3's link is cut mid-run for longer than the lease timeout, then restored.
#
# It checks that the run completes with exact totals (`coordinator run verify`), that every
# pair is stored once, that the cut worker's unreported pairs were leased again to the others,
# that it rejoined and finished games of its own afterwards, and that every report it saw
# acknowledged is stored under its name (no acknowledged result lost).
#
#   sudo deploy/tests/multihost.sh [BIN_DIR]     (BIN_DIR holds coordinator and worker;
#                                                 default target/ci, then target/release)
#
# Needs root, iproute2, openssl and python3 (sqlite3 module): without them it says why and
# exits 0 (skipped); packet loss without netem needs nft (Debian's nftables). Bounded: it gives up after MULTIHOST_TIMEOUT seconds
# (default 300); MULTIHOST_KEEP=1 keeps its files. Everything it makes (namespaces, processes, files) is removed on exit.
set -euo pipefail
cd "$(dirname "$0")/../.."

skip() {
    echo "multihost: SKIPPED: $*"
    exit 0
}
[ "$(id -u)" = 0 ] || skip "needs root for network namespaces (CI runs as root)"
for tool in ip tc openssl python3; do
    command -v "$tool" >/dev/null || skip "$tool is not installed"
done
python3 -c 'import sqlite3' 2>/dev/null || skip "python3 has no sqlite3 module"

BIN=${1:-}
if [ -z "$BIN" ]; then
    for d in target/ci target/release target/quick; do
        if [ -x "$d/coordinator" ] && [ -x "$d/worker" ]; then BIN=$d; break; fi
    done
fi
[ -n "$BIN" ] && [ -x "$BIN/coordinator" ] && [ -x "$BIN/worker" ] \
    || { echo "multihost: no coordinator and worker binaries (give BIN_DIR or build first)" >&2; exit 1; }
BIN=$(cd "$BIN" && pwd)

TIMEOUT=${MULTIHOST_TIMEOUT:-300}
LEASE_TIMEOUT=4      # seconds without a heartbeat before a lease expires
CUT_SECONDS=25       # worker 3's link is down this long (> lease timeout + keep-alive)
PAIRS=300            # game pairs: enough that the run outlasts the cut and worker 3's
                     # reconnect back-off (which grows while its link is down), so it
                     # finishes pairs of new leases; at 90, w1 and w2 played them all
                     # during the cut on a fast day
NET=10.77.0          # the test's own subnet, inside its namespaces only
P="vcmh$$"           # namespace prefix: unique per run
W=$(mktemp -d /tmp/multihost.XXXXXX)
START=$(date +%s)
PIDS=()

log() { printf '[%4ds] %s\n' "$(( $(date +%s) - START ))" "$*"; }
fail() {
    log "FAIL: $*"
    for f in "$W"/*.log; do
        [ -f "$f" ] || continue
        echo "---- last lines of $(basename "$f")"
        tail -n 25 "$f"
    done
    exit 1
}

# Every process left in the test's namespaces: workers get two signals (the second hands
# their lease back at once: a worker whose coordinator is gone would otherwise wait for it).
ns_pids() {
    for ns in hub co w1 w2 w3; do
        ip netns pids "$P-$ns" 2>/dev/null || true
    done
}
cleanup() {
    local rc=$?
    for sig in TERM TERM; do
        ns_pids | xargs -r kill -"$sig" 2>/dev/null || true
        sleep 0.5
    done
    ns_pids | xargs -r kill -KILL 2>/dev/null || true
    for ns in hub co w1 w2 w3; do
        ip netns del "$P-$ns" 2>/dev/null || true
        rm -rf "/etc/netns/$P-$ns"
    done
    if [ -n "${MULTIHOST_KEEP:-}" ]; then echo "multihost: files kept in $W"; else rm -rf "$W"; fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

in_ns() { local ns=$1; shift; ip netns exec "$P-$ns" "$@"; }
# In the background: `ip netns exec` execs the program, so $! is the program itself.
bg_ns() { local ns=$1; shift; ip netns exec "$P-$ns" "$@" & PIDS+=($!); }
past_deadline() { [ $(( $(date +%s) - START )) -ge "$TIMEOUT" ]; }

# ---- the network: a bridge in a hub namespace, one veth per host -------------------------
ip netns add "$P-hub" 2>/dev/null || skip "cannot create network namespaces here"
ip -n "$P-hub" link add br0 type bridge
ip -n "$P-hub" link set br0 up
declare -A ADDR=([co]=$NET.1 [w1]=$NET.11 [w2]=$NET.12 [w3]=$NET.13)
for h in co w1 w2 w3; do
    ip netns add "$P-$h"
    ip -n "$P-hub" link add "v-$h" type veth peer name eth0 netns "$P-$h"
    ip -n "$P-hub" link set "v-$h" master br0 up
    ip -n "$P-$h" addr add "${ADDR[$h]}/24" dev eth0
    ip -n "$P-$h" link set eth0 up
    ip -n "$P-$h" link set lo up
done
# The workers know the coordinator by the name in its certificate.
declare -A SEES=([w1]=${ADDR[co]} [w2]=${ADDR[co]} [w3]=${ADDR[co]})
# Worker 2: a slow, lossy link all run long.
if in_ns w2 tc qdisc add dev eth0 root netem delay 40ms 15ms loss 3% 2>/dev/null; then
    IMPAIRED="tc netem: 40±15 ms, 3% loss"
else
    # No sch_netem in this kernel: latency from a relay that holds every chunk 40±15 ms each
    # way, loss from nftables dropping 3% of the packets to and from the coordinator.
    bg_ns w2 python3 deploy/tests/delay_relay.py 127.0.0.1:50051 "${ADDR[co]}:50051" 40 15 \
        >"$W/relay.log" 2>&1
    SEES[w2]=127.0.0.1
    IMPAIRED="no tc netem in this kernel: relay 40±15 ms each way"
    if command -v nft >/dev/null; then
        in_ns w2 nft -f - <<EOF
table inet lossy {
    chain in { type filter hook input priority 0; ip saddr ${ADDR[co]} numgen random mod 100 < 3 drop; }
    chain out { type filter hook output priority 0; ip daddr ${ADDR[co]} numgen random mod 100 < 3 drop; }
}
EOF
        IMPAIRED="$IMPAIRED, nftables 3% loss"
    else
        IMPAIRED="$IMPAIRED, NO LOSS (nft is not installed: Debian's nftables)"
    fi
fi
for h in w1 w2 w3; do
    mkdir -p "/etc/netns/$P-$h"
    printf '127.0.0.1 localhost\n%s coordinator.test\n' "${SEES[$h]}" >"/etc/netns/$P-$h/hosts"
done
log "network: coordinator ${ADDR[co]}, workers ${ADDR[w1]}, ${ADDR[w2]} ($IMPAIRED), ${ADDR[w3]}"

# ---- TLS: a private CA and a server certificate for the coordinator's address ------------
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj "/CN=multihost test CA" -keyout "$W/ca.key" -out "$W/ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -subj "/CN=coordinator" -keyout "$W/server.key" -out "$W/server.csr" 2>/dev/null
printf 'subjectAltName=IP:%s,DNS:coordinator.test\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n' \
    "${ADDR[co]}" >"$W/server.ext"
openssl x509 -req -in "$W/server.csr" -CA "$W/ca.pem" -CAkey "$W/ca.key" -CAcreateserial \
    -days 2 -extfile "$W/server.ext" -out "$W/server.pem" 2>/dev/null
log "tls: CA and server certificate for ${ADDR[co]} made"

# ---- the coordinator ------------------------------------------------------------------
DB=$W/cluster.db
ADMIN=$("$BIN/coordinator" token add --db "$DB" --role admin --name admin | tail -n1)
declare -A TOKEN
for h in w1 w2 w3; do
    TOKEN[$h]=$("$BIN/coordinator" token add --db "$DB" --role worker --name "$h" | tail -n1)
done
URL="https://${ADDR[co]}:50051"
bg_ns co env RUST_LOG=coordinator=info "$BIN/coordinator" serve --db "$DB" \
    --listen "${ADDR[co]}:50051" --http-listen "${ADDR[co]}:8080" \
    --tls-cert "$W/server.pem" --tls-key "$W/server.key" \
    --lease-timeout "$LEASE_TIMEOUT" >"$W/coordinator.log" 2>&1
admin() { in_ns co "$BIN/coordinator" run --coordinator "$URL" --ca "$W/ca.pem" --token "$ADMIN" "$@"; }
for _ in $(seq 50); do
    admin list >/dev/null 2>&1 && break
    sleep 0.2
done
admin list >/dev/null || fail "the coordinator does not answer over TLS"

cat >"$W/run.toml" <<EOF
name = "multihost"
kind = "match"
games = $((PAIRS * 2))
seed = 11
batch_seconds = 3
pgn = false

[limits]
nodes = 5000

[[variants]]
variant = "chess"

[first]
engine = "builtin"
EOF
RUN=$(admin create "$W/run.toml" | grep -oE '[0-9]+' | head -n1)
[ -n "$RUN" ] || fail "no run id"
log "run $RUN created: $PAIRS pairs, lease timeout ${LEASE_TIMEOUT}s"

# ---- the workers ------------------------------------------------------------------------
for h in w1 w2 w3; do
    bg_ns "$h" env RUST_LOG=worker=debug "$BIN/worker" \
        --coordinator https://coordinator.test:50051 --ca "$W/ca.pem" \
        --token "${TOKEN[$h]}" --name "$h" --concurrency 1 --spool "$W/$h.spool" \
        --report-linger-ms 300 >"$W/$h.log" 2>&1
done
log "workers w1 w2 w3 started"

# ---- cut worker 3's link once it has a report acknowledged and a lease under way ----------
acked() { grep -c 'report acknowledged' "$W/$1.log" 2>/dev/null || true; }
while [ "$(acked w3)" -lt 1 ]; do
    past_deadline && fail "worker 3 never had a report acknowledged"
    sleep 0.2
done
ip -n "$P-hub" link set v-w3 down
CUT_AT=$(date +%s)
log "link of w3 cut (it had $(acked w3) reports acknowledged)"
sleep "$CUT_SECONDS"
ip -n "$P-hub" link set v-w3 up
RESTORED_MS=$(($(date +%s%3N)))
log "link of w3 restored after $(( $(date +%s) - CUT_AT ))s"

# ---- wait for the run to finish -----------------------------------------------------------
while :; do
    state=$(admin show "$RUN" 2>/dev/null | head -n3 || true)
    grep -q 'finished' <<<"$state" && break
    past_deadline && fail "run not finished within ${TIMEOUT}s: $state"
    sleep 1
done
log "run finished"
admin verify "$RUN" >"$W/verify.out" 2>&1 || { cat "$W/verify.out"; fail "run verify found a mismatch"; }
log "coordinator run verify: $(tail -n1 "$W/verify.out")"
admin show "$RUN" >"$W/show.out"
# Workers first, while the coordinator still answers: one signal, and a worker with a report
# still spooled (worker 3's of a lease that expired during the cut may sit in its retry
# back-off) delivers it and exits. A second signal makes it exit at once, its spool kept on
# disk. Then the coordinator and the rest. Every wait is bounded: CI once hung here for good
# when the coordinator went down together with the workers and worker 3 waited for it.
worker_pids() { for h in w1 w2 w3; do ip netns pids "$P-$h" 2>/dev/null || true; done; }
stop_all() { # signal, seconds, then the pids to watch come from the function named in $3
    local sig=$1 secs=$2 which=$3 until=$(( $(date +%s) + $2 ))
    $which | xargs -r kill -"$sig" 2>/dev/null || true
    while [ -n "$($which)" ] && [ "$(date +%s)" -lt "$until" ]; do sleep 0.2; done
    [ -z "$($which)" ]
}
if [ -n "$(worker_pids)" ]; then
    stop_all TERM 20 worker_pids \
        || { log "workers still running 20 s after one signal: a second"; stop_all TERM 10 worker_pids; } \
        || { log "workers still running: killed"; stop_all KILL 5 worker_pids; } || true
fi
stop_all TERM 10 ns_pids || stop_all KILL 5 ns_pids || true
wait 2>/dev/null || true
PIDS=()

# What worker 3 went through, in its own words.
log "worker 3 during and after the cut:"
grep -E 'WARN|ERROR|spooled report|lease no longer' "$W/w3.log" | sed -E 's/^[^ ]+ +//' | cut -c1-200 | head -n 12 | sed 's/^/    /' || true

# ---- check what was stored against what the workers saw acknowledged ------------------------
for h in w1 w2 w3; do
    grep 'report acknowledged' "$W/$h.log" | grep -oE 'pairs=\[[0-9, ]*\]' \
        | tr -d 'pairs=[]' | tr ',' '\n' | tr -d ' ' | grep -v '^$' >"$W/$h.acked" || true
done
python3 - "$DB" "$RUN" "$PAIRS" "$RESTORED_MS" "$W" <<'PY'
import sqlite3, sys
db, run, pairs, restored_ms, w = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
c = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
failures = []
def check(ok, what):
    print(("  ok    " if ok else "  FAIL  ") + what)
    if not ok:
        failures.append(what)

rows = c.execute("SELECT pair_index, worker_id, lease_id FROM pair_results WHERE run_id=?", (run,)).fetchall()
indices = sorted(r[0] for r in rows)
check(indices == list(range(pairs)), f"every pair 0..{pairs - 1} stored exactly once ({len(rows)} rows)")
status = c.execute("SELECT status FROM runs WHERE id=?", (run,)).fetchone()[0]
check(status == "finished", f"run status is {status}")

def worker_ids(name):
    return {r[0] for r in c.execute(
        "SELECT w.id FROM workers w JOIN tokens t ON t.id = w.token_id WHERE t.name=?", (name,))}

by_token = {}
for name in ("w1", "w2", "w3"):
    ids = worker_ids(name)
    stored = {r[0] for r in rows if r[1] in ids}
    by_token[name] = stored
    acked = {int(x) for x in open(f"{w}/{name}.acked").read().split()}
    lost = acked - stored
    check(not lost, f"{name}: {len(acked)} pairs acknowledged to it, all stored under its name"
          + (f" (lost: {sorted(lost)[:10]})" if lost else ""))
    check(len(stored) > 0, f"{name}: {len(stored)} pairs stored")

w3 = worker_ids("w3")
expired = c.execute(
    f"SELECT id, created_ms FROM leases WHERE run_id=? AND state='expired' AND worker_id IN ({','.join('?' * len(w3))})",
    (run, *w3)).fetchall()
check(len(expired) >= 1, f"w3: {len(expired)} lease(s) expired while its link was down")
released = 0
for lease_id, _ in expired:
    for (idx,) in c.execute("SELECT pair_index FROM lease_pairs WHERE lease_id=?", (lease_id,)):
        owner = [r for r in rows if r[0] == idx]
        if owner and owner[0][1] not in w3:
            released += 1
check(released >= 1, f"w3: {released} pair(s) of its expired lease(s) played by other workers")
later = c.execute(
    f"SELECT COUNT(*) FROM pair_results p JOIN leases l ON l.id = p.lease_id "
    f"WHERE p.run_id=? AND l.created_ms > ? AND p.worker_id IN ({','.join('?' * len(w3))})",
    (run, restored_ms, *w3)).fetchone()[0]
check(later >= 1, f"w3: rejoined after the cut and finished {later} pair(s) of new leases")
print("  pairs per worker: " + ", ".join(f"{k} {len(v)}" for k, v in by_token.items()))
sys.exit(1 if failures else 0)
PY
log "multihost: PASSED in $(( $(date +%s) - START ))s"
