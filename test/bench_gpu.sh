#!/usr/bin/env bash
# bench_gpu.sh — the speed measurement of issue 9 on a real GPU (a benchmark, not a test):
# generates the three anchor shapes as Q4_K_M with `edge gen-model` (random weights, llama.cpp's
# tensor names, shapes and types) and runs `edge bench -p 512 -n 128` on each, with f16 and f32
# activations. Usage: test/bench_gpu.sh [DIR] (files are kept in DIR, default /tmp/edge-bench).
# Env: EDGE (binary, default ./edge), REPS (repetitions, default 3), CONFIGS (space-separated).
set -u
EDGE=${EDGE:-./edge}
dir=${1:-/tmp/edge-bench}
reps=${REPS:-3}
mkdir -p "$dir"
for cfg in ${CONFIGS:-llama-3.2-1b-instruct qwen2.5-1.5b-instruct gemma-2-2b-it}; do
    f=$dir/$cfg-Q4_K_M.gguf
    [ -f "$f" ] || "$EDGE" gen-model --config "$cfg" --type Q4_K_M -o "$f" || exit 1
    for act in ${ACTS:-f16 f32}; do
        "$EDGE" bench -m "$f" -p 512 -n 128 -r "$reps" --act "$act" || exit 1
    done
done
