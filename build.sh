#!/usr/bin/env bash
# build.sh — the one build entry of edge.
#
#   ./build.sh              install what is missing, fetch Tint, compile kernels, build ./edge, run the demo
#   ./build.sh test         build, then run the whole test suite (ends with "N passed, N failed")
#   ./build.sh debug        -O0 -g with AddressSanitizer + UndefinedBehaviorSanitizer (./edge-debug)
#   ./build.sh test debug   the test suite built that way
#   ./build.sh kernels      only compile kernels/*.wgsl -> build/kernels.gen.h
#   ./build.sh clean        remove build/ and the binaries (keeps the private Tint in .tools/)
#
# Environment: CC (default cc), EDGE_CFLAGS (extra flags), EDGE_TEST_FILTER="NAME..." (run only the C
# tests whose names contain a NAME, and no script tests), EDGE_VALIDATION=1 (tests under the
# Khronos validation layer; on in CI), EDGE_SKIP_APT=1 (never call apt-get).
set -eu
cd "$(dirname "$0")"
ROOT=$PWD

mode=build; flavor=release
for w in "$@"; do
    case "$w" in
        test)    mode=test ;;
        debug)   flavor=debug ;;
        kernels) mode=kernels ;;
        clean)   mode=clean ;;
        build)   mode=build ;;
        *) echo "build.sh: unknown word '$w' (words: test debug kernels clean)" >&2; exit 1 ;;
    esac
done
echo "== build.sh: mode=$mode flavor=$flavor"

if [ "$mode" = clean ]; then
    rm -rf build edge edge-debug edge-aarch64
    echo "== clean: removed build/ and binaries"; exit 0
fi

SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"

# ---- section: system packages ---------------------------------------------------------------
# Each entry: package name, then the file whose presence proves it is installed.
PKGS="gcc:/usr/bin/gcc
libc6-dev:/usr/include/stdio.h
libvulkan-dev:/usr/include/vulkan/vulkan.h
libvulkan1:/usr/lib/x86_64-linux-gnu/libvulkan.so.1
mesa-vulkan-drivers:/usr/share/vulkan/icd.d/lvp_icd.x86_64.json
spirv-tools:/usr/bin/spirv-val
libstb-dev:/usr/include/stb/stb_sprintf.h
vulkan-validationlayers:/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json
unicode-data:/usr/share/unicode/UnicodeData.txt
xz-utils:/usr/bin/xz
python3:/usr/bin/python3
ca-certificates:/etc/ssl/certs
clang:/usr/bin/clang"
missing=""
while IFS=: read -r pkg file; do
    [ -e "$file" ] || missing="$missing $pkg"
done <<< "$PKGS"
if [ -n "$missing" ]; then
    if [ "${EDGE_SKIP_APT:-0}" = 1 ]; then echo "build.sh: missing packages:$missing (EDGE_SKIP_APT=1)" >&2; exit 1; fi
    echo "== packages: installing$missing"
    $SUDO apt-get update -q
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends $missing
else
    echo "== packages: all present"
fi

# ---- section: Tint (Debian unstable's dawn-tools, unpacked privately) ------------------------
# tint needs a newer glibc than Debian 12 has, so it runs through the bundled dynamic loader.
T=$ROOT/.tools/tint
TL=$T/root/usr/lib/x86_64-linux-gnu
tint() { "$TL/ld-linux-x86-64.so.2" --library-path "$TL" "$T/root/usr/bin/tint" "$@"; }
tint_ok() { [ -x "$T/root/usr/bin/tint" ] && tint --format wgsl -o /dev/null kernels/elementwise.wgsl >/dev/null 2>&1; }
if ! tint_ok; then
    echo "== tint: fetching dawn-tools from Debian unstable into .tools/tint"
    rm -rf "$T"; mkdir -p "$T/apt/lists/partial" "$T/apt/cache/archives/partial" "$T/debs" "$T/root"
    : > "$T/apt/status"
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian unstable main" > "$T/apt/sources.list"
    AO="-o Dir::Etc::SourceList=$T/apt/sources.list -o Dir::Etc::SourceParts=/dev/null
        -o Dir::State::Lists=$T/apt/lists -o Dir::State::Status=$T/apt/status -o Dir::Cache=$T/apt/cache
        -o Acquire::Check-Valid-Until=false -o APT::Architecture=amd64 -o APT::Architectures=amd64
        -o APT::Sandbox::User=root -o Debug::NoLocking=1"
    apt-get $AO update -q >/dev/null
    absl=$(apt-cache $AO show dawn-tools | sed -n 's/^Depends: .*\(libabsl[0-9]*\).*/\1/p' | head -n 1)
    [ -n "$absl" ] || { echo "build.sh: cannot find dawn-tools' libabsl dependency" >&2; exit 1; }
    (cd "$T/debs" && apt-get $AO download dawn-tools "$absl" libstdc++6 libgcc-s1 libc6 >/dev/null)
    for f in "$T"/debs/*.deb; do dpkg -x "$f" "$T/root"; done
    rm -rf "$T/debs" "$T/apt" "$T/root/usr/bin/dawn_end2end_tests" "$T/root/usr/share"
    tint_ok || { echo "build.sh: the unpacked tint does not run" >&2; exit 1; }
fi
echo "== tint: $T/root/usr/bin/tint"

# ---- section: kernels: WGSL -> SPIR-V (Tint) -> spirv-val -> build/kernels.gen.h --------------
# Every @compute entry point of kernels/*.wgsl is compiled. A file may instead list variants with
# lines '//! variant NAME ENTRY [WORD...]'; then only those are compiled. A WORD is either an
# override 'A=1' (Tint's --overrides) or a type alias 'alias:T=f16', which rewrites the file's
# module-scope line 'alias T = ...;' (and adds 'enable f16;' when any alias is f16). That is the
# whole variant mechanism: an explicit list, no preprocessor. Kernel names must be unique
# (tools/spvgen.c checks).
mkdir -p build/spv
CC=${CC:-cc}
if [ ! -x build/spvgen ] || [ tools/spvgen.c -nt build/spvgen ]; then
    $CC -O2 -Wall -Wextra -Werror -o build/spvgen tools/spvgen.c
fi
list=build/kernels.list; : > "$list.new"
for src in kernels/*.wgsl; do
    [ -e "$src" ] || continue
    base=$(basename "$src" .wgsl)
    if grep -q '^//! variant ' "$src"; then
        grep '^//! variant ' "$src" | while read -r _ _ name ep words; do
            ov=""; al=""
            for wd in $words; do
                case "$wd" in alias:*) al="$al,${wd#alias:}" ;; *) ov="$ov,$wd" ;; esac
            done
            ov=${ov#,}; echo "$name $src $ep ${ov:--} ${al#,}"
        done >> "$list.new"
    else
        grep -oE '^fn [A-Za-z_][A-Za-z0-9_]*' <(grep -A1 -E '^@compute' "$src" | grep -E '^fn ') | awk '{print $2}' |
            while read -r ep; do echo "$ep $src $ep"; done >> "$list.new"
    fi
done
nk=0; nbuilt=0
mkdir -p build/wgsl
while read -r name src ep ov al; do
    spv=build/spv/$name.spv
    nk=$((nk+1))
    if [ ! -f "$spv" ] || [ "$src" -nt "$spv" ] || [ build.sh -nt "$spv" ]; then
        args=(-ep "$ep" --format spirv -o "$spv")
        [ -n "${ov:-}" ] && [ "$ov" != "-" ] && args+=(--overrides "$ov")
        in=$src
        if [ -n "${al:-}" ]; then                      # type-alias variant: rewrite 'alias T = ...;'
            in=build/wgsl/$name.wgsl; cp "$src" "$in"
            for pair in ${al//,/ }; do
                tn=${pair%%=*}; ty=${pair#*=}
                grep -q "^alias $tn = " "$in" || { echo "build.sh: $src has no 'alias $tn = ...;' line for variant $name" >&2; exit 1; }
                sed -i "s/^alias $tn = .*;/alias $tn = $ty;/" "$in"
            done
            case ",$al" in *=f16*) grep -q '^enable f16;' "$in" || sed -i '1i enable f16;' "$in" ;; esac
        fi
        if ! tint "${args[@]}" "$in"; then echo "build.sh: tint failed on $src entry $ep (variant $name)" >&2; rm -f "$spv"; exit 1; fi
        if ! spirv-val --target-env vulkan1.1 "$spv"; then echo "build.sh: spirv-val rejected $spv ($src:$ep)" >&2; rm -f "$spv"; exit 1; fi
        nbuilt=$((nbuilt+1))
    fi
done < "$list.new"
if [ ! -f build/kernels.gen.h ] || ! cmp -s "$list.new" "$list" || [ "$nbuilt" -gt 0 ] || [ build/spvgen -nt build/kernels.gen.h ]; then
    build/spvgen "$list.new" build/kernels.gen.h
fi
mv "$list.new" "$list"
echo "== kernels: $nk entry points ($nbuilt recompiled) -> build/kernels.gen.h"
[ "$mode" = kernels ] && exit 0

# ---- section: Unicode table: UnicodeData.txt + PropList.txt (unicode-data) -> build/unicode.gen.h --
# The tokenizer's letter/number/whitespace classes come from the system's Unicode database (tools/unigen.c).
UD=/usr/share/unicode
if [ ! -x build/unigen ] || [ tools/unigen.c -nt build/unigen ]; then
    $CC -O2 -Wall -Wextra -Werror -o build/unigen tools/unigen.c
fi
if [ ! -f build/unicode.gen.h ] || [ build/unigen -nt build/unicode.gen.h ] || [ $UD/UnicodeData.txt -nt build/unicode.gen.h ]; then
    build/unigen $UD/UnicodeData.txt $UD/PropList.txt build/unicode.gen.h
fi
echo "== unicode: build/unicode.gen.h"

# ---- section: unity build ---------------------------------------------------------------------
hash=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD 2>/dev/null || hash="$hash-dirty"
CFLAGS_COMMON="-std=gnu11 -Wall -Wextra -Werror -Wno-unused-function -I. -Ibuild -DEDGE_GIT_HASH=\"$hash\" ${EDGE_CFLAGS:-}"
if [ "$flavor" = debug ]; then
    OPT="-O0 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
    BIN=edge-debug; TBIN=build/edge_test_debug
else
    OPT="-O2 -g"
    BIN=edge; TBIN=build/edge_test
fi
LIBS="-ldl -lm -lpthread"
srcs=$(git ls-files -co --exclude-standard '*.c' '*.h' '*.def' 'models/*.gguf' 2>/dev/null || find . -name '*.c' -o -name '*.h' -o -name '*.def')
newest=$(ls -t $srcs build/kernels.gen.h build/unicode.gen.h build.sh 2>/dev/null | head -n 1)
if [ ! -x "$BIN" ] || [ "$newest" -nt "$BIN" ]; then
    echo "== cc $BIN"
    $CC $CFLAGS_COMMON $OPT -o "$BIN" edge.c $LIBS
fi
echo "== built ./$BIN ($(git rev-parse --short HEAD 2>/dev/null || echo no-git))"

if [ "$mode" = build ]; then
    if [ -x "./$BIN" ]; then
        echo "== demo: ./$BIN (embedded model)"
        "./$BIN" version
        if "./$BIN" help | grep -q '^  run '; then echo "Once upon a time" | "./$BIN" -n 48 --temp 0 || true; fi
    fi
    exit 0
fi

# ---- section: tests ---------------------------------------------------------------------------
if [ ! -x "$TBIN" ] || [ "$newest" -nt "$TBIN" ]; then
    echo "== cc $TBIN"
    $CC $CFLAGS_COMMON $OPT -Wno-unused-parameter -o "$TBIN" test/tests.c $LIBS
fi
export EDGE_BIN=$ROOT/$BIN
if [ "${EDGE_VALIDATION:-0}" = 1 ]; then
    export VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation EDGE_VALIDATION=1
    echo "== tests run under the Khronos validation layer"
fi
[ "$flavor" = debug ] && export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
log=build/test-c.log
set +e
"$TBIN" ${EDGE_TEST_FILTER:-} 2>&1 | tee "$log"
set -e
cp=$(tail -n 1 "$log" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*/\1/p'); cp=${cp:-0}
cf=$(tail -n 1 "$log" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*/\2/p')
cs=$(tail -n 1 "$log" | sed -n 's/.*failed, \([0-9]*\) skipped.*/\1/p'); cs=${cs:-0}
[ -n "$cf" ] || { echo "FAIL  test binary did not finish (see $log)"; cf=1; }
# Script tests: test/cli/*.sh drive the built binary; each exits 0 (pass), 77 (skip) or other (fail).
sp=0; sf=0; ss=0
for t in test/cli/*.sh; do
    [ -z "${EDGE_TEST_FILTER:-}" ] || break
    [ -e "$t" ] || continue
    set +e; out=$(bash "$t" 2>&1); rc=$?; set -e
    n=$(basename "$t" .sh)
    if [ $rc = 0 ]; then sp=$((sp+1)); echo "PASS  cli/$n"
    elif [ $rc = 77 ]; then ss=$((ss+1)); echo "SKIP  cli/$n  ($(echo "$out" | tail -n 1))"
    else sf=$((sf+1)); echo "FAIL  cli/$n"; echo "$out" | tail -n 20 | sed 's/^/    /'; fi
done
p=$((cp+sp)); f=$((cf+sf)); s=$((cs+ss))
echo "$p passed, $f failed, $s skipped"
[ "$f" = 0 ]
