#!/usr/bin/env bash
# gen_rows.sh — the configs of issue 33 (Qwen3, the 4B-8B rows) from the command line: for each row,
# `edge plan --config NAME --type Q4_K_M` plans it and fits nowhere it should not claim to; a gen-model
# file with one layer (--layers 1: every tensor kind, the real vocabulary and LM head) loads with
# --allow-unlisted and names the row it is closest to, runs a greedy decode step on the GPU (the argmax
# kernel flags a NaN or Inf in any row of logits: exit 5), equals the reference backend's id, and shows its
# kernel path in `edge paths` with the dtype chain intact. The qwen3 and gemma-3-4b files carry the
# tensors and keys their rows need (attn_q_norm/attn_k_norm and no biases; rope.scaling linear 8).
# Exit 0 pass, 77 skip, anything else fail. Uses $EDGE_BIN (set by build.sh test).
# Rows: EDGE_GEN_ROWS (default: the seven rows below). 10-20 s a row on the 2-core lavapipe machine (the
# LM heads of 128K-262K rows); one token only: lavapipe's prefill tiles take minutes over such a head.
set -u
cd "$(dirname "$0")/../.."
source test/cli/require.bash
[ -n "${EDGE_BIN:-}" ] && [ -x "$EDGE_BIN" ] || { echo "EDGE_BIN is not set to a built edge"; exit 77; }
rows=${EDGE_GEN_ROWS:-"qwen3-0.6b qwen3-1.7b qwen3-4b gemma-3-4b-it llama-3.1-8b-instruct qwen2.5-7b-instruct qwen2.5-coder-7b-instruct"}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$EDGE_BIN" info > /dev/null 2>&1 || skip_unless_required "no Vulkan device"
fail=0
for r in $rows; do
    "$EDGE_BIN" plan --config "$r" --type Q4_K_M -c 4096 > "$tmp/plan" 2>&1
    rc=$?
    { [ $rc = 0 ] || [ $rc = 3 ]; } && grep -q "$r" "$tmp/plan" || { echo "$r: plan --config: rc $rc"; cat "$tmp/plan"; fail=1; continue; }
    f="$tmp/$r.gguf"
    "$EDGE_BIN" gen-model --config "$r" --type Q4_K_M --layers 1 -o "$f" > /dev/null || { echo "$r: gen-model failed"; fail=1; continue; }
    "$EDGE_BIN" gguf "$f" > "$tmp/dir" 2>&1 || { echo "$r: edge gguf failed"; fail=1; continue; }
    case "$r" in
    qwen3-*)
        grep -q 'blk.0.attn_q_norm.weight' "$tmp/dir" && grep -q 'blk.0.attn_k_norm.weight' "$tmp/dir" \
            || { echo "$r: no attn_q_norm/attn_k_norm"; fail=1; }
        grep -q 'attn_q.bias' "$tmp/dir" && { echo "$r: qwen3 has no q/k/v biases"; fail=1; } ;;
    gemma-3-4b-it)
        grep -q 'gemma3.rope.scaling.type.*linear' "$tmp/dir" && grep -q 'gemma3.rope.scaling.factor  *f32  *8$' "$tmp/dir" \
            || { echo "$r: no linear RoPE scaling x8"; grep rope "$tmp/dir"; fail=1; } ;;
    esac
    gpu=$("$EDGE_BIN" eval -m "$f" --allow-unlisted --backend gpu --tokens "1" --greedy 1 2> "$tmp/err") \
        || { echo "$r: GPU greedy failed: $(cat "$tmp/err")"; fail=1; continue; }
    grep -q "closest '$r'" "$tmp/err" || { echo "$r: the file is not closest to its row: $(cat "$tmp/err")"; fail=1; }
    ref=$("$EDGE_BIN" eval -m "$f" --allow-unlisted --backend ref --tokens "1" --greedy 1 2> /dev/null) \
        || { echo "$r: reference greedy failed"; fail=1; continue; }
    [ "$gpu" = "$ref" ] || { echo "$r: GPU greedy '$gpu', reference '$ref'"; fail=1; }
    "$EDGE_BIN" paths -m "$f" --allow-unlisted > "$tmp/paths" 2>&1 || { echo "$r: paths failed"; tail -3 "$tmp/paths"; fail=1; continue; }
    grep -q "^kernel path of unlisted" "$tmp/paths" && grep -q "decode plan" "$tmp/paths" && grep -q "^dtype chain: ok" "$tmp/paths" \
        || { echo "$r: paths shows no kernel path"; head -5 "$tmp/paths"; fail=1; }
    rm -f "$f"
done
exit $fail
