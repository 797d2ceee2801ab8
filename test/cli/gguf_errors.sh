#!/usr/bin/env bash
# gguf_errors.sh — GGUF reader errors end to end: `edge gguf FILE` on a good file (exit 0), then every
# case of docs/reliability.md "GGUF reader errors" (files written by gguf_mutate.py from stories260K:
# truncated in each section, bad magic, versions, counts and lengths beyond the file, tensor offsets
# beyond the file / overlapping / misaligned / wrapping, shapes whose size overflows, a duplicate
# tensor name, types without a decoder, a type not allowed for the tensor) through both
# `edge gguf FILE` and `edge -m FILE -p hi`: exit 2, nothing on stdout, one message on stderr that
# names the file and holds every expected phrase (field, values, limit). Then random truncations.
set -u
[ -n "${EDGE_BIN:-}" ] && [ -x "$EDGE_BIN" ] || { echo "skip: EDGE_BIN not set"; exit 77; }
cd "$(dirname "$0")/../.."
source test/cli/require.bash
src=../shared/fixtures/models/stories260K.gguf
[ -r "$src" ] || src=test/fixtures/models/stories260K.gguf
[ -r "$src" ] || skip_unless_required "no stories260K.gguf"
command -v python3 > /dev/null || skip_unless_required "python3 not installed"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0

"$EDGE_BIN" gguf "$src" > "$tmp/out" 2> "$tmp/err"; rc=$?
[ $rc = 0 ] || { echo "good file: exit $rc"; cat "$tmp/err"; fail=1; }
grep -q "GGUF version 3" "$tmp/out" || { echo "good file: no version line"; fail=1; }
grep -q "blk.4.ffn_down.weight  *F32  *\[172, 64\]" "$tmp/out" || { echo "good file: tensor line missing"; fail=1; }

# expect LABEL FILE PHRASE... -- then the command: exit 2, stdout empty, stderr one line naming FILE and every PHRASE
expect() {
    local label=$1 file=$2; shift 2
    local phrases=()
    while [ "$1" != -- ]; do phrases+=("$1"); shift; done; shift
    "$@" > "$tmp/out" 2> "$tmp/err"; local rc=$?
    if [ $rc != 2 ]; then echo "$label: exit $rc, want 2 ($*)"; cat "$tmp/err"; fail=1; return; fi
    [ -s "$tmp/out" ] && { echo "$label: printed to stdout ($*)"; fail=1; }
    [ "$(wc -l < "$tmp/err")" = 1 ] || { echo "$label: want one line on stderr ($*):"; cat "$tmp/err"; fail=1; }
    grep -qF "edge: $file: " "$tmp/err" || { echo "$label: stderr does not start with the file name ($*):"; cat "$tmp/err"; fail=1; }
    for p in "${phrases[@]}"; do
        grep -qF -- "$p" "$tmp/err" || { echo "$label: stderr lacks '$p' ($*):"; cat "$tmp/err"; fail=1; }
    done
}

python3 test/cli/gguf_mutate.py "$src" "$tmp" > "$tmp/cases" || { echo "gguf_mutate.py failed"; exit 1; }
size_of() { stat -c %s "$tmp/$1.gguf"; }
# CASE|WHERE|PHRASE|PHRASE...   WHERE: both (`edge gguf` and `edge -m`) or model (a model-loading rule: `edge -m` only)
cases="trunc_header|both|header: file truncated|a GGUF header needs 24 bytes|the file is 20 bytes
trunc_metadata|both|metadata: file truncated|value type of 'general.name'|needs 4 bytes, only 2 left|file is $(size_of trunc_metadata) bytes
trunc_tensor_info|both|tensor directory: file truncated|dimension 1 of tensor 'blk.1.attn_q.weight'|needs 8 bytes, only 3 left
trunc_padding|both|tensor data: file truncated|the data section starts at offset 14176|file is $(size_of trunc_padding) bytes
trunc_data|both|tensor 'blk.4.ffn_norm.weight': data offset 1170944 + size 256 = 1171200 exceeds the data section|the file is truncated|file is $(size_of trunc_data) bytes
bad_magic|both|bad magic 0x58554747 at offset 0|expected 0x46554747|not a GGUF file
version_1|both|GGUF version 1 at offset 4 is not supported|supported: 2, 3
version_4|both|GGUF version 4 at offset 4 is not supported|supported: 2, 3
n_tensors_huge|both|tensor count 4294967296 at offset 8 exceeds what the file can hold|file is $(size_of n_tensors_huge) bytes
n_kv_huge|both|metadata count (n_kv) 1099511627776 at offset 16 exceeds what the file can hold
key_len_huge|both|metadata: key of metadata entry 0 length 4611686018427387904 at offset 24 exceeds the|bytes left in the file
str_len_huge|both|metadata: string 0 of array 'tokenizer.ggml.tokens' length 1125899906842624|bytes left in the file
arr_len_huge|both|metadata 'tokenizer.ggml.tokens': array length 2305843009213693952|(string elements) exceeds the
name_len_huge|both|tensor directory: name of tensor 0 length 1152921504606846976|bytes left in the file
offset_beyond|both|tensor 'blk.3.attn_q.weight': data offset 1171200 + size 16384 = 1187584 exceeds the data section (1171200 bytes
offset_overlap|both|tensor 'output_norm.weight' (data offset 0, 256 bytes) overlaps tensor 'token_embd.weight' (data offset 0, 131072 bytes)
offset_misaligned|both|tensor 'blk.3.attn_q.weight': data offset 807684 is not a multiple of the alignment 32
offset_overflow|both|tensor 'blk.3.attn_q.weight': data offset 18446744073709551584 + size 16384 overflows 64 bits
shape_bytes_overflow|both|tensor 'blk.3.attn_q.weight': byte size of shape [4611686018427387904, 1, 1, 1] (F32) overflows 64 bits
shape_elems_overflow|both|tensor 'blk.3.attn_q.weight': shape [1099511627776, 1099511627776, 1, 1]: element count (product of ne) overflows 63 bits
duplicate_name|both|duplicate tensor name 'blk.3.attn_q.weight' (tensors 12 and 30)
type_q8_1|both|tensor 'blk.3.attn_q.weight': type Q8_1 is not supported (supported: F32 F16 Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q2_K Q3_K Q4_K Q5_K Q6_K IQ4_NL IQ4_XS BF16;|type field 9
type_iq2_xxs|both|tensor 'blk.3.attn_q.weight': type IQ2_XXS is not supported (supported: F32 F16 Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q2_K Q3_K Q4_K Q5_K Q6_K IQ4_NL IQ4_XS BF16;|type field 16
type_unknown|both|tensor 'blk.3.attn_q.weight': type id 1234 (unknown) is not supported
type_norm_q8_0|model|tensor 'blk.0.attn_norm.weight': type Q8_0 is not allowed for a norm, bias or rope_freqs vector (allowed: F32)
type_norm_f16|model|tensor 'blk.0.attn_norm.weight': type F16 is not allowed for a norm, bias or rope_freqs vector (allowed: F32)"
n_cases=0
while IFS='|' read -r -a row; do
    name=${row[0]} where=${row[1]} f="$tmp/${row[0]}.gguf"
    [ -f "$f" ] || { echo "$name: gguf_mutate.py wrote no file"; fail=1; continue; }
    grep -q "^$name " "$tmp/cases" || { echo "$name: not listed by gguf_mutate.py"; fail=1; }
    [ "$where" = both ] && expect "$name (edge gguf)" "$f" "${row[@]:2}" -- "$EDGE_BIN" gguf "$f"
    expect "$name (edge -m)" "$f" "${row[@]:2}" -- "$EDGE_BIN" -m "$f" -p hi
    n_cases=$((n_cases + 1))
done <<< "$cases"
[ "$n_cases" = "$(wc -l < "$tmp/cases")" ] || { echo "checked $n_cases cases, gguf_mutate.py wrote $(wc -l < "$tmp/cases")"; fail=1; }

: > "$tmp/empty.gguf"
expect "empty file" "$tmp/empty.gguf" "header: file truncated" "the file is 0 bytes" -- "$EDGE_BIN" -m "$tmp/empty.gguf" -p hi
expect "missing file" "$tmp/missing.gguf" "cannot open" -- "$EDGE_BIN" gguf "$tmp/missing.gguf"
# random truncations: exit 2 every time (139/134 would be a crash)
size=$(stat -c %s "$src")
for i in $(seq 1 40); do
    n=$(( (RANDOM * 32768 + RANDOM) % size ))
    head -c "$n" "$src" > "$tmp/r.gguf"
    "$EDGE_BIN" gguf "$tmp/r.gguf" > /dev/null 2>&1; rc=$?
    [ $rc = 2 ] || { echo "cut at $n: edge gguf exit $rc"; fail=1; }
    [ $((i % 4)) = 0 ] || continue
    "$EDGE_BIN" -m "$tmp/r.gguf" -p hi > /dev/null 2>&1; rc=$?
    [ $rc = 2 ] || { echo "cut at $n: edge -m exit $rc"; fail=1; }
done
"$EDGE_BIN" gguf > /dev/null 2>&1; rc=$?
[ $rc = 1 ] || { echo "no argument: exit $rc, want 1"; fail=1; }
exit $fail
