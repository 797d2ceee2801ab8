#!/usr/bin/env bash
# profile_matrix.sh — the golden logits under every device profile: for each profile in
# config/profiles.def and each fixture of a subset, `edge eval --backend gpu --act f32` (and
# `--act f16` where the profile keeps f16 arithmetic) writes logits that must match the fixture's
# float64 `*.exact.logits.f32` within 1e-3 per logit (f32 activations) or 0.5% of the row's largest
# |logit| (f16 activations): the tolerances of test/fixtures.c.
# This exercises the f32 paths where f16 is absent, the shared-memory reductions where subgroups
# are absent, and bindings chunked at 128 MiB.
#
# Subset (CI time): EDGE_MATRIX_MODELS (default "stories260K tiny-llama-Q4_K_M tiny-qwen2-Q4_K_M
# tiny-gemma3-Q4_K_M"), case EDGE_MATRIX_CASE (default "short"); models come from
# ../shared/fixtures/models (preferred) or test/fixtures/models, goldens from .../golden/NAME/.
# Exit 0 pass, 77 skip, anything else fail. Uses $EDGE_BIN (set by build.sh test).
set -eu
cd "$(dirname "$0")/../.."
[ -n "${EDGE_BIN:-}" ] && [ -x "$EDGE_BIN" ] || { echo "EDGE_BIN is not set to a built edge"; exit 77; }
source test/cli/require.bash
set +e; probe=$("$EDGE_BIN" eval --backend gpu --tokens "1" --greedy 1 2>&1); rc=$?; set -e
if [ $rc != 0 ] && echo "$probe" | grep -qi "vulkan\|no .*device"; then skip_unless_required "no Vulkan device: $(echo "$probe" | head -n 1)"; fi

profiles=$(sed -n 's/^PROFILE([A-Z0-9_]*, *"\([^"]*\)".*/\1/p' config/profiles.def)
models=${EDGE_MATRIX_MODELS:-"stories260K tiny-llama-Q4_K_M tiny-qwen2-Q4_K_M tiny-gemma3-Q4_K_M"}
case_=${EDGE_MATRIX_CASE:-short}
find_fx() { for d in ../shared/fixtures test/fixtures; do [ -f "$d/$1" ] && { echo "$d/$1"; return 0; }; done; return 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
compare() {   # compare GOT EXACT TOL LABEL
    python3 - "$@" <<'PY'
import struct, sys
got, exact, tol, label, V = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], 512
a = open(got, 'rb').read(); b = open(exact, 'rb').read()
if len(a) != len(b): sys.exit("%s: logits file has %d bytes, expected %d" % (label, len(a), len(b)))
n = len(a) // 4
x = struct.unpack('<%df' % n, a); y = struct.unpack('<%df' % n, b)
rel = tol < 0                      # a negative tolerance: that fraction of the row's largest |exact|
rowtol = [(-tol * max(abs(v) for v in y[r:r + V]) if rel else tol) for r in range(0, n, V)]
bad = [i for i in range(n) if not abs(x[i] - y[i]) <= rowtol[i // V]]
if bad:
    i = bad[0]
    sys.exit("%s: %d logits off by more than %g; first at %d: got %g, exact %g" % (label, len(bad), rowtol[i // V], i, x[i], y[i]))
PY
}
runs=0; fails=0
for m in $models; do
    gguf=$(find_fx "models/$m.gguf") || { echo "skip $m: no models/$m.gguf"; continue; }
    toks=$(find_fx "golden/$m/$case_.tokens.txt") || { echo "skip $m: no golden/$m/$case_.tokens.txt"; continue; }
    exact=$(find_fx "golden/$m/$case_.exact.logits.f32") || { echo "skip $m: no exact logits"; continue; }
    for p in $profiles; do
        acts=f32
        EDGE_PROFILE=$p "$EDGE_BIN" info 2>/dev/null | grep -q '^f16 arithmetic: *yes' && acts="f32 f16"
        for act in $acts; do
            tol=1e-3; [ "$act" = f16 ] && tol=-5e-3     # (negative: of the row's largest |logit|)
            runs=$((runs+1)); label="$m/$case_ profile=$p act=$act"
            if ! EDGE_PROFILE=$p "$EDGE_BIN" eval -m "$gguf" --backend gpu --act "$act" --tokens "$(cat "$toks")" \
                    --logits "$tmp/out.f32" 2> "$tmp/err"; then
                fails=$((fails+1)); echo "FAIL $label: edge eval failed: $(tail -n 2 "$tmp/err")"; continue
            fi
            if compare "$tmp/out.f32" "$exact" "$tol" "$label"; then echo "ok   $label"; else fails=$((fails+1)); fi
        done
    done
done
[ $runs -gt 0 ] || skip_unless_required "no fixtures found for the matrix"
echo "profile matrix: $runs runs, $fails failed"
[ $fails = 0 ]
