# require.bash — sourced by the script tests (not a test itself).
#   skip_unless_required REASON...   prints the reason and exits 77 (skip), or 1 (fail) under
#                                     EDGE_TEST_REQUIRE=1 (.ci/run sets it): for a missing Vulkan device,
#                                     fixture or tool, which CI always has.
skip_unless_required() {
    if [ "${EDGE_TEST_REQUIRE:-0}" = 1 ]; then echo "cannot run (EDGE_TEST_REQUIRE=1 makes this a failure): $*"; exit 1; fi
    echo "$*"; exit 77
}
