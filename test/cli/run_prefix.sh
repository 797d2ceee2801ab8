#!/usr/bin/env bash
# run_prefix.sh — shared system prefixes (docs/usage.md, "Many prompts at once"): with --system (or the jsonl
# `system` field) the template's system part is prefilled once and its KV cache reused by every prompt that
# starts with it (-v and jsonl report the reused tokens), one slot's cache copied to the others with -np; and
# the answers equal those without reuse (--no-cache-prompt), with -np 1 and -np 3. A chat family is needed:
# a one-layer random-weight qwen2.5-0.5b (ChatML) from `edge gen-model`. The same with a q8_0 KV cache.
source "$(dirname "$0")/run_lib.bash"
"$E" info >/dev/null 2>&1 || skip_unless_required "no Vulkan device"
m="$tmp/q.gguf"
"$E" gen-model --config qwen2.5-0.5b-instruct --type Q4_0 --layers 1 -o "$m" >/dev/null 2>&1 || fail "gen-model"
S="You are a helpful assistant that answers questions about arithmetic very carefully, step by step."
for i in 1 2 3 4; do echo "Question $i: what is $i plus $((i * 3))?"; done > "$tmp/p.txt"
run() {   # run NAME OPTS...: answers into $tmp/o.NAME, the reused counts (-v) into $tmp/r.NAME
    local n=$1; shift
    "$E" -m "$m" --allow-unlisted --system "$S" -n 2 --temp 0 -v "$@" < "$tmp/p.txt" > "$tmp/o.$n" 2> "$tmp/e.$n" || fail "$n: exit $? ($(tail -n 2 "$tmp/e.$n"))"
    grep -o '([0-9]* reused)' "$tmp/e.$n" | tr -dc '0-9\n' > "$tmp/r.$n"
}
run reuse; run fresh --no-cache-prompt; run np3 -np 3; run np3fresh -np 3 --no-cache-prompt
for n in fresh np3 np3fresh; do cmp -s "$tmp/o.reuse" "$tmp/o.$n" || fail "answers with reuse differ from '$n'"; done
# a q8_0 KV cache: its rows copied between slots by bytes give the answers computed without reuse
run q8 --cache-type q8_0; run q8np3 --cache-type q8_0 -np 3; run q8fresh --cache-type q8_0 --no-cache-prompt
for n in q8np3 q8fresh; do cmp -s "$tmp/o.q8" "$tmp/o.$n" || fail "q8_0 cache: answers with reuse differ from '$n'"; done
[ "$(tr '\n' ' ' < "$tmp/r.q8")" = "$(tr '\n' ' ' < "$tmp/r.reuse")" ] || fail "q8_0 cache: reused tokens $(tr '\n' ' ' < "$tmp/r.q8")"
# the first prompt computes the prefix; every later one reuses the same number of tokens (> 0)
python3 - "$tmp/r.reuse" "$tmp/r.np3" "$tmp/r.fresh" <<'PY' || fail "reused tokens: $(tr '\n' ' ' < "$tmp/r.reuse") / $(tr '\n' ' ' < "$tmp/r.np3")"
import sys
a, b, c = ([int(x) for x in open(f).read().split()] for f in sys.argv[1:4])
assert len(a) == len(b) == len(c) == 4, (a, b, c)
assert a[0] == 0 and a[1] > 8 and all(x == a[1] for x in a[1:]), a
assert sorted(b) == sorted(a), b          # -np 3: prefilled once, the others copied
assert all(x == 0 for x in c), c
PY
# jsonl: the system field, prompt_reused in each answer
python3 - "$S" > "$tmp/in.jsonl" <<'PY'
import json, sys
for i in range(4): print(json.dumps({"id": i, "system": sys.argv[1], "prompt": "Question %d" % i, "max_tokens": 2, "temperature": 0}))
PY
"$E" -m "$m" --allow-unlisted --input jsonl -np 2 < "$tmp/in.jsonl" > "$tmp/j" 2> "$tmp/je" || fail "jsonl: $(tail -n 2 "$tmp/je")"
python3 - "$tmp/j" <<'PY' || fail "jsonl prompt_reused: $(cat "$tmp/j")"
import json, sys
recs = sorted((json.loads(l) for l in open(sys.argv[1])), key=lambda r: r["id"])
assert [r["id"] for r in recs] == [0, 1, 2, 3]
assert recs[0]["prompt_reused"] == 0 and all(r["prompt_reused"] > 8 for r in recs[1:]), recs
PY
echo "run_prefix: ok"
