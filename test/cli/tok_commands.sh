#!/usr/bin/env bash
# tok_commands.sh — edge tokenize / detokenize / template on the vocab-only GGUFs:
# ids of a known text, --no-special, --no-bos, round trip, rendered templates, exit codes.
set -u
cd "$(dirname "$0")/../.."
source test/cli/require.bash
BIN=${EDGE_BIN:-./edge}
fx() { [ -f "../shared/fixtures/tokenizer/$1" ] && echo "../shared/fixtures/tokenizer/$1" || echo "test/fixtures/tokenizer/$1"; }
mkdir -p build
for v in qwen2.5 llama2 gemma; do
    src=$(fx $v-vocab.gguf.xz); [ -f "$src" ] || skip_unless_required "no tokenizer fixtures"
    unxz_vocab "$src" build/$v-vocab.gguf || exit 1
done
Q=build/qwen2.5-vocab.gguf; L=build/llama2-vocab.gguf; G=build/gemma-vocab.gguf
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
eq() { if [ "$2" != "$3" ]; then echo "FAIL $1: got '$2', want '$3'"; fail=1; fi; }

# ids (the expectations are the case files' llama.cpp ids)
eq "qwen Hello world" "$(printf 'Hello world' | $BIN tokenize -m $Q)" "9707 1879"
eq "llama2 Hello world" "$(printf ' Hello world' | $BIN tokenize -m $L)" "1 29871 15043 3186"
eq "gemma chat" "$(printf '<start_of_turn>user\nExplain why the sky is blue.<end_of_turn>\n<start_of_turn>model\n' | $BIN tokenize -m $G)" \
   "2 106 1645 108 74198 3165 573 8203 603 3868 235265 107 108 106 2516 108"
eq "gemma --no-bos" "$(printf 'Hello world' | $BIN tokenize -m $G --no-bos)" "$(printf 'Hello world' | $BIN tokenize -m $G | cut -d' ' -f2-)"
ns=$(printf '<|im_start|>' | $BIN tokenize -m $Q --no-special)
[ "$ns" != "151644" ] && [ "$(echo $ns | wc -w)" -gt 1 ] || { echo "FAIL --no-special: '$ns'"; fail=1; }
eq "qwen <|im_start|>" "$(printf '<|im_start|>' | $BIN tokenize -m $Q)" "151644"
p=$(printf 'Hello world' | $BIN tokenize -m $Q --pieces | sed -n 3p)
eq "--pieces" "$p" "$(printf '1879\t\xc4\xa0world')"

# detokenize: the ids back to the text
for m in $Q $G; do
    t='Ünïcödé text, 🦙 and  two spaces'
    eq "round trip $m" "$(printf '%s' "$t" | $BIN tokenize -m $m | $BIN detokenize -m $m)" "$t"
done
eq "llama2 detok keeps the space after BOS" "$(printf 'Hi' | $BIN tokenize -m $L | $BIN detokenize -m $L)" " Hi"
eq "llama2 detok without BOS" "$(printf 'Hi' | $BIN tokenize -m $L --no-bos | $BIN detokenize -m $L)" "Hi"

# templates
eq "template gemma" "$(printf 'Hi' | $BIN template -m $G --system 'Be brief.')" "$(printf '<start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\n')"
eq "template chatml" "$(printf 'Hi' | $BIN template -m $Q)" \
   "$(printf '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n')"
eq "template llama3" "$(printf 'Hi' | $BIN template -m $Q --family llama3 --date '26 Jul 2024')" \
   "$(printf '<|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n')"
eq "template none" "$(printf 'Once' | $BIN template -m $L)" "Once"

# exit codes: 1 usage, 2 bad file
printf 'x' | $BIN tokenize > /dev/null 2>&1; eq "no -m" "$?" 1
printf 'x' | $BIN tokenize -m $Q --bogus > /dev/null 2>&1; eq "unknown option" "$?" 1
printf 'x' | $BIN template -m $Q --family jinja > /dev/null 2>&1; eq "unknown family" "$?" 1
printf 'x' | $BIN tokenize -m build/does-not-exist.gguf > /dev/null 2>&1; eq "missing file" "$?" 2
printf 'not a gguf at all, just text' > $tmp/not-a.gguf
msg=$(printf 'x' | $BIN tokenize -m $tmp/not-a.gguf 2>&1 >/dev/null); rc=$?
eq "not a gguf" "$rc" 2
case "$msg" in *not-a.gguf*) ;; *) echo "FAIL error message does not name the file: $msg"; fail=1 ;; esac
head -c 100000 $Q > $tmp/truncated.gguf
printf 'x' | $BIN tokenize -m $tmp/truncated.gguf > /dev/null 2>&1; eq "truncated gguf" "$?" 2
eq "template strips echo's newline" "$(echo Hi | $BIN template -m $Q --family llama3)" "$(printf 'Hi' | $BIN template -m $Q --family llama3)"
nt=../shared/fixtures/dequant/dequant-Q8_0.gguf
if [ -f $nt ]; then
    msg=$(printf 'x' | $BIN tokenize -m $nt 2>&1 >/dev/null); rc=$?
    eq "gguf without tokenizer" "$rc" 2
    case "$msg" in *tokenizer.ggml.model*) ;; *) echo "FAIL no-tokenizer message: $msg"; fail=1 ;; esac
fi
echo "999999999" | $BIN detokenize -m $Q > /dev/null 2>&1; eq "bad id" "$?" 1
# edge detokenize --special is llama_detokenize(remove_special, unparse_special), clean-up of spaces
# included (Llama 3's BPE): every case of llama3.cases.txt (../shared only) gives its detok bytes
l3=../shared/fixtures/tokenizer/llama3-vocab.gguf.xz
if [ -f $l3 ]; then
    unxz_vocab $l3 build/llama3-vocab.gguf || exit 1
    python3 - "$BIN" build/llama3-vocab.gguf ../shared/fixtures/tokenizer/llama3.cases.txt <<'PY' || fail=1
import subprocess, sys
binp, vocab, cases = sys.argv[1:4]
bad = 0; n = 0
for line in open(cases, encoding="utf-8", errors="surrogateescape"):
    if line.startswith("#") or not line.strip("\n"): continue
    f = line.rstrip("\n").split("\t"); n += 1
    got = subprocess.run([binp, "detokenize", "-m", vocab, "--special"], input=f[1].encode(), capture_output=True).stdout
    if got != bytes.fromhex(f[2]):
        bad += 1; print("FAIL detokenize llama3 '%s': %r" % (f[3][:50], got[:60]))
if bad or n < 100: sys.exit("llama3 detokenize: %d of %d cases differ" % (bad, n))
PY
fi
exit $fail
