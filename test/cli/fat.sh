#!/usr/bin/env bash
# edge fat: passes on this machine's device within 60 s (release binary, no validation layer),
# writes a JSON report holding every printed check, fails and names a perturbed kernel
# (EDGE_FAT_PERTURB), fails the determinism check on injected nondeterminism
# (EDGE_FAT_NONDET), and exits 11 when Vulkan cannot be loaded.
set -u
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "$*"; exit 1; }

# exit 11: no Vulkan loader (needs no device, so it runs first)
EDGE_VULKAN_LIB=/nonexistent "$EDGE_BIN" fat > "$tmp/nov.out" 2>&1; rc=$?
[ $rc = 11 ] || fail "no loader: exit $rc, want 11: $(cat "$tmp/nov.out")"
grep -q "^FAIL  identity  cannot run: cannot load the Vulkan loader" "$tmp/nov.out" || fail "no loader: $(cat "$tmp/nov.out")"

# Is there a device at all? (a machine without one skips the rest)
"$EDGE_BIN" info > /dev/null 2>&1 || { source "$(dirname "$0")/require.bash"; skip_unless_required "no Vulkan device"; }

# the full quick run, timed, with the JSON report
t0=$(date +%s)
"$EDGE_BIN" fat --json "$tmp/fat.json" > "$tmp/fat.out" 2>&1; rc=$?
t1=$(date +%s)
[ $rc = 0 ] || fail "edge fat: exit $rc: $(grep -v '^PASS' "$tmp/fat.out")"
case "$EDGE_BIN" in
    *edge-debug) ;;                                    # sanitizers: no time limit
    *) [ "${EDGE_VALIDATION:-0}" = 1 ] || [ $((t1 - t0)) -le 60 ] || fail "edge fat took $((t1 - t0)) s (limit 60)";;
esac
grep -q "^PASS  determinism" "$tmp/fat.out" || fail "no determinism line"
! grep -q "vulkan validation error" "$tmp/fat.out" || fail "validation errors: $(grep -m 3 'vulkan validation error' "$tmp/fat.out")"
grep -q "^PASS  memory" "$tmp/fat.out" || fail "no memory line"
python3 - "$tmp/fat.json" "$tmp/fat.out" <<'PY' || fail "JSON report"
import json, sys
d = json.load(open(sys.argv[1]))
names = [c["name"] for c in d["checks"]]
printed = [l.split("  ")[1] for l in open(sys.argv[2]) if l[:6] in ("PASS  ", "FAIL  ", "SKIP  ")]
missing = [n for n in printed if n not in names]
assert not missing, "checks missing from the JSON: %s" % missing
assert len(printed) == len(names), (len(printed), len(names))
assert d["verdict"] == "pass" and d["exit_code"] == 0 and d["device"]["name"]
assert any(n.startswith("kernel.") for n in names) and "identity" in names
PY

# a perturbed kernel fails and is named
k=matvec_q4_k_a32_y32
EDGE_FAT_PERTURB=$k "$EDGE_BIN" fat --only kernels > "$tmp/p.out" 2>&1; rc=$?
[ $rc = 10 ] || fail "EDGE_FAT_PERTURB=$k: exit $rc, want 10"
grep -q "^FAIL  kernel.$k " "$tmp/p.out" || fail "EDGE_FAT_PERTURB=$k: kernel not named: $(grep -v '^PASS' "$tmp/p.out")"
[ "$(grep -c '^FAIL' "$tmp/p.out")" = 1 ] || fail "EDGE_FAT_PERTURB=$k: other checks failed too"

# injected nondeterminism fails the determinism check
EDGE_FAT_NONDET=1 "$EDGE_BIN" fat --only determinism > "$tmp/n.out" 2>&1; rc=$?
[ $rc = 10 ] || fail "EDGE_FAT_NONDET=1: exit $rc, want 10"
grep -q "^FAIL  determinism  GPU run 3 differs from run 1 at token 10" "$tmp/n.out" || fail "EDGE_FAT_NONDET=1: $(cat "$tmp/n.out")"
echo "edge fat: $((t1 - t0)) s"
