#!/usr/bin/env bash
# run_modes.sh — the input modes and their separators on the reference backend: line (empty lines skipped,
# CRLF, default separator "\n\n"), all (one prompt, newlines kept), nul (separator NUL), -p (separator "\n"),
# --sep with escapes, jsonl (every request field, ids given and defaulted to the line number, the answer
# objects parsed by python3's json module, an invalid line answered by an error object naming its line while
# the next line proceeds: exit 5), the interactive loop on a terminal (python3 pty), and that prompts do not
# share state (the same prompt answered alone and after another prompt gives the same bytes).
source "$(dirname "$0")/run_lib.bash"
R="$E --backend ref --temp 0"
# line: two prompts, an empty line and a CRLF line; each completion is followed by "\n\n"
printf 'Once upon a time\n\nThe cat\r\n' | $R -n 6 > "$tmp/got" 2>"$tmp/err" || fail "line mode"
a=$($R -n 6 -p "Once upon a time" -q); b=$($R -n 6 -p "The cat" -q)
printf '%s\n\n%s\n\n' "$a" "$b" > "$tmp/want"
cmp -s "$tmp/got" "$tmp/want" || fail "line mode output != the two -p answers with \\n\\n separators"
grep -q "2 prompts answered, 0 failed" "$tmp/err" || fail "line mode summary: $(cat "$tmp/err")"
# no state between prompts: the same prompt after another one gives the same bytes as alone
printf 'Zoo\nOnce upon a time\n' | $R -n 6 --sep '|' > "$tmp/got" 2>/dev/null
z=$($R -n 6 -p Zoo -q)
[ "$(cat "$tmp/got")" = "$z|$a|" ] || fail "--sep '|' or state between prompts: got '$(cat "$tmp/got")'"
# all: stdin byte for byte is one prompt (the newline inside stays)
printf 'Once upon a time\nThe cat' | $R -n 6 --input all > "$tmp/got" 2>/dev/null || fail "--input all"
c=$($R -n 6 -q -p "$(printf 'Once upon a time\nThe cat')")
[ "$(cat "$tmp/got")" = "$c" ] && [ "$(tail -c 1 "$tmp/got" | od -An -c | tr -d ' ')" = '\n' ] || fail "--input all: '$(cat "$tmp/got")' vs '$c'"
# nul: NUL-separated prompts (a prompt with a newline), NUL after each answer
printf 'Once upon a time\0The cat\nsat\0' | $R -n 6 --input nul > "$tmp/got" 2>/dev/null || fail "--input nul"
d=$($R -n 6 -q -p "$(printf 'The cat\nsat')")
printf '%s\0%s\0' "$a" "$d" | cmp -s - "$tmp/got" || fail "--input nul output"
# --sep escapes
$R -n 2 -p Zoo --sep 'A\tB\x41\\\0' -q > "$tmp/got"
printf '%sA\tBA\\\0' "$($R -n 2 -q -p Zoo)" | cmp -s - "$tmp/got" || fail "--sep escapes"
# jsonl round trip
cat > "$tmp/in" <<'J'
{"prompt":"Once upon a time","max_tokens":6,"id":"first"}

{"prompt":"The cat","max_tokens":64,"temperature":0,"stop":[" park","\n"],"id":7}
{"prompt": "Zoo", "max_tokens": 4, "temperature": 0.9, "top_k": 5, "top_p": 0.9, "min_p": 0.1, "seed": 3, "system": "Tom", "stop": "zzz"}
{"prompt": "Zoo", "max_tokens": 4, "temperature": 0.9, "top_k": 5, "top_p": 0.9, "min_p": 0.1, "seed": 3, "system": "Tom", "stop": "zzz"}
{"prompt":"Zoo" "max_tokens":4}
{"prompt":"caf\u00e9 \ud83d\ude00 \"q\" \\ \/","max_tokens":3}
{"prompt":"Zoo","bogus":1}
["not an object"]
{"prompt":"Zoo","max_tokens":0}
J
$R --input jsonl < "$tmp/in" > "$tmp/got" 2>"$tmp/err"; rc=$?
[ $rc = 5 ] || fail "jsonl with bad lines: exit $rc, want 5"
python3 - "$tmp/got" "$a" <<'PY' || exit 1
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
assert lines[-1] == "", "output does not end with a newline"
objs = [json.loads(l) for l in lines[:-1]]
assert len(objs) == 9, "want 9 answers (one per non-empty line), got %d" % len(objs)
o = objs[0]
assert o["id"] == "first" and o["text"] == sys.argv[2] and o["tokens"] == 6 and o["stop_reason"] == "length", o
for k in ("prompt_tokens", "prefill_ms", "prefill_tok_s", "decode_ms", "decode_tok_s"): assert k in o, k
o = objs[1]
assert o["id"] == 7 and o["stop_reason"] == "stop" and " park" not in o["text"] and "\n" not in o["text"], o
assert objs[2]["id"] == 4 and objs[2]["tokens"] == 4 and objs[2]["stop_reason"] == "length", objs[2]
assert objs[2]["text"] == objs[3]["text"] and objs[3]["id"] == 5, "same seed, same answer"
assert objs[2]["prompt_tokens"] > 3, "the system text was not prepended"
e = objs[4]
assert e["id"] == 6 and e["line"] == 6 and e["stop_reason"] == "error" and "invalid JSON" in e["error"], e
assert objs[5]["id"] == 7 and objs[5]["tokens"] == 3, objs[5]
assert objs[6]["stop_reason"] == "error" and "bogus" in objs[6]["error"] and objs[6]["line"] == 8, objs[6]
assert objs[7]["stop_reason"] == "error" and objs[7]["line"] == 9, objs[7]
assert objs[8]["tokens"] == 0 and objs[8]["text"] == "" and objs[8]["stop_reason"] == "length", objs[8]
PY
grep -q "line 6: invalid JSON" "$tmp/err" || fail "the invalid JSON line is not reported on stderr"
# interactive: a terminal on stdin gets "> " prompts on stderr and answers each line
python3 - "$E" <<'PY' || fail "interactive loop"
import os, pty, sys, subprocess
m, s = pty.openpty()
p = subprocess.Popen([sys.argv[1], "--backend", "ref", "--temp", "0", "-n", "4"], stdin=s, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
os.close(s)
os.write(m, b"Once upon a time\n")
os.write(m, b"\x04")
out, err = p.communicate(timeout=30)
assert p.returncode == 0, (p.returncode, err)
assert out == b", there was a\n", out
assert err.count(b"> ") >= 2, err
PY
exit 0
