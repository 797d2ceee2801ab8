#!/usr/bin/env python3
"""tok_bpe_crosscheck.py — edge's byte-level BPE against an independent Python reference on
random strings it has never seen, for the three pre-tokenizers (qwen2, llama-bpe, gpt-2).

The reference: the pre-tokenizer regexes exactly as llama.cpp lists them, run by the
`regex` module; GPT-2's bytes_to_unicode; merges applied by rank (lowest first, leftmost on
ties); for llama-bpe a word that is a whole token is kept whole (ignore_merges). The vocab
is the Qwen2.5 vocab-only GGUF, rewritten with tokenizer.ggml.pre set to each value.
Usage: tok_bpe_crosscheck.py EDGE_BIN QWEN_GGUF WORKDIR   (exit 0 pass, 1 fail, 77 skip; without the
`regex` module (Debian: python3-regex, which build.sh installs) it skips, or fails under EDGE_TEST_REQUIRE=1)"""
import os, random, struct, subprocess, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tok_bpe_crosscheck_lib import read_gguf
try:
    import regex
except ImportError:
    required = os.environ.get("EDGE_TEST_REQUIRE") == "1"
    print("python3 regex module not installed (Debian: python3-regex)" + (" (EDGE_TEST_REQUIRE=1 makes this a failure)" if required else ""))
    sys.exit(1 if required else 77)

PATTERNS = {
    "qwen2": r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    "llama-bpe": r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    "gpt-2": r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",
}

def write_gguf(path, ver, kvs, pre):
    out = [b"GGUF", struct.pack("<IQQ", ver, 0, len(kvs))]
    for k, raw, _ in kvs:
        if k == b"tokenizer.ggml.pre":
            p = pre.encode(); raw = struct.pack("<Q", len(k)) + k + struct.pack("<IQ", 8, len(p)) + p
        out.append(raw)
    b = b"".join(out); b += b"\0" * ((-len(b)) % 32)
    open(path, "wb").write(b)

def bytes_to_unicode():
    bs = list(range(0x21, 0x7F)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs = bs[:]; n = 0
    for b in range(256):
        if b not in bs: bs.append(b); cs.append(256 + n); n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}

def main():
    edge, gguf, work = sys.argv[1:4]
    ver, kvs = read_gguf(gguf)
    kv = {k: v for k, _, v in kvs}
    vocab = {t.decode("utf-8"): i for i, t in enumerate(kv[b"tokenizer.ggml.tokens"])}
    ranks = {}
    for i, m in enumerate(kv[b"tokenizer.ggml.merges"]):
        a, b = m.decode("utf-8").split(" ", 1)
        ranks.setdefault((a, b), i)
    b2u = bytes_to_unicode()

    def bpe(word, ignore_merges):
        if ignore_merges and word in vocab: return [vocab[word]]
        syms = list(word)
        while len(syms) > 1:
            best = None
            for i in range(len(syms) - 1):
                r = ranks.get((syms[i], syms[i + 1]))
                if r is not None and (best is None or r < best[0]): best = (r, i)
            if best is None: break
            i = best[1]; syms[i:i + 2] = [syms[i] + syms[i + 1]]
        return [vocab[s] for s in syms]

    def reference(text, pre):
        ids = []
        for w in regex.findall(PATTERNS[pre], text):
            ids += bpe("".join(b2u[b] for b in w.encode("utf-8")), pre == "llama-bpe")
        return ids

    pool = (list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") * 4 + list("0123456789") * 3 +
            list("     ") * 6 + list("\n\n\r\t") * 2 + list(".,;:!?-_()[]{}<>/\\\"'`~@#$%^&*+=|") * 2 +
            ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'LL", "'Re", " '", "\r\n", "\n\n\n", "   \n  ",
             "é", "ß", "Ä", "ñ", "ø", "ł", "ğ", "е", "ж", "Щ", "α", "Ω", "中", "文", "日本", "語", "한국", "ไทย",
             "العربية", "עברית", "हिन्दी", "e\u0301", "\u0301", "\u00a0", "\u2003", "\u3000", "\u200b", "\u2028",
             "٣", "४", "Ⅻ", "½", "²", "€", "£", "©", "™", "→", "…", "—", "🦙", "🚀", "👍🏽", "🇩🇪", "😶‍🌫️", "\u0085"])
    rnd = random.Random(20250220)
    fail = 0
    for pre in PATTERNS:
        path = f"{work}/qwen2.5-vocab-pre-{pre}.gguf"
        write_gguf(path, ver, kvs, pre)
        bad = 0
        for trial in range(6):
            n = [5, 40, 400, 2000, 4000, 8000][trial]
            text = "".join(rnd.choice(pool) for _ in range(n))
            want = reference(text, pre)
            r = subprocess.run([edge, "tokenize", "-m", path, "--no-special", "--no-bos"], input=text.encode(), capture_output=True)
            got = [int(x) for x in r.stdout.split()] if r.returncode == 0 else None
            if got != want:
                fail = bad = 1
                k = 0
                while got and k < min(len(got), len(want)) and got[k] == want[k]: k += 1
                print(f"FAIL pre={pre} trial {trial}: {len(text)} chars, first difference at id {k}: "
                      f"got {got[k:k+6] if got else r.stderr.decode()[:200]} want {want[k:k+6]} text {text!r:.300}")
        print(f"{pre}: {'differs' if bad else 'same ids as the reference on 6 random texts'}")
    sys.exit(fail)

main()
