#!/usr/bin/env bash
# mutants_apply.sh — every deliberate bug of test/mutants.txt still applies: its sed changes its file.
# test/mutants.sh (run by hand: a full suite per mutant) reports a mutant whose code moved as BROKEN;
# this keeps the list true as the code moves, in every suite run.
set -u
cd "$(dirname "$0")/../.."
fail=0; n=0
while IFS=$'\t' read -r name file expr; do
    n=$((n + 1))
    [ -f "$file" ] || { echo "mutant $name: $file does not exist"; fail=1; continue; }
    if sed -e "$expr" "$file" | cmp -s - "$file"; then echo "mutant $name: its sed does not change $file"; fail=1; fi
done < <(awk '/^name:/ {n=$2} /^file:/ {f=$2} /^sed:/ {sub(/^sed: */, ""); print n "\t" f "\t" $0}' test/mutants.txt)
[ $n -gt 0 ] || { echo "no mutants read from test/mutants.txt"; fail=1; }
exit $fail
