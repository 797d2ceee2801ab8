#!/usr/bin/env bash
# bench_report.sh — `edge bench`'s report: the warm time to first token at -p is the median repetition's
# prefill through its first token (so -p / ttft_warm_s is the pp tok/s of an odd -r), below the cold one,
# and printed in the text report (also with -np); -p 0 prints none. The decode is reported twice: from an
# empty context (tg_tps, llama-bench's tgN) and after the prompt (tg_depth_tps, "tgN @ dP").
# Exit 0 pass, 77 skip, else fail.
set -u
cd "$(dirname "$0")/../.."
[ -n "${EDGE_BIN:-}" ] && [ -x "$EDGE_BIN" ] || { echo "EDGE_BIN is not set to a built edge"; exit 77; }
source test/cli/require.bash
"$EDGE_BIN" info >/dev/null 2>&1 || skip_unless_required "no Vulkan device"
fail=0
j=$("$EDGE_BIN" bench -p 24 -n 3 -r 3 --json) || { echo "bench --json failed"; exit 1; }
python3 - "$j" <<'PY' || fail=1
import json, sys
j = json.loads(sys.argv[1])
w, c, pp = j.get("ttft_warm_s"), j["ttft_s"], j["pp_tps"]
if w is None or not w > 0: sys.exit("ttft_warm_s missing or not positive: %r" % w)
if not w < c: sys.exit("warm time to first token %g not below the cold one %g" % (w, c))
if abs(w * pp - 24) > 0.02 * 24 + 1e-4 * pp: sys.exit("ttft_warm_s %g x pp_tps %g is not the 24 prompt tokens" % (w, pp))
for k in ("tg_tps", "tg_depth_tps", "tg_depth_min", "tg_depth_max"):
    if not j.get(k, 0) > 0: sys.exit("%s missing or not positive: %r" % (k, j.get(k)))
if not j["tg_depth_min"] <= j["tg_depth_tps"] <= j["tg_depth_max"]: sys.exit("tg_depth_tps outside its min .. max")
PY
"$EDGE_BIN" bench -p 24 -n 3 -r 1 2>&1 | grep -q '^load .* time to first token (cold) .* at 24 prompt tokens (warm, median) [0-9.]* ms$' ||
    { echo "text report: no warm time to first token at -p 24"; fail=1; }
r=$("$EDGE_BIN" bench -p 24 -n 3 -r 1 2>&1)
echo "$r" | grep -q '^| .* | tg3 *| ' && echo "$r" | grep -q '^| .* | tg3 @ d24 *| ' ||
    { echo "text report: no tg3 (empty context) and tg3 @ d24 (after the prompt) rows"; fail=1; }
"$EDGE_BIN" bench -p 24 -n 3 -r 1 -np 2 2>&1 | grep -q ' 2 prompts of 24 tokens (warm, median) [0-9.]* ms$' ||
    { echo "text report with -np 2: no warm time to first token"; fail=1; }
"$EDGE_BIN" bench -p 0 -n 3 -r 1 2>&1 | grep -q 'warm' && { echo "-p 0 reported a warm time to first token"; fail=1; }
exit $fail
