#!/usr/bin/env bash
# bench_tokenize.sh — tokenizes 1 MiB of mixed text (English prose, code, digits, CJK, Cyrillic,
# emoji, whitespace runs, chat markers) with a real vocabulary and prints the time, vocabulary load
# included. Not a unit test (timings vary): each vocabulary runs REPEAT times (default 3) and the best
# time is printed, since the machine may be busy (the load alone is its own best, of an empty input). Targets (issue 33): qwen2.5 < 1 s, llama3 < 0.3 s,
# gemma3 < 0.5 s for load + 1 MiB.
# Usage: test/bench_tokenize.sh [--bin ./edge] [VOCAB...]   VOCAB: qwen2.5 llama3 gemma3 (default: all three)
set -eu
cd "$(dirname "$0")/.."
BIN=./edge
if [ "${1:-}" = --bin ]; then BIN=$2; shift 2; fi
vocabs=${*:-qwen2.5 llama3 gemma3}
REPEAT=${REPEAT:-3}
[ -x "$BIN" ] || { echo "bench: build first (./build.sh)"; exit 1; }
mkdir -p build
text=build/bench-1mib.txt
python3 - "$text" <<'PY'
import random, sys
random.seed(5)
parts = [
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the sunshine. ",
    "The quick brown fox jumps over the lazy dog; it's 3.14159 times faster than you'd think!\n",
    "def tokenize(text: str) -> list[int]:\n    return [ord(c) for c in text if c.isalnum()]  # 42\n\n",
    "for (int i = 0; i < n; i++) { sum += a[i] * b[i]; }\r\n",
    "\u4eca\u5929\u5929\u6c14\u5f88\u597d\uff0c\u6211\u4eec\u53bb\u516c\u56ed\u6563\u6b65\u5427\u3002",
    "\u043f\u0440\u0438\u0432\u0435\u0442, \u043a\u0430\u043a \u0434\u0435\u043b\u0430? ",
    "\U0001F680 launch \U0001F600\u200d\U0001F32B\ufe0f emoji \u2705 ",
    "    indented\tand\t\ttabbed    \n\n\n",
    "<|im_start|>user\nHello<|im_end|>\n",
    "1234567890 2025-02-20 0x7fff_ffff ",
]
out, size = [], 0
while size < (1 << 20):
    s = random.choice(parts)
    out.append(s); size += len(s.encode())
data = "".join(out).encode()[: 1 << 20]
data = data.decode("utf-8", "ignore").encode()
open(sys.argv[1], "wb").write(data)
PY
now() { date +%s.%N; }
for v in $vocabs; do
    case $v in qwen2.5) target=1.0 ;; llama3) target=0.3 ;; gemma3) target=0.5 ;;
        *) echo "bench: unknown vocabulary '$v' (known: qwen2.5 llama3 gemma3)"; exit 2 ;; esac
    src=../shared/fixtures/tokenizer/$v-vocab.gguf.xz
    [ -f "$src" ] || src=test/fixtures/tokenizer/$v-vocab.gguf.xz
    [ -f "$src" ] || { echo "bench: $v: no $v-vocab.gguf.xz in ../shared/fixtures/tokenizer or test/fixtures/tokenizer"; exit 1; }
    vocab=build/$v-vocab.gguf
    [ -f "$vocab" ] && [ "$vocab" -nt "$src" ] || xz -dkc "$src" > "$vocab"
    best_load=; best_total=
    for _ in $(seq "$REPEAT"); do
        t0=$(now); : | "$BIN" tokenize -m "$vocab" > /dev/null; t1=$(now)
        "$BIN" tokenize -m "$vocab" < "$text" > "build/bench-1mib.$v.ids"; t2=$(now)
        read -r best_load best_total < <(python3 -c "
l=$t1-$t0; t=$t2-$t1; bl='$best_load'; bt='$best_total'
print(min(l, float(bl)) if bl else l, min(t, float(bt)) if bt else t)")
    done
    n=$(wc -w < "build/bench-1mib.$v.ids")
    python3 -c "
total=$best_total; target=$target
verdict = 'ok' if total < target else 'OVER TARGET'
print(f'bench_tokenize {\"$v\":7s}: {$(wc -c < $text)} bytes -> {$n} tokens in {total:.3f} s, vocabulary load included (load alone: {$best_load:.3f} s); best of $REPEAT; target < {target} s: {verdict}')"
done
