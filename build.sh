#!/usr/bin/env bash
# build.sh — the one build entry of edge.
#
#   ./build.sh              install what is missing, fetch Tint, compile kernels, build ./edge, run the demo
#   ./build.sh test         build, then run the whole test suite (C tests and test/cli/*.sh, EDGE_TEST_JOBS
#                           processes at once); names every skipped test with its reason
#                           ("skipped: NAME  (REASON)"), then ends with "N passed, N failed, N skipped"
#   ./build.sh debug        -O1 -g with AddressSanitizer + UndefinedBehaviorSanitizer (./edge-debug)
#   ./build.sh test debug   the test suite built that way
#   ./build.sh kernels      only compile kernels/*.wgsl -> build/kernels.gen.h
#   ./build.sh clean        remove build/ and the binaries (keeps the private Tint in .tools/)
#   ./build.sh fuzz TARGET SECONDS
#                           build the libFuzzer harness test/fuzz/TARGET.c with clang (-fsanitize=fuzzer,address,
#                           undefined) and run it for SECONDS on build/fuzz-corpus/TARGET (seeded from the
#                           fixtures by tools/fuzz_seeds.py) and test/corpus/TARGET; a crash or hang is written to
#                           build/fuzz-artifacts/TARGET/. TARGET all: every harness, SECONDS shared between them
#                           (the CI smoke). Ends with "N passed, N failed" (a harness passes when it ran its time
#                           without a crash). Env EDGE_FUZZ_ARGS: more libFuzzer flags (e.g. -jobs=2 -workers=2).
#   ./build.sh aarch64      cross-compile ./edge-aarch64 (Debian's gcc-aarch64-linux-gnu; needs only libc,
#                           libm, libdl, libpthread; libvulkan comes through dlopen at run time)
#   ./build.sh test aarch64 also build/edge_test_aarch64, unpack Debian's arm64 libvulkan1 and lavapipe into
#                           .tools/arm64-sysroot (dpkg -x, no multiarch) and run under qemu-user: edge info,
#                           the embedded model's golden greedy output on ref and gpu, edge fat --quick, and the
#                           golden/reference tests (ends with "N passed, N failed")
#   ./build.sh apt-sources SUITE...
#                           only print the private apt sources lines build.sh would write for SUITE... (the
#                           Tint fetch uses unstable, the arm64 sysroot bookworm bookworm-updates); installs nothing
#
# Package mirror: the private apt sources (Tint, arm64 sysroot) use the Debian mirror of the machine's own
# apt sources files, so build.sh works wherever apt-get works (section "package mirror").
# Environment: CC (default cc), EDGE_CFLAGS (extra flags), EDGE_TEST_FILTER="NAME..." (run only the C
# tests whose names contain a NAME, and no script tests), EDGE_VALIDATION=1 (tests under the
# Khronos validation layer; on in CI), EDGE_TEST_REQUIRE=1 (a test that cannot open its Vulkan device, load
# a fixture or vocabulary, or find a tool fails instead of skipping; on in CI: .ci/run), EDGE_SKIP_APT=1
# (never call apt-get), EDGE_TEST_FAILFAST=1 (stop the tests at the first failure; test/mutants.sh),
# EDGE_TEST_JOBS=N (test processes at once; default the CPU count),
# EDGE_APT_ETC (default /etc/apt: the apt configuration folder whose sources files name the Debian mirror;
# tests point it elsewhere).
set -eu
cd "$(dirname "$0")"
ROOT=$PWD

mode=build; flavor=release; arch=native
if [ "${1:-}" = fuzz ]; then
    mode=fuzz; fuzz_target=${2:-}; fuzz_secs=${3:-60}
    [ -n "$fuzz_target" ] || { echo "build.sh: fuzz wants a target: all $(ls test/fuzz/*.c | xargs -n1 basename | sed 's/\.c$//' | tr '\n' ' ')" >&2; exit 1; }
    case "$fuzz_secs" in ''|*[!0-9]*) echo "build.sh: fuzz SECONDS must be a number, not '$fuzz_secs'" >&2; exit 1 ;; esac
    shift $(( $# < 3 ? $# : 3 ))
elif [ "${1:-}" = apt-sources ]; then
    mode=apt-sources; shift; apt_suites="$*"; set --
    [ -n "$apt_suites" ] || { echo "build.sh: apt-sources wants one or more suites (e.g. unstable)" >&2; exit 1; }
fi
for w in "$@"; do
    case "$w" in
        test)    mode=test ;;
        debug)   flavor=debug ;;
        kernels) mode=kernels ;;
        clean)   mode=clean ;;
        build)   mode=build ;;
        aarch64) arch=aarch64 ;;
        *) echo "build.sh: unknown word '$w' (words: test debug kernels clean aarch64; fuzz TARGET SECONDS or apt-sources SUITE... first)" >&2; exit 1 ;;
    esac
done
if [ "$arch" = aarch64 ] && [ "$flavor" = debug ]; then
    echo "build.sh: 'debug aarch64' is not supported (the sanitizers do not run under qemu-user); use 'aarch64'" >&2; exit 1
fi
echo "== build.sh: mode=$mode flavor=$flavor arch=$arch"

if [ "$mode" = clean ]; then
    rm -rf build edge edge-debug edge-aarch64
    echo "== clean: removed build/ and binaries"; exit 0
fi

# ---- section: package mirror (the machine's own Debian mirror, for the private apt sources) -------
# apt_sources SUITE...: one line 'deb [signed-by=KEYRING] URI SUITE main' per SUITE, where URI is that
# of the first entry of the machine's apt sources files that serves Debian's main archive: a 'deb'
# entry (not deb-src) for bookworm or bookworm-updates (so not bookworm-security), in sources.list or
# sources.list.d/*.list (one-line 'deb [opts] URI suite comp...') or sources.list.d/*.sources (deb822
# stanzas: Types, URIs, Suites, Signed-By, Enabled), read in apt's order; other files (*.disabled...)
# and comments are skipped, as apt does. KEYRING: the entry's signed-by file, else Debian's archive keyring.
apt_sources() {
    local etc=${EDGE_APT_ETC:-/etc/apt} files=() f m s
    [ -f "$etc/sources.list" ] && files+=("$etc/sources.list")
    for f in "$etc"/sources.list.d/*; do
        case "$f" in *.list|*.sources) [ -f "$f" ] && files+=("$f") ;; esac
    done
    m=$([ ${#files[@]} = 0 ] || awk -v rel=bookworm -v def=/usr/share/keyrings/debian-archive-keyring.gpg '
        function want(suites,   n, a, i) { n = split(suites, a); for (i = 1; i <= n; i++) if (a[i] == rel || a[i] == rel "-updates") return 1; return 0 }
        function take(uris, key,   a) { split(uris, a); if (key !~ /^\//) key = def; print a[1], key; found = 1; exit }
        function stanza() {     # the end of a deb822 stanza
            if (!found && (" " types " ") ~ /[ \t]deb[ \t]/ && tolower(enabled) != "no" && want(suites)) take(uris, key)
            types = uris = suites = key = enabled = ""
        }
        FNR == 1 { if (d822) stanza(); d822 = FILENAME ~ /\.sources$/ }
        d822 && /^[ \t]*$/ { stanza(); next }
        d822 && /^[A-Za-z-]+:/ {
            name = tolower(substr($0, 1, index($0, ":") - 1)); val = substr($0, index($0, ":") + 1)
            if (name == "types") types = val; else if (name == "uris") uris = val; else if (name == "suites") suites = val
            else if (name == "enabled") { enabled = val; gsub(/[ \t]/, "", enabled) }
            else if (name == "signed-by") { key = val; sub(/^[ \t]+/, "", key); sub(/[ \t].*/, "", key) }
            next
        }
        d822 { next }           # comments (#) and continuation lines
        {                       # one-line format
            opts = ""
            if ($1 != "deb") next
            if (match($0, /\[[^]]*\]/)) { opts = substr($0, RSTART + 1, RLENGTH - 2); $0 = substr($0, 1, RSTART - 1) substr($0, RSTART + RLENGTH) }
            key = ""; if (match(opts, /signed-by=[^ \t]+/)) key = substr(opts, RSTART + 10, RLENGTH - 10)
            if (want($3)) take($2, key)
        }
        END { if (!found && d822) stanza(); if (!found) exit 1 }' "${files[@]}") || true
    if [ -z "$m" ]; then
        echo "build.sh: no Debian archive URI in the apt sources (read: ${files[*]:-none; $etc/sources.list and $etc/sources.list.d/*.list|*.sources do not exist}); looked for a 'deb' entry for bookworm or bookworm-updates (set EDGE_APT_ETC to another apt configuration folder)" >&2
        return 1
    fi
    for s in "$@"; do echo "deb [signed-by=${m#* }] ${m%% *} $s main"; done
}
if [ "$mode" = apt-sources ]; then apt_sources $apt_suites || exit 1; exit 0; fi

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
python3-regex:/usr/lib/python3/dist-packages/regex/__init__.py
ca-certificates:/etc/ssl/certs
clang:/usr/bin/clang"
if [ "$arch" = aarch64 ]; then
    PKGS="$PKGS
gcc-aarch64-linux-gnu:/usr/bin/aarch64-linux-gnu-gcc
libc6-dev-arm64-cross:/usr/aarch64-linux-gnu/include/stdio.h
binutils-aarch64-linux-gnu:/usr/bin/aarch64-linux-gnu-readelf"
    # qemu-user-static, unless qemu-user's dynamic qemu-aarch64 is already there
    if [ "$mode" = test ] && [ ! -x /usr/bin/qemu-aarch64 ]; then PKGS="$PKGS
qemu-user-static:/usr/bin/qemu-aarch64-static"; fi
fi
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
    apt_sources unstable > "$T/apt/sources.list" || exit 1
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
# (tools/spvgen.c checks). A file with a line '//! norobust' is compiled without Tint's robustness
# transform (index clamps on every storage access): only for files whose kernels bound every
# index themselves, the header says how.
# A file with a line '//! tintvalidate' is validated by Tint's own (newer) SPIR-V validator
# instead of Debian 12's spirv-val, which predates cooperative matrices (matmul_cm.wgsl).
# A line '//! variant-each NAME ENTRY [WORD...]' is a variant line made once per weight type of
# config/dtypes.def (role WEIGHT), read here through the C preprocessor: in NAME, ENTRY and the
# WORDs, {t} is the type's name (q4_k), {type} the overrides of its row (WT: its DType value, BLK /
# BB: its block's elements and bytes, HDR: the header bytes of a type regrouped at upload (up G2..G8),
# else 0), {w} the WGSL type of its weight binding, {mv} its decode entry (lanes ANY: matvec, K or
# B: matvec_k) and {h} the suffix of its f16-activation decode entries (K or B: _h). A line
# '//! variant-lanes ...' is the same, made only for the weight types whose lanes are K or B (the
# fused decode entries, which run on those lanes only), '//! variant-i8glu ...' only for those
# whose i8 column is GLU (the gate/up entries on int8 activations). Such a file must declare
# 'const WT_<ID> = <DType value>u;' for every weight type (checked here), so that its code names
# the same ids as the table (in the file or a snippet it includes). A line '//! variant-each-cm NAME
# ENTRY [WORD...]' is made the same way for the weight types whose cm column is YES.
# A line '//! include common/NAME.wgsl' appends that shared snippet (kernels/common/, helpers that
# several kernel files use; never compiled on its own) to the source Tint compiles, after the file's
# own lines, so Tint's line numbers for the file stay its own (build/wgsl/NAME.wgsl is what it read).
mkdir -p build/spv
CC=${CC:-cc}
dtypes=$($CC -E -P -x c -D'DTYPE(id,nm,role,gg,blk,by,bind,up,lanes,i8,w,hf0,hf1,cm)=@dt id nm role blk by up lanes i8 w cm' config/dtypes.def | grep '^@dt ') ||
    { echo "build.sh: cannot read config/dtypes.def" >&2; exit 1; }
# variant_each SRC: the '//! variant-each' lines of SRC as '//! variant' lines, one per weight type
variant_each() {
    local n=0 id nm role blk by up hb lanes i8 w cm mv h kinds files
    files="$1 $(sed -n 's/^\/\/! include /kernels\//p' "$1")"
    while read -r _ id nm role blk by up lanes i8 w cm; do
        if [ "$role" = WEIGHT ]; then
            cat $files | grep -q "^const WT_$id = ${n}u;" ||
                { echo "build.sh: $1 (and its includes) has no line 'const WT_$id = ${n}u;' (config/dtypes.def)" >&2; exit 1; }
            mv=matvec; h=""; kinds=each; [ "$lanes" != ANY ] && { mv=matvec_k; h=_h; kinds='each\|lanes'; }
            [ "$i8" = GLU ] && kinds="$kinds"'\|i8glu'
            [ "$cm" != NO ] && kinds="$kinds"'\|each-cm'
            hb=0; case "$up" in G[0-9]) hb=${up#G} ;; esac
            grep "^//! variant-\($kinds\) " "$1" | sed -e 's/^\/\/! variant-[a-z0-9-]* /\/\/! variant /' -e "s/{t}/$nm/g" \
                -e "s/{type}/WT=$n BLK=$blk BB=$by HDR=$hb/g" -e "s/{w}/$w/g" -e "s/{mv}/$mv/g" -e "s/{h}/$h/g"
        fi
        n=$((n+1))
    done <<< "$dtypes"
}
# Everything this section and the next two write goes to a temporary name first and is renamed into
# place, so that two build.sh runs of one tree at once never read a half-written file.
if [ ! -x build/spvgen ] || [ tools/spvgen.c -nt build/spvgen ]; then
    $CC -O2 -Wall -Wextra -Werror -o build/spvgen.$$ tools/spvgen.c; mv build/spvgen.$$ build/spvgen
fi
list=build/kernels.list; lnew=$list.new.$$; : > "$lnew"
for src in kernels/*.wgsl; do
    [ -e "$src" ] || continue
    base=$(basename "$src" .wgsl)
    if grep -q '^//! variant' "$src"; then
        vlines=$(grep '^//! variant ' "$src" || true)
        if grep -q '^//! variant-\(each\|each-cm\|lanes\|i8glu\) ' "$src"; then vlines="$vlines"$'\n'"$(variant_each "$src")" || exit 1; fi
        grep -v '^$' <<< "$vlines" | while read -r _ _ name ep words; do
            ov=""; al=""
            for wd in $words; do
                case "$wd" in alias:*) al="$al,${wd#alias:}" ;; *) ov="$ov,$wd" ;; esac
            done
            ov=${ov#,}; echo "$name $src $ep ${ov:--} ${al#,}"
        done >> "$lnew"
    else
        grep -oE '^fn [A-Za-z_][A-Za-z0-9_]*' <(grep -A1 -E '^@compute' "$src" | grep -E '^fn ') | awk '{print $2}' |
            while read -r ep; do echo "$ep $src $ep"; done >> "$lnew"
    fi
done
nk=0; nbuilt=0
mkdir -p build/wgsl
while read -r name src ep ov al; do
    spv=build/spv/$name.spv
    nk=$((nk+1))
    incs=$(sed -n 's/^\/\/! include //p' "$src")
    stale=0; for inc in $incs; do [ kernels/$inc -nt "$spv" ] && stale=1; done
    if [ ! -f "$spv" ] || [ $stale = 1 ] || [ "$src" -nt "$spv" ] || [ build.sh -nt "$spv" ] || [ config/dtypes.def -nt "$spv" ]; then
        args=(-ep "$ep" --format spirv -o "$spv")
        grep -q '^//! norobust' "$src" && args+=(--disable-robustness)
        tv=0; grep -q '^//! tintvalidate' "$src" && { args+=(--validate); tv=1; }
        [ -n "${ov:-}" ] && [ "$ov" != "-" ] && args+=(--overrides "$ov")
        in=$src
        if [ -n "$incs" ] || [ -n "${al:-}" ]; then in=build/wgsl/$name.wgsl; cp "$src" "$in"; fi
        for inc in $incs; do                           # shared snippets, appended
            [ -f "kernels/$inc" ] || { echo "build.sh: $src includes kernels/$inc, which does not exist" >&2; exit 1; }
            printf '\n// ---- //! include %s\n' "$inc" >> "$in"; cat "kernels/$inc" >> "$in"
        done
        if [ -n "${al:-}" ]; then                      # type-alias variant: rewrite 'alias T = ...;'
            for pair in ${al//,/ }; do
                tn=${pair%%=*}; ty=${pair#*=}
                grep -q "^alias $tn = " "$in" || { echo "build.sh: $src has no 'alias $tn = ...;' line for variant $name" >&2; exit 1; }
                sed -i "s/^alias $tn = .*;/alias $tn = $ty;/" "$in"
            done
            case ",$al" in *=f16*) grep -q '^enable f16;' "$in" || sed -i '1i enable f16;' "$in" ;; esac
        fi
        # (the subgroup-matrix builtins of a tintvalidate file draw 'deprecated builtin' warnings from this
        #  Tint for the signature it still compiles; its messages are shown only when it fails)
        if ! tint "${args[@]}" "$in" 2> build/tint.err; then
            cat build/tint.err >&2; echo "build.sh: tint failed on $src entry $ep (variant $name)" >&2; rm -f "$spv"; exit 1
        fi
        [ $tv = 1 ] || cat build/tint.err >&2
        if [ $tv = 0 ] && ! spirv-val --target-env vulkan1.1 "$spv"; then echo "build.sh: spirv-val rejected $spv ($src:$ep)" >&2; rm -f "$spv"; exit 1; fi
        nbuilt=$((nbuilt+1))
    fi
done < "$lnew"
if [ ! -f build/kernels.gen.h ] || ! cmp -s "$lnew" "$list" || [ "$nbuilt" -gt 0 ] || [ build/spvgen -nt build/kernels.gen.h ]; then
    build/spvgen "$lnew" build/kernels.gen.h.$$; mv build/kernels.gen.h.$$ build/kernels.gen.h
fi
mv "$lnew" "$list"
echo "== kernels: $nk entry points ($nbuilt recompiled) -> build/kernels.gen.h"
[ "$mode" = kernels ] && exit 0

# ---- section: Unicode table: UnicodeData.txt + PropList.txt (unicode-data) -> build/unicode.gen.h --
# The tokenizer's letter/number/whitespace classes come from the system's Unicode database (tools/unigen.c).
UD=/usr/share/unicode
if [ ! -x build/unigen ] || [ tools/unigen.c -nt build/unigen ]; then
    $CC -O2 -Wall -Wextra -Werror -o build/unigen.$$ tools/unigen.c; mv build/unigen.$$ build/unigen
fi
if [ ! -f build/unicode.gen.h ] || [ build/unigen -nt build/unicode.gen.h ] || [ $UD/UnicodeData.txt -nt build/unicode.gen.h ]; then
    build/unigen $UD/UnicodeData.txt $UD/PropList.txt build/unicode.gen.h.$$; mv build/unicode.gen.h.$$ build/unicode.gen.h
fi
echo "== unicode: build/unicode.gen.h"

# ---- section: vocabularies: test/fixtures/tokenizer/*.xz -> build/vocab/ (fuzzers, tests) ------
mkdir -p build/vocab
for xzf in test/fixtures/tokenizer/*.gguf.xz; do
    [ -e "$xzf" ] || continue
    v=build/vocab/$(basename "$xzf" .xz)
    if [ ! -f "$v" ] || [ "$xzf" -nt "$v" ]; then xz -dc "$xzf" > "$v.$$" && mv "$v.$$" "$v"; fi
done

# ---- section: fuzz: libFuzzer harnesses test/fuzz/TARGET.c (clang) --------------------------------
if [ "$mode" = fuzz ]; then
    if [ "$fuzz_target" = all ]; then targets=$(ls test/fuzz/*.c | xargs -n1 basename | sed 's/\.c$//')
    else [ -f "test/fuzz/$fuzz_target.c" ] || { echo "build.sh: no harness test/fuzz/$fuzz_target.c" >&2; exit 1; }; targets=$fuzz_target; fi
    nt=$(echo $targets | wc -w); per=$(( fuzz_secs / nt )); [ "$per" -ge 1 ] || per=1
    FCC=${FUZZ_CC:-clang}
    FFLAGS="-std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
            -fsanitize-coverage-ignorelist=test/fuzz/coverage-ignore.txt
            -Wall -Wextra -Wno-unused-parameter -I. -Ibuild -DEDGE_GIT_HASH=\"fuzz\""
    mkdir -p build/fuzz
    fp=0; ff=0
    # the harnesses build first, as many at once as there are cores (each is a whole unity build under
    # clang's sanitizers, ~30 s); a failed build leaves no binary and its log build/fuzz/TARGET.build.log
    newest=$(ls -t $(git ls-files -co --exclude-standard '*.c' '*.h' '*.def') build/kernels.gen.h build/unicode.gen.h build.sh | head -n 1)
    for t in $targets; do
        bin=build/fuzz/$t
        if [ ! -x "$bin" ] || [ "$newest" -nt "$bin" ]; then
            while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n || true; done
            echo "== clang $bin"; rm -f "$bin"
            $FCC $FFLAGS -o "$bin" "test/fuzz/$t.c" -ldl -lm -lpthread > "build/fuzz/$t.build.log" 2>&1 &
        fi
    done
    wait || true
    for t in $targets; do
        bin=build/fuzz/$t
        if [ ! -x "$bin" ]; then
            echo "FAIL  fuzz/$t  (does not build)"; sed 's/^/    /' "build/fuzz/$t.build.log" | head -n 20; ff=$((ff+1)); continue
        fi
        corpus=build/fuzz-corpus/$t; mkdir -p "$corpus" "build/fuzz-artifacts/$t"
        python3 tools/fuzz_seeds.py "$t" "$corpus"
        dirs="$corpus"; [ -d "test/corpus/$t" ] && dirs="$dirs test/corpus/$t"
        log=build/fuzz-$t.log
        echo "== fuzz $t: ${per}s on $dirs (log $log)"
        set +e
        ASAN_OPTIONS=detect_leaks=0 "$bin" -max_total_time="$per" -timeout=10 -rss_limit_mb=4096 -close_fd_mask=3 \
            -detect_leaks=0 -print_final_stats=1 -artifact_prefix="build/fuzz-artifacts/$t/" ${EDGE_FUZZ_ARGS:-} $dirs > "$log" 2>&1
        rc=$?
        set -e
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | awk '{s+=$1} END {print s+0}')
        if [ $rc = 0 ]; then fp=$((fp+1)); echo "PASS  fuzz/$t  ($runs executions in ${per}s, $(ls "$corpus" | wc -l) corpus files)"
        else ff=$((ff+1)); echo "FAIL  fuzz/$t  (exit $rc after $runs executions; artifacts in build/fuzz-artifacts/$t/)"; grep -E 'ERROR|SUMMARY|property failed|Test unit written' "$log" | head -n 8 | sed 's/^/    /'; fi
    done
    echo "$fp passed, $ff failed"
    [ "$ff" = 0 ]; exit
fi

# ---- section: unity build ---------------------------------------------------------------------
hash=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD 2>/dev/null || hash="$hash-dirty"
CFLAGS_COMMON="-std=gnu11 -Wall -Wextra -Werror -I. -Ibuild -DEDGE_GIT_HASH=\"$hash\" ${EDGE_CFLAGS:-}"
if [ "$flavor" = debug ]; then
    # -O1: the sanitizers' recommended level, about half the test time of -O0
    OPT="-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
    BIN=edge-debug; TBIN=build/edge_test_debug
else
    OPT="-O2 -g"
    BIN=edge; TBIN=build/edge_test
fi
LIBS="-ldl -lm -lpthread"
if [ "$arch" = aarch64 ]; then
    # The cross compiler does not search /usr/include; the headers edge needs from there (Vulkan, stb)
    # are architecture-independent, so they come through a folder of links.
    CC=aarch64-linux-gnu-gcc; BIN=edge-aarch64; TBIN=build/edge_test_aarch64
    mkdir -p build/xinc
    for d in vulkan vk_video stb; do [ -e "/usr/include/$d" ] && ln -sfn "/usr/include/$d" "build/xinc/$d"; done
    CFLAGS_COMMON="$CFLAGS_COMMON -isystem build/xinc"
fi
srcs=$(git ls-files -co --exclude-standard '*.c' '*.h' '*.def' 'models/*.gguf' 2>/dev/null || find . -name '*.c' -o -name '*.h' -o -name '*.def')
newest=$(ls -t $srcs build/kernels.gen.h build/unicode.gen.h build.sh 2>/dev/null | head -n 1)
if [ ! -x "$BIN" ] || [ "$newest" -nt "$BIN" ]; then
    echo "== cc $BIN"
    $CC $CFLAGS_COMMON $OPT -o "$BIN" edge.c $LIBS
fi
echo "== built ./$BIN ($(git rev-parse --short HEAD 2>/dev/null || echo no-git))"

# ---- section: aarch64 binary check: only libc/libm/libdl/libpthread are NEEDED -------------------
if [ "$arch" = aarch64 ]; then
    needed=$(aarch64-linux-gnu-readelf -d "$BIN" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
    for lib in $needed; do
        case "$lib" in libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|ld-linux-aarch64.so.*) ;;
            *) echo "build.sh: $BIN needs $lib; it may need only libc, libm, libdl, libpthread" >&2; exit 1 ;;
        esac
    done
    echo "== $BIN: $(file -b "$BIN" 2>/dev/null | cut -d, -f1-2); NEEDED: $needed"
fi

if [ "$mode" = build ] && [ "$arch" = aarch64 ]; then exit 0; fi
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

# ---- section: arm64 sysroot (Debian bookworm's arm64 libvulkan1 + lavapipe, unpacked privately) --
# A private apt state (arm64 only) resolves the dependency closure of mesa-vulkan-drivers and
# libvulkan1; each .deb is unpacked with dpkg -x into .tools/arm64-sysroot. Nothing is installed on
# the host. Packages that only tools need (perl, python, dpkg ...) are left out of the closure.
if [ "$arch" = aarch64 ]; then
    SR=$ROOT/.tools/arm64-sysroot
    if [ ! -f "$SR/.complete" ]; then
        echo "== arm64 sysroot: fetching libvulkan1 and mesa-vulkan-drivers (bookworm, arm64) into .tools/arm64-sysroot"
        A=$ROOT/.tools/arm64-apt
        rm -rf "$SR" "$A"; mkdir -p "$A/lists/partial" "$A/cache/archives/partial" "$A/debs" "$SR"
        : > "$A/status"
        apt_sources bookworm bookworm-updates > "$A/sources.list" || exit 1
        AO="-o Dir::Etc::SourceList=$A/sources.list -o Dir::Etc::SourceParts=/dev/null
            -o Dir::State::Lists=$A/lists -o Dir::State::Status=$A/status -o Dir::Cache=$A/cache
            -o APT::Architecture=arm64 -o APT::Architectures=arm64 -o APT::Sandbox::User=root -o Debug::NoLocking=1"
        apt-get $AO update -q >/dev/null
        skip='^(dpkg|tar|install-info|perl|perl-base|perl-modules-.*|libperl.*|python3.*|libpython3.*|mailcap|media-types|mime-support|readline-common|libreadline8|libgdbm.*|libdb5\.3|libsqlite3-0|libssl3|libnsl2|libtirpc.*|libkrb5.*|libk5crypto3|libkeyutils1|libgssapi-krb5-2|libcom-err2|libcrypt1|libacl1|libselinux1|libpcre2-8-0|libuuid1|libbz2-1\.0|libncursesw6)$'
        pkgs=$(apt-cache $AO depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces \
                   --no-enhances mesa-vulkan-drivers libvulkan1 libc6 | grep -v '^[ <]' | sort -u | grep -vE "$skip")
        (cd "$A/debs" && apt-get $AO download $pkgs >/dev/null)
        for f in "$A"/debs/*.deb; do dpkg -x "$f" "$SR"; done
        rm -rf "$A" "$SR/usr/share/doc" "$SR/usr/share/man" "$SR/usr/share/locale"
        echo "$pkgs" > "$SR/.complete"
    fi
    [ -f "$SR/lib/ld-linux-aarch64.so.1" ] || { echo "build.sh: $SR has no arm64 dynamic loader" >&2; exit 1; }
    echo "== arm64 sysroot: $SR ($(wc -l < "$SR/.complete") packages)"
fi

# test_jobs: the test processes at once (EDGE_TEST_JOBS; default the CPU count), checked to be a count
test_jobs() {
    local j=${EDGE_TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
    case "$j" in ''|*[!0-9]*|0) echo "build.sh: EDGE_TEST_JOBS=$j: want a count of 1 or more" >&2; return 1;; esac
    echo "$j"
}

# ---- section: aarch64 tests under qemu-user + arm64 lavapipe ------------------------------------
if [ "$arch" = aarch64 ]; then
    QEMU=$(command -v qemu-aarch64-static || command -v qemu-aarch64) || { echo "build.sh: no qemu-aarch64" >&2; exit 1; }
    lvp=$(ls "$SR"/usr/share/vulkan/icd.d/lvp_icd.*.json 2>/dev/null | head -n 1)
    [ -n "$lvp" ] || { echo "build.sh: no lvp_icd json in $SR" >&2; exit 1; }
    icd=$SR/edge_lvp_icd.json           # the driver path made absolute inside the sysroot
    sed "s|\"library_path\": *\"[^\"]*/\([^/\"]*\)\"|\"library_path\": \"$SR/usr/lib/aarch64-linux-gnu/\1\"|" "$lvp" > "$icd"
    export VK_DRIVER_FILES=$icd VK_ICD_FILENAMES=$icd NODEVICE_SELECT=1 LP_NUM_THREADS=${LP_NUM_THREADS:-2}
    export EDGE_FENCE_TIMEOUT_MS=${EDGE_FENCE_TIMEOUT_MS:-1800000}   # emulated CPU + software GPU: minutes, not a hang
    unset VK_INSTANCE_LAYERS EDGE_VALIDATION
    qrun() { "$QEMU" -L "$SR" "$@"; }
    source test/cli/require.bash        # kernel_names
    ap=0; af=0; as=0; alog=build/test-aarch64.log; : > "$alog"
    check() {   # check NAME CMD...: PASS when CMD exits 0 (its output goes to the log)
        local n=$1; shift
        local t0=$SECONDS
        if "$@" >> "$alog" 2>&1; then ap=$((ap+1)); echo "PASS  aarch64/$n  ($((SECONDS-t0))s)"
        else af=$((af+1)); echo "FAIL  aarch64/$n"; tail -n 15 "$alog" | sed 's/^/    /'; fi
    }
    golden() { for d in ../shared/fixtures test/fixtures; do [ -f "$d/golden/stories260K/$1" ] && { echo "$d/golden/stories260K/$1"; return 0; }; done; return 1; }
    want=$(sed -n 's/^generated_tokens: //p' "$(golden once_upon_a_time.greedy.txt)")
    greedy() {  # greedy BACKEND: the embedded model's greedy 64 equals the golden file
        local got; got=$(qrun "./$BIN" eval --backend "$1" --greedy 64 --tokens "1 403 407 261 378") || return 1
        [ "$got" = "$want" ] || { echo "greedy ($1) differs: got '$got' want '$want'"; return 1; }
    }
    info_lavapipe() { qrun "./$BIN" info > build/info-aarch64.txt && grep -q 'llvmpipe' build/info-aarch64.txt; }
    info_profile() { EDGE_PROFILE=portable qrun "./$BIN" info | grep -q '^profile: *portable'; }
    # The C tests that matter on arm64: kernels against C, golden logits/greedy, profiles; beside the
    # checks below when EDGE_TEST_JOBS allows two processes (see the test pool further down).
    # (No kernel uses unpack2x16float: Debian 12's arm64 lavapipe aborts compiling it; docs/porting.md.)
    ctests() { qrun "$TBIN" kernel_table every_kernel_def kernel_add kernel_mul kernel_rmsnorm kernel_matvec_f32 kernel_matvec_f16 \
                   dispatch_refuses reference_fixture reference_embedded profile > build/test-c-aarch64.log 2>&1; }
    AJ=$(test_jobs) || exit 1
    cpid=; if [ "$AJ" != 1 ]; then ctests & cpid=$!; fi
    check version qrun "./$BIN" version
    check info_on_arm64_lavapipe info_lavapipe
    check info_profile_portable info_profile
    unknown_profile() { local rc=0; EDGE_PROFILE=no-such-gpu qrun "./$BIN" info > /dev/null 2> build/err-aarch64.txt || rc=$?
                        [ $rc = 3 ] && grep -q 'unknown device profile (valid: ' build/err-aarch64.txt; }
    check unknown_profile_exit_3 unknown_profile
    check greedy_ref greedy ref
    check greedy_gpu greedy gpu
    printf 'decode_tps 0\nmatvec_gbps 0\n' > build/fat-zero.floors   # emulated: function, not speed (docs/fat.md)
    # edge fat --quick, in two processes when EDGE_TEST_JOBS allows: every other kernel of the table
    # each (edge info lists them), the other groups with the first half
    fat_part() {    # fat_part I
        local only; only=$(qrun "./$BIN" info | kernel_names | awk -v i="$1" 'NR % 2 == i' | paste -sd, -)
        [ -n "$only" ] || { echo "fat_part $1: edge info listed no kernels"; return 1; }
        [ "$1" = 1 ] || only="traps,end_to_end,determinism,memory,throughput,$only"
        qrun "./$BIN" fat --quick --floors build/fat-zero.floors --only "$only"
    }
    if [ "$AJ" != 1 ]; then
        (fat_part 1 > build/fat-aarch64-1.log 2>&1; echo $? > build/fat-aarch64-1.rc) & fpid=$!
        check fat_quick_first_half fat_part 0
        wait "$fpid" || true
        fat_second() { cat build/fat-aarch64-1.log; [ "$(cat build/fat-aarch64-1.rc)" = 0 ]; }
        check fat_quick_second_half fat_second
    else check fat_quick qrun "./$BIN" fat --quick --floors build/fat-zero.floors; fi
    if [ -n "$cpid" ]; then wait "$cpid" || true; else ctests || true; fi
    cat build/test-c-aarch64.log
    last=$(tail -n 1 build/test-c-aarch64.log)
    cp=$(echo "$last" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*/\1/p')
    cf=$(echo "$last" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*/\2/p')
    cs=$(echo "$last" | sed -n 's/.*failed, \([0-9]*\) skipped.*/\1/p')
    [ -n "$cf" ] || { echo "FAIL  aarch64 test binary did not finish (see build/test-c-aarch64.log)"; cp=0; cf=1; }
    p=$((ap+cp)); f=$((af+cf)); s=$((as+${cs:-0}))
    grep '^skipped: ' build/test-c-aarch64.log || true
    echo "$p passed, $f failed, $s skipped"
    [ "$f" = 0 ]; exit
fi

export EDGE_BIN=$ROOT/$BIN
# Tests never read or write the user's pipeline cache (test/vk_test.c turns it on in a temporary folder).
export EDGE_NO_PIPELINE_CACHE=1
if [ "${EDGE_VALIDATION:-0}" = 1 ]; then
    export EDGE_VALIDATION=1     # vk.c enables VK_LAYER_KHRONOS_validation and counts its errors
    echo "== tests run under the Khronos validation layer"
fi
# quarantine_size_mb=16 (ASan's default is 256): lavapipe's LLVM frees so much while it compiles each
# pipeline that a 256 MB quarantine of freed blocks made every process about 1.6x slower (page faults
# on fresh memory: 3.5 -> 2.1 s for a short run); 16 MB still holds edge's own freed blocks a long while.
[ "$flavor" = debug ] && export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:quarantine_size_mb=16 UBSAN_OPTIONS=print_stacktrace=1
# the sanitizer pass: the scripts that loop over every model fixture take one per architecture (docs/testing.md)
[ "$flavor" = debug ] && export EDGE_TEST_QUICK=1
# The tests run as a pool of EDGE_TEST_JOBS processes (default: the CPU count; 1 with EDGE_TEST_FAILFAST):
# the C tests as that many shards (test/runner.c's EDGE_TEST_SHARD), then test/cli/*.sh, the slowest first.
# Most of a test's time is lavapipe compiling pipelines, one thread each, so two jobs on two cores take
# about 0.56 (release) to 0.86 (sanitizers) of the time of one, as measured on CI. Each job's lines are printed when it ends; its output is kept in
# build/test-jobs-FLAVOR/NAME.log, the C shards' together in build/test-c.log (test-c-debug.log).
log=build/test-c.log; [ "$flavor" = debug ] && log=build/test-c-debug.log    # each flavor's own log
J=$(test_jobs) || exit 1
[ -z "${EDGE_TEST_FAILFAST:-}" ] || J=1                  # test/mutants.sh: stop at the first failure
jd=build/test-jobs-$flavor; rm -rf "$jd"; mkdir -p "$jd"
queue=(); for ((i = 0; i < J; i++)); do queue+=("c$i"); done
if [ -z "${EDGE_TEST_FILTER:-}" ]; then                  # EDGE_TEST_FILTER: C tests only
    slow=" run_parallel fat run_prefix profile_matrix gen_rows tok_commands run_flags debug_nan "   # CI's slowest
    for n in $slow; do [ -e "test/cli/$n.sh" ] && queue+=("$n"); done
    for t in test/cli/*.sh; do n=$(basename "$t" .sh); case "$slow" in *" $n "*) ;; *) queue+=("$n");; esac; done
fi
report() {  # report NAME RC SECONDS: a job's lines (a C shard's log less its summary and skip lines)
    local n=$1 rc=$2 dt=$3
    if [[ $n == c[0-9]* ]]; then grep -vE '^skipped: |^[0-9]+ passed, [0-9]+ failed' "$jd/$n.log"
    elif [ "$rc" = 0 ]; then echo "PASS  cli/$n  (${dt}s)"
    elif [ "$rc" = 77 ]; then echo "SKIP  cli/$n  ($(tail -n 1 "$jd/$n.log"))"
    else echo "FAIL  cli/$n  (exit $rc, ${dt}s)"; tail -n 20 "$jd/$n.log" | sed 's/^/    /'; fi
}
job() {     # job NAME: one queue entry, its output into $jd/NAME.log, its exit code into $jd/NAME.rc
    local n=$1 t0=$SECONDS rc=0
    if [[ $n == c[0-9]* ]]; then EDGE_TEST_SHARD="${n#c}/$J" "$TBIN" ${EDGE_TEST_FILTER:-} > "$jd/$n.log" 2>&1 || rc=$?
    else bash "test/cli/$n.sh" > "$jd/$n.log" 2>&1 || rc=$?; fi
    echo "$rc" > "$jd/$n.rc"
    { flock 9; report "$n" "$rc" $((SECONDS - t0)); } 9> "$jd/.print"
}
failed_yet() { local r; for r in "$jd"/*.rc; do [ -e "$r" ] || continue; case $(cat "$r") in 0|77) ;; *) return 0;; esac; done; return 1; }
set +e
running=0
for n in "${queue[@]}"; do
    [ "$running" -lt "$J" ] || { wait -n; running=$((running - 1)); }
    [ -n "${EDGE_TEST_FAILFAST:-}" ] && failed_yet && break
    job "$n" & running=$((running + 1))
done
wait
set -e
# the sums: a C shard counts what its summary line says; a shard without one failed (a crash)
p=0; f=0; : > "$log"
for ((i = 0; i < J; i++)); do
    [ -e "$jd/c$i.log" ] || continue
    cat "$jd/c$i.log" >> "$log"
    last=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$jd/c$i.log" | tail -n 1)
    if [ -n "$last" ]; then
        p=$((p + $(echo "$last" | sed 's/^\([0-9]*\) passed.*/\1/'))); f=$((f + $(echo "$last" | sed 's/.* \([0-9]*\) failed.*/\1/')))
    else echo "FAIL  C test shard $i/$J did not finish (exit $(cat "$jd/c$i.rc" 2>/dev/null); see $jd/c$i.log)"; tail -n 15 "$jd/c$i.log" | sed 's/^/    /'; f=$((f + 1)); fi
done
for n in "${queue[@]}"; do
    [[ $n == c[0-9]* ]] && continue
    [ -e "$jd/$n.rc" ] || continue
    case $(cat "$jd/$n.rc") in 0) p=$((p + 1));; 77) echo "skipped: cli/$n  ($(tail -n 1 "$jd/$n.log"))" >> "$jd/.skips";; *) f=$((f + 1));; esac
done
# skipped: every distinct line (a fixture the table skips is reported by each shard that met it)
{ grep -h '^skipped: ' "$jd"/c*.log 2>/dev/null | sort -u; cat "$jd/.skips" 2>/dev/null || true; } > "$jd/.skipped"
s=$(wc -l < "$jd/.skipped")
cat "$jd/.skipped"
echo "$p passed, $f failed, $s skipped"
[ "$f" = 0 ]
