/* base.h — the bottom layer of edge: integer types, exit codes, errors, output
   through stb_sprintf, checked size arithmetic, fixed arenas.

   Why: every module above needs the same few habits (no libc float printing,
   errors that name the object and the limit, arenas that never grow).

   API:
     out(fmt, ...) / errf(fmt, ...)       formatted write to stdout / stderr (stb_sprintf)
     fmt_buf(buf, n, fmt, ...)            stbsp_snprintf
     die(code, fmt, ...)                  "edge: <msg>" on stderr, exit(code) (tests may trap it)
     err_set(e, code, fmt, ...)           fill an Err and return false (recoverable errors)
     mul_u64(a, b, &r) / add_u64(a,b,&r)  overflow-checked size arithmetic, false on overflow
     arena_init(a, name, bytes) / arena_push(a, size, align) / push_array(a, T, n)
     arena_pos(a) / arena_pop_to(a, pos) / temp_begin(a) / temp_end(t)

   Knobs: none here; see config/edge_config.h. */
#ifndef EDGE_BASE_H
#define EDGE_BASE_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdarg.h>
#include <string.h>

typedef uint8_t  u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t   i8;
typedef int16_t  i16;
typedef int32_t  i32;
typedef int64_t  i64;
typedef float    f32;
typedef double   f64;

#define STR_(x) #x
#define STR(x) STR_(x)
#define SITE __FILE__ ":" STR(__LINE__)
#define ARRAY_COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* Exit codes (documented in --help and docs/usage.md). */
enum {
    EXIT_OK      = 0,   /* all prompts answered / check passed */
    EXIT_USAGE   = 1,   /* bad command line */
    EXIT_MODEL   = 2,   /* model file error */
    EXIT_DEVICE  = 3,   /* no Vulkan, no device, device error */
    EXIT_NUMERIC = 4,   /* NaN/Inf detected */
    EXIT_PARTIAL = 5,   /* some prompts failed, the others were answered */
};

/* A recoverable error: the code is one of the exit codes above. */
typedef struct Err {
    int  code;
    char msg[1024];
} Err;

/* ---- output ---------------------------------------------------------------- */
int  fmt_buf(char *buf, int n, const char *fmt, ...);
int  fmt_vbuf(char *buf, int n, const char *fmt, va_list ap);
void out(const char *fmt, ...);            /* stdout */
void errf(const char *fmt, ...);           /* stderr */
void fout(void *file, const char *fmt, ...); /* any FILE* */
bool err_set(Err *e, int code, const char *fmt, ...);
_Noreturn void die(int code, const char *fmt, ...);

/* Tests trap die() instead of exiting: when set, die() formats the message into
   die_trap_msg and longjmps to die_trap. */
extern void *die_trap;          /* jmp_buf* */
/* Called by die() (when not trapped) with the formatted message before it exits: the generation
   command ends the prompt it was streaming (separator, "prompt N: ..." on stderr). Returns true
   when it printed the message itself. */
extern bool (*die_hook)(int code, const char *msg);
extern char  die_trap_msg[1024];
extern int   die_trap_code;

/* ---- checked arithmetic ------------------------------------------------------ */
static inline bool mul_u64(u64 a, u64 b, u64 *r) { return !__builtin_mul_overflow(a, b, r); }
static inline bool add_u64(u64 a, u64 b, u64 *r) { return !__builtin_add_overflow(a, b, r); }
static inline u64  align_up(u64 x, u64 a) { return (x + a - 1) / a * a; }

/* ---- arenas ------------------------------------------------------------------ */
/* A fixed arena: one block, a bump pointer, never grows. Running out is a fatal
   error naming the arena, the bytes asked for, used and capacity, and the site. */
typedef struct Arena {
    const char *name;
    u8  *base;
    u64  cap;
    u64  pos;
    u64  high;   /* high-water mark, for plans and tests */
} Arena;

typedef struct Temp { Arena *a; u64 pos; } Temp;

void  arena_init(Arena *a, const char *name, u64 bytes);   /* one malloc, zeroed */
void  arena_wrap(Arena *a, const char *name, void *mem, u64 bytes);
void  arena_free(Arena *a);
void *arena_push_at(Arena *a, u64 size, u64 align, const char *site);
void *arena_push_n(Arena *a, u64 elem, u64 n, u64 align, const char *site);
static inline u64  arena_pos(Arena *a) { return a->pos; }
void  arena_pop_to(Arena *a, u64 pos);
static inline Temp temp_begin(Arena *a) { Temp t = { a, a->pos }; return t; }
static inline void temp_end(Temp t) { arena_pop_to(t.a, t.pos); }

#define arena_push(a, size, align) arena_push_at((a), (size), (align), SITE)
#define push_array(a, T, n) ((T *)arena_push_n((a), sizeof(T), (u64)(n), _Alignof(T), SITE))

/* ---- small helpers -------------------------------------------------------------- */
f32 f32_from_f16(u16 h);
u16 f16_from_f32(f32 f);       /* round to nearest even, like IEEE / numpy */
f32 f32_from_bf16(u16 h);
u16 bf16_from_f32(f32 f);      /* round to nearest even (ggml, gguf-py) */
bool read_file_all(Arena *a, const char *path, u8 **data, u64 *size, Err *e);
f64  now_sec(void);             /* CLOCK_MONOTONIC, seconds */

#endif
