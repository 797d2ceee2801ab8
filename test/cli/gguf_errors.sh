#!/usr/bin/env bash
# gguf_errors.sh — `edge gguf FILE` on a good, a truncated and a bad-magic file:
# exit 0 / 2 / 2, a message on stderr naming the file and the field, never a crash.
set -u
[ -n "${EDGE_BIN:-}" ] && [ -x "$EDGE_BIN" ] || { echo "skip: EDGE_BIN not set"; exit 77; }
cd "$(dirname "$0")/../.."
src=../shared/fixtures/models/stories260K.gguf
[ -r "$src" ] || src=test/fixtures/models/stories260K.gguf
[ -r "$src" ] || { echo "skip: no stories260K.gguf"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0

"$EDGE_BIN" gguf "$src" > "$tmp/out" 2> "$tmp/err"; rc=$?
[ $rc = 0 ] || { echo "good file: exit $rc"; cat "$tmp/err"; fail=1; }
grep -q "GGUF version 3" "$tmp/out" || { echo "good file: no version line"; fail=1; }
grep -q "blk.4.ffn_down.weight  *F32  *\[172, 64\]" "$tmp/out" || { echo "good file: tensor line missing"; fail=1; }

expect() {  # file, pattern, label
    "$EDGE_BIN" gguf "$1" > "$tmp/out" 2> "$tmp/err"; rc=$?
    if [ $rc != 2 ]; then echo "$3: exit $rc, want 2"; cat "$tmp/err"; fail=1; return; fi
    grep -q -- "$2" "$tmp/err" || { echo "$3: stderr lacks '$2':"; cat "$tmp/err"; fail=1; }
    grep -q "$1" "$tmp/err" || { echo "$3: stderr does not name the file"; fail=1; }
    [ -s "$tmp/out" ] && { echo "$3: printed to stdout"; fail=1; }
}

head -c 5000 "$src" > "$tmp/trunc.gguf"
expect "$tmp/trunc.gguf" "truncated\|exceeds" "truncated at 5000"
head -c 1000000 "$src" > "$tmp/trunc2.gguf"
expect "$tmp/trunc2.gguf" "exceeds the data section" "truncated in tensor data"
{ printf 'GGUX'; tail -c +5 "$src"; } > "$tmp/magic.gguf"
expect "$tmp/magic.gguf" "bad magic" "bad magic"
: > "$tmp/empty.gguf"
expect "$tmp/empty.gguf" "truncated" "empty file"
expect "$tmp/missing.gguf" "cannot open" "missing file"
# a few hundred random truncations: exit 2 every time (139/134 would be a crash)
size=$(stat -c %s "$src")
for i in $(seq 1 40); do
    n=$(( (RANDOM * 32768 + RANDOM) % size ))
    head -c "$n" "$src" > "$tmp/r.gguf"
    "$EDGE_BIN" gguf "$tmp/r.gguf" > /dev/null 2>&1; rc=$?
    [ $rc = 2 ] || { echo "cut at $n: exit $rc"; fail=1; }
done
"$EDGE_BIN" gguf > /dev/null 2>&1; rc=$?
[ $rc = 1 ] || { echo "no argument: exit $rc, want 1"; fail=1; }
exit $fail
