#!/usr/bin/env bash
# fixtures_pinned.sh — config/fixtures.def against ../shared/fixtures/SHA256SUMS: every model and
# dequantization file the folder lists is classified in the table (supported, or skipped with a
# reason), and every supported file the table names that the folder lists is intact (its SHA-256).
# (Rows for files the README describes but the folder does not ship are allowed.)
# Without ../shared/fixtures: skip (CI always has it; EDGE_TEST_REQUIRE=1 makes that a failure).
set -u
cd "$(dirname "$0")/../.."
F=../shared/fixtures
if [ ! -f "$F/SHA256SUMS" ]; then
    echo "no $F/SHA256SUMS"; [ "${EDGE_TEST_REQUIRE:-0}" = 1 ] && exit 1; exit 77
fi
fail=0
rows=$(sed -n 's/^FIXTURE(\([A-Z]*\), *"\([^"]*\)", *"\([^"]*\)").*/\1 \2 \3/p' config/fixtures.def)
[ -n "$rows" ] || { echo "config/fixtures.def: no FIXTURE rows"; exit 1; }
listed() { echo "$rows" | awk -v k="$1" -v n="$2" '$1 == k && $2 == n { found = 1 } END { exit !found }'; }
# every model / dequant file of SHA256SUMS is in the table
while read -r sum path; do
    case "$path" in
        ./models/*.gguf)  k=MODEL;   n=${path#./models/}; n=${n%.gguf} ;;
        ./dequant/*.gguf) k=DEQUANT; n=${path#./dequant/}; n=${n%.gguf} ;;
        *) continue ;;
    esac
    listed "$k" "$n" || { echo "$path: not in config/fixtures.def (add it as supported, or skipped with its reason)"; fail=1; }
done < "$F/SHA256SUMS"
# every supported row the folder has is intact
checked=0
while read -r k n why; do
    case "$k" in MODEL) path=./models/$n.gguf ;; DEQUANT) path=./dequant/$n.gguf ;; DETOK) path=./tokenizer/$n.cases.txt ;;
        *) echo "config/fixtures.def: bad kind $k"; fail=1; continue ;; esac
    [ -z "$why" ] || continue
    line=$(awk -v p="$path" '$2 == p' "$F/SHA256SUMS")
    [ -n "$line" ] || continue                                   # listed in the README, not shipped
    (cd "$F" && echo "$line" | sha256sum -c --quiet -) || { echo "$path: SHA-256 differs from SHA256SUMS"; fail=1; }
    checked=$((checked + 1))
done <<< "$rows"
[ $checked -gt 0 ] || { echo "no supported fixture found in SHA256SUMS"; fail=1; }
echo "fixtures: $checked supported files intact, $(echo "$rows" | awk '$3 != ""' | wc -l) rows skipped with a reason"
exit $fail
