#!/usr/bin/env bash
# run_golden.sh — greedy generation equals llama.cpp's golden continuations of stories260K (the fixtures'
# generated_text, unescaped per the fixtures README) for every golden prompt, on --backend ref and gpu:
# issue 4's acceptance line `echo "Once upon a time" | edge -n 64 --temp 0` (default backend gpu), issue 3's
# `edge --backend ref -n 64 --temp 0 -p "Once upon a time"`, the other prompts through one process in
# --input nul mode on ref, and "" (BOS only) through -p "".
source "$(dirname "$0")/run_lib.bash"
g=$(golden once_upon_a_time.greedy.txt) || skip_unless_required "no stories260K golden files"
gdir=$(dirname "$g")
# want FILE: the golden generated_text, unescaped, into $tmp/want
want() {
    python3 - "$1" > "$tmp/want" <<'PY'
import sys, re
t = [l[len("generated_text: "):].rstrip("\n") for l in open(sys.argv[1], encoding="utf-8") if l.startswith("generated_text: ")][0]
b = t.encode("utf-8")
out = bytearray(); i = 0
while i < len(b):
    if b[i] == 0x5c:
        c = chr(b[i + 1])
        if c == 'x': out.append(int(b[i + 2:i + 4], 16)); i += 4; continue
        out += {'n': b'\n', 't': b'\t', 'r': b'\r', '\\': b'\\'}[c]; i += 2; continue
    out.append(b[i]); i += 1
sys.stdout.buffer.write(bytes(out))
PY
}
want "$g"
# the acceptance commands: output = golden text + the separator
echo "Once upon a time" | "$E" -n 64 --temp 0 > "$tmp/got" 2>"$tmp/err" || fail "gpu default run: $(tail -n 3 "$tmp/err")"
printf '\n\n' >> "$tmp/want"
cmp -s "$tmp/got" "$tmp/want" || { diff <(od -c "$tmp/got") <(od -c "$tmp/want") | head; fail "gpu: echo 'Once upon a time' | edge -n 64 --temp 0 differs from the golden text"; }
want "$g"; printf '\n' >> "$tmp/want"
"$E" --backend ref -n 64 --temp 0 -p "Once upon a time" > "$tmp/got" 2>"$tmp/err" || fail "ref -p run"
cmp -s "$tmp/got" "$tmp/want" || fail "ref: edge --backend ref -n 64 --temp 0 -p 'Once upon a time' differs from the golden text"
want "$gdir/bos_only.greedy.txt"; printf '\n' >> "$tmp/want"
"$E" --backend ref -n 64 --temp 0 -p "" > "$tmp/got" 2>"$tmp/err" || fail "ref -p ''"
cmp -s "$tmp/got" "$tmp/want" || fail "bos_only (-p '') differs from the golden text"
# every golden prompt, NUL-separated, through one process (the GPU decodes ~25 tok/s on lavapipe: the
# acceptance line above is its golden check)
names="once_upon_a_time lily_and_tom_went_to_the_park the_cat one_day zoo tom_had_a_red_ball"
: > "$tmp/in"; : > "$tmp/wantall"
for n in $names; do
    f=$gdir/$n.greedy.txt
    printf '%s\0' "$(sed -n 's/^prompt: //p' "$f")" >> "$tmp/in"
    want "$f"; cat "$tmp/want" >> "$tmp/wantall"; printf '\0' >> "$tmp/wantall"
done
for b in ref; do
    "$E" --backend $b --input nul -n 64 --temp 0 < "$tmp/in" > "$tmp/got" 2>"$tmp/err" || fail "--backend $b --input nul: $(tail -n 3 "$tmp/err")"
    cmp -s "$tmp/got" "$tmp/wantall" || fail "--backend $b: a golden prompt's continuation differs (cmp: $(cmp "$tmp/got" "$tmp/wantall"))"
done
exit 0
