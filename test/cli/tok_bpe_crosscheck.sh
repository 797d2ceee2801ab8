#!/usr/bin/env bash
# tok_bpe_crosscheck.sh — runs tok_bpe_crosscheck.py (edge vs an independent Python byte-level BPE
# with the exact pre-tokenizer regexes, on random unseen strings, for qwen2, llama-bpe and gpt-2).
set -u
cd "$(dirname "$0")/../.."
source test/cli/require.bash
BIN=${EDGE_BIN:-./edge}
src=../shared/fixtures/tokenizer/qwen2.5-vocab.gguf.xz; [ -f "$src" ] || src=test/fixtures/tokenizer/qwen2.5-vocab.gguf.xz
[ -f "$src" ] || skip_unless_required "no tokenizer fixtures"
command -v python3 > /dev/null || skip_unless_required "python3 not installed"
mkdir -p build
unxz_vocab "$src" build/qwen2.5-vocab.gguf || exit 1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT     # the pre-tokenizer variants it writes
python3 test/cli/tok_bpe_crosscheck.py "$BIN" build/qwen2.5-vocab.gguf "$tmp"
