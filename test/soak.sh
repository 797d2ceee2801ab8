#!/usr/bin/env bash
# soak.sh — 10,000 prompts through one edge process (the embedded model, short generations), with
# the host arena positions, the device arena usage and the resident memory printed every 1,000
# prompts (--stats-every) and checked: the arena numbers never change after the first checkpoint,
# the resident memory grows by at most SOAK_RSS_SLACK_KIB (default 2048) from the first checkpoint
# to the last. Not part of ./build.sh test (it takes long); docs/reliability.md has its results.
#
#   test/soak.sh                     SOAK_PROMPTS=10000 SOAK_EVERY=1000 SOAK_BACKEND=gpu SOAK_N=4 SOAK_NP=1 (-np)
#   EDGE_BIN=./edge-debug test/soak.sh
set -u
cd "$(dirname "$0")/.."
E=${EDGE_BIN:-./edge}
[ -x "$E" ] || { echo "soak: $E is not built (./build.sh)"; exit 1; }
P=${SOAK_PROMPTS:-10000}; EVERY=${SOAK_EVERY:-1000}; B=${SOAK_BACKEND:-gpu}; N=${SOAK_N:-4}; NP=${SOAK_NP:-1}
SLACK=${SOAK_RSS_SLACK_KIB:-2048}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
prompts=("Once upon a time" "Lily and Tom went to the park" "The cat" "One day, a little bird" "Tom had a red ball"
         "A big dog" "The sun was hot" "She wanted to play" "\"Hello,\" said the frog" "Zoo animals like to eat")
t0=$SECONDS
python3 -c "
import sys
p = sys.argv[1:]
out = sys.stdout
for i in range(int($P)): out.write(p[i % len(p)] + ' ' + str(i) + '\n')
" "${prompts[@]}" | "$E" --backend "$B" -n "$N" -np "$NP" --temp 0.7 --seed 1 --stats-every "$EVERY" > "$tmp/out" 2> "$tmp/err"
rc=$?
grep '^edge: stats:' "$tmp/err" > "$tmp/stats"
echo "soak: $P prompts, backend $B, -n $N, -np $NP, exit $rc, $((SECONDS - t0)) s, stdout $(wc -c < "$tmp/out") bytes"
cat "$tmp/stats"
[ "$rc" = 0 ] || { tail -n 5 "$tmp/err"; echo "soak: FAIL: exit $rc"; exit 1; }
want=$((P / EVERY))
[ "$(wc -l < "$tmp/stats")" = "$want" ] || { echo "soak: FAIL: $(wc -l < "$tmp/stats") stats lines, want $want"; exit 1; }
python3 - "$tmp/stats" "$SLACK" <<'PY'
import sys
rows = []
for line in open(sys.argv[1]):
    f = line.split()[2:]
    rows.append(dict(zip(f[0::2], map(int, f[1::2]))))
slack = int(sys.argv[2])
first, last = rows[0], rows[-1]
bad = [k for k in first if k not in ("prompts", "rss_kib") and any(r[k] != first[k] for r in rows)]
if bad: sys.exit(f"soak: FAIL: arena numbers changed: {bad}")
grow = last["rss_kib"] - first["rss_kib"]
peak = max(r["rss_kib"] for r in rows)
print(f"soak: arenas constant over {len(rows)} checkpoints; rss {first['rss_kib']} KiB at prompt {first['prompts']}, "
      f"{last['rss_kib']} KiB at prompt {last['prompts']} (growth {grow} KiB, peak {peak} KiB, slack {slack})")
if grow > slack: sys.exit("soak: FAIL: resident memory grew")
print("soak: ok")
PY
