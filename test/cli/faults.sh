#!/usr/bin/env bash
# faults.sh — injected GPU faults (EDGE_FAULT, docs/reliability.md) through the generation command
# (echo prompt | edge -n 16 --temp 0): each ends with exit code 3, a message naming the fault on
# stderr, no hang (each run under timeout), and on stdout only what was streamed before the fault,
# ended by the separator. The first prompt's normal output is the reference for "what was streamed".
source "$(dirname "$0")/run_lib.bash"
G="timeout 120 $E -n 16 --temp 0"
echo "Once upon a time" | $G > "$tmp/good" 2>/dev/null || fail "the prompt without a fault failed"
# fault_case FAULT MESSAGE: exit 3, MESSAGE on stderr, stdout = a prefix of the good answer + "\n\n"
fault_case() {
    local fault=$1 msg=$2
    echo "Once upon a time" | EDGE_FAULT=$fault $G > "$tmp/out" 2> "$tmp/err"; local rc=$?
    [ "$rc" = 3 ] || { cat "$tmp/err"; fail "EDGE_FAULT=$fault: exit $rc, want 3"; }
    grep -q -- "$msg" "$tmp/err" || { cat "$tmp/err"; fail "EDGE_FAULT=$fault: no '$msg' on stderr"; }
    python3 - "$tmp/out" "$tmp/good" "$fault" <<'PY' || fail "EDGE_FAULT=$fault: stdout is not the streamed prefix + separator"
import sys
out, good, fault = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read(), sys.argv[3]
if fault.startswith("alloc_fail"):
    sys.exit(0 if out == b"" else 1)          # at load: no prompt was read
if not out.endswith(b"\n\n"): sys.exit(1)
body = out[:-2]
if not good.startswith(body): sys.exit(1)
if "decode" in fault or "fence" in fault:
    sys.exit(0 if 0 < len(body) < len(good) - 2 else 1)   # some tokens streamed, not all
sys.exit(0 if body == b"" else 1)                         # prefill / pipeline: nothing streamed
PY
}
fault_case device_lost_prefill   "prompt 1: the GPU device was lost during prefill (VK_ERROR_DEVICE_LOST)"
fault_case device_lost_decode:4  "prompt 1: the GPU device was lost during decode (VK_ERROR_DEVICE_LOST)"
fault_case alloc_fail            "device arena 'weights': cannot allocate .* bytes of device memory: VK_ERROR_OUT_OF_DEVICE_MEMORY"
fault_case pipeline_fail         "prompt 1: vkCreateComputePipelines failed for kernel '.*' (.*): VK_ERROR_INITIALIZATION_FAILED"
fault_case fence_timeout:3       "prompt 1: GPU work did not finish within .* ms during decode (fence timeout"
# a later prompt's fault: the first prompt is answered whole, the second ends early (a prompt of 16
# tokens waits on 9 decode fences with EDGE_CHAIN_STEPS = 2 steps per command buffer: the 13th is the second prompt's)
printf 'Once upon a time\nOnce upon a time\n' | EDGE_FAULT=device_lost_decode:13 $G > "$tmp/out" 2> "$tmp/err"; rc=$?
[ "$rc" = 3 ] || fail "second-prompt fault: exit $rc, want 3"
grep -q "prompt 2: the GPU device was lost during decode" "$tmp/err" || fail "second-prompt fault: $(cat "$tmp/err")"
head -c "$(stat -c %s "$tmp/good")" "$tmp/out" | cmp -s - "$tmp/good" || fail "second-prompt fault: the first answer changed"
# a bad EDGE_FAULT is a usage error
expect_rc 1 env EDGE_FAULT=no_such_fault $E -n 1 -p x
grep -q "EDGE_FAULT=no_such_fault: want NAME" "$tmp/err" || fail "bad EDGE_FAULT message"
echo "faults: ok"
