#!/usr/bin/env bash
# bench_tokenize.sh — tokenizes 1 MiB of mixed text (English prose, code, digits, CJK, Cyrillic,
# emoji, whitespace runs, ChatML markers) with the Qwen2.5 vocabulary and prints the time.
# Not a unit test (timings vary). Target: under 1 s for the 1 MiB. Usage: test/bench_tokenize.sh [./edge]
set -eu
cd "$(dirname "$0")/.."
BIN=${1:-./edge}
[ -x "$BIN" ] || { echo "bench: build first (./build.sh)"; exit 1; }
mkdir -p build
src=../shared/fixtures/tokenizer/qwen2.5-vocab.gguf.xz
[ -f "$src" ] || src=test/fixtures/tokenizer/qwen2.5-vocab.gguf.xz
vocab=build/qwen2.5-vocab.gguf
[ -f "$vocab" ] && [ "$vocab" -nt "$src" ] || xz -dkc "$src" > "$vocab"
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
t0=$(date +%s.%N); : | "$BIN" tokenize -m "$vocab" > /dev/null; t1=$(date +%s.%N)
"$BIN" tokenize -m "$vocab" < "$text" > build/bench-1mib.ids; t2=$(date +%s.%N)
n=$(wc -w < build/bench-1mib.ids)
python3 -c "
load=$t1-$t0; total=$t2-$t1
print(f'bench_tokenize: {$(wc -c < $text)} bytes -> {$n} tokens: {total:.3f} s total, {load:.3f} s vocabulary load, {total-load:.3f} s tokenizing (target < 1 s)')"
