/* base.c — implementation of base.h. */
#include <stdio.h>
#include <stdlib.h>
#include <setjmp.h>
#include <time.h>

#define STB_SPRINTF_IMPLEMENTATION
#define STB_SPRINTF_STATIC
#define STB_SPRINTF_NOUNALIGNED     /* UBSan-clean, and some ARM cores trap on unaligned stores */
#include <stb/stb_sprintf.h>

void *die_trap;
bool (*die_hook)(int code, const char *msg);
char  die_trap_msg[1024];
int   die_trap_code;

int fmt_vbuf(char *buf, int n, const char *fmt, va_list ap) { return stbsp_vsnprintf(buf, n, fmt, ap); }

int fmt_buf(char *buf, int n, const char *fmt, ...) {
    va_list ap; va_start(ap, fmt);
    int r = stbsp_vsnprintf(buf, n, fmt, ap);
    va_end(ap);
    return r;
}

static char *vout_cb(const char *buf, void *user, int len) {
    fwrite(buf, 1, (size_t)len, (FILE *)user);
    return (char *)buf;
}

static void vfout(FILE *f, const char *fmt, va_list ap) {
    char tmp[STB_SPRINTF_MIN];
    stbsp_vsprintfcb(vout_cb, f, tmp, fmt, ap);
}

void out(const char *fmt, ...)  { va_list ap; va_start(ap, fmt); vfout(stdout, fmt, ap); va_end(ap); }
void errf(const char *fmt, ...) { va_list ap; va_start(ap, fmt); vfout(stderr, fmt, ap); va_end(ap); }
void fout(void *file, const char *fmt, ...) { va_list ap; va_start(ap, fmt); vfout((FILE *)file, fmt, ap); va_end(ap); }

bool err_set(Err *e, int code, const char *fmt, ...) {
    if (!e) return false;
    va_list ap; va_start(ap, fmt);
    e->code = code;
    stbsp_vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return false;
}

_Noreturn void die(int code, const char *fmt, ...) {
    va_list ap; va_start(ap, fmt);
    if (die_trap) {
        stbsp_vsnprintf(die_trap_msg, sizeof die_trap_msg, fmt, ap);
        va_end(ap);
        die_trap_code = code;
        longjmp(*(jmp_buf *)die_trap, 1);
    }
    fflush(stdout);
    char msg[1024];
    stbsp_vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    bool (*hook)(int, const char *) = die_hook;
    die_hook = 0;                       /* a die() inside the hook prints plainly */
    if (!hook || !hook(code, msg)) fout(stderr, "edge: %s\n", msg);
    exit(code);
}

/* ---- arenas ------------------------------------------------------------------ */
void arena_wrap(Arena *a, const char *name, void *mem, u64 bytes) {
    a->name = name; a->base = (u8 *)mem; a->cap = bytes; a->pos = 0; a->high = 0;
}

void arena_init(Arena *a, const char *name, u64 bytes) {
    void *m = calloc(1, bytes ? bytes : 1);
    if (!m) die(EXIT_USAGE, "arena '%s': cannot allocate %llu bytes of host memory", name, (unsigned long long)bytes);
    arena_wrap(a, name, m, bytes);
}

void arena_free(Arena *a) { free(a->base); memset(a, 0, sizeof *a); }

void *arena_push_at(Arena *a, u64 size, u64 align, const char *site) {
    if (align == 0) align = 1;
    u64 start = align_up(a->pos, align), end;
    if (start < a->pos || !add_u64(start, size, &end) || end > a->cap)
        die(EXIT_USAGE, "arena '%s' exhausted: asked for %llu bytes (align %llu), used %llu of %llu, at %s",
            a->name, (unsigned long long)size, (unsigned long long)align,
            (unsigned long long)a->pos, (unsigned long long)a->cap, site);
    a->pos = end;
    if (end > a->high) a->high = end;
    void *p = a->base + start;
    memset(p, 0, size);
    return p;
}

void *arena_push_n(Arena *a, u64 elem, u64 n, u64 align, const char *site) {
    u64 bytes;
    if (!mul_u64(elem, n, &bytes))
        die(EXIT_USAGE, "arena '%s': %llu elements of %llu bytes overflow 64 bits, at %s",
            a->name, (unsigned long long)n, (unsigned long long)elem, site);
    return arena_push_at(a, bytes, align, site);
}

void arena_pop_to(Arena *a, u64 pos) { if (pos <= a->pos) a->pos = pos; }

/* ---- half precision ------------------------------------------------------------ */
f32 f32_from_f16(u16 h) {
    u32 s = (u32)(h >> 15) << 31, e = (h >> 10) & 0x1f, m = h & 0x3ff, bits;
    if (e == 0) {
        if (m == 0) bits = s;
        else {                                  /* subnormal: normalise */
            e = 127 - 15 + 1;
            while (!(m & 0x400)) { m <<= 1; e--; }
            m &= 0x3ff;
            bits = s | (e << 23) | (m << 13);
        }
    } else if (e == 31) bits = s | 0x7f800000u | (m << 13);
    else bits = s | ((e + 127 - 15) << 23) | (m << 13);
    f32 f; memcpy(&f, &bits, 4); return f;
}

u16 f16_from_f32(f32 f) {
    u32 x; memcpy(&x, &f, 4);
    u32 s = (x >> 16) & 0x8000, e = (x >> 23) & 0xff, m = x & 0x7fffff;
    if (e == 0xff) return (u16)(s | 0x7c00 | (m ? 0x200 : 0));      /* inf / nan */
    i32 ee = (i32)e - 127 + 15;
    if (ee >= 31) return (u16)(s | 0x7c00);                        /* overflow -> inf */
    if (ee <= 0) {                                                 /* subnormal or zero */
        if (ee < -10) return (u16)s;
        m |= 0x800000;
        u32 shift = (u32)(14 - ee), hm = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (hm & 1))) hm++;
        return (u16)(s | hm);
    }
    u32 hm = m >> 13, rem = m & 0x1fff;
    u32 r = s | ((u32)ee << 10) | hm;
    if (rem > 0x1000 || (rem == 0x1000 && (hm & 1))) r++;          /* carries into exponent correctly */
    return (u16)r;
}

f32 f32_from_bf16(u16 h) { u32 b = (u32)h << 16; f32 f; memcpy(&f, &b, 4); return f; }

/* Round to nearest even on the top 16 bits (ggml's and gguf-py's); NaN stays a quiet NaN. */
u16 bf16_from_f32(f32 f) {
    u32 b; memcpy(&b, &f, 4);
    if ((b & 0x7fffffff) > 0x7f800000) return (u16)((b >> 16) | 64);
    return (u16)((b + (0x7fff + ((b >> 16) & 1))) >> 16);
}

bool read_file_all(Arena *a, const char *path, u8 **data, u64 *size, Err *e) {
    FILE *f = fopen(path, "rb");
    if (!f) return err_set(e, EXIT_USAGE, "cannot open '%s'", path);
    fseek(f, 0, SEEK_END); long n = ftell(f); fseek(f, 0, SEEK_SET);
    if (n < 0) { fclose(f); return err_set(e, EXIT_USAGE, "cannot read '%s'", path); }
    u8 *p = (u8 *)arena_push(a, (u64)n + 1, 16);
    if (n && fread(p, 1, (size_t)n, f) != (size_t)n) { fclose(f); return err_set(e, EXIT_USAGE, "short read on '%s'", path); }
    fclose(f);
    p[n] = 0; *data = p; *size = (u64)n;
    return true;
}

f64 now_sec(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return (f64)t.tv_sec + (f64)t.tv_nsec * 1e-9; }
