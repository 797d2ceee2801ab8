#!/usr/bin/env bash
# eval.sh — `edge eval` on the embedded stories260K model: greedy 64 from "Once upon a time" equals the
# float64 reference's greedy file; --logits writes [n_tokens][n_vocab] f32 within 1e-3 of the exact logits;
# the GPU backend (f32 and f16 activations) gives the same 64 tokens; a bad token id is a usage error.
# Exit 0 pass, 77 skip, anything else fail. Uses $EDGE_BIN (set by build.sh test).
set -u
cd "$(dirname "$0")/../.."
[ -n "${EDGE_BIN:-}" ] && [ -x "$EDGE_BIN" ] || { echo "EDGE_BIN is not set to a built edge"; exit 77; }
golden() { for d in ../shared/fixtures test/fixtures; do [ -f "$d/golden/stories260K/$1" ] && { echo "$d/golden/stories260K/$1"; return 0; }; done; return 1; }
source test/cli/require.bash
g=$(golden once_upon_a_time.exact.greedy.txt) || skip_unless_required "no stories260K golden files"
want=$(sed -n 's/^generated_tokens: //p' "$g")
got=$("$EDGE_BIN" eval --tokens "1 403 407 261 378" --greedy 64) || { echo "edge eval --greedy failed"; exit 1; }
[ "$got" = "$want" ] || { echo "greedy differs"; echo "got:  $got"; echo "want: $want"; exit 1; }

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
toks=$(cat "$(golden story.tokens.txt)")
"$EDGE_BIN" eval --tokens "$toks" --logits "$tmp/story.f32" || { echo "edge eval --logits failed"; exit 1; }
python3 - "$tmp/story.f32" "$(golden story.exact.logits.f32)" <<'PY' || exit 1
import struct, sys
a = open(sys.argv[1], 'rb').read(); b = open(sys.argv[2], 'rb').read()
if len(a) != len(b): sys.exit("logits file has %d bytes, expected %d" % (len(a), len(b)))
n = len(a) // 4
x = struct.unpack('<%df' % n, a); y = struct.unpack('<%df' % n, b)
d = max(abs(p - q) for p, q in zip(x, y))
if not d <= 2e-4: sys.exit("max |edge - exact| = %g (tolerance 2e-4)" % d)
PY

for act in f32 f16; do
    got=$("$EDGE_BIN" eval --tokens "1 403 407 261 378" --greedy 64 --backend gpu --act $act) || { echo "edge eval --backend gpu --act $act failed"; exit 1; }
    [ "$got" = "$want" ] || { echo "gpu $act greedy differs"; echo "got:  $got"; echo "want: $want"; exit 1; }
done
"$EDGE_BIN" eval --tokens "1 512" --greedy 1 2>"$tmp/err"; rc=$?
[ $rc = 1 ] && grep -q "out of range" "$tmp/err" || { echo "bad token id: rc $rc"; cat "$tmp/err"; exit 1; }
"$EDGE_BIN" models | grep -q "^stories260K " || { echo "edge models does not list stories260K"; exit 1; }
exit 0
