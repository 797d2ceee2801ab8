#!/usr/bin/env bash
# chat_template.sh — every case of ../shared/fixtures/chat (each family's own Jinja template, rendered by
# Hugging Face's jinja2) through `edge template --config NAME --messages [--no-generation-prompt]
# [--think|--no-think] --date "26 Jul 2024"`: equal byte for byte after the BOS text (the tokenizer adds it).
# A conversation the template refuses (Gemma 2: no system role) must render as edge documents it: the system
# text folded into the first user turn, as Gemma 3's template renders the same conversation.
# The families map to the table's rows; a row not (yet) in config/models.def is rendered by its family name
# (--family) instead, and said so. Then the single-message form, usage errors.
set -u
cd "$(dirname "$0")/../.."
[ -n "${EDGE_BIN:-}" ] && [ -x "$EDGE_BIN" ] || { echo "EDGE_BIN is not set to a built edge"; exit 77; }
source test/cli/require.bash
dir=""
for d in ../shared/fixtures/chat test/fixtures/chat; do [ -f "$d/README.md" ] && { dir=$d; break; }; done
[ -n "$dir" ] || skip_unless_required "chat fixtures not found"
python3 - "$EDGE_BIN" "$dir" <<'PY'
import glob, json, os, subprocess, sys
edge, d = sys.argv[1], sys.argv[2]
rows = {l.split()[0] for l in subprocess.run([edge, "models"], capture_output=True, text=True).stdout.split("\n\n")[0].splitlines()[1:] if l.strip()}
families = {"gemma2": "gemma", "gemma3": "gemma", "qwen3": "qwen3", "qwen2.5": "chatml", "llama3.2": "llama3"}
configs = {"gemma2": ["gemma-2-2b-it"], "gemma3": ["gemma-3-1b-it"], "qwen3": ["qwen3-1.7b"],
           "qwen2.5": ["qwen2.5-1.5b-instruct", "qwen2.5-coder-1.5b-instruct"], "llama3.2": ["llama-3.2-1b-instruct"]}
cases = {}
for path in sorted(glob.glob(os.path.join(d, "*.cases.jsonl"))):
    fam = os.path.basename(path)[:-len(".cases.jsonl")]
    cases[fam] = [json.loads(l) for l in open(path, encoding="utf-8") if l.strip()]
fails, checked, by_family = [], 0, []
def key(c): return (json.dumps(c["messages"]), c["add_generation_prompt"], c.get("enable_thinking"))
for fam, cs in cases.items():
    if fam not in configs: fails.append(f"{fam}: no config row mapped to this fixture file"); continue
    for cfg in configs[fam]:
        sel = ["--config", cfg]
        if cfg not in rows: by_family.append(f"{cfg} is not in config/models.def: --family {families[fam]}"); sel = ["--family", families[fam]]
        for i, c in enumerate(cs, 1):
            want = c
            if "error" in c:   # edge's documented behaviour: Gemma 3's rendering of the same conversation
                alt = [x for x in cases.get("gemma3", []) if "rendered" in x and key(x) == key(c)] if fam.startswith("gemma") else []
                if not alt: fails.append(f"{fam}:{i}: refused ({c['error']}) with no documented rendering"); continue
                want = alt[0]
            exp = want["rendered"]
            if not exp.startswith(want["bos_token"]): fails.append(f"{fam}:{i}: no BOS text"); continue
            exp = exp[len(want["bos_token"]):]
            args = [edge, "template", *sel, "--messages", "--date", "26 Jul 2024"]
            if not c["add_generation_prompt"]: args.append("--no-generation-prompt")
            if "enable_thinking" in c: args.append("--think" if c["enable_thinking"] else "--no-think")
            r = subprocess.run(args, input=json.dumps(c["messages"]).encode(), capture_output=True)
            checked += 1
            if r.returncode != 0 or r.stdout != exp.encode():
                fails.append(f"{fam}:{i} {' '.join(sel)}: rc {r.returncode}\n  got  {r.stdout!r}\n  want {exp.encode()!r}\n  {r.stderr.decode()[:300]}")
for f in fails[:10]: print("FAIL", f)
if fails: sys.exit(1)
if by_family: print("note:", "; ".join(by_family))
print(f"chat_template: {checked} renderings equal")
PY
rc=$?
[ $rc = 0 ] || exit $rc
E=$EDGE_BIN
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# the single-message form: one user message on stdin, --system
printf 'Hi\n' | "$E" template --config qwen2.5-1.5b-instruct --system "Be brief." > "$tmp/out" || { echo "FAIL single message"; exit 1; }
printf '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n' | cmp -s - "$tmp/out" || { echo "FAIL single message: $(cat "$tmp/out")"; exit 1; }
# llama3 without --date: today's date, as strftime("%d %b %Y") in the C locale
echo Hi | "$E" template --family llama3 | grep -q "^Today Date: $(LC_ALL=C date +'%d %b %Y')$" || { echo "FAIL llama3: no date of today"; exit 1; }
# usage errors: exit 1 with a message naming the problem
for bad in "--family jinja" "--config no-such-model" "--family llama3 --date 2024-07-26" "--config gemma-2-2b-it -m x.gguf" "" "--family chatml --messages --system S"; do
    echo '[]' | "$E" template $bad >/dev/null 2>"$tmp/err"; rc=$?
    [ $rc = 1 ] && [ -s "$tmp/err" ] || { echo "FAIL edge template $bad: rc $rc"; exit 1; }
done
echo '[{"role":"tool","content":"x"}]' | "$E" template --family chatml --messages >/dev/null 2>"$tmp/err"
[ $? = 1 ] && grep -q "role 'tool' is not supported" "$tmp/err" || { echo "FAIL: role tool accepted"; exit 1; }
echo "chat_template: ok"
