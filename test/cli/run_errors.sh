#!/usr/bin/env bash
# run_errors.sh — bad input never crashes and exit codes are the documented ones: 1 for usage errors (unknown
# flag, bad values, -p with --input, -c over the model's limit), 2 for a bad -m (missing, not a GGUF), 3 for a
# missing device, 5 when a prompt overflows the context (reported, the next prompt still answered), 0 with
# --truncate (the end kept), a prompt over EDGE_RUN_MAX_PROMPT_BYTES, invalid UTF-8 replaced with U+FFFD and
# reported, 130 on SIGINT during a generation (the answer so far and its separator are written), and a closed
# stdout (edge ... | head -c 10) ends quietly with no error text.
source "$(dirname "$0")/run_lib.bash"
R="$E --backend ref --temp 0"
expect_rc 1 $E --bogus
grep -q "unknown option '--bogus'" "$tmp/err" || fail "unknown option message"
for bad in "-n -1" "-n x" "-c 0" "--temp -1" "--top-p 0" "--top-p 1.5" "--min-p 2" "--repeat-penalty 0" "--seed -3" \
           "--input xml" "--backend cuda" "--act f8" "--sep \\q" "--device x" "--stop"; do
    expect_rc 1 $E $bad -p x
    [ -s "$tmp/err" ] || fail "no message for '$bad'"
    [ -s "$tmp/out" ] && fail "stdout written for '$bad'"
done
expect_rc 1 $E -p x --input line
expect_rc 1 $R -c 5000 -p x
grep -q "exceeds the context limit of 2048 tokens for 'stories260K'" "$tmp/err" || fail "-c over the limit: $(cat "$tmp/err")"
expect_rc 2 $E -m "$tmp/nonexistent.gguf" -p x
grep -q "nonexistent.gguf" "$tmp/err" || fail "bad -m message names the file"
head -c 100 /dev/urandom > "$tmp/junk.gguf"
expect_rc 2 $E -m "$tmp/junk.gguf" -p x
expect_rc 3 $E --device 99 -p x
grep -q "EDGE_DEVICE=99" "$tmp/err" || fail "device error message: $(cat "$tmp/err")"

# context overflow: -c 16 and a 30-token prompt fails, the next prompt is answered, exit 5
long="Once upon a time there was a little girl named Lily who loved to play in the park with her friends every day"
printf '%s\nThe cat\n' "$long" | $R -c 16 -n 4 > "$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc = 5 ] || fail "context overflow: exit $rc, want 5"
grep -q "prompt 1: .* prompt tokens do not fit the context of 16 tokens" "$tmp/err" || fail "overflow message: $(cat "$tmp/err")"
want=$($R -c 16 -n 4 -q -p "The cat")
printf '\n\n%s\n\n' "$want" | cmp -s - "$tmp/out" || fail "after an overflow: want an empty record then the next answer"
# --truncate keeps the end: same as the prompt's last tokens after BOS
printf '%s\n' "$long" | $R -c 16 -n 4 --truncate > "$tmp/out" 2>"$tmp/err" || fail "--truncate: exit $?"
grep -q "kept the last" "$tmp/err" || fail "--truncate is not reported"
[ "$(wc -c < "$tmp/out")" -gt 2 ] || fail "--truncate gave no text"
# generation that fills the context stops with a report, exit 0
$R -c 8 -n 64 -p "Once upon a time" > "$tmp/out" 2>"$tmp/err" || fail "full context: exit $?"
grep -q "context of 8 tokens is full" "$tmp/err" || fail "full context not reported"
# over EDGE_RUN_MAX_PROMPT_BYTES (128 KiB)
{ head -c 200000 /dev/zero | tr '\0' 'a'; printf '\nZoo\n'; } | $R -n 2 > "$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc = 5 ] && grep -q "longer than 131072 bytes" "$tmp/err" || fail "oversized prompt: exit $rc: $(cat "$tmp/err")"
# invalid UTF-8: replaced and reported, answered
printf 'Zoo \xff\xfe\xc3\n' | $R -n 3 > "$tmp/out" 2>"$tmp/err" || fail "invalid UTF-8: exit $?"
grep -q "3 invalid UTF-8 bytes replaced with U+FFFD" "$tmp/err" || fail "invalid UTF-8 not reported: $(cat "$tmp/err")"
# SIGINT during a long generation: exit 130, the text so far is written with its separator
"$E" --backend ref -n 2000 --temp 0.8 -c 2048 -p "Once upon a time" > "$tmp/sig_out" 2>"$tmp/sig_err" &
epid=$!
sleep 0.3
kill -INT $epid
wait $epid; rc=$?
[ $rc = 130 ] || fail "SIGINT: exit $rc, want 130"
[ "$(tail -c 1 "$tmp/sig_out" | od -An -c | tr -d ' ')" = '\n' ] || fail "SIGINT: the answer so far is not ended by its separator"
grep -qi "error" "$tmp/sig_err" && fail "SIGINT printed an error: $(cat "$tmp/sig_err")"
# SIGINT while waiting for input
sleep 3 2>/dev/null | { "$E" --backend ref -n 4 > /dev/null 2>"$tmp/sig_err" & echo $! > "$tmp/pid2"; wait $!; echo $? > "$tmp/rc2"; } >/dev/null 2>&1 &
sleep 0.5; kill -INT "$(cat "$tmp/pid2")"; sleep 0.3
for i in 1 2 3 4 5 6 7 8 9 10; do [ -s "$tmp/rc2" ] && break; sleep 0.2; done
[ "$(cat "$tmp/rc2" 2>/dev/null)" = 130 ] || fail "SIGINT while reading stdin: exit $(cat "$tmp/rc2" 2>/dev/null)"
# closed stdout: quiet
yes "Once upon a time" | head -n 200 | $R -n 64 2>"$tmp/err" | head -c 10 > /dev/null
rc=${PIPESTATUS[2]}
[ $rc = 0 ] || fail "closed stdout: exit $rc, want 0"
[ -s "$tmp/err" ] && grep -v "^edge: stories260K" "$tmp/err" | grep -q . && fail "closed stdout printed: $(cat "$tmp/err")"
exit 0
