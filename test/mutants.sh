#!/usr/bin/env bash
# mutants.sh — proves the test suite catches real bugs: applies each deliberate bug of
# test/mutants.txt to a copy of the tree, builds it, runs `./build.sh test` there, and reports which
# mutants the suite killed (a test failed) and which survived. The unmutated copy runs the suite first,
# so a kill counts only where the same suite passes without the bug. Not part of CI: it is slow (a build
# and a suite run per mutant; the suite stops at its first failure, EDGE_TEST_FAILFAST=1).
#
#   test/mutants.sh              every mutant
#   test/mutants.sh NAME...      the named ones
#   test/mutants.sh --list       the names and what each breaks
#
# The copy lives beside the repository (../.edge-mutants/tree, so that ../shared is found the same
# way) and keeps its build/ between mutants; logs go to ../.edge-mutants/NAME.log. Exit 0 when every
# mutant was killed, 1 when one survived or could not be applied or built.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
LIST=test/mutants.txt
WORK=$(dirname "$ROOT")/.edge-mutants
TREE=$WORK/tree

# name<TAB>file<TAB>sed<TAB>why, one line per mutant
parse() { awk '/^name:/ {n=$2} /^file:/ {f=$2} /^sed:/ {sub(/^sed: */, ""); s=$0}
               /^why:/ {sub(/^why: */, ""); print n "\t" f "\t" s "\t" $0}' "$LIST"; }

if [ "${1:-}" = --list ]; then parse | awk -F'\t' '{printf "%-26s %s (%s)\n", $1, $4, $2}'; exit 0; fi
want=" $* "

echo "== mutants: copying the tree to $TREE"
mkdir -p "$TREE"
[ -d ../shared ] && ln -sfn "$(readlink -f ../shared)" "$WORK/shared"     # the copy's ../shared
git ls-files -co --exclude-standard -z | tar -c --null -T - -f - | (cd "$TREE" && tar -xf -)
[ -d build ] && { mkdir -p "$TREE/build"; cp -pr build/. "$TREE/build/"; }
ln -sfn "$(readlink -f .tools)" "$TREE/.tools"
# the copy is not a git checkout: build.sh finds its sources with find
rm -f "$TREE/edge" "$TREE/build/edge_test"

# The unmutated copy must pass first: a kill only counts when the same suite passes without the bug.
if [ "${EDGE_MUTANTS_NO_BASELINE:-0}" != 1 ]; then
    echo "== mutants: the unmutated copy first (EDGE_MUTANTS_NO_BASELINE=1 skips this)"
    if ! (cd "$TREE" && EDGE_SKIP_APT=1 EDGE_TEST_FAILFAST=1 ./build.sh test) > "$WORK/baseline.log" 2>&1; then
        echo "== mutants: the unmutated copy fails its suite ($WORK/baseline.log): fix that first"; exit 1
    fi
    echo "== mutants: the unmutated copy passes"
fi
killed=0; survived=0; broken=0; report=""
while IFS=$'\t' read -r name file expr why; do
    [ "$want" = "  " ] || [[ "$want" == *" $name "* ]] || continue
    log=$WORK/$name.log
    cp "$ROOT/$file" "$TREE/$file"
    sed -i -e "$expr" "$TREE/$file"
    if cmp -s "$ROOT/$file" "$TREE/$file"; then
        broken=$((broken + 1)); line="BROKEN    $name  (the sed does not change $file)"; echo "$line"; report="$report\n$line"; continue
    fi
    t0=$SECONDS
    (cd "$TREE" && EDGE_SKIP_APT=1 EDGE_TEST_FAILFAST=1 ./build.sh test) > "$log" 2>&1
    rc=$?
    cp "$ROOT/$file" "$TREE/$file"; touch "$TREE/$file"          # back to the original, newer than the build
    first=$(grep -m 1 -E '^FAIL  ' "$log" | sed 's/^FAIL  //; s/  (.*//')
    if [ $rc = 0 ]; then
        survived=$((survived + 1)); line="SURVIVED  $name  ($why)"
    elif [ -z "$first" ]; then
        broken=$((broken + 1)); line="BROKEN    $name  (does not build or the suite did not run: $log)"
    else
        killed=$((killed + 1)); line="killed    $name  by $first"
    fi
    echo "$line  [$((SECONDS - t0)) s]"
    report="$report\n$line"
done < <(parse)
echo "== mutants: $killed killed, $survived survived, $broken could not run"
echo -e "$report" | sed '/^$/d'
[ $survived = 0 ] && [ $broken = 0 ]
