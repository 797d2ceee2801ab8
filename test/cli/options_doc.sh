#!/usr/bin/env bash
# options_doc.sh — configuration in one place. In the shipped sources (base cli config kernels models
# edge.c fat/): nothing outside the options module (base/options.{h,c}) reads or changes the
# environment (getenv, setenv, unsetenv, putenv); every EDGE_* name that is not a macro of the sources
# (header guards, the compile-time knobs of config/edge_config.h) appears in docs/options.md; every
# variable of the options table (base/options.h) is a row of its runtime table, and every row there is
# a variable of the table.
set -u
cd "$(dirname "$0")/../.."
fail=0
bad() { echo "$*"; fail=1; }
src=(base cli config kernels models edge.c fat/)

# 1. the environment is read in one place
hits=$(grep -rnIE '\b(getenv|secure_getenv|setenv|unsetenv|putenv)\b' "${src[@]}" | grep -vE '^base/options\.[ch]:')
[ -z "$hits" ] || bad "the environment is read or changed outside base/options.{h,c}:"$'\n'"$hits"

# 2. every EDGE_* name of the sources that is not a macro is on docs/options.md
names=$(grep -rhoIE '\bEDGE_[A-Z0-9_]*[A-Z0-9]\b' "${src[@]}" | sort -u)
macros=$(grep -rhoIE '^[[:space:]]*#[[:space:]]*(define|ifndef|ifdef)[[:space:]]+EDGE_[A-Z0-9_]*' "${src[@]}" |
         grep -oE 'EDGE_[A-Z0-9_]*' | sort -u)
n=0
for v in $names; do
    echo "$macros" | grep -qx "$v" && continue
    n=$((n + 1))
    grep -qF "\`$v\`" docs/options.md || bad "$v appears in the sources but not in docs/options.md"
done
[ "$n" -ge 20 ] || bad "only $n EDGE_* variables found in the sources (the grep is broken?)"

# 3. the options table (base/options.h) and the runtime table of docs/options.md name the same variables
table=$(sed -n 's/^ *X([A-Z]*, *[a-z0-9_]*, *"\([A-Z0-9_]*\)").*/\1/p' base/options.h | sort)
rows=$(awk '/^## /{ on = /^## Runtime/ } on && /^\| `/' docs/options.md | sed 's/^| `\([^`]*\)`.*/\1/' | sort)
[ "$(echo "$table" | wc -l)" -ge 20 ] || bad "base/options.h: only $(echo "$table" | wc -l) variables read from the table"
[ "$table" = "$rows" ] || bad "base/options.h and the runtime table of docs/options.md differ:"$'\n'"$(diff <(echo "$table") <(echo "$rows"))"

[ $fail = 0 ] && echo "options: $n EDGE_* variables in the sources, $(echo "$table" | wc -l) in the options table, all documented"
exit $fail
