/* xf_debug.c — seeing inside the GPU forward pass: --trace, --check-nan, --profile,
   EDGE_INJECT_NAN (a testing aid) and what `edge paths` prints (the kernel path and its dtype chain).

   Why: when output turns to garbage on a board, the first kernel that went wrong must be
   found in minutes, by tools that cannot lie: statistics cover exactly a tensor's own
   elements (its nelem and dtype, read back by vk_download of exactly t->nbytes), never
   the buffer around it, and never rows the op did not write.

   How: xf_record brackets every op with xf_op/xf_done (transformer.c). With every tool off
   they return at once, and decode is recorded once and replayed, so the normal path is
   unchanged. --trace and --check-nan submit op by op (end the command buffer after the op,
   read its output, continue). --profile writes a timestamp after each op into a query pool
   sized from the op count of the pass (counted by a describe run). Describe mode runs
   xf_record with vk->describe: every dispatch is checked and reported, nothing recorded.

   API (transformer.h): xf_debug, xf_debug_parse, xf_describe, xf_desc_free, xf_tensor_stats,
   xf_profile_print, xf_paths_print (the command `edge paths` is cli/paths.c).

   Knobs: EDGE_INJECT_NAN=OP:LAYER[:prefill|decode] (testing aid): writes a NaN into the first element of the
   output of the first op of LAYER ('-' for ops outside the layers) whose site name or class
   is OP. Classes: embed, norm (attn_norm; output_norm for '-'), matmul (attn_q), bias, rope
   (rope_q), kv, attn (attention), add (attn_residual), glu, ffn (ffn_down), logits (lm_head),
   softcap, sample (argmax). */
#include <time.h>

XfDebug xf_debug;

static const char *const xt_names[] = { "kernels", "embed", "attn", "ffn", "norm", "logits", "sample" };
static const char *const pc_names[PC_COUNT] = { "matmul/matvec", "attention", "norms", "rope", "activations", "sampling", "copies" };


/* ---- option parsing ------------------------------------------------------------- */
/* "0,3-5,7" -> ranges. */
static bool xf_parse_list(const char *s, XfRange *r, u32 *n, u32 cap) {
    *n = 0;
    while (*s) {
        char *end;
        if (*s < '0' || *s > '9') return false;
        unsigned long lo = strtoul(s, &end, 10), hi = lo;
        s = end;
        if (*s == '-') { s++; if (*s < '0' || *s > '9') return false; hi = strtoul(s, &end, 10); s = end; }
        if (hi < lo || hi > 0xffffffffu || *n == cap) return false;
        r[(*n)++] = (XfRange){ (u32)lo, (u32)hi };
        if (*s == ',') s++;
        else if (*s) return false;
    }
    return *n > 0;
}

static bool xf_in_list(const XfRange *r, u32 n, u32 v) {
    if (n == 0) return true;
    for (u32 i = 0; i < n; i++) if (v >= r[i].lo && v <= r[i].hi) return true;
    return false;
}

static bool xf_parse_inject(const char *v, Err *e) {
    const char *colon = strchr(v, ':');
    if (!colon || colon == v || (u64)(colon - v) >= sizeof xf_debug.inject_op || !colon[1])
        return err_set(e, EXIT_USAGE, "EDGE_INJECT_NAN='%s': expected OP:LAYER (e.g. attn:1, logits:-)", v);
    memcpy(xf_debug.inject_op, v, (u64)(colon - v));
    xf_debug.inject_op[colon - v] = 0;
    const char *ls = colon + 1, *c2 = strchr(ls, ':');
    xf_debug.inject_phase = PH_ANY;
    if (c2) {
        if (!strcmp(c2 + 1, "prefill")) xf_debug.inject_phase = PH_PREFILL;
        else if (!strcmp(c2 + 1, "decode")) xf_debug.inject_phase = PH_DECODE;
        else return err_set(e, EXIT_USAGE, "EDGE_INJECT_NAN='%s': the phase is prefill or decode", v);
    }
    u64 ll = c2 ? (u64)(c2 - ls) : strlen(ls);
    if (ll == 1 && ls[0] == '-') xf_debug.inject_layer = -1;
    else {
        char *end; long l = strtol(ls, &end, 10);
        if (end != ls + ll || ll == 0 || l < 0 || l > 100000) return err_set(e, EXIT_USAGE, "EDGE_INJECT_NAN='%s': LAYER is a number or '-'", v);
        xf_debug.inject_layer = (i32)l;
    }
    xf_debug.inject = true;
    return true;
}

bool xf_debug_parse(int *argc, char **argv, Err *e) {
    int out_n = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        const char *val = 0;
        bool takes = !strncmp(a, "--trace-layers", 14) || !strncmp(a, "--trace-pos", 11) || !strncmp(a, "--trace-warn", 12);
        if (takes) {
            const char *eq = strchr(a, '=');
            if (eq) val = eq + 1;
            else if (i + 1 < *argc) val = argv[++i];
            else return err_set(e, EXIT_USAGE, "%s needs a value", a);
        }
        if (!strncmp(a, "--trace-layers", 14)) {
            if (!xf_parse_list(val, xf_debug.layers, &xf_debug.n_layers, ARRAY_COUNT(xf_debug.layers)))
                return err_set(e, EXIT_USAGE, "--trace-layers '%s': expected a list like 0,3-5", val);
        } else if (!strncmp(a, "--trace-pos", 11)) {
            if (!xf_parse_list(val, xf_debug.pos, &xf_debug.n_pos, ARRAY_COUNT(xf_debug.pos)))
                return err_set(e, EXIT_USAGE, "--trace-pos '%s': expected a list like 0,10-12", val);
        } else if (!strncmp(a, "--trace-warn", 12)) {
            char *end; f64 w = strtod(val, &end);
            if (*end || !(w > 0)) return err_set(e, EXIT_USAGE, "--trace-warn '%s': expected a positive number", val);
            xf_debug.warn = (f32)w;
        } else if (!strcmp(a, "--trace")) {
            xf_debug.trace = XT_ALL;
        } else if (!strncmp(a, "--trace=", 8)) {
            const char *s = a + 8;
            xf_debug.trace = 0;
            while (*s) {
                const char *end = strchr(s, ','); u64 len = end ? (u64)(end - s) : strlen(s);
                u32 bit = 0;
                for (u32 c = 0; c < ARRAY_COUNT(xt_names); c++)
                    if (strlen(xt_names[c]) == len && !strncmp(xt_names[c], s, len)) bit = 1u << c;
                if (!bit) return err_set(e, EXIT_USAGE, "--trace: unknown category '%.*s' (categories: kernels embed attn ffn norm logits sample)", (int)len, s);
                xf_debug.trace |= bit;
                s += len; if (*s == ',') s++;
            }
        } else if (!strcmp(a, "--check-nan")) xf_debug.check_nan = true;
        else if (!strcmp(a, "--profile")) xf_debug.profile = true;
        else { argv[out_n++] = argv[i]; continue; }
    }
    argv[out_n] = 0;
    *argc = out_n;
    if (edge_opt.inject_nan && !xf_parse_inject(edge_opt.inject_nan, e)) return false;
    return true;
}

/* ---- statistics over exactly a tensor's elements ---------------------------------- */
static f64 xf_elem(const u8 *raw, DType dt, u64 i) {
    switch (dt) {
    case DT_F32: { f32 v; memcpy(&v, raw + i * 4, 4); return v; }
    case DT_F16: { u16 h; memcpy(&h, raw + i * 2, 2); return f32_from_f16(h); }
    case DT_BF16: { u16 h; memcpy(&h, raw + i * 2, 2); return f32_from_bf16(h); }
    case DT_U32: { u32 v; memcpy(&v, raw + i * 4, 4); return v; }
    case DT_I32: { i32 v; memcpy(&v, raw + i * 4, 4); return v; }
    default: return 0;
    }
}

static bool xf_readable(DType dt) { return dt == DT_F32 || dt == DT_F16 || dt == DT_BF16 || dt == DT_U32 || dt == DT_I32; }

/* Rows r of the tensor (r = element / ne[0]) for which keep(p0 + r) holds (all when !filter). */
static void xf_stats_raw(const u8 *raw, const Tensor *t, u64 p0, bool filter, f32 warn, XfStats *s) {
    memset(s, 0, sizeof *s);
    s->min = INFINITY; s->max = -INFINITY; s->bad_row = s->bad_col = ~0ull;
    u64 ne0 = t->ne[0] ? t->ne[0] : 1, n_fin = 0;
    for (u64 i = 0; i < t->nelem; i++) {
        u64 r = i / ne0, c = i % ne0;
        if (filter && !xf_in_list(xf_debug.pos, xf_debug.n_pos, (u32)(p0 + r))) continue;
        f64 v = xf_elem(raw, t->dtype, i);
        s->n++;
        if (isnan(v) || isinf(v)) {
            if (isnan(v)) s->nan++; else s->inf++;
            if (s->bad_row == ~0ull) { s->bad_row = r; s->bad_col = c; }
            continue;
        }
        n_fin++;
        s->sum += v;
        if (v < s->min) s->min = v;
        if (v > s->max) s->max = v;
        if (fabs(v) > s->maxabs || n_fin == 1) { s->maxabs = fabs(v); s->amax_row = r; s->amax_col = c; }
        if (warn > 0 && fabs(v) > warn) s->warn++;
    }
    if (n_fin == 0) { s->min = s->max = 0; }
}

void xf_tensor_stats(Vk *vk, const Tensor *t, XfStats *st, void *scratch) {
    vk_download(vk, t, scratch);
    xf_stats_raw(scratch, t, 0, false, xf_debug.warn, st);
}

static void xf_stats_str(char *buf, int n, const Tensor *t, const XfStats *s, u64 p0, const char *rowname) {
    if (!xf_readable(t->dtype)) { fmt_buf(buf, n, "(%s: not read)", dtype_name[t->dtype]); return; }
    u64 fin = s->n - s->nan - s->inf;
    int k = fmt_buf(buf, n, "min %.6g max %.6g mean %.6g |max| %.6g @(%s %llu, dim %llu) nan %llu inf %llu",
                    s->min, s->max, fin ? s->sum / (f64)fin : 0.0, s->maxabs, rowname, (unsigned long long)(p0 + s->amax_row),
                    (unsigned long long)s->amax_col, (unsigned long long)s->nan, (unsigned long long)s->inf);
    if (s->warn && k > 0 && k < n) fmt_buf(buf + k, n - k, "  WARN %llu values |x| > %g", (unsigned long long)s->warn, (f64)xf_debug.warn);
}

static void xf_shape_str(char *buf, int n, const Tensor *t) {
    int k = fmt_buf(buf, n, "%s[", t->name ? t->name : "?");
    for (u32 d = 0; d < MAX(t->ndim, 1u) && k < n; d++) k += fmt_buf(buf + k, n - k, d ? "x%llu" : "%llu", (unsigned long long)t->ne[d]);
    if (k < n) fmt_buf(buf + k, n - k, "]");
}

/* ---- set-up --------------------------------------------------------------------- */
static u64 xf_max_state_bytes(const Xf *xf) {
    const Tensor *ts[] = { &xf->s.ids, &xf->s.pos, &xf->s.x, &xf->s.h, &xf->s.q, &xf->s.k, &xf->s.v, &xf->s.qr, &xf->s.kr, &xf->s.qp, &xf->s.kp,
                           &xf->s.att, &xf->s.o, &xf->s.gate, &xf->s.up, &xf->s.ff, &xf->s.hn, &xf->s.logits, &xf->s.zl, &xf->s.out_ids,
                           &xf->s.kv[0].k, &xf->s.kv[0].v };
    u64 m = 16;
    for (u32 i = 0; i < ARRAY_COUNT(ts); i++) m = MAX(m, ts[i]->nbytes);
    return m;
}

static u32 xf_count_ops(Xf *xf, u32 T);

static void xf_debug_init(Xf *xf) {
    xf->d.step = xf_debug.check_nan || (xf_debug.trace & ~(u32)XT_KERNELS);
    xf->d.on = xf->d.step || xf_debug.trace || xf_debug.profile || xf_debug.inject;
    if (xf->d.step) {
        xf->d.bytes = xf_max_state_bytes(xf);
        xf->d.buf = malloc(xf->d.bytes);
        xf->d.snap = malloc(xf->d.bytes);
    }
    if (xf_debug.profile) {
        for (int i = 0; i < 2; i++) {
            XfProfPhase *p = &xf->d.prof[i];
            p->n_ops = xf_count_ops(xf, i ? 1 : xf->t_max);
            p->op_class = calloc(p->n_ops + 1, 1);
            p->op_site = calloc(p->n_ops + 1, sizeof *p->op_site);
            if (xf->vk->caps.timestamps) p->pool = vk_ts_pool(xf->vk, p->n_ops + 1);
        }
    }
}

static void xf_debug_free(Xf *xf) {
    free(xf->d.buf); free(xf->d.snap);
    xf->d.buf = xf->d.snap = 0;
    for (int i = 0; i < 2; i++) {
        if (xf->d.prof[i].pool) vk_ts_pool_free(xf->vk, xf->d.prof[i].pool);
        free(xf->d.prof[i].op_class); free(xf->d.prof[i].op_site);
    }
    memset(xf->d.prof, 0, sizeof xf->d.prof);
}

/* ---- the hooks around every op ------------------------------------------------------ */
static void xf_rec_start(Xf *xf, Phase ph, u32 T, u32 p0) {
    if (!xf->d.on) return;
    xf->d.rec_ph = ph;
    xf->d.rec_p0 = p0; xf->d.rec_T = T;
    xf->d.rec_ops = xf->d.rec_dispatch = 0;
    xf->d.injected = false;
    if (xf_debug.profile && !xf->vk->describe) {
        XfProfPhase *p = &xf->d.prof[ph == PH_DECODE];
        if (p->pool) { vk_ts_reset(xf->vk, p->pool, p->n_ops + 1); vk_ts_write(xf->vk, p->pool, 0); }
    }
}

static bool xf_overlap(const Tensor *a, const Tensor *b) {
    return a->arena == b->arena && a->block == b->block && a->offset < b->offset + b->nbytes && b->offset < a->offset + a->nbytes;
}

static void xf_op(Xf *xf, const char *name, u32 cat, const char *cls, i32 layer, const Tensor *out,
                  const Tensor *in0, const Tensor *in1, const Tensor *in2) {
    if (!xf->d.on) return;
    struct XfOpCur *c = &xf->d.cur;
    c->name = name; c->cat = cat; c->cls = cls; c->layer = layer; c->out = *out;
    c->n_in = 0; c->snap = false;
    const Tensor *in[3] = { in0, in1, in2 };
    for (u32 i = 0; i < 3; i++) if (in[i]) c->in[c->n_in++] = *in[i];
    c->d0 = xf->vk->n_dispatch;
    /* --check-nan reports the inputs of a failing op; an in-place op overwrites its input, so keep a copy */
    if (xf->d.step && xf_debug.check_nan && !xf->vk->describe)
        for (u32 i = 0; i < c->n_in; i++)
            if (xf_overlap(&c->in[i], out) && c->in[i].nbytes <= xf->d.bytes) {
                vk_download(xf->vk, &c->in[i], xf->d.snap);
                c->snap = true;
                Tensor t = c->in[i]; c->in[i] = c->in[0]; c->in[0] = t;   /* the snapshot is of in[0] */
                break;
            }
}

static const char *xf_layer_str(i32 l, char *buf, int n) { if (l < 0) return "-"; fmt_buf(buf, n, "%d", l); return buf; }

/* Profile class of each op (the prof column of config/ops.def). */
static const u8 xf_op_class[] = {
#define OP(id, name, prof) [OP_##id] = PC_##prof,
#include "config/ops.def"
#undef OP
};
_Static_assert(ARRAY_COUNT(xf_op_class) == OP_COUNT, "xf_op_class: one class per line of config/ops.def");

/* Profile class of a kernel, from its kernels.def op. */
static u8 xf_kernel_class(const KernelInfo *k) {
    if (!k) return PC_COPY;
    for (i32 i = 0; i < KDEF_COUNT; i++)
        if (!strcmp(kdefs[i].kernel, k->name)) return xf_op_class[kdefs[i].op];
    return PC_ACT;
}

static i32 xf_kdef_of(const KernelInfo *k) {
    if (k) for (i32 i = 0; i < KDEF_COUNT; i++) if (!strcmp(kdefs[i].kernel, k->name)) return i;
    return -1;
}

/* "f32,q8_0 -> f32": the dtypes of the last dispatch's read-only bindings, and the op's output. */
static void xf_dtypes_str(const Xf *xf, char *buf, int n) {
    const Vk *vk = xf->vk; const KernelInfo *k = vk->last_pipe ? vk->last_pipe->k : 0;
    int w = 0; bool first = true;
    if (k) for (u32 i = 0; i < k->n_bindings && w < n; i++) {
        const KBinding *b = &k->bindings[i];
        if (b->writable || (u32)b->binding >= vk->last_n) continue;
        w += fmt_buf(buf + w, n - w, first ? "%s" : ",%s", dtype_name[vk->last_dt[b->binding]]);
        first = false;
    }
    if (w < n) fmt_buf(buf + w, n - w, " -> %s", dtype_name[xf->d.cur.out.dtype]);
}

static bool xf_trace_wants(const Xf *xf, u32 cat) {
    const struct XfOpCur *c = &xf->d.cur;
    if (!(xf_debug.trace & (cat | XT_KERNELS))) return false;
    if (c->layer >= 0 && !xf_in_list(xf_debug.layers, xf_debug.n_layers, (u32)c->layer)) return false;
    if (xf_debug.n_pos) {
        bool any = false;
        for (u32 t = 0; t < xf->d.rec_T; t++) if (xf_in_list(xf_debug.pos, xf_debug.n_pos, xf->d.rec_p0 + t)) any = true;
        if (!any) return false;
    }
    return true;
}

static void xf_report_nan(Xf *xf, const XfStats *os) {
    struct XfOpCur *c = &xf->d.cur;
    const KernelInfo *k = xf->vk->last_pipe ? xf->vk->last_pipe->k : 0;
    char lb[16], sb[512], shp[96];
    const char *ph = xf->d.rec_ph == PH_DECODE ? "decode" : "prefill";
    errf("edge: --check-nan: op '%s' (layer %s, %s, positions %u..%u) wrote %llu NaN and %llu Inf; the first at (pos %llu, dim %llu)\n",
         c->name, xf_layer_str(c->layer, lb, sizeof lb), ph, xf->d.rec_p0, xf->d.rec_p0 + xf->d.rec_T - 1,
         (unsigned long long)os->nan, (unsigned long long)os->inf, (unsigned long long)(xf->d.rec_p0 + os->bad_row), (unsigned long long)os->bad_col);
    errf("  kernel  %s (%s:%s)\n", k ? k->name : "?", k ? k->file : "?", k ? k->entry : "?");
    xf_shape_str(shp, sizeof shp, &c->out);
    xf_stats_str(sb, sizeof sb, &c->out, os, xf->d.rec_p0, "pos");
    errf("  output  %s %s: %s\n", shp, dtype_name[c->out.dtype], sb);
    for (u32 i = 0; i < c->n_in; i++) {
        const Tensor *t = &c->in[i];
        XfStats is;
        xf_shape_str(shp, sizeof shp, t);
        if (!xf_readable(t->dtype) || t->nbytes > xf->d.bytes) { errf("  input   %s %s: (not read)\n", shp, dtype_name[t->dtype]); continue; }
        if (i == 0 && c->snap) xf_stats_raw(xf->d.snap, t, 0, false, xf_debug.warn, &is);
        else { vk_download(xf->vk, t, xf->d.buf); xf_stats_raw(xf->d.buf, t, 0, false, xf_debug.warn, &is); }
        xf_stats_str(sb, sizeof sb, t, &is, 0, "row");
        errf("  input   %s %s%s: %s\n", shp, dtype_name[t->dtype], i == 0 && c->snap ? " (before the op)" : "", sb);
    }
    die(EXIT_NUMERIC, "--check-nan: stopped at the first NaN/Inf: op '%s', layer %s", c->name, xf_layer_str(c->layer, lb, sizeof lb));
}

/* Submit what is recorded, read the op's output, trace and check it, continue recording. */
static void xf_step(Xf *xf) {
    Vk *vk = xf->vk; struct XfOpCur *c = &xf->d.cur;
    vk_submit_wait(vk);
    bool stats = (xf_debug.trace & c->cat) && xf_trace_wants(xf, c->cat);
    bool line = stats || ((xf_debug.trace & XT_KERNELS) && xf_trace_wants(xf, XT_KERNELS));
    XfStats full, sel;
    bool readable = xf_readable(c->out.dtype) && c->out.nbytes <= xf->d.bytes;
    if (readable && (stats || xf_debug.check_nan)) {
        vk_download(vk, &c->out, xf->d.buf);
        xf_stats_raw(xf->d.buf, &c->out, xf->d.rec_p0, false, xf_debug.warn, &full);
        if (xf_debug.check_nan && c->out.dtype != DT_U32 && (full.nan || full.inf)) xf_report_nan(xf, &full);
        if (stats && xf_debug.n_pos) xf_stats_raw(xf->d.buf, &c->out, xf->d.rec_p0, true, xf_debug.warn, &sel);
        else sel = full;
    }
    if (line) {
        const KernelInfo *k = vk->last_pipe ? vk->last_pipe->k : 0;
        char lb[16], dt[96], shp[96], sb[512] = "";
        xf_dtypes_str(xf, dt, sizeof dt);
        xf_shape_str(shp, sizeof shp, &c->out);
        if (stats && readable) {
            if (c->out.dtype == DT_U32 && c->out.ne[0] == 2) {      /* argmax: [id, flag] per row */
                int w = fmt_buf(sb, sizeof sb, "ids");
                for (u64 r = 0; r < c->out.nelem / 2 && r < 16 && w < (int)sizeof sb; r++)
                    w += fmt_buf(sb + w, sizeof sb - w, " %u%s", (u32)xf_elem(xf->d.buf, DT_U32, 2 * r),
                                 xf_elem(xf->d.buf, DT_U32, 2 * r + 1) != 0 ? "(NaN/Inf row)" : "");
            } else xf_stats_str(sb, sizeof sb, &c->out, &sel, xf->d.rec_p0, "pos");
        }
        errf("trace %-7s L%-3s %-13s %s (%s:%s)  %s  %s  %s\n", xf->d.rec_ph == PH_DECODE ? "decode" : "prefill",
             xf_layer_str(c->layer, lb, sizeof lb), c->name, k ? k->name : "?", k ? k->file : "?", k ? k->entry : "?", dt, shp, sb);
    }
    vk_begin(vk);
}

static void xf_done(Xf *xf) {
    if (!xf->d.on) return;
    Vk *vk = xf->vk; struct XfOpCur *c = &xf->d.cur;
    u32 nd = vk->n_dispatch - c->d0;
    xf->d.rec_dispatch += nd;
    u32 op_i = xf->d.rec_ops++;
    const KernelInfo *k = vk->last_pipe && nd ? vk->last_pipe->k : 0;
    if (vk->describe) {
        XfDesc *d = xf->d.desc;
        if (!d) return;
        if (d->n_ops == d->cap_ops) { d->cap_ops = d->cap_ops ? 2 * d->cap_ops : 64; d->ops = realloc(d->ops, d->cap_ops * sizeof *d->ops); }
        XfDescOp *o = &d->ops[d->n_ops++];
        memset(o, 0, sizeof *o);
        o->name = c->name; o->layer = c->layer; o->k = k; o->kdef = xf_kdef_of(k); o->out = c->out.dtype; o->n_dispatch = nd;
        if (k) for (u32 i = 0; i < k->n_bindings && o->n_in < 8; i++)
            if (!k->bindings[i].writable && (u32)k->bindings[i].binding < vk->last_n) o->in[o->n_in++] = vk->last_dt[k->bindings[i].binding];
        d->n_dispatch += nd;
        return;
    }
    if (xf_debug.inject && !xf->d.injected && c->layer == xf_debug.inject_layer &&
        (xf_debug.inject_phase == PH_ANY || xf_debug.inject_phase == xf->d.rec_ph) &&
        (!strcmp(xf_debug.inject_op, c->name) || !strcmp(xf_debug.inject_op, c->cls))) {
        vk_fill_word(vk, &c->out, c->out.dtype == DT_F16 ? 0x7e007e00u : 0x7fc00000u);   /* quiet NaN */
        xf->d.injected = true;
    }
    if (xf_debug.profile) {
        XfProfPhase *p = &xf->d.prof[xf->d.rec_ph == PH_DECODE];
        if (op_i < p->n_ops) {
            p->op_class[op_i] = xf_kernel_class(k);
            p->op_site[op_i] = c->name;
            if (p->pool) vk_ts_write(vk, p->pool, op_i + 1);
        }
        p->n_dispatch = xf->d.rec_dispatch;
    }
    if (xf->d.step) xf_step(xf);
    else if (xf_debug.trace & XT_KERNELS && xf_trace_wants(xf, XT_KERNELS)) {
        char lb[16], dt[96], shp[96];
        xf_dtypes_str(xf, dt, sizeof dt);
        xf_shape_str(shp, sizeof shp, &c->out);
        errf("trace %-7s L%-3s %-13s %s (%s:%s)  %s  %s\n", xf->d.rec_ph == PH_DECODE ? "decode" : "prefill",
             xf_layer_str(c->layer, lb, sizeof lb), c->name, k ? k->name : "?", k ? k->file : "?", k ? k->entry : "?", dt, shp);
    }
}

/* ---- --profile ---------------------------------------------------------------------- */
static void xf_profile_after(Xf *xf, Phase ph, u32 T, f64 wall_s) {
    XfProfPhase *p = &xf->d.prof[ph == PH_DECODE];
    p->tokens += T; p->submits++; p->dispatches += xf->r.n_dispatch_last; p->wall_s += wall_s;
    if (!p->pool) return;
    u64 ticks[p->n_ops + 1];
    vk_ts_read(xf->vk, p->pool, p->n_ops + 1, ticks);
    u64 mask = xf->vk->caps.timestamp_mask;
    bool first = p->submits == 1;
    for (u32 i = 0; i < p->n_ops; i++) {
        f64 ns = (f64)((ticks[i + 1] - ticks[i]) & mask) * xf->vk->caps.timestamp_period_ns;
        p->ns[p->op_class[i]] += ns;
        const char *sn = p->op_site[i] ? p->op_site[i] : "?";
        u32 j = 0;
        while (j < p->n_site && strcmp(p->site[j], sn)) j++;
        if (j == p->n_site) { if (j == ARRAY_COUNT(p->site)) continue; p->site[p->n_site++] = sn; }
        p->site_ns[j] += ns;
        if (first) p->site_calls[j]++;
    }
}

void xf_profile_print(Xf *xf, FILE *f) {
    Vk *vk = xf->vk;
    if (vk->caps.timestamps) fout(f, "edge profile: GPU timestamps after every op on %s (period %.3f ns)\n", vk->props.deviceName, (f64)vk->caps.timestamp_period_ns);
    else fout(f, "edge profile: %s does not support timestamps on its compute queue (timestampComputeAndGraphics / "
              "timestampValidBits): no GPU times, only dispatch counts and wall-clock rates\n", vk->props.deviceName);
    for (int i = 0; i < 2; i++) {
        XfProfPhase *p = &xf->d.prof[i];
        if (!p->submits) continue;
        f64 total = 0;
        for (int c = 0; c < PC_COUNT; c++) total += p->ns[c];
        if (i == 0)
            fout(f, "prefill: %llu tokens in %llu batches; %u dispatches per batch (%.1f per token)", (unsigned long long)p->tokens,
                 (unsigned long long)p->submits, p->n_dispatch, (f64)p->dispatches / (f64)p->tokens);
        else
            fout(f, "decode: %llu tokens; %u dispatches per token", (unsigned long long)p->tokens, p->n_dispatch);
        if (vk->caps.timestamps && total > 0) fout(f, "; GPU %.3f ms, %.1f tok/s", total * 1e-6, (f64)p->tokens / (total * 1e-9));
        fout(f, "; wall %.3f ms, %.1f tok/s\n", p->wall_s * 1e3, p->wall_s > 0 ? (f64)p->tokens / p->wall_s : 0.0);
        if (!vk->caps.timestamps || total <= 0) continue;
        for (int c = 0; c < PC_COUNT; c++)
            fout(f, "  class %-14s %10.3f ms %7.2f%%\n", pc_names[c], p->ns[c] * 1e-6, 100.0 * p->ns[c] / total);
        for (u32 j = 0; j < p->n_site; j++)     /* per site, summed over layers: where to look next */
            fout(f, "  op %-16s %4u per %s %10.3f ms %7.2f%%  %8.2f us per op\n", p->site[j], p->site_calls[j], i ? "token" : "batch",
                 p->site_ns[j] * 1e-6, 100.0 * p->site_ns[j] / total,
                 p->site_calls[j] ? p->site_ns[j] * 1e-3 / ((f64)p->site_calls[j] * (f64)p->submits) : 0.0);
    }
}

/* ---- describe mode: kernels, dtypes and the dtype chain --------------------------------- */
/* The bytes of a bound tensor that the check reads: its binding, but for the two bindings padded past
   their data (matmul_cm binds X up to a whole tile of WQ_CM_TN tokens, matmul_cm_b of WQ_CMB_TN rows,
   attention binds caches up to 16
   bytes), whose tails are read without reaching an output (tokens past the batch are never stored), so
   whatever dtype wrote them is not this tensor's. Other views (the strided q/k/v views) keep their span. */
static u64 xf_data_bytes(const Tensor *t) {
    u64 nb = t->nelem ? dtype_bytes(t->dtype, t->nelem) : 0, rows = t->ne[0] ? t->nelem / t->ne[0] : 0;
    if (!nb || nb >= t->nbytes) return t->nbytes;
    bool cache_pad = t->nbytes == align_up(nb, 16);
    bool tile_pad = rows && (t->nbytes == dtype_bytes(t->dtype, t->ne[0] * align_up(rows, WQ_CM_TN)) ||
                             t->nbytes == dtype_bytes(t->dtype, t->ne[0] * align_up(rows, WQ_CMB_TN)));
    return cache_pad || tile_pad ? nb : t->nbytes;
}

static void xf_chain_write(XfDesc *d, const Tensor *t, const char *by) {
    u64 nb = xf_data_bytes(t);
    for (u32 i = 0; i < d->n_w;) {        /* the new write replaces whatever it overlaps */
        XfWrite *w = &d->w[i];
        if (w->a == t->arena && w->block == t->block && w->off < t->offset + nb && t->offset < w->off + w->bytes) d->w[i] = d->w[--d->n_w];
        else i++;
    }
    if (d->n_w == d->cap_w) { d->cap_w = d->cap_w ? 2 * d->cap_w : 64; d->w = realloc(d->w, d->cap_w * sizeof *d->w); }
    d->w[d->n_w++] = (XfWrite){ t->arena, t->block, t->offset, nb, t->dtype, by };
}

static void xf_chain_error(XfDesc *d, const char *fmt, ...) {
    if (d->chain_errors++ == 0) { va_list ap; va_start(ap, fmt); fmt_vbuf(d->chain_msg, sizeof d->chain_msg, fmt, ap); va_end(ap); }
}

/* vk_dispatch's describe callback: every state tensor a kernel reads must have been written
   with the dtype the kernel reads it as. Weights (their own arena) are keyed by kernels.def. */
static void xf_chain_cb(void *user, VkPipe *p, const Tensor *const *ts, u32 n) {
    Xf *xf = user; XfDesc *d = xf->d.desc;
    if (!d) return;
    const KernelInfo *k = p->k;
    char lb[16];
    for (int pass = 0; pass < 2; pass++)             /* reads first, then writes */
        for (u32 i = 0; i < k->n_bindings; i++) {
            const KBinding *b = &k->bindings[i];
            if ((u32)b->binding >= n) continue;
            const Tensor *t = ts[b->binding];
            if (t->arena == &xf->w.arena) continue;
            if (pass == 1) { if (b->writable) xf_chain_write(d, t, xf->d.cur.name); continue; }
            bool seen = false, bad = false;
            u64 nb = xf_data_bytes(t);
            for (u32 j = 0; j < d->n_w && !bad; j++) {
                const XfWrite *w = &d->w[j];
                if (w->a != t->arena || w->block != t->block || w->off >= t->offset + nb || t->offset >= w->off + w->bytes) continue;
                seen = true;
                if (w->dt != t->dtype) {
                    bad = true;
                    xf_chain_error(d, "op '%s' (layer %s) kernel %s reads '%s' as %s, but op '%s' wrote it as %s",
                                   xf->d.cur.name, xf_layer_str(xf->d.cur.layer, lb, sizeof lb), k->name, t->name,
                                   dtype_name[t->dtype], w->by, dtype_name[w->dt]);
                }
            }
            if (!seen && !b->writable)
                xf_chain_error(d, "op '%s' (layer %s) kernel %s reads '%s' before any op wrote it",
                               xf->d.cur.name, xf_layer_str(xf->d.cur.layer, lb, sizeof lb), k->name, t->name);
        }
}

static void xf_describe_run(Xf *xf, u32 T, bool multi, XfDesc *d) {
    Vk *vk = xf->vk;
    bool was = vk->describe, dbg = xf->d.on, step = xf->d.step;
    u32 nd = vk->n_dispatch;
    void (*cb)(void *, VkPipe *, const Tensor *const *, u32) = vk->on_describe; void *cu = vk->describe_user;
    XfDesc *old = xf->d.desc;
    vk->describe = true; vk->on_describe = xf_chain_cb; vk->describe_user = xf;
    xf->d.desc = d; xf->d.on = true; xf->d.step = false;
    vk->n_dispatch = 0;
    Tensor ids = xf_rows(&xf->s.ids, T);
    xf_chain_write(d, &ids, "(host: token ids)");
    xf_chain_write(d, &xf->s.pos, "(host: positions)");
    xf->r.keys = multi ? MIN(64u, xf->n_ctx) : 0;   /* a batched step's attention grid: its first key bound (xf_decode_rows); else all keys */
    /* a one-row context records the LM head for the last row only */
    xf_record(xf, &xf->s.ids, &xf->s.pos, &xf->s.out_ids, T, multi ? 0 : xf->n_ctx - T, !multi && xf->one_row, multi);
    vk->describe = was; vk->on_describe = cb; vk->describe_user = cu; vk->n_dispatch = nd;
    xf->d.desc = old; xf->d.on = dbg; xf->d.step = step;
}

static u32 xf_count_ops(Xf *xf, u32 T) {
    XfDesc d; memset(&d, 0, sizeof d);
    xf_describe_run(xf, T, false, &d);
    u32 n = d.n_ops;
    xf_desc_free(&d);
    return n;
}

void xf_desc_free(XfDesc *d) { free(d->ops); free(d->w); memset(d, 0, sizeof *d); }

bool xf_describe(Xf *xf, Vk *vk, const Model *m, u32 n_ctx, u32 t_max, DType act, u32 T, u32 n_seq, XfDesc *d) {
    memset(xf, 0, sizeof *xf);
    memset(d, 0, sizeof *d);
    if (T == 0 || T > t_max || t_max > n_ctx || n_seq == 0 || (n_seq > 1 && T > n_seq)) return false;
    xf_setup(xf, vk, m, n_ctx, t_max, act, act, n_seq);
    xf_alloc(xf);
    xf_describe_run(xf, T, n_seq > 1, d);
    return d->chain_errors == 0;
}

/* ---- printing the kernel path (edge paths: cli/paths.c) -------------------------------- */
static void xf_paths_op(const XfDescOp *op, const Vk *vk) {
    char ins[64] = ""; int w = 0;
    for (u32 i = 0; i < op->n_in && w < (int)sizeof ins; i++) w += fmt_buf(ins + w, sizeof ins - w, i ? ",%s" : "%s", dtype_name[op->in[i]]);
    const KernelInfo *k = op->k;
    out("    %-13s %-24s %s:%s  %s -> %s\n", op->name, k ? k->name : "?", k ? k->file : "?", k ? k->entry : "?", ins, dtype_name[op->out]);
    if (op->kdef >= 0) {
        const KernelDef *kd = &kdefs[op->kdef];
        out("        why: kernels.def key (%s, w %s, a %s, o %s)", op_name[kd->op], dtype_name[kd->wtype], dtype_name[kd->atype], dtype_name[kd->otype]);
        if (kd->op == OP_MATMUL) out(kd->phase == PH_DECODE ? (dtype_klanes(kd->wtype) ? "; decode matvec (8..128 lanes per row by shape, 8 per 256 elements)" : "; decode matvec (1..128 lanes per row by shape, 4 elements per lane and pass)") : "; prefill tiles 64x64");
        if (kd->op == OP_MATMUL_CM || kd->op == OP_MATMUL_CM_SPLIT)
            out(kd->phase == PH_DECODE ? "; a batched step's rows: tiles 64x32 on cooperative matrices (device has VK_KHR_cooperative_matrix 16x16x16 f16)"
                                       : "; prefill tiles 64x128 on cooperative matrices (device has VK_KHR_cooperative_matrix 16x16x16 f16)");
        if (op_is_attn_cm(kd->op)) out("; prefill attention on cooperative matrices, 16 queries per workgroup of 4 subgroups, %s-key chunks (device has VK_KHR_cooperative_matrix 16x16x16 f16; "
                                       "f16 cache, head_dim 64, 128 or 256; sliding-window rings at 256)", kd->op == OP_ATTN_CM_H256 || kd->op == OP_ATTN_CM_H256W ? "32" : "64");
        if (op_is_attn_tile(kd->op)) out("; prefill attention in register tiles, %s queries per workgroup, %s-key chunks in workgroup memory (no cooperative matrices; "
                                         "f16 cache, head_dim 64, 128 or 256)", kd->op == OP_ATTN_TILE_H64 ? "64" : "16", kd->op == OP_ATTN_TILE_H256 ? "16" : "32");
        if (kd->op == OP_MATMUL_GLU_NORM_Q8 || kd->op == OP_MATMUL_NORM_Q8 || kd->op == OP_MATMUL_GLU_RES_NORM_Q8 ||
            kd->op == OP_MATMUL_GLU_NORM_Q8_W || kd->op == OP_MATMUL_NORM_Q8_W || kd->op == OP_MATMUL_GLU_RES_NORM_Q8_W) out("; the normalized row as int8 on 4x8-bit integer dot products (device accelerates them)");
        if (kd->op == OP_MATMUL_GLU_NORM_S8) out("; the normalized row as int8, two products per 32-bit multiply (EDGE_IDOT=1 on a device without f16)");
        if (k && k->cap_f16) out("; f16 arithmetic (device has shaderFloat16)");
        if (k && k->cap_s16) out("; 16-bit storage (device has it)");
        if (k && k->cap_sub_arith) out("; subgroup arithmetic (device has it)");
        if (op->n_dispatch > 1) out("; %u dispatches (a split op, or the weight bound in row chunks under maxStorageBufferRange %llu)",
                                    op->n_dispatch, (unsigned long long)vk->caps.max_storage_range);
        out("\n");
    }
}

static bool xf_same_layer(const XfDesc *d, u32 a0, u32 b0, u32 n) {
    for (u32 i = 0; i < n; i++)
        if (d->ops[a0 + i].k != d->ops[b0 + i].k || d->ops[a0 + i].name != d->ops[b0 + i].name ||
            d->ops[a0 + i].n_dispatch != d->ops[b0 + i].n_dispatch) return false;
    return true;
}

/* One phase's ops: before the layers, each group of layers with the same kernels, after. Layers
   may differ in their op count (Gemma's layer 0 makes its own attention norm; later ones get it
   from the residual op before). */
void xf_paths_print(const XfDesc *d, u32 n_layer, const Vk *vk) {
    u32 i = 0;
    out("  before the layers:\n");
    while (i < d->n_ops && d->ops[i].layer < 0) { xf_paths_op(&d->ops[i], vk); i++; }
    u32 *at = calloc(n_layer + 1, sizeof *at);     /* layer l's ops: at[l] .. at[l + 1] - 1 */
    for (u32 l = 0; l < n_layer; l++) { at[l] = i; while (i < d->n_ops && d->ops[i].layer == (i32)l) i++; }
    at[n_layer] = i;
    bool *shown = calloc(n_layer, 1);
    for (u32 l = 0; l < n_layer; l++) {
        u32 per = at[l + 1] - at[l];
        if (shown[l] || !per) continue;
        char list[512]; int w = fmt_buf(list, sizeof list, "%u", l);
        for (u32 l2 = l + 1; l2 < n_layer; l2++)
            if (!shown[l2] && at[l2 + 1] - at[l2] == per && xf_same_layer(d, at[l], at[l2], per)) {
                shown[l2] = true;
                if (w < (int)sizeof list) w += fmt_buf(list + w, sizeof list - w, ",%u", l2);
            }
        out("  layers %s:\n", list);
        for (u32 j = 0; j < per; j++) xf_paths_op(&d->ops[at[l] + j], vk);
    }
    free(shown);
    out("  after the layers:\n");
    for (u32 j = at[n_layer]; j < d->n_ops; j++) xf_paths_op(&d->ops[j], vk);
    free(at);
}
