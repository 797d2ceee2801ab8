#!/usr/bin/env bash
# profiles.sh — `edge info` under every device profile (EDGE_PROFILE=NAME) exits 0 and prints the
# profile with limits no higher than the device's own, and `edge fat`'s identity check passes under it;
# an unknown name exits 3 naming the value and listing the valid names. Exit 0 pass, 77 skip, anything else fail. Uses $EDGE_BIN (set by build.sh test).
set -eu
cd "$(dirname "$0")/../.."
[ -n "${EDGE_BIN:-}" ] && [ -x "$EDGE_BIN" ] || { echo "EDGE_BIN is not set to a built edge"; exit 77; }
source test/cli/require.bash
names=$(sed -n 's/^PROFILE([A-Z0-9_]*, *"\([^"]*\)".*/\1/p' config/profiles.def)
[ -n "$names" ] || { echo "no profiles in config/profiles.def"; exit 1; }
set +e
real=$("$EDGE_BIN" info 2>&1); rc=$?
set -e
[ $rc = 0 ] || skip_unless_required "no Vulkan device here: $(echo "$real" | head -n 1)"
echo "$real" | grep -q '^profile: *none' || { echo "plain 'edge info' does not say 'profile: none'"; exit 1; }
lim() { echo "$1" | sed -n "s/^$2 *\([0-9]*\).*/\1/p"; }
for n in $names; do
    set +e; out=$(EDGE_PROFILE=$n "$EDGE_BIN" info 2>&1); rc=$?; set -e
    [ $rc = 0 ] || { echo "EDGE_PROFILE=$n edge info: exit $rc"; echo "$out" | head -n 5; exit 1; }
    echo "$out" | grep -q "^profile: *$n\$" || { echo "EDGE_PROFILE=$n: info does not print the profile"; exit 1; }
    for key in 'shared memory per workgroup:' 'maxStorageBufferRange:' 'subgroup size:'; do
        a=$(lim "$out" "$key"); b=$(lim "$real" "$key")
        [ -n "$a" ] && [ "$a" -le "$b" ] || { echo "EDGE_PROFILE=$n: '$key' $a exceeds the device's $b"; exit 1; }
    done
done
# the factory test can run on every profile's board: no kernel it requires exceeds the profile's limits
# (a kernel the ops use only where it fits, attn_short's 512 invocations, does not count)
for n in $names; do
    set +e; out=$(EDGE_PROFILE=$n "$EDGE_BIN" fat --only identity 2>&1); rc=$?; set -e
    [ $rc = 0 ] || { echo "EDGE_PROFILE=$n edge fat --only identity: exit $rc"; echo "$out" | grep -m 2 "identity\|RESULT"; exit 1; }
done
# what the table says about v3d-7.1 shows: no f16 arithmetic, 16 KiB of shared memory at most
out=$(EDGE_PROFILE=v3d-7.1 "$EDGE_BIN" info)
echo "$out" | grep -q '^f16 arithmetic: *no' || { echo "v3d-7.1 leaves f16 arithmetic on"; exit 1; }
[ "$(lim "$out" 'shared memory per workgroup:')" -le 16384 ] || { echo "v3d-7.1 allows more than 16 KiB shared"; exit 1; }
set +e; err=$(EDGE_PROFILE=no-such-gpu "$EDGE_BIN" info 2>&1 >/dev/null); rc=$?; set -e
[ $rc = 3 ] || { echo "unknown profile: exit $rc, want 3"; exit 1; }
echo "$err" | grep -q "EDGE_PROFILE=no-such-gpu: unknown device profile (valid: .*v3d-7.1.*portable" ||
    { echo "unknown profile message: $err"; exit 1; }
exit 0
