#!/usr/bin/env bash
# bench_compare.sh — two edge binaries on the same GPU, in one run (a benchmark, not a test): the three
# anchor shapes as Q4_K_M from `edge gen-model`, `edge bench -p 512 -n 128 -r 5` on each, the binaries
# alternating ROUNDS times, then a table of the medians per binary with the ratio B / A. Issue 31's
# "speed unchanged" check: every figure within 2%.
#   test/bench_compare.sh BIN_A BIN_B [DIR]     (model files kept in DIR, default /tmp/edge-bench)
# Env: ROUNDS (default 2), CONFIGS (space-separated model configs), TYPE (default Q4_K_M).
set -u
A=${1:?usage: bench_compare.sh BIN_A BIN_B [DIR]}; B=${2:?usage: bench_compare.sh BIN_A BIN_B [DIR]}
dir=${3:-/tmp/edge-bench}; rounds=${ROUNDS:-2}; type=${TYPE:-Q4_K_M}
mkdir -p "$dir"
log=$(mktemp)
for cfg in ${CONFIGS:-llama-3.2-1b-instruct qwen2.5-1.5b-instruct gemma-2-2b-it}; do
    f=$dir/$cfg-$type.gguf
    [ -f "$f" ] || "$A" gen-model --config "$cfg" --type "$type" -o "$f" > /dev/null || exit 1
    for r in $(seq "$rounds"); do
        for bin in "$A" "$B"; do
            j=$("$bin" bench -m "$f" -p 512 -n 128 -r 5 --json) || { echo "bench failed: $bin $f"; exit 1; }
            echo "$cfg $bin $j" >> "$log"
        done
    done
done
python3 - "$log" "$A" "$B" <<'PY'
import json, sys, statistics
rows = {}
for line in open(sys.argv[1]):
    cfg, binp, j = line.split(" ", 2)
    d = json.loads(j)
    rows.setdefault(cfg, {}).setdefault(binp, []).append(d)
A, B = sys.argv[2], sys.argv[3]
print("| model | figure | %s | %s | B / A |" % (A, B))
print("|---|---|---|---|---|")
worst = 0
for cfg, by in rows.items():
    for k in ("pp_tps", "tg_tps", "decode_gpu_us", "dispatches_per_token", "plan_bytes"):
        a = statistics.median(d[k] for d in by[A]); b = statistics.median(d[k] for d in by[B])
        r = b / a if a else float("nan")
        if k in ("pp_tps", "tg_tps"): worst = max(worst, abs(1 - r))
        print("| %s | %s | %.6g | %.6g | %.4f |" % (cfg, k, a, b, r))
print("largest pp/tg difference: %.2f%%" % (100 * worst))
print("device: %s" % next(iter(rows.values()))[A][0]["device"])
PY
rm -f "$log"
