# run_lib.bash — shared helpers of the test/cli/run_*.sh script tests (sourced; not a test itself).
set -u
cd "$(dirname "$0")/../.."
[ -n "${EDGE_BIN:-}" ] && [ -x "$EDGE_BIN" ] || { echo "EDGE_BIN is not set to a built edge"; exit 77; }
source test/cli/require.bash
E=$EDGE_BIN
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
golden() { for d in ../shared/fixtures test/fixtures; do [ -f "$d/golden/stories260K/$1" ] && { echo "$d/golden/stories260K/$1"; return 0; }; done; return 1; }
# expect_rc WANT CMD...: runs CMD (stdout -> $tmp/out, stderr -> $tmp/err), checks the exit code
expect_rc() {
    local want=$1; shift
    "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
    [ "$rc" = "$want" ] || { echo "stderr:"; tail -n 5 "$tmp/err"; fail "exit $rc, want $want: $*"; }
}
