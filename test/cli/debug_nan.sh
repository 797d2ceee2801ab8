#!/usr/bin/env bash
# debug_nan.sh — EDGE_INJECT_NAN (testing aid) on each op class in turn, on the embedded model, GPU backend:
# --check-nan names exactly the injected op and layer and exits 4; without --check-nan the always-on check of
# the final logits exits 4 too, for `edge eval --logits` (logits read back) and `--greedy` (decode reads back
# only ids: the argmax kernel flags the NaN/Inf row). Exit 0 pass, 77 skip, anything else fail.
set -u
cd "$(dirname "$0")/../.."
[ -n "${EDGE_BIN:-}" ] && [ -x "$EDGE_BIN" ] || { echo "EDGE_BIN is not set to a built edge"; exit 77; }
source test/cli/require.bash
"$EDGE_BIN" info >/dev/null 2>&1 || skip_unless_required "no Vulkan device"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
T="1 403 407 261 378"
fail=0
# class:layer  the op --check-nan must name
for pair in "embed:- embed -" "norm:0 attn_norm 0" "matmul:1 attn_q 1" "rope:2 rope_q 2" "kv:3 kv_store_v 3" \
            "attn:3 attention 3" "glu:4 glu 4" "ffn:1 ffn_down 1" "logits:- lm_head -" "norm:- output_norm -"; do
    set -- $pair
    EDGE_INJECT_NAN=$1 "$EDGE_BIN" eval --tokens "$T" --greedy 2 --backend gpu --check-nan >/dev/null 2>"$tmp/err"; rc=$?
    if [ $rc != 4 ] || ! grep -q "^edge: --check-nan: op '$2' (layer $3, prefill" "$tmp/err"; then
        echo "EDGE_INJECT_NAN=$1 --check-nan: rc $rc, expected 4 naming op '$2' layer $3:"; cat "$tmp/err"; fail=1
    fi
done
# the report holds the kernel and the statistics of the inputs and the output
EDGE_INJECT_NAN=attn:1 "$EDGE_BIN" eval --tokens "$T" --greedy 2 --backend gpu --check-nan >/dev/null 2>"$tmp/err"
grep -q "kernel  attn_flash_f32_f32c (kernels/attention.wgsl:attn_flash)" "$tmp/err" && grep -q "^  output  att\[64x5\] f32: .* nan 1 inf 0" "$tmp/err" &&
    [ "$(grep -c '^  input ' "$tmp/err")" = 3 ] || { echo "--check-nan report incomplete:"; cat "$tmp/err"; fail=1; }
# no injection: --check-nan passes and changes nothing
want=$("$EDGE_BIN" eval --tokens "$T" --greedy 6 --backend gpu)
got=$("$EDGE_BIN" eval --tokens "$T" --greedy 6 --backend gpu --check-nan) || { echo "--check-nan without a fault failed"; fail=1; }
[ "$got" = "$want" ] || { echo "--check-nan changed the result: $got vs $want"; fail=1; }
# always-on: no --check-nan
for inj in norm:0 attn:2 ffn:4 logits:- ; do
    EDGE_INJECT_NAN=$inj "$EDGE_BIN" eval --tokens "$T" --logits "$tmp/l.f32" --backend gpu >/dev/null 2>"$tmp/err"; rc=$?
    [ $rc = 4 ] && grep -q "check-nan" "$tmp/err" || { echo "EDGE_INJECT_NAN=$inj eval --logits: rc $rc"; cat "$tmp/err"; fail=1; }
    EDGE_INJECT_NAN=$inj "$EDGE_BIN" eval --tokens "$T" --greedy 3 --backend gpu >/dev/null 2>"$tmp/err"; rc=$?
    [ $rc = 4 ] && grep -q "check-nan" "$tmp/err" || { echo "EDGE_INJECT_NAN=$inj eval --greedy: rc $rc"; cat "$tmp/err"; fail=1; }
done
# decode only: the prefill logits are clean, the greedy steps read back only ids and the argmax flag
for inj in logits:-:decode matmul:2:decode; do
    EDGE_INJECT_NAN=$inj "$EDGE_BIN" eval --tokens "$T" --greedy 3 --backend gpu >/dev/null 2>"$tmp/err"; rc=$?
    [ $rc = 4 ] && grep -q "flagged by the argmax kernel" "$tmp/err" || { echo "EDGE_INJECT_NAN=$inj greedy decode: rc $rc"; cat "$tmp/err"; fail=1; }
done
EDGE_INJECT_NAN=bogus "$EDGE_BIN" eval --tokens "$T" --greedy 1 --backend gpu >/dev/null 2>&1; [ $? = 1 ] || { echo "bad EDGE_INJECT_NAN accepted"; fail=1; }
exit $fail
