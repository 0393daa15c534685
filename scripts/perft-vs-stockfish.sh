#!/usr/bin/env bash
# Side-by-side perft CPU time of our engine and Debian's Stockfish on the same positions, in one
# run (the machine is shared, so compare within a run, never across runs).
# Needs: `apt-get install stockfish`; our binary built with `cargo build --release -p engine`.
set -euo pipefail
ENGINE=${ENGINE:-target/release/engine}
SF=${SF:-$(command -v stockfish || echo /usr/games/stockfish)}
LATTE="rrnqknrr/nbbppbbn/ppp2ppp/8/8/PPP2PPP/NBBPPBBN/RRNQKNRR w KQkq - 0 1"
KIWI="r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"

cpu() { # prints user+sys CPU seconds of the command
  /usr/bin/env time -f "%U %S" "$@" 2>&1 >/dev/null | tail -1 | awk '{print $1+$2}'
}
sf_perft() { # fen depth [options...]
  local fen=$1 depth=$2; shift 2
  { for o in "$@"; do echo "setoption name $o"; done
    echo "position fen $fen"; echo "go perft $depth"; sleep 0.1; echo quit; } > /tmp/sf_in.$$
  cpu "$SF" < /tmp/sf_in.$$
}
ours() { cpu "$ENGINE" perft "$@"; }

printf "%-22s %12s %10s %10s %8s\n" position nodes ours_s stockfish_s ratio
row() { # name nodes ours sf
  printf "%-22s %12s %10.2f %10.2f %8.2f\n" "$1" "$2" "$3" "$4" "$(echo "$4 / $3" | bc -l)"
}
o=$(ours --variant chess --startpos --depth 6); s=$(sf_perft "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1" 6)
row "chess start d6" 119060324 "$o" "$s"
o=$(ours --variant chess --fen "$KIWI" --depth 5); s=$(sf_perft "$KIWI" 5)
row "kiwipete d5" 193690690 "$o" "$s"
o=$(ours --variant latte --startpos --depth 6); s=$(sf_perft "$LATTE" 6 "Use NNUE value false")
row "latte start d6" 170607742 "$o" "$s"
echo "ratio = stockfish CPU seconds / ours (above 1: ours is faster); times include start-up"
