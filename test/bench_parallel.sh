#!/bin/bash
# bench_parallel.sh — wall time of 64 prompts of mixed lengths with `edge run -np 8` against `-np 1`, and
# that their answers are the same bytes (issue 34: on lavapipe -np 8 takes at most half of -np 1's time).
# The embedded model by default; both runs with the same -c so that attention works over the same context.
#
#   test/bench_parallel.sh [--edge BIN] [-m MODEL] [-n TOKENS] [-c CTX] [--np N] [--prompts K]
set -u
EDGE=./edge; MODEL=(); N=32; C=512; NP=8; K=64
while [ $# -gt 0 ]; do
  case $1 in
    --edge) EDGE=$2; shift 2;; -m) MODEL=(-m "$2"); shift 2;; -n) N=$2; shift 2;; -c) C=$2; shift 2;;
    --np) NP=$2; shift 2;; --prompts) K=$2; shift 2;; -h|--help) sed -n '2,6p' "$0"; exit 0;;
    *) echo "bench_parallel: unknown option $1" >&2; exit 1;;
  esac
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
python3 - "$K" > "$tmp/p" <<'PY'
import random, sys
random.seed(64)
w = "once upon a time there was a little girl named lily she liked to play in the park with her dog".split()
for i in range(int(sys.argv[1])): print(" ".join(random.choice(w) for _ in range(random.randint(1, 40))))
PY
run() {   # run NP -> seconds on stdout, answers in $tmp/o.NP
  local t0 t1
  t0=$(date +%s.%N)
  "$EDGE" "${MODEL[@]}" -n "$N" -c "$C" --temp 0 -np "$1" < "$tmp/p" > "$tmp/o.$1" 2> "$tmp/e.$1" || { echo "edge -np $1 failed: $(tail -n 2 "$tmp/e.$1")" >&2; exit 1; }
  t1=$(date +%s.%N)
  echo "$t0 $t1" | awk '{ printf "%.2f", $2 - $1 }'
}
s1=$(run 1); sn=$(run "$NP")
cmp -s "$tmp/o.1" "$tmp/o.$NP" && same=identical || same=DIFFERENT
echo "$K prompts, -n $N, -c $C: -np 1 ${s1} s, -np $NP ${sn} s, ratio $(echo "$sn $s1" | awk '{ printf "%.3f", $1 / $2 }') (answers $same)"
[ "$same" = identical ]
