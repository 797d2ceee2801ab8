#!/usr/bin/env python3
"""fuzz_seeds.py TARGET OUTDIR — writes the seed corpus of one fuzz target (test/fuzz/TARGET.c)
from the fixtures: GGUF files shrunk to a few KiB (every tensor one block, same names, types and
metadata) and prefixes of them; the tokenizer case strings; their ids; chat turns; the JSON lines
and command lines of docs/usage.md. Run by `./build.sh fuzz` from the repository root."""
import os, re, struct, sys

def w(out, name, data):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)

BLOCK = {0: (1, 4), 1: (1, 2), 30: (1, 2), 2: (32, 18), 8: (32, 34), 12: (256, 144), 14: (256, 210),
         3: (32, 20), 6: (32, 22), 7: (32, 24), 10: (256, 84), 11: (256, 110), 13: (256, 176),
         20: (32, 18), 23: (256, 136)}
SCALAR = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}

def shrink_gguf(b):
    """The same GGUF with every tensor one block long: small, and still valid."""
    p = 0
    def take(n):
        nonlocal p
        s = b[p:p + n]; p += n; return s
    magic, ver, nt, nkv = struct.unpack("<4sIQQ", take(24))
    def skip_val(t):
        if t == 8: n, = struct.unpack("<Q", take(8)); take(n)
        elif t == 9:
            et, n = struct.unpack("<IQ", take(12))
            if et == 8:
                for _ in range(n): skip_val(8)
            else: take(SCALAR[et] * n)
        else: take(SCALAR[t])
    align = 32
    for _ in range(nkv):
        kl, = struct.unpack("<Q", take(8)); key = take(kl)
        t, = struct.unpack("<I", take(4)); at = p
        skip_val(t)
        if key == b"general.alignment": align = struct.unpack("<I", b[at:at + 4])[0]
    head = b[:p]
    infos = []; off = 0
    for _ in range(nt):
        nl, = struct.unpack("<Q", take(8)); name = take(nl)
        nd, = struct.unpack("<I", take(4)); take(8 * nd)
        ty, _o = struct.unpack("<IQ", take(12))
        blk, size = BLOCK.get(ty, (1, 4))
        infos.append(struct.pack("<Q", nl) + name + struct.pack("<I", nd) + struct.pack("<Q", blk) +
                     struct.pack("<Q", 1) * (nd - 1) + struct.pack("<IQ", ty, off))
        off = (off + size + align - 1) // align * align
    out = head + b"".join(infos)
    out += b"\0" * ((-len(out)) % align)
    return out + bytes((i * 37) & 0xff for i in range(off))

def cases(path):
    for line in open(path, encoding="utf-8"):
        if line.startswith("#") or "\t" not in line: continue
        f = line.rstrip("\n").split("\t")
        yield bytes.fromhex(f[0]), [int(x) for x in f[1].split()]

def main():
    target, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    fx = "test/fixtures"
    if target == "gguf":
        for m in sorted(os.listdir(fx + "/models")):
            b = open(f"{fx}/models/{m}", "rb").read()
            try:
                s = shrink_gguf(b)
                w(out, m + ".small", s)
                w(out, m + ".cut", s[:len(s) * 2 // 3])
            except Exception as e:
                print(f"fuzz_seeds: {m}: {e}", file=sys.stderr)
            w(out, m + ".head", b[:4096])
    elif target in ("tok_spm", "tok_bpe", "detok"):
        files = {"tok_spm": ["llama2", "gemma"], "tok_bpe": ["qwen2.5"], "detok": ["llama2", "gemma", "qwen2.5"]}[target]
        for vi, v in enumerate(files):
            for i, (text, ids) in enumerate(cases(f"{fx}/tokenizer/{v}.cases.txt")):
                if target == "detok":
                    sel = {"llama2": 0, "gemma": 1, "qwen2.5": 2}[v]
                    w(out, f"{v}-{i}", bytes([sel | (i & 0x1c), 255]) + b"".join(struct.pack("<H", x & 0xffff) for x in ids))
                else:
                    flag = (3 | (i % 8) << 2) | (128 if v == "gemma" else 0)
                    w(out, f"{v}-{i}", bytes([flag]) + text)
    elif target == "chat":
        turns = [b"\x00You are helpful.", b"\x01Hello <|im_end|> <start_of_turn>", b"\x02Hi there!", b"\x01  trimmed  \n"]
        for f in range(8):
            w(out, f"chat-{f}", bytes([f]) + b"\x00".join(turns[f % 2:]))
    elif target == "json":
        doc = open("docs/usage.md", encoding="utf-8").read()
        lines = set(re.findall(r"^\s*(\{.*\})\s*$", doc, re.M)) | set(re.findall(r"'(\{[^']*\})'", doc))
        lines |= {'{"prompt":"hi","max_tokens":4,"stop":["a","b"],"seed":7,"id":"x"}', '{"prompt":"\\ud83d\\ude00 \\u00e9"}',
                  '[1,2.5e-3,-0,true,false,null,{"a":{}}]', '{"prompt":"x","temperature":0.5,"top_k":3,"top_p":0.9,"min_p":0.1}'}
        for i, l in enumerate(sorted(lines)): w(out, f"json-{i}", l.encode())
    elif target == "args":
        doc = open("docs/usage.md", encoding="utf-8").read()
        cmds = set(re.findall(r"\bedge((?: +(?:-[-\w]+|'[^']*'|\"[^\"]*\"|[\w./=,:-]+))+)", doc))
        cmds |= {" -n 16 --temp 0", " --sep \\x00\\n --stop a --stop b -c 64", " --trace=attn,ffn --trace-layers 0,2-3 --check-nan -p hi",
                 " --input jsonl --top-p 0.5 --min-p 0 --repeat-penalty 1.1 --seed 18446744073709551615"}
        for i, c in enumerate(sorted(cmds)):
            args = [a.strip("'\"") for a in re.findall(r"'[^']*'|\"[^\"]*\"|\S+", c)]
            w(out, f"args-{i}", b"\x00".join(a.encode() for a in args))
    else:
        sys.exit(f"fuzz_seeds: unknown target {target}")

main()
