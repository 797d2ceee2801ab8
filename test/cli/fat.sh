#!/usr/bin/env bash
# edge fat: passes on this machine's device (floors set to 0 with --floors: speed belongs in
# benchmarks, not in tests), writes a JSON report holding every printed check, and fails (exit 10)
# where a broken board must: a board slower than its floor (--floors with an impossible floor), an
# injected memory error (EDGE_FAT_MEMFAULT), a perturbed kernel in the kernel checks and in the
# default path's end-to-end check (EDGE_FAT_PERTURB), injected nondeterminism (EDGE_FAT_NONDET).
# Exits 11 when Vulkan cannot be loaded and when a --floors file is bad (naming the file and line).
# The q8_0 KV cache's kernels are among the kernel checks (a perturbed one fails and is named).
# -m FILE (model_path): passes on every model fixture config/fixtures.def marks supported, fails (10)
# with a perturbed kernel of that file's path, and exits 11 naming a file that does not load.
set -u
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "$*"; exit 1; }
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/test/cli/require.bash"     # kernel_names, skip_unless_required
M=$root/../shared/fixtures/models
# the model fixtures config/fixtures.def marks supported (its why column empty) that the folder has
supported_models() {
    sed -n 's/^FIXTURE(MODEL, *"\([^"]*\)", *"").*/\1/p' "$root/config/fixtures.def" | while read -r n; do
        [ -f "$M/$n.gguf" ] && echo "$n"; done
}

# exit 11: -m FILE that does not load is named (before the device is touched)
printf 'not a gguf file\n' > "$tmp/bad.gguf"
for bad in "$tmp/missing.gguf" "$tmp/bad.gguf"; do
    "$EDGE_BIN" fat -m "$bad" > "$tmp/bm.out" 2>&1; rc=$?
    [ $rc = 11 ] || fail "-m $bad: exit $rc, want 11: $(cat "$tmp/bm.out")"
    grep -q "^RESULT  could not run: -m $bad does not load: " "$tmp/bm.out" || fail "-m $bad: not named: $(cat "$tmp/bm.out")"
done

# exit 11: no Vulkan loader (needs no device, so it runs first)
EDGE_VULKAN_LIB=/nonexistent "$EDGE_BIN" fat > "$tmp/nov.out" 2>&1; rc=$?
[ $rc = 11 ] || fail "no loader: exit $rc, want 11: $(cat "$tmp/nov.out")"
grep -q "^FAIL  identity  cannot run: cannot load the Vulkan loader" "$tmp/nov.out" || fail "no loader: $(cat "$tmp/nov.out")"

# exit 11: a bad --floors file names the file, the line and the value (read before the device)
printf '# board X\ndecode_tps 40\nspeed 3\n' > "$tmp/key.floors"
"$EDGE_BIN" fat --floors "$tmp/key.floors" > "$tmp/key.out" 2>&1; rc=$?
[ $rc = 11 ] || fail "--floors with an unknown key: exit $rc, want 11: $(cat "$tmp/key.out")"
grep -q "'$tmp/key.floors' line 3: unknown key 'speed'" "$tmp/key.out" || fail "--floors unknown key: $(cat "$tmp/key.out")"
printf 'matvec_gbps 2.5x\n' > "$tmp/num.floors"
"$EDGE_BIN" fat --floors "$tmp/num.floors" > "$tmp/num.out" 2>&1; rc=$?
[ $rc = 11 ] || fail "--floors with a bad number: exit $rc, want 11: $(cat "$tmp/num.out")"
grep -q "'$tmp/num.floors' line 1: matvec_gbps '2.5x' is not a number" "$tmp/num.out" || fail "--floors bad number: $(cat "$tmp/num.out")"

# Is there a device at all? (a machine without one skips the rest)
"$EDGE_BIN" info > /dev/null 2>&1 || { source "$(dirname "$0")/require.bash"; skip_unless_required "no Vulkan device"; }

# the full quick run with the JSON report; floors 0 (this test checks function, not speed)
printf 'decode_tps 0   # tokens/s\nmatvec_gbps 0  # GB/s\n' > "$tmp/zero.floors"
# (with -m: model_path's line goes into the same report and exit code)
margs=(); [ -f "$M/tiny-llama-Q4_K_M.gguf" ] && margs=(-m "$M/tiny-llama-Q4_K_M.gguf")
# (EDGE_TEST_QUICK, the sanitizer pass: every group, but every fourth kernel of the table: the same host
# code checks the others, and the validation-layer pass runs them all)
qargs=()
if [ -n "${EDGE_TEST_QUICK:-}" ]; then
    ks=$("$EDGE_BIN" info | kernel_names | awk 'NR % 4 == 1' | paste -sd, -)
    [ -n "$ks" ] || fail "edge info listed no kernels"
    qargs=(--only "traps,end_to_end,determinism,memory,throughput,model_path,$ks")
fi
"$EDGE_BIN" fat --floors "$tmp/zero.floors" --json "$tmp/fat.json" "${margs[@]}" "${qargs[@]}" > "$tmp/fat.out" 2>&1; rc=$?
[ $rc = 0 ] || fail "edge fat: exit $rc: $(grep -v '^PASS' "$tmp/fat.out")"
grep -q "^PASS  determinism" "$tmp/fat.out" || fail "no determinism line"
grep -q "^PASS  end_to_end  stories260K, f\(16\|32\) activations" "$tmp/fat.out" || fail "no end_to_end line: $(grep end_to_end "$tmp/fat.out")"
! grep -q "vulkan validation error" "$tmp/fat.out" || fail "validation errors: $(grep -m 3 'vulkan validation error' "$tmp/fat.out")"
grep -q "^PASS  memory  .*self-check: an injected bad word was seen by both" "$tmp/fat.out" || fail "no memory line: $(grep memory "$tmp/fat.out")"
grep -q "^PASS  throughput.decode  .*floor 0 (--floors $tmp/zero.floors line 1)" "$tmp/fat.out" || fail "decode floor source: $(grep throughput "$tmp/fat.out")"
grep -q "^PASS  throughput.matvec  .*floor 0 (--floors $tmp/zero.floors line 2)" "$tmp/fat.out" || fail "matvec floor source: $(grep throughput "$tmp/fat.out")"
python3 - "$tmp/fat.json" "$tmp/fat.out" <<'PY' || fail "JSON report"
import json, sys
d = json.load(open(sys.argv[1]))
names = [c["name"] for c in d["checks"]]
printed = [l.split("  ")[1] for l in open(sys.argv[2]) if l[:6] in ("PASS  ", "FAIL  ", "SKIP  ")]
missing = [n for n in printed if n not in names]
assert not missing, "checks missing from the JSON: %s" % missing
assert len(printed) == len(names), (len(printed), len(names))
assert d["verdict"] == "pass" and d["exit_code"] == 0 and d["device"]["name"]
assert any(n.startswith("kernel.") for n in names) and "identity" in names and "end_to_end" in names
PY
[ ${#margs[@]} = 0 ] || grep -q "^PASS  model_path  ${margs[1]}, f\(16\|32\) activations" "$tmp/fat.out" || fail "-m: no model_path line: $(grep model_path "$tmp/fat.out")"
[ ${#margs[@]} = 0 ] || grep -q '"name": "model_path", "status": "PASS"' "$tmp/fat.json" || fail "-m: model_path is not in the JSON report"

# -m on every supported model fixture (every architecture, the weight types with GPU kernels):
# the file's own path against the reference backend, 3 identical runs
n_models=0
for n in $(supported_models); do
    # EDGE_TEST_QUICK (the sanitizer pass): one file per architecture, its Q4_K_M
    [ -z "${EDGE_TEST_QUICK:-}" ] || case "$n" in *-Q4_K_M|stories260K) ;; *) continue;; esac
    "$EDGE_BIN" fat -m "$M/$n.gguf" --only model_path > "$tmp/mp.out" 2>&1; rc=$?
    [ $rc = 0 ] || fail "edge fat -m $n: exit $rc: $(grep -v '^PASS  identity' "$tmp/mp.out")"
    grep -q "^PASS  model_path  $M/$n.gguf, f\(16\|32\) activations, 8-token prompt batched, 8 chained greedy tokens x 3 runs identical" "$tmp/mp.out" \
        || fail "edge fat -m $n: $(grep model_path "$tmp/mp.out")"
    n_models=$((n_models + 1))
done
[ $n_models -gt 0 ] || { source "$(dirname "$0")/require.bash"; skip_unless_required "no model fixtures in $M"; }
echo "model_path passed on $n_models model fixtures"
# a file that loads but that this device's GPU path cannot run (a fixture config/fixtures.def skips for want of
# GPU kernels, while there is one) fails model_path naming the file, exit 10; the other checks still run
nogpu=$(sed -n 's/^FIXTURE(MODEL, *"\([^"]*\)", *"GPU kernels for .*/\1/p' "$root/config/fixtures.def" | while read -r n; do
    [ -f "$M/$n.gguf" ] && echo "$n"; done | head -1)
if [ -n "$nogpu" ]; then
    "$EDGE_BIN" fat -m "$M/$nogpu.gguf" --only model_path,determinism > "$tmp/ng.out" 2>&1; rc=$?
    [ $rc = 10 ] || fail "edge fat -m $nogpu (no GPU kernels): exit $rc, want 10: $(cat "$tmp/ng.out")"
    grep -q "^FAIL  model_path  $M/$nogpu.gguf: this device's GPU path cannot run the file: .*has no GPU kernels" "$tmp/ng.out" || fail "-m $nogpu: $(cat "$tmp/ng.out")"
    grep -q "^PASS  determinism" "$tmp/ng.out" || fail "-m $nogpu: determinism did not run: $(cat "$tmp/ng.out")"
fi

# a board slower than its floor fails; the floor --floors did not set is the device class's default
printf 'decode_tps 1e9\n' > "$tmp/high.floors"
"$EDGE_BIN" fat --only throughput --floors "$tmp/high.floors" > "$tmp/f.out" 2>&1; rc=$?
[ $rc = 10 ] || fail "--floors decode_tps 1e9: exit $rc, want 10: $(cat "$tmp/f.out")"
grep -q "^FAIL  throughput.decode  .*floor 1e+09 (--floors $tmp/high.floors line 1)" "$tmp/f.out" || fail "--floors 1e9: $(cat "$tmp/f.out")"
grep -q "^[A-Z]*  throughput.matvec  .*(class default, [a-zA-Z ]*: EDGE_FAT_FLOOR_MATVEC_GBPS_[A-Z]*)" "$tmp/f.out" || fail "class default not named: $(cat "$tmp/f.out")"

# an injected memory error fails the memory check
EDGE_FAT_MEMFAULT=1 "$EDGE_BIN" fat --only memory > "$tmp/m.out" 2>&1; rc=$?
[ $rc = 10 ] || fail "EDGE_FAT_MEMFAULT=1: exit $rc, want 10: $(cat "$tmp/m.out")"
grep -q "^FAIL  memory  1 bad words over" "$tmp/m.out" || fail "EDGE_FAT_MEMFAULT=1: $(cat "$tmp/m.out")"

# a perturbed kernel fails and is named
k=matvec_q4_k_a32_y32
# (EDGE_TEST_QUICK, the sanitizer pass: beside three other kernels, not all of them a second time)
only=kernels; [ -z "${EDGE_TEST_QUICK:-}" ] || only=$k,matvec_q6_k_a32_y32,matmul_q4_k_a32_y32,get_rows_q4_k
EDGE_FAT_PERTURB=$k "$EDGE_BIN" fat --only $only > "$tmp/p.out" 2>&1; rc=$?
[ $rc = 10 ] || fail "EDGE_FAT_PERTURB=$k: exit $rc, want 10"
grep -q "^FAIL  kernel.$k " "$tmp/p.out" || fail "EDGE_FAT_PERTURB=$k: kernel not named: $(grep -v '^PASS' "$tmp/p.out")"
[ "$(grep -c '^FAIL' "$tmp/p.out")" = 1 ] || fail "EDGE_FAT_PERTURB=$k: other checks failed too"
# the same for the types past the first seven (issue 32), each beside an unperturbed kernel of its family
# and the q8_0 KV cache's store (checked exactly against the CPU quantizer) and its attention (issue 34)
for k in matvec_q5_0_a32_y32 matmul_iq4_xs_a32_y32 get_rows_q3_k kv_store_f32_q8c attn_split_dec_f32_q8c; do
    case $k in matvec_*) o=matvec_q4_1_a32_y32 ;; matmul_*) o=matmul_q2_k_a32_y32 ;; get_rows_*) o=get_rows_q5_k ;;
               kv_store_*) o=kv_store_f32_f32c ;; *) o=attn_flash_f32_q8c ;; esac
    EDGE_FAT_PERTURB=$k "$EDGE_BIN" fat --only "$k,$o" > "$tmp/p.out" 2>&1; rc=$?
    [ $rc = 10 ] || fail "EDGE_FAT_PERTURB=$k: exit $rc, want 10: $(cat "$tmp/p.out")"
    grep -q "^FAIL  kernel.$k " "$tmp/p.out" || fail "EDGE_FAT_PERTURB=$k: kernel not named: $(grep -v '^PASS' "$tmp/p.out")"
    grep -q "^PASS  kernel.$o " "$tmp/p.out" || fail "EDGE_FAT_PERTURB=$k: $o did not pass: $(cat "$tmp/p.out")"
done

# a perturbed kernel of the default path (the decode matvec of stories260K's f16 or f32 path) fails end to end
if grep -q '^f16 arithmetic: *yes' <("$EDGE_BIN" info 2>&1); then k=matvec_f32_a16_y16; else k=matvec_f32_a32_y32; fi
EDGE_FAT_PERTURB=$k "$EDGE_BIN" fat --only end_to_end > "$tmp/e.out" 2>&1; rc=$?
[ $rc = 10 ] || fail "EDGE_FAT_PERTURB=$k end_to_end: exit $rc, want 10: $(cat "$tmp/e.out")"
grep -q "^FAIL  end_to_end  .*\[EDGE_FAT_PERTURB=$k: [1-9][0-9]* dispatches" "$tmp/e.out" || fail "EDGE_FAT_PERTURB=$k end_to_end: $(cat "$tmp/e.out")"

# a perturbed kernel of the -m file's path (tiny-llama-Q8_0's decode matvec: attn_out, ffn_down) fails model_path and is named;
# a kernel off that path (q4_k) perturbs nothing and passes
if [ -f "$M/tiny-llama-Q8_0.gguf" ]; then
    if grep -q '^f16 arithmetic: *yes' <("$EDGE_BIN" info 2>&1); then k=matvec_q8_0_a16_y32; else k=matvec_q8_0_a32_y32; fi
    EDGE_FAT_PERTURB=$k "$EDGE_BIN" fat -m "$M/tiny-llama-Q8_0.gguf" --only model_path > "$tmp/mq.out" 2>&1; rc=$?
    [ $rc = 10 ] || fail "EDGE_FAT_PERTURB=$k -m tiny-llama-Q8_0: exit $rc, want 10: $(cat "$tmp/mq.out")"
    grep -q "^FAIL  model_path  $M/tiny-llama-Q8_0.gguf, .*\[EDGE_FAT_PERTURB=$k: [1-9][0-9]* dispatches" "$tmp/mq.out" \
        || fail "EDGE_FAT_PERTURB=$k -m tiny-llama-Q8_0: $(cat "$tmp/mq.out")"
    EDGE_FAT_PERTURB=matvec_q4_k_a32_y32 "$EDGE_BIN" fat -m "$M/tiny-llama-Q8_0.gguf" --only model_path > "$tmp/mo.out" 2>&1; rc=$?
    [ $rc = 0 ] || fail "EDGE_FAT_PERTURB=matvec_q4_k_a32_y32 (off the path) -m tiny-llama-Q8_0: exit $rc: $(cat "$tmp/mo.out")"
    grep -q "^PASS  model_path  .*\[EDGE_FAT_PERTURB=matvec_q4_k_a32_y32: 0 dispatches" "$tmp/mo.out" || fail "off-path perturbation: $(cat "$tmp/mo.out")"
fi

# injected nondeterminism fails the determinism check
EDGE_FAT_NONDET=1 "$EDGE_BIN" fat --only determinism > "$tmp/n.out" 2>&1; rc=$?
[ $rc = 10 ] || fail "EDGE_FAT_NONDET=1: exit $rc, want 10"
grep -q "^FAIL  determinism  GPU run 3 differs from run 1 at token 10" "$tmp/n.out" || fail "EDGE_FAT_NONDET=1: $(cat "$tmp/n.out")"
exit 0
