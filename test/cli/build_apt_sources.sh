#!/usr/bin/env bash
# build_apt_sources.sh — build.sh's private apt sources take their Debian mirror from the machine's own
# apt sources files (EDGE_APT_ETC points build.sh at a made-up apt configuration folder):
#   (a) deb822 .sources: security, deb-src and disabled (Enabled: no) stanzas first, then the main archive
#       on another URI, then backports; a disabled file that apt skips names yet another URI;
#   (b) one-line .list: a commented-out, a deb-src and a security entry before the real one, and a disabled
#       file before it in apt's order;  (c) no sources at all: a clear error, exit 1.
# './build.sh apt-sources SUITE...' only prints the lines: apt-get, apt-cache, dpkg, sudo, curl and wget
# are replaced by stubs that record any call, and none may be called.
set -u
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin"
for p in apt-get apt-cache apt dpkg sudo curl wget; do
    printf '#!/bin/sh\necho "%s $*" >> "%s/called"\nexit 1\n' "$p" "$tmp" > "$tmp/bin/$p"; chmod +x "$tmp/bin/$p"
done
fail=0
run() {   # run ETC SUITE...: build.sh apt-sources with EDGE_APT_ETC=ETC; stdout+stderr in $out, exit code in $rc
    local etc=$1; shift
    out=$(PATH="$tmp/bin:$PATH" EDGE_APT_ETC="$etc" ./build.sh apt-sources "$@" 2>&1); rc=$?
}
want() {  # want CASE LINE...: exit 0 and exactly these deb lines
    local c=$1; shift
    local got; got=$(echo "$out" | grep '^deb ')
    local exp; exp=$(printf '%s\n' "$@")
    if [ $rc != 0 ] || [ "$got" != "$exp" ]; then echo "($c) exit $rc, output:"; echo "$out"; echo "want:"; echo "$exp"; fail=1; fi
}
K=/usr/share/keyrings/debian-archive-keyring.gpg

# (a) deb822
A=$tmp/a; mkdir -p "$A/sources.list.d"
cat > "$A/sources.list.d/debian.sources" <<'EOF'
Types: deb
# the security archive comes first: it must not be taken
URIs: http://security.factory.example/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://src.factory.example/debian
Suites: bookworm
Components: main

Types: deb
URIs: http://off.factory.example/debian
Suites: bookworm
Components: main
Enabled: no

Types: deb
# URIs: http://commented.example/debian
URIs: http://mirror.factory.example/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/factory-archive.gpg

Types: deb
URIs: http://backports.factory.example/debian
Suites: bookworm-backports
Components: main
EOF
cat > "$A/sources.list.d/00-other.sources.disabled-by-farm" <<'EOF'
Types: deb
URIs: http://disabled.example/debian
Suites: bookworm
Components: main
EOF
run "$A" unstable
want a "deb [signed-by=/usr/share/keyrings/factory-archive.gpg] http://mirror.factory.example/debian unstable main"
run "$A" bookworm bookworm-updates
want a-arm64 "deb [signed-by=/usr/share/keyrings/factory-archive.gpg] http://mirror.factory.example/debian bookworm main" \
             "deb [signed-by=/usr/share/keyrings/factory-archive.gpg] http://mirror.factory.example/debian bookworm-updates main"

# (b) one-line .list (no signed-by: Debian's archive keyring)
B=$tmp/b; mkdir -p "$B/sources.list.d"
cat > "$B/sources.list.d/factory.list" <<'EOF'
# deb http://commented.example/debian bookworm main
deb-src http://src.factory.example/debian bookworm main
deb http://security.factory.example/debian-security bookworm-security main
deb [arch=amd64] http://mirror.factory.example/debian bookworm main contrib   # the main archive
EOF
echo "deb http://disabled.example/debian bookworm main" > "$B/sources.list.d/00-old.list.disabled"
run "$B" unstable
want b "deb [signed-by=$K] http://mirror.factory.example/debian unstable main"

# (c) empty configuration: a clear error
C=$tmp/c; mkdir -p "$C/sources.list.d"
run "$C" unstable
if [ $rc != 1 ] || ! echo "$out" | grep -q "build.sh: no Debian archive URI in the apt sources (read: none; $C/sources.list" \
                || ! echo "$out" | grep -q "looked for a 'deb' entry for bookworm or bookworm-updates"; then
    echo "(c) exit $rc, want 1 and the error; output:"; echo "$out"; fail=1
fi

if [ -e "$tmp/called" ]; then echo "apt-sources ran package or network tools:"; cat "$tmp/called"; fail=1; fi
[ $fail = 0 ] && echo "ok: the private apt sources take the mirror of the apt configuration; nothing installed or fetched"
exit $fail
