#!/usr/bin/env bash
# debug_trace_profile.sh — --trace lines (phase, layer, op, kernel, dtypes, shape, statistics; filters and
# --trace-warn), --profile (shares add up to 100% per phase, dispatches per token), `edge paths` (also -np; dtype chain ok
# for both activation dtypes), and that the debug options change no result. Exit 0 pass, 77 skip, else fail.
set -u
cd "$(dirname "$0")/../.."
[ -n "${EDGE_BIN:-}" ] && [ -x "$EDGE_BIN" ] || { echo "EDGE_BIN is not set to a built edge"; exit 77; }
source test/cli/require.bash
"$EDGE_BIN" info >/dev/null 2>&1 || skip_unless_required "no Vulkan device"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
T="1 403 407 261 378"
fail=0
want=$("$EDGE_BIN" eval --tokens "$T" --greedy 4 --backend gpu)
got=$("$EDGE_BIN" eval --tokens "$T" --greedy 4 --backend gpu --trace --trace-layers 1,3-4 --trace-warn 10 2>"$tmp/tr") || { echo "--trace failed"; fail=1; }
[ "$got" = "$want" ] || { echo "--trace changed the result"; fail=1; }
# 5 layers, 15 ops each on llama (the residual adds are fused into attn_out and ffn_down); layers 1,3,4 traced, plus 4 non-layer ops; prefill + 3 decode steps
n=$(grep -c '^trace ' "$tmp/tr")
[ "$n" = $(( (3 * 15 + 4) * 4 )) ] || { echo "--trace printed $n lines"; head -5 "$tmp/tr"; fail=1; }
grep -q '^trace prefill L-   embed         get_rows_f32 (kernels/matmul.wgsl:get_rows)  f32,u32 -> f32  x\[64x5\]  min .* nan 0 inf 0' "$tmp/tr" ||
    { echo "embed trace line malformed"; grep embed "$tmp/tr" | head -2; fail=1; }
grep -q '^trace decode  L3   attn_q        matvec_f32_a32_y32 (kernels/matmul.wgsl:matvec)  f32,f32 -> f32  q\[64x1\]' "$tmp/tr" ||
    { echo "decode matvec trace line missing"; fail=1; }
grep -q 'L0 \|L2 ' "$tmp/tr" && { echo "--trace-layers 1,3-4 traced layer 0 or 2"; fail=1; }
grep -q 'WARN [0-9]* values |x| > 10' "$tmp/tr" || { echo "--trace-warn 10 flagged nothing"; fail=1; }
# categories and positions
"$EDGE_BIN" eval --tokens "$T" --greedy 3 --backend gpu --trace=ffn --trace-pos 6 >/dev/null 2>"$tmp/tr2"
[ "$(grep -c "^trace " "$tmp/tr2")" = 20 ] && ! grep -q 'prefill' "$tmp/tr2" || { echo "--trace=ffn --trace-pos 6: $(grep -c '^trace ' "$tmp/tr2") lines"; fail=1; }
grep -q '@(pos 6, dim' "$tmp/tr2" || { echo "--trace-pos 6 statistics not at position 6"; fail=1; }
"$EDGE_BIN" eval --tokens "$T" --greedy 1 --backend gpu --trace=bogus >/dev/null 2>&1; [ $? = 1 ] || { echo "--trace=bogus accepted"; fail=1; }
# --profile
got=$("$EDGE_BIN" eval --tokens "$T" --greedy 6 --backend gpu --profile 2>"$tmp/pr") || { echo "--profile failed"; fail=1; }
[ "$got" = "$want" ] || [ "${got%% *}" = "${want%% *}" ] || { echo "--profile changed the result"; fail=1; }
# --profile on a generation run (a context that keeps one logits row: the profile's op count records that)
echo "Once upon a time" | "$EDGE_BIN" --profile -n 4 > /dev/null 2> "$tmp/prg" || { echo "edge --profile (generation) failed:"; tail -3 "$tmp/prg"; fail=1; }
grep -q "per token" "$tmp/prg" || { echo "edge --profile (generation) printed no table"; fail=1; }
if grep -q "does not support timestamps" "$tmp/pr"; then echo "(no timestamps on this device)"; else
    for ph in prefill decode; do
        s=$(awk -v ph="$ph:" '$1 == ph { on = 1; next } /^[a-z]/ { on = 0 } on && $1 == "class" { gsub("%", "", $NF); s += $NF } END { printf "%.2f", s }' "$tmp/pr")
        awk -v s="$s" 'BEGIN { exit !(s >= 99 && s <= 101) }' || { echo "$ph shares add up to $s%"; cat "$tmp/pr"; fail=1; }
    done
fi
# the dispatch count equals the recorded path's (edge paths counts the same recording; these 5 steps are
# under 128 keys, so its count for short steps where it prints one: attn_short is one dispatch)
nd=$("$EDGE_BIN" paths --act f32 | sed -n 's/^dispatches: .*, \([0-9]*\) per decode token$/\1/p; s/^dispatches: .* per decode token (\([0-9]*\) up to 128 keys)$/\1/p')
[ -n "$nd" ] && grep -q "^decode: 5 tokens; $nd dispatches per token" "$tmp/pr" || { echo "decode dispatch count (edge paths: '$nd')"; cat "$tmp/pr"; fail=1; }
# edge paths
for act in f32 f16; do
    "$EDGE_BIN" paths --act $act >"$tmp/paths" 2>&1 || { echo "edge paths --act $act failed"; cat "$tmp/paths"; fail=1; }
    grep -q '^dtype chain: ok' "$tmp/paths" && grep -q "attn_merge_${act} " "$tmp/paths" || { echo "edge paths --act $act"; cat "$tmp/paths"; fail=1; }
done
# edge paths -np: a batched step's kernels, the lone-step rows or (forced) the batch path, the chain intact
for bt in 0 2; do
    EDGE_BATCH_TILES=$bt "$EDGE_BIN" paths -np 16 >"$tmp/paths" 2>&1 || { echo "edge paths -np 16 (EDGE_BATCH_TILES=$bt) failed"; cat "$tmp/paths"; fail=1; }
    want="each row a lone decode step's kernels"; [ $bt = 0 ] || want="the prefill products over the rows"
    grep -q "^batched decode step (-np 16: a row per sequence, $want" "$tmp/paths" && grep -q '^dtype chain: ok' "$tmp/paths" &&
        grep -q "per batched step of 16 rows" "$tmp/paths" || { echo "edge paths -np 16 (EDGE_BATCH_TILES=$bt)"; cat "$tmp/paths"; fail=1; }
done
"$EDGE_BIN" --help | grep -q -- '--check-nan' || { echo "--help lacks the debug options"; fail=1; }
exit $fail
