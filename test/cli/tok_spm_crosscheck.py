#!/usr/bin/env python3
"""tok_spm_crosscheck.py — edge's SentencePiece-BPE (Llama 2 and Gemma vocab-only GGUFs) against a
Python reference of llama.cpp's rules on random byte strings it has never seen: special tokens cut
out first (CONTROL/UNKNOWN with parse_special, USER_DEFINED always; longest first, each splitting
every text fragment), " " -> "▁", "▁" prefixed to the first fragment and after each special token
when add_space_prefix, symbols by lead-byte length, the best-scoring adjacent pair merged first
(leftmost on ties) by rescanning, <0xNN> byte fallback. Invalid UTF-8 and special-token texts are
mixed in. Usage: tok_spm_crosscheck.py EDGE_BIN WORKDIR (vocabs WORKDIR/{llama2,gemma}-vocab.gguf)."""
import random, struct, subprocess, sys, os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tok_bpe_crosscheck_lib import read_gguf

def load(path):
    ver, kvs = read_gguf(path)
    kv = {k: v for k, _, v in kvs}
    toks = kv[b"tokenizer.ggml.tokens"]; n = len(toks)
    scores = struct.unpack(f"<{n}f", kv[b"tokenizer.ggml.scores"])
    types = struct.unpack(f"<{n}i", kv[b"tokenizer.ggml.token_type"])
    vocab = {}
    for i, t in enumerate(toks): vocab[t] = i
    flag = lambda k, d: kv[k][0] != 0 if k in kv else d
    u32 = lambda k, d: struct.unpack("<I", kv[k])[0] if k in kv else d
    return dict(toks=toks, scores=scores, types=types, vocab=vocab, bos=u32(b"tokenizer.ggml.bos_token_id", 1),
                add_bos=flag(b"tokenizer.ggml.add_bos_token", True), prefix=flag(b"tokenizer.ggml.add_space_prefix", True),
                special=sorted([i for i in range(n) if types[i] in (2, 3, 4) and toks[i]], key=lambda i: (-len(toks[i]), i)))

def partition(v, text, parse_special):
    frags = [text] if text else []
    for i in v["special"]:
        if not parse_special and v["types"][i] != 4: continue
        pat = v["toks"][i]; out = []
        for f in frags:
            if isinstance(f, int): out.append(f); continue
            parts = f.split(pat)
            for k, p in enumerate(parts):
                if p: out.append(p)
                if k + 1 < len(parts): out.append(i)
        frags = out
    return frags

def spm(v, text):
    lens = [1] * 12 + [2, 2, 3, 4]
    syms, o = [], 0
    while o < len(text):
        l = min(lens[text[o] >> 4], len(text) - o); syms.append(text[o:o + l]); o += l
    while True:
        best = None
        for i in range(len(syms) - 1):
            t = v["vocab"].get(syms[i] + syms[i + 1])
            if t is not None and (best is None or v["scores"][t] > best[0]): best = (v["scores"][t], i)
        if best is None: break
        i = best[1]; syms[i:i + 2] = [syms[i] + syms[i + 1]]
    ids = []
    for s in syms:
        if s in v["vocab"]: ids.append(v["vocab"][s])
        else: ids += [v["vocab"][b"<0x%02X>" % b] for b in s]
    return ids

def reference(v, text, parse_special, add_bos):
    ids = [v["bos"]] if add_bos and v["add_bos"] else []
    prev_special = True
    for f in partition(v, text, parse_special):
        if isinstance(f, int): ids.append(f); prev_special = True; continue
        t = (b" " if v["prefix"] and prev_special else b"") + f
        ids += spm(v, t.replace(b" ", "\u2581".encode())); prev_special = False
    return ids

def main():
    edge, work = sys.argv[1:3]
    pool = ([bytes([c]) for c in b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789"] * 4 + [b" "] * 40 + [b"\n", b"\t", b"\r\n"] * 4 +
            [bytes([c]) for c in b".,;:!?-_()[]{}<>/\\\"'`~@#$%^&*+=|"] +
            [s.encode() for s in ["the", " of", "ing", "tion", "Hello", " world", "é", "ß", "中文", "日本語", "한국어", "🦙", "😶\u200d🌫️",
                                  "е", "ж", "\u00a0", "\u200b", "e\u0301", "  ", "    ", "\n\n", "\t\t", "▁", "aaa", "eeee", "...", "----", "====", "0000", "zzz", "!!!"]] +
            [b"<s>", b"</s>", b"<unk>", b"<bos>", b"<eos>", b"<pad>", b"<start_of_turn>", b"<end_of_turn>", b"<table>", b"<b>", b"</b>",
             b"<0x41>", b"<start_of", b"[INST]", b"<unused5>", b"<mask>"] +
            [b"\xff", b"\xfe", b"\xc3", b"\xe2\x82", b"\x80", b"\xf0\x9f", b"\xc0\x80", b"\xed\xa0\x80"])
    rnd = random.Random(20250221)
    fail = 0
    for name in ("llama2", "gemma"):
        v = load(f"{work}/{name}-vocab.gguf"); bad = 0
        for trial in range(8):
            n = [3, 10, 50, 200, 800, 2000, 400, 100][trial]
            text = b"".join(rnd.choice(pool) for _ in range(n))
            special = trial % 2 == 0
            want = reference(v, text, special, True)
            args = [edge, "tokenize", "-m", f"{work}/{name}-vocab.gguf"] + ([] if special else ["--no-special"])
            r = subprocess.run(args, input=text, capture_output=True)
            got = [int(x) for x in r.stdout.split()] if r.returncode == 0 else None
            if got != want:
                fail = bad = 1; k = 0
                while got and k < min(len(got), len(want)) and got[k] == want[k]: k += 1
                print(f"FAIL {name} trial {trial} (parse_special {special}): first difference at id {k}: "
                      f"got {got[k:k+6] if got else r.stderr[:200]} want {want[k:k+6]} text {text!r:.300}")
        print(f"{name}: {'differs' if bad else 'same ids as the reference on 8 random texts'}")
    sys.exit(fail)

main()
