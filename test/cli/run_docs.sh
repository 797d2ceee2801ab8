#!/usr/bin/env bash
# run_docs.sh — keeps docs/usage.md true: every line starting with "$ " inside a fenced block is run with
# bash (edge = the built binary, stderr dropped), and when lines follow it in the block, its stdout must be
# exactly those lines.
source "$(dirname "$0")/run_lib.bash"
mkdir -p "$tmp/bin"; ln -s "$E" "$tmp/bin/edge"
python3 - docs/usage.md "$tmp/bin" <<'PY'
import subprocess, sys, os
text = open(sys.argv[1], encoding="utf-8").read().split("\n")
env = dict(os.environ, PATH=sys.argv[2] + ":" + os.environ["PATH"])
inside = False; cases = []; cur = None
for line in text:
    if line.startswith("```"):
        inside = not inside; cur = None; continue
    if not inside: continue
    if line.startswith("$ "):
        cur = [line[2:], []]; cases.append(cur)
    elif cur is not None:
        cur[1].append(line)
if len(cases) < 8: sys.exit("only %d examples found in docs/usage.md" % len(cases))
bad = 0
for cmd, want in cases:
    r = subprocess.run(["bash", "-c", cmd], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, timeout=120)
    got = r.stdout.decode("utf-8", "replace")
    if want and got != "\n".join(want) + "\n":
        print("docs example differs: $ " + cmd); print("  got:  %r" % got); print("  want: %r" % ("\n".join(want) + "\n")); bad += 1
print("%d examples run" % len(cases))
sys.exit(1 if bad else 0)
PY
