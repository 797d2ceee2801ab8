#!/usr/bin/env python3
"""gguf_mutate.py SRC OUTDIR — writes OUTDIR/CASE.gguf: one damaged copy of the GGUF file SRC per
case of the GGUF reader's error list (docs/reliability.md, "GGUF reader errors"). Used by
test/cli/gguf_errors.sh, which runs edge on each file and checks the exit code and the message.

The cases need a model whose metadata has a string array, whose tensor directory has two or more
2-D tensors and padding before the data section, and an F32 blk.0.attn_norm.weight
(stories260K.gguf). Prints one line per file written: CASE and what was changed."""
import os, struct, sys

SCALAR = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


def parse(b):
    """Offsets of every field edge's reader checks: header, metadata entries, tensor infos."""
    p = 0
    def take(n):
        nonlocal p
        s = b[p:p + n]; p += n; return s
    magic, ver, nt, nkv = struct.unpack("<4sIQQ", take(24))
    kvs = []
    for _ in range(nkv):
        k = {"at": p}
        n, = struct.unpack("<Q", take(8)); k["key"] = take(n).decode()
        k["type_at"] = p
        t, = struct.unpack("<I", take(4)); k["type"] = t
        k["val_at"] = p
        if t == 8:
            n, = struct.unpack("<Q", take(8)); take(n)
        elif t == 9:
            et, n = struct.unpack("<IQ", take(12)); k["arr_type"], k["arr_n"] = et, n
            k["elems_at"] = p
            if et == 8:
                for _ in range(n):
                    m, = struct.unpack("<Q", take(8)); take(m)
            else:
                take(SCALAR[et] * n)
        else:
            take(SCALAR[t])
        k["end"] = p
        kvs.append(k)
    tis = []
    for _ in range(nt):
        ti = {"at": p}
        n, = struct.unpack("<Q", take(8)); ti["name"] = take(n).decode()
        ti["ndim_at"] = p
        nd, = struct.unpack("<I", take(4))
        ti["ne_at"] = p
        ti["ne"] = list(struct.unpack("<%dQ" % nd, take(8 * nd)))
        ti["type_at"] = p
        ti["type"], = struct.unpack("<I", take(4))
        ti["off_at"] = p
        ti["offset"], = struct.unpack("<Q", take(8))
        tis.append(ti)
    align = 32
    for k in kvs:
        if k["key"] == "general.alignment":
            align, = struct.unpack("<I", b[k["val_at"]:k["val_at"] + 4])
    infos_end = p
    data_off = (p + align - 1) // align * align
    return kvs, tis, infos_end, data_off


def main():
    src, out = sys.argv[1], sys.argv[2]
    b = open(src, "rb").read()
    kvs, tis, infos_end, data_off = parse(b)
    T = {t["name"]: t for t in tis}
    K = {k["key"]: k for k in kvs}
    toks = K["tokenizer.ggml.tokens"]
    q1, q3 = T["blk.1.attn_q.weight"], T["blk.3.attn_q.weight"]
    norm = T["blk.0.attn_norm.weight"]
    assert infos_end < data_off, "the source has no padding before its data section"
    assert norm["type"] == 0 and q3["type"] == 0 and len(q3["ne"]) == 2

    def put(m, at, fmt, v):
        struct.pack_into(fmt, m, at, v)

    def case(name, what, mut=None, cut=None):
        m = bytearray(b if cut is None else b[:cut])
        if mut: mut(m)
        with open(os.path.join(out, name + ".gguf"), "wb") as f:
            f.write(m)
        print(name, what)

    # truncated at each section
    case("trunc_header", "cut at 20 bytes (inside the 24-byte header)", cut=20)
    k5 = kvs[5]
    case("trunc_metadata", "cut inside the value type of metadata entry 5 (%s)" % k5["key"], cut=k5["type_at"] + 2)
    case("trunc_tensor_info", "cut inside ne[1] of %s" % q1["name"], cut=q1["ne_at"] + 8 + 3)
    case("trunc_padding", "cut between the tensor infos and the data section", cut=infos_end + (data_off - infos_end) // 2)
    last = max(tis, key=lambda t: t["offset"])
    case("trunc_data", "cut in the middle of the data of %s" % last["name"], cut=data_off + last["offset"] + 4)
    # header fields
    case("bad_magic", "magic 'GGUX'", lambda m: m.__setitem__(slice(0, 4), b"GGUX"))
    case("version_1", "version 1", lambda m: put(m, 4, "<I", 1))
    case("version_4", "version 4", lambda m: put(m, 4, "<I", 4))
    # counts and lengths beyond the file
    case("n_tensors_huge", "tensor count 2^32", lambda m: put(m, 8, "<Q", 1 << 32))
    case("n_kv_huge", "metadata count 2^40", lambda m: put(m, 16, "<Q", 1 << 40))
    case("key_len_huge", "length of the first key 2^62", lambda m: put(m, kvs[0]["at"], "<Q", 1 << 62))
    case("str_len_huge", "length of string 0 of tokenizer.ggml.tokens 2^50", lambda m: put(m, toks["elems_at"], "<Q", 1 << 50))
    case("arr_len_huge", "length of tokenizer.ggml.tokens 2^61", lambda m: put(m, toks["elems_at"] - 8, "<Q", 1 << 61))
    case("name_len_huge", "length of tensor 0's name 2^60", lambda m: put(m, tis[0]["at"], "<Q", 1 << 60))
    # tensor offsets
    end = len(b) - data_off
    case("offset_beyond", "data offset of %s past the end of the file" % q3["name"],
         lambda m: put(m, q3["off_at"], "<Q", (end + 31) // 32 * 32))
    case("offset_overlap", "data offset of %s = that of %s" % (tis[1]["name"], tis[0]["name"]),
         lambda m: put(m, tis[1]["off_at"], "<Q", tis[0]["offset"]))
    case("offset_misaligned", "data offset of %s + 4" % q3["name"], lambda m: put(m, q3["off_at"], "<Q", q3["offset"] + 4))
    case("offset_overflow", "data offset of %s 2^64-32 (offset + size wraps)" % q3["name"],
         lambda m: put(m, q3["off_at"], "<Q", (1 << 64) - 32))
    # shapes whose size overflows 64 bits
    case("shape_bytes_overflow", "%s shape [2^62, 1] F32: 2^64 bytes" % q3["name"],
         lambda m: (put(m, q3["ne_at"], "<Q", 1 << 62), put(m, q3["ne_at"] + 8, "<Q", 1)))
    case("shape_elems_overflow", "%s shape [2^40, 2^40]" % q3["name"],
         lambda m: (put(m, q3["ne_at"], "<Q", 1 << 40), put(m, q3["ne_at"] + 8, "<Q", 1 << 40)))
    # duplicate tensor names: blk.1.attn_q.weight renamed blk.3.attn_q.weight
    case("duplicate_name", "%s renamed %s" % (q1["name"], q3["name"]),
         lambda m: m.__setitem__(q1["at"] + 8 + 4, ord("3")))
    # tensor types
    case("type_q8_1", "%s type Q8_1 (no decoder)" % q3["name"], lambda m: put(m, q3["type_at"], "<I", 9))
    case("type_iq2_xxs", "%s type IQ2_XXS (no decoder)" % q3["name"], lambda m: put(m, q3["type_at"], "<I", 16))
    case("type_unknown", "%s type id 1234" % q3["name"], lambda m: put(m, q3["type_at"], "<I", 1234))
    case("type_norm_q8_0", "%s type Q8_0 (a supported type that a norm weight may not have)" % norm["name"],
         lambda m: put(m, norm["type_at"], "<I", 8))
    case("type_norm_f16", "%s type F16" % norm["name"], lambda m: put(m, norm["type_at"], "<I", 1))


if __name__ == "__main__":
    main()
