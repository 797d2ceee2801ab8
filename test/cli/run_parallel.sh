#!/usr/bin/env bash
# run_parallel.sh — `edge run -np N` (docs/usage.md, "Many prompts at once"): the answers do not depend on
# N within an arithmetic class. For every model fixture the same prompts through --input line give
# byte-identical greedy output with -np 1, 4 and 16 while batched steps compute each row as a lone decode
# step does (EDGE_BATCH_TILES=0: below 16 sequences, or without matrix units), and with -np 4 and 16 while
# they run the prefill products over their rows (EDGE_BATCH_TILES=2 forces it on any device: each row's
# arithmetic independent of the others'; here for one fixture per architecture, the C test
# gpu_batch_tiles_rows_match_reference_and_each_other takes every fixture; EDGE_TEST_QUICK, set by the
# sanitizer pass: both classes on those files alone); sampled output with a fixed seed too; 200 prompts of mixed
# lengths with -np 8 equal -np 1 in order and content (embedded model);
# jsonl ids match their prompts (answers written as they finish); failed prompts keep their place; an
# injected NaN exits 4 also among answered prompts. The same across N with a q8_0 KV cache.
source "$(dirname "$0")/run_lib.bash"
"$E" info >/dev/null 2>&1 || skip_unless_required "no Vulkan device"
fx=../shared/fixtures/models
cat > "$tmp/p.txt" <<'EOF'
Once upon a time
The cat
Lily and Tom went to the park and they saw a big dog that was barking at a small bird in the tree
One day
Hello
Why is the sky blue? Explain in detail, with examples.
a
Write a poem about the sea.
Tom had a red ball
The quick brown fox jumps over the lazy dog again and again and again
EOF
# same_np OUT-PREFIX ARGS...: -np 1, 4, 16 give the same bytes with each row a lone decode step's
# arithmetic, and -np 4, 16 with batched steps on the prefill products (EDGE_TEST_QUICK, the sanitizer
# pass: -np 1 and 16, and the batch products at -np 16 alone: the same host code, fewer runs)
nps="1 4 16"; tnps="4 16"; [ -z "${EDGE_TEST_QUICK:-}" ] || { nps="1 16"; tnps=16; }
same_np() {
    local name=$1 n; shift
    for n in $nps; do
        EDGE_BATCH_TILES=0 "$E" "$@" -np $n < "$tmp/p.txt" > "$tmp/o.$n" 2> "$tmp/e.$n" || fail "$name -np $n: exit $? ($(tail -n 2 "$tmp/e.$n"))"
    done
    [ -s "$tmp/o.1" ] || fail "$name: no output"
    for n in $nps; do cmp -s "$tmp/o.1" "$tmp/o.$n" || { diff "$tmp/o.1" "$tmp/o.$n" | head -5; fail "$name: -np 1/$n answers differ"; }; done
    [ "${batch:-1}" = 1 ] || return 0
    for n in $tnps; do
        EDGE_BATCH_TILES=2 "$E" "$@" -np $n < "$tmp/p.txt" > "$tmp/t.$n" 2> "$tmp/e.$n" || fail "$name -np $n (batch products): exit $? ($(tail -n 2 "$tmp/e.$n"))"
    done
    [ -s "$tmp/t.16" ] || fail "$name: no output on the batch products"
    [ -n "${EDGE_TEST_QUICK:-}" ] || cmp -s "$tmp/t.4" "$tmp/t.16" || { diff "$tmp/t.4" "$tmp/t.16" | head -5; fail "$name: -np 4/16 answers on the batch products differ"; }
}
n=0; archs=" "
for m in "$fx"/*.gguf; do
    [ -f "$m" ] || continue
    # the batch products: each architecture's Q4_K_M file, or its first file where it has none
    a=$(basename "$m" | sed 's/-[^-]*$//')          # tiny-llama-Q4_K_M.gguf -> tiny-llama
    case "$archs" in *" $a "*) one=0;; *) one=1; archs="$archs$a ";; esac
    if [ -f "$fx/$a-Q4_K_M.gguf" ]; then case "$m" in *-Q4_K_M.gguf) one=1;; *) one=0;; esac; fi
    [ -z "${EDGE_TEST_QUICK:-}" ] || [ $one = 1 ] || continue       # the sanitizer pass: those files alone
    batch=$one same_np "$(basename "$m") greedy" -m "$m" -n 12 --temp 0
    n=$((n + 1))
done
[ $n -gt 0 ] || skip_unless_required "no model fixtures in $fx"
same_np "embedded sampled" -n 24 --temp 0.9 --seed 7
same_np "embedded f32 greedy" -n 24 --temp 0 --act f32
same_np "qwen3 sampled" -m "$fx/tiny-qwen3-Q4_K_M.gguf" -n 12 --temp 0.8 --seed 3
same_np "gemma2 reference" -m "$fx/tiny-gemma2-Q4_K_M.gguf" -n 8 --temp 0 --backend ref
# a q8_0 KV cache (--cache-type q8_0): the embedded model (rows of 32 values padded to 64), gemma3's
# sliding-window rings and q/k norms, on both activation paths
same_np "embedded q8_0 cache" -n 16 --temp 0 --cache-type q8_0
same_np "gemma3 q8_0 cache f32" -m "$fx/tiny-gemma3-Q4_K_M.gguf" -n 12 --temp 0 --cache-type q8_0 --act f32
same_np "qwen2 q8_0 cache sampled" -m "$fx/tiny-qwen2-Q4_K_M.gguf" -n 12 --temp 0.8 --seed 5 -ctk q8_0 -ctv q8_0

# 200 prompts of mixed lengths, -np 8 against -np 1 (order and content), nul-separated records
# (EDGE_TEST_QUICK: the first 40 of them)
np200=200; [ -z "${EDGE_TEST_QUICK:-}" ] || np200=40
python3 - $np200 > "$tmp/p200" <<'PY'
import random, sys
random.seed(200)
w = "once upon a time there was a little girl named lily she liked to play in the park with her big red dog".split()
for i in range(int(sys.argv[1])):
    sys.stdout.write(" ".join(random.choice(w) for _ in range(random.choice([1, 2, 5, 20, 60, 150]))) + "\0")
PY
"$E" --input nul -c 512 -n 8 --temp 0 -np 1 < "$tmp/p200" > "$tmp/a1" 2>"$tmp/e1" || fail "200 prompts -np 1"
"$E" --input nul -c 512 -n 8 --temp 0 -np 8 < "$tmp/p200" > "$tmp/a8" 2>"$tmp/e8" || fail "200 prompts -np 8"
[ "$(tr -cd '\0' < "$tmp/a8" | wc -c)" = $np200 ] || fail "-np 8: not $np200 records"
cmp -s "$tmp/a1" "$tmp/a8" || fail "$np200 prompts: -np 8 differs from -np 1"

# jsonl: each answer carries its prompt's id; the same answers as -np 1; errors keep theirs
python3 - > "$tmp/in.jsonl" <<'PY'
import json
for i in range(24):
    print(json.dumps({"id": "q%d" % i, "prompt": "Once upon a time " * (i % 7 + 1), "max_tokens": 3 + 5 * (i % 4),
                      "temperature": 0 if i % 2 else 0.7, "seed": i}))
print('{"id": "bad", "prompt": 5}')
PY
expect_rc 5 "$E" --input jsonl -np 1 < "$tmp/in.jsonl"; cp "$tmp/out" "$tmp/j1"
expect_rc 5 "$E" --input jsonl -np 6 < "$tmp/in.jsonl"; cp "$tmp/out" "$tmp/j6"
python3 - "$tmp/j1" "$tmp/j6" <<'PY' || fail "jsonl -np 6: $(head -c 400 "$tmp/j6")"
import json, sys
a = {r["id"]: r for r in map(json.loads, open(sys.argv[1]))}
b = [json.loads(l) for l in open(sys.argv[2])]
assert sorted(r["id"] for r in b) == sorted(a), [r["id"] for r in b]
for r in b:
    assert r.get("text") == a[r["id"]].get("text") and r.get("error") == a[r["id"]].get("error"), (r, a[r["id"]])
assert "error" in [r for r in b if r["id"] == "bad"][0]
PY

# a failed prompt (too long for -c) keeps its place: an empty record between the others
printf 'Once\n%s\nOne day\n' "$(printf 'the cat sat %.0s' $(seq 80))" > "$tmp/f.txt"
expect_rc 5 "$E" -c 64 -n 4 --temp 0 -np 4 < "$tmp/f.txt"
python3 - "$tmp/out" <<'PY' || fail "failed prompt's place: $(od -c "$tmp/out" | head -5)"
import sys
recs = open(sys.argv[1], "rb").read().split(b"\n\n")
assert len(recs) == 4 and recs[3] == b"" and recs[0] and recs[1] == b"" and recs[2], recs
PY
grep -q "prompt 2: .*do not fit the context" "$tmp/err" || fail "the failed prompt is not named: $(cat "$tmp/err")"

# a NaN in the batched steps' logits: exit 4, the other prompts answered
printf 'Once\nOne day\nThe cat\n' > "$tmp/n.txt"
expect_rc 4 env EDGE_INJECT_NAN=logits:-:decode "$E" -n 4 --temp 0 -np 3 < "$tmp/n.txt"
grep -q "numeric fault\|NaN" "$tmp/err" || fail "the NaN is not reported: $(cat "$tmp/err")"
expect_rc 4 env EDGE_INJECT_NAN=logits:-:decode EDGE_BATCH_TILES=2 "$E" -n 4 --temp 0 -np 3 < "$tmp/n.txt"
# usage: -np out of range names the limit
expect_rc 1 "$E" -np 0 -p x
grep -q "1\.\.64" "$tmp/err" || fail "-np 0: $(cat "$tmp/err")"
echo "run_parallel: ok ($n model fixtures)"
