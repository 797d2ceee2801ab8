"""tok_bpe_crosscheck_lib.py — a minimal reader of vocab-only GGUFs (no tensors) for the tokenizer cross-checks."""
import struct

def read_gguf(path):
    d = open(path, "rb").read()
    assert d[:4] == b"GGUF"
    ver, nt, nkv = struct.unpack_from("<IQQ", d, 4)
    assert nt == 0
    off = 24; kvs = []
    def rstr(o):
        n, = struct.unpack_from("<Q", d, o); return d[o + 8:o + 8 + n], o + 8 + n
    sizes = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
    for _ in range(nkv):
        k, o = rstr(off); t, = struct.unpack_from("<I", d, o); o += 4
        if t == 8: v, o = rstr(o)
        elif t == 9:
            et, n = struct.unpack_from("<IQ", d, o); o += 12
            if et == 8:
                v = []
                for _ in range(n): s, o = rstr(o); v.append(s)
            else: v = d[o:o + n * sizes[et]]; o += n * sizes[et]
        else: v = d[o:o + sizes[t]]; o += sizes[t]
        kvs.append((k, d[off:o], v)); off = o
    return ver, kvs

