#!/usr/bin/env bash
# tok_spm_crosscheck.sh — runs tok_spm_crosscheck.py (edge's SentencePiece-BPE vs a Python reference
# of llama.cpp's rules, Llama 2 and Gemma vocabs, random unseen byte strings with specials and invalid UTF-8).
set -u
cd "$(dirname "$0")/../.."
source test/cli/require.bash
BIN=${EDGE_BIN:-./edge}
command -v python3 > /dev/null || skip_unless_required "python3 not installed"
mkdir -p build
for v in llama2 gemma; do
    src=../shared/fixtures/tokenizer/$v-vocab.gguf.xz; [ -f "$src" ] || src=test/fixtures/tokenizer/$v-vocab.gguf.xz
    [ -f "$src" ] || skip_unless_required "no tokenizer fixtures"
    unxz_vocab "$src" build/$v-vocab.gguf || exit 1
done
exec python3 test/cli/tok_spm_crosscheck.py "$BIN" build
