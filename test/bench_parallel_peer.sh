#!/bin/bash
# bench_parallel_peer.sh — edge's batched decoding (`edge bench -np B`) beside llama.cpp's llama-batched-bench
# on one GPU, in one run, on an `edge gen-model` file: aggregate decode tok/s at each B (llama.cpp's S_TG column;
# both: 128-token prompts, 128 generated per sequence) and edge's latency per step.
#
#   test/bench_parallel_peer.sh [--edge BIN] [--peer TARBALL|DIR] [--npl "1 8 16 32"] [--reps N] [CONFIG:TYPE ...]
#
# Default CONFIG:TYPE llama-3.2-1b-instruct:Q4_K_M (issue 34's anchor: llama.cpp 1,549 / 3,196 / 5,611 tok/s at
# B = 8 / 16 / 32 on an H100). On the lent GPU machine carry .peer (the tarball) and .gl as peer-bench.sh says.
set -u
EDGE=./edge; PEER=; NPL="1 8 16 32"; REPS=3; SPECS=()
while [ $# -gt 0 ]; do
  case $1 in
    --edge) EDGE=$2; shift 2;; --peer) PEER=$2; shift 2;; --npl) NPL=$2; shift 2;; --reps) REPS=$2; shift 2;;
    -h|--help) sed -n '2,11p' "$0"; exit 0;;
    *) SPECS+=("$1"); shift;;
  esac
done
[ ${#SPECS[@]} -gt 0 ] || SPECS=(llama-3.2-1b-instruct:Q4_K_M)
TARBALL=llamacpp-vulkan-3f545bec.tar.xz
if [ -z "$PEER" ]; then for t in .peer/$TARBALL ../shared/tools/$TARBALL; do [ -f "$t" ] && { PEER=$t; break; }; done; fi
if [ -f "$PEER" ]; then d=$(mktemp -d); trap 'rm -rf "$d"' EXIT; tar xJf "$PEER" -C "$d" || exit 1; PEER=$d; fi
[ -x "$PEER/llama-batched-bench" ] || { echo "bench_parallel_peer: no llama-batched-bench (give --peer)" >&2; exit 1; }
for f in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json; do
  [ -z "${VK_DRIVER_FILES:-}" ] && [ -f "$f" ] && export VK_DRIVER_FILES=$f; done
M=${MODELS_DIR:-/tmp/peer-bench-models}; mkdir -p "$M"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "| model | type | B | edge tg tok/s (aggregate) | llama.cpp S_TG | ratio | edge ms per step |"
echo "|---|---|---|---|---|---|---|"
for s in "${SPECS[@]}"; do c=${s%%:*}; t=${s##*:}; f=$M/$c.$t.gguf
  [ -s "$f" ] || "$EDGE" gen-model --config "$c" --type "$t" -o "$f" >/dev/null 2>&1
  l=$(timeout 600 "$PEER/llama-batched-bench" -m "$f" -ngl 99 -c 16384 -npp 128 -ntg 128 -npl "$(echo $NPL | tr ' ' ,)" 2>/dev/null)
  for b in $NPL; do
    e=$(timeout 300 "$EDGE" bench -m "$f" -p 128 -n 128 -r "$REPS" -np "$b" --json 2>/dev/null)
    python3 - "$c" "$t" "$b" "$e" "$l" <<'PY'
import json, sys
c, t, b, e, l = sys.argv[1:6]
try: ej = json.loads(e); etg, estep = ej.get("tg_depth_tps", ej["tg_tps"]), ej["tg_step_ms"]   # (after the prompt, as S_TG)
except Exception: etg, estep = float("nan"), float("nan")
ltg = float("nan")
for line in l.splitlines():
    f = [x.strip() for x in line.strip().strip("|").split("|")]
    if len(f) >= 8 and f[0] == "128" and f[1] == "128" and f[2] == b:
        ltg = float(f[7])
r = etg / ltg if ltg == ltg and ltg > 0 else float("nan")
print(f"| {c} | {t} | {b} | {etg:,.1f} | {ltg:,.1f} | {r:.2f}x | {estep:.3f} |")
PY
  done
done
