# require.bash — sourced by the script tests (not a test itself).
#   skip_unless_required REASON...   prints the reason and exits 77 (skip), or 1 (fail) under
#                                     EDGE_TEST_REQUIRE=1 (.ci/run sets it): for a missing Vulkan device,
#                                     fixture or tool, which CI always has.
skip_unless_required() {
    if [ "${EDGE_TEST_REQUIRE:-0}" = 1 ]; then echo "cannot run (EDGE_TEST_REQUIRE=1 makes this a failure): $*"; exit 1; fi
    echo "$*"; exit 77
}
#   unxz_vocab SRC.xz DEST            unpacks SRC.xz to DEST unless DEST is newer; through a temporary
#                                     name and a rename, so that two runs of the suite never read a half-written file
unxz_vocab() {
    [ -f "$2" ] && [ "$2" -nt "$1" ] && return 0
    xz -dkc "$1" > "$2.$$" && mv "$2.$$" "$2"
}
#   kernel_names                      filter: the kernel names of `edge info`'s kernel table (one per line), as
#                                     `edge fat --only` takes them (build.sh's aarch64 pass sources this file too)
kernel_names() { sed -n 's/^  \([a-z0-9_][a-z0-9_]*\)  *kernels\/.*/\1/p'; }
