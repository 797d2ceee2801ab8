#!/usr/bin/env bash
# run_exit_class.sh — the generation command's exit code with faults among several prompts (docs/usage.md,
# "Exit codes"): a NaN in the logits (EDGE_INJECT_NAN, without --check-nan) is a numeric fault, exit 4, not 5,
# also when other prompts were answered or failed on bad input; the run goes on after it; a device error (3,
# EDGE_FAULT) outranks it. Embedded model, GPU backend (the injection is a GPU testing aid).
source "$(dirname "$0")/run_lib.bash"
"$E" info >/dev/null 2>&1 || skip_unless_required "no Vulkan device"
NAN="env EDGE_INJECT_NAN=logits:-:decode"          # the decode steps' logits: a prompt of 1 token is answered
# one prompt: 4 in every input mode and with sampling
expect_rc 4 $NAN $E -p "Once" -n 4 --temp 0
expect_rc 4 $NAN $E -p "Once" -n 4 --temp 0.8
expect_rc 4 env EDGE_INJECT_NAN=logits:- $E -p "Once" -n 4 --temp 0
grep -q "prompt 1: .*numeric fault" "$tmp/err" || fail "the NaN is not named: $(cat "$tmp/err")"
# jsonl: answered, NaN, bad request -> 4; the answered line and the failed ones are all written
printf '%s\n' '{"id":"a","prompt":"Once","max_tokens":1,"temperature":0}' '{"id":"b","prompt":"Once","max_tokens":4,"temperature":0}' \
    '{"id":"c","prompt":1}' '{"id":"d","prompt":"Once","max_tokens":1,"temperature":0}' > "$tmp/in.jsonl"
expect_rc 4 $NAN $E --input jsonl < "$tmp/in.jsonl"
python3 - "$tmp/out" <<'PY' || fail "jsonl records: $(cat "$tmp/out")"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert [r["id"] for r in recs] == ["a", "b", "c", "d"], recs
assert recs[0]["stop_reason"] == "length" and recs[3]["stop_reason"] == "length"     # answered before and after the fault
assert "NaN" in recs[1]["error"] and recs[2]["stop_reason"] == "error"
PY
# text modes: a failed prompt (too long for -c) before the numeric fault -> 4, not 5
printf 'Once upon a time there was a girl who had a big red ball\nOnce\n' > "$tmp/in.txt"
expect_rc 4 $NAN $E -c 8 -n 4 --temp 0 < "$tmp/in.txt"
expect_rc 5 $E -c 8 -n 4 --temp 0 < "$tmp/in.txt"      # the control: without the injection only the failed prompt
# numeric (prompt 1), then a device error (prompt 2): 3 wins
printf 'Once\nOnce upon\n' > "$tmp/in.txt"
expect_rc 3 $NAN env EDGE_FAULT=device_lost_decode:2 $E -n 4 --temp 0 < "$tmp/in.txt"
grep -q "prompt 1: .*numeric fault" "$tmp/err" && grep -q "prompt 2: the GPU device was lost" "$tmp/err" || fail "faults not named: $(cat "$tmp/err")"
echo "run_exit_class: ok"
