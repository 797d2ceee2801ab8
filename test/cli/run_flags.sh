#!/usr/bin/env bash
# run_flags.sh — every generation flag does what --help says, checked by behaviour: -m (the fixture copy of
# the embedded model gives the same bytes), -n, -c, --temp (0 = greedy), --top-k 1 / --top-p tiny /
# --min-p 1 reduce sampling to greedy, --repeat-penalty/--repeat-last-n change a greedy answer (and
# --repeat-last-n 0 turns it off), --seed (same seed same bytes, reset per prompt; another seed differs),
# --stop (repeatable, the stop text not printed), --system, --raw, --chat (the second turn sees the first),
# --no-special, --allow-unlisted, -q, -v (RSS per prompt), --think/--no-think/--reasoning-budget/--answer-only/
# --chat-date on a model without thinking (a warning, the same answer; bad values), --help (lists every flag, with defaults, and the
# exit codes); on the GPU: determinism across two runs at --temp 0.8, --act f32/f16 and --device 0, and -b / --batch-size
# (a long prompt read in batches of 1, 7 or 512 tokens gives the reference's greedy answer; 0 and 4097 are usage errors).
source "$(dirname "$0")/run_lib.bash"
R="$E --backend ref"
P="Once upon a time"
greedy=$($R --temp 0 -n 24 -q -p "$P")
[ -n "$greedy" ] || fail "no greedy output"
m=""; for d in ../shared/fixtures test/fixtures; do [ -f "$d/models/stories260K.gguf" ] && { m=$d/models/stories260K.gguf; break; }; done
if [ -n "$m" ]; then
    [ "$($R --temp 0 -n 24 -q -p "$P" -m "$m")" = "$greedy" ] || fail "-m stories260K.gguf differs from the embedded model"
    $R --temp 0 -n 4 -p "$P" -m "$m" --allow-unlisted > /dev/null 2>"$tmp/err" || fail "--allow-unlisted: $(cat "$tmp/err")"
fi
# -n: token counts through -v; --max-tokens is the same flag
$R --temp 0 -n 5 -v -p "$P" > /dev/null 2>"$tmp/err"; grep -q "5 generated" "$tmp/err" || fail "-n 5: $(cat "$tmp/err")"
[ "$($R --temp 0 --max-tokens 24 -q -p "$P")" = "$greedy" ] || fail "--max-tokens"
# -c / --ctx
$R --temp 0 -c 10 -n 64 -v -p "$P" > /dev/null 2>"$tmp/err"; grep -q "6 generated.*stop context" "$tmp/err" || fail "-c 10: 5 prompt + 5 fed + 1 from the last logits"
$R --temp 0 --ctx 10 -n 64 -q -p "$P" > /dev/null || fail "--ctx"
# sampling flags that reduce to greedy
for f in "--top-k 1" "--top-p 0.000001" "--min-p 1"; do
    [ "$($R --temp 1.5 --seed 9 -n 24 -q -p "$P" $f)" = "$greedy" ] || fail "$f at --temp 1.5 is not greedy"
done
s1=$($R --temp 1.5 -n 24 -q -p "$P" --seed 1 --top-k 0 --top-p 1 --min-p 0)
s2=$($R --temp 1.5 -n 24 -q -p "$P" --seed 1 --top-k 0 --top-p 1 --min-p 0)
s3=$($R --temp 1.5 -n 24 -q -p "$P" --seed 2 --top-k 0 --top-p 1 --min-p 0)
[ "$s1" = "$s2" ] || fail "--seed 1 twice differs"
[ "$s1" != "$s3" ] || fail "--seed 1 and --seed 2 agree"
[ "$s1" != "$greedy" ] || fail "--temp 1.5 equals greedy"
# the seed is reset for every prompt: two equal prompts in one process give equal answers
printf '%s\n%s\n' "$P" "$P" | $R --temp 1 -n 24 -q --sep '|' > "$tmp/out"
IFS='|' read -r x y < "$tmp/out"; [ "$x" = "$y" ] && [ -n "$x" ] || fail "seed not reset per prompt: '$x' vs '$y'"
# repetition penalty
g40=$($R --temp 0 -n 40 -q -p "$P")
rp=$($R --temp 0 -n 40 -q -p "$P" --repeat-penalty 1.5)
[ "$rp" != "$g40" ] || fail "--repeat-penalty 1.5 changed nothing"
[ "$($R --temp 0 -n 40 -q -p "$P" --repeat-penalty 1.5 --repeat-last-n 0)" = "$g40" ] || fail "--repeat-last-n 0 does not turn the penalty off"
[ "$($R --temp 0 -n 40 -q -p "$P" --repeat-penalty 1.5 --repeat-last-n 2)" != "$rp" ] || fail "--repeat-last-n 2 = 64"
# --stop: cut before the first of several stop strings, not printed
st=$($R --temp 0 -n 24 -q -p "$P" --stop "girl" --stop "little")
[ "$st" = "${greedy%%little*}" ] || fail "--stop: '$st'"
$R --temp 0 -n 24 -p "$P" --stop "little" --input jsonl </dev/null >/dev/null 2>&1 && fail "-p with --input accepted"
# --system (no template for stories260K: prepended with a blank line) and --raw
[ "$($R --temp 0 -n 12 -q -p "$P" --system "Tom")" = "$($R --temp 0 -n 12 -q -p "$(printf 'Tom\n\n%s' "$P")")" ] || fail "--system"
[ "$($R --temp 0 -n 12 -q -p "$P" --raw)" = "$($R --temp 0 -n 12 -q -p "$P")" ] || fail "--raw on a model without a template"
# --chat: the second input continues the first conversation (no template: texts concatenated)
printf '%s\nThe end\n' "$P" | $R --temp 0 -n 6 --chat --sep '|' -q > "$tmp/out"
IFS='|' read -r c1 c2 < "$tmp/out"
[ "$c2" = "$($R --temp 0 -n 6 -q -p "${P}${c1}The end")" ] || fail "--chat second turn: '$c2'"
[ "$c2" != "$($R --temp 0 -n 6 -q -p "The end")" ] || fail "--chat: the second turn did not see the first"
# --no-special: "<s>" in a prompt is text, not the BOS control token
$R --temp 0 -n 1 -v -p "<s>" 2>&1 >/dev/null | grep -q "prompt 1: 2 prompt tokens" || fail "<s> without --no-special: not one control token"
$R --temp 0 -n 1 -v -p "<s>" --no-special 2>&1 >/dev/null | grep -q "prompt 1: 2 prompt tokens" && fail "--no-special still parses <s>"
# thinking and date flags: a model without the switch (the embedded one) warns and answers the same;
# --answer-only leaves a non-thinking model's text whole; bad values are usage errors
for f in "--think" "--no-think" "--reasoning-budget 0" "--reasoning-budget -1"; do
    [ "$($R --temp 0 -n 24 -p "$P" $f 2>"$tmp/err")" = "$greedy" ] || fail "$f changed the embedded model's answer"
    grep -q "has no thinking switch" "$tmp/err" || fail "$f: no warning on a model without thinking"
done
[ "$($R --temp 0 -n 24 -q -p "$P" --answer-only --chat-date "26 Jul 2024")" = "$greedy" ] || fail "--answer-only / --chat-date changed the answer"
expect_rc 1 $R -p "$P" --reasoning-budget 100
grep -q "want -1 (think) or 0" "$tmp/err" || fail "--reasoning-budget 100: $(cat "$tmp/err")"
expect_rc 1 $R -p "$P" --chat-date 2024-07-26
grep -q "want DD Mon YYYY" "$tmp/err" || fail "--chat-date 2024-07-26: $(cat "$tmp/err")"
# jsonl "think": true/false/null per request; anything else is that line's error; no "reasoning" without thinking
printf '%s\n' '{"prompt":"Zoo","max_tokens":2,"think":false}' '{"prompt":"Zoo","max_tokens":2,"think":"yes"}' > "$tmp/in"
expect_rc 5 $R --input jsonl < "$tmp/in"
python3 -c '
import json, sys
a, b = [json.loads(l) for l in open(sys.argv[1])]
assert a["tokens"] == 2 and "reasoning" not in a and b["stop_reason"] == "error" and "think" in b["error"], (a, b)' "$tmp/out" ||
    fail "jsonl think: $(cat "$tmp/out")"
# -q: nothing on stderr; -v: timings and rss
$R --temp 0 -n 4 -q -p "$P" 2>"$tmp/err" >/dev/null; [ -s "$tmp/err" ] && fail "-q wrote: $(cat "$tmp/err")"
$R --temp 0 -n 4 -v -p "$P" 2>&1 >/dev/null | grep -q "tok/s.*rss [0-9]* KiB" || fail "-v"
# --help: every flag, defaults, exit codes
$E --help > "$tmp/help" || fail "--help exit"
for f in -m -p --input --sep -n --max-tokens -c --ctx --temp --top-k --top-p --min-p --repeat-penalty --repeat-last-n \
         --seed --stop --system --raw --chat --truncate --no-special --backend --act --cache-type -ctk -ctv --device --allow-unlisted -q -v \
         --think --no-think --reasoning-budget --answer-only --chat-date -b --batch-size; do
    grep -qe "^  .*$f[ ,]" "$tmp/help" || grep -qe "^  $f\$" "$tmp/help" || fail "--help does not list $f"
done
for d in "default 256" "default 0.8" "default 40" "default 0.95" "default 0.05" "default 1.0" "default 64" "default 0" "default gpu" \
         "130 interrupted" "5 some prompts failed" "4 numeric fault" "3 device error" "2 model file error" "1 usage error"; do
    grep -q "$d" "$tmp/help" || fail "--help lacks '$d'"
done
$E help | grep -q "^  run " || fail "edge help lists no run command"
# GPU: determinism at --temp 0.8, act paths, --device
a=$(printf '%s\n' "$P" | $E -n 12 --seed 5 -q) || fail "gpu run"
b=$(printf '%s\n' "$P" | $E -n 12 --seed 5 -q --device 0)
[ -n "$a" ] && [ "$a" = "$b" ] || fail "gpu: the same seed gave different bytes: '$a' vs '$b'"
g32=$($E -n 12 --temp 0 -q --act f32 -p "$P" --backend gpu)
# --cache-type f16 with f32 activations: stories260K's greedy ids hold on the f16 tolerance class (test/gpu_test.c)
[ "$($E -n 12 --temp 0 -q --act f32 --cache-type f16 -p "$P")" = "$($R --temp 0 -n 12 -q -p "$P")" ] || fail "--cache-type f16 greedy differs from ref"
$E -n 2 --temp 0 -v --act f32 -ctk f16 -ctv f16 -p "$P" 2>&1 >/dev/null | grep -q "gpu f32, KV cache f16" || fail "-ctk/-ctv f16 not reported"
$E -n 2 --temp 0 -v --act f32 -p "$P" 2>&1 >/dev/null | grep -q "gpu f32, KV cache f32" || fail "the f32 path's default cache is not f32"
$E -n 2 --temp 0 -v -ctk q8_0 -ctv q8_0 -p "$P" 2>&1 >/dev/null | grep -q ", KV cache q8_0" || fail "-ctk/-ctv q8_0 not reported"
for bad in "--cache-type q8" "-ctk f16 -ctv f32" "-ctk q8_0 -ctv f16" "--backend ref --cache-type q8_0"; do
    rc=0; $E -n 2 -q -p "$P" $bad 2>/dev/null >/dev/null || rc=$?; [ $rc = 1 ] || fail "$bad: exit $rc, want 1"
done
[ "$g32" = "$($R --temp 0 -n 12 -q -p "$P")" ] || fail "--act f32 greedy differs from ref"
$E -n 2 --temp 0 -v --act f16 -p "$P" 2>&1 >/dev/null | grep -q "gpu f16" || fail "--act f16 not reported"
# GPU greedy: the same prompt twice in one run gives the same bytes (the second prompt's prefill replays
# the first one's recording, after a decode recording; it once read the logits of the wrong row)
g1=$($E -n 12 --temp 0 -q --act f32 -p "$P" --backend gpu)
printf '%s\n%s\n' "$P" "$P" | $E -n 12 --temp 0 -q --act f32 --backend gpu --sep '|' > "$tmp/got" || fail "gpu: two prompts"
[ "$(cat "$tmp/got")" = "$g1|$g1|" ] || fail "gpu greedy: the same prompt twice gave '$(cat "$tmp/got")', alone '$g1'"
# -b: the prefill batch changes how a prompt is read, not what follows it (stories260K's margins hold greedy)
L="$P, there was a little girl named Lily. She loved to play outside in the park with her friends and her dog"
gl=$($R --temp 0 -n 16 -q -p "$L")
for b in "-b 1" "-b 7" "--batch-size 512"; do
    [ "$($E --temp 0 -n 16 -q --act f32 -p "$L" $b)" = "$gl" ] || fail "$b: greedy differs from the reference"
done
for b in 0 4097 x; do
    $E -b $b -p "$P" > /dev/null 2>"$tmp/err"; rc=$?
    [ $rc = 1 ] && grep -q "tokens per prefill batch" "$tmp/err" || fail "-b $b: exit $rc, $(cat "$tmp/err")"
done
exit 0
