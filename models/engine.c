/* engine.c — implementation of engine.h (`edge eval` drives it: cli/eval.c). */

bool eng_open(Engine *g, const Model *m, EngBackend b, u32 n_ctx, DType act, Err *e) {
    return eng_open_batch(g, m, b, n_ctx, act, EDGE_PREFILL_BATCH, e);
}

bool eng_open_batch(Engine *g, const Model *m, EngBackend b, u32 n_ctx, DType act, u32 batch, Err *e) {
    return eng_open_gen(g, m, b, n_ctx, act, DT_COUNT, batch, false, 1, e);
}

/* kv DT_COUNT: the activation dtype with every logits row kept (eng_open, eng_open_batch), else the
   device's default (eng_kv_default) */
bool eng_open_gen(Engine *g, const Model *m, EngBackend b, u32 n_ctx, DType act, DType kv, u32 batch, bool last_row, u32 n_seq, Err *e) {
    memset(g, 0, sizeof *g);
    g->backend = b; g->m = m; g->n_ctx = n_ctx; g->n_vocab = m->cfg.n_vocab; g->n_seq = MAX(n_seq, 1u);
    g->ring = n_ctx;
    if (n_ctx == 0 || n_ctx > m->cfg.n_ctx)
        return err_set(e, EXIT_USAGE, "context of %u tokens: '%s' allows 1..%u", n_ctx, m->cfg.name, m->cfg.n_ctx);
    if (g->n_seq > EDGE_MAX_SEQ) return err_set(e, EXIT_USAGE, "%u parallel sequences: at most %u (EDGE_MAX_SEQ)", g->n_seq, EDGE_MAX_SEQ);
    g->last = calloc(g->n_vocab, sizeof(f32));
    g->seq_pos = calloc(g->n_seq, sizeof(u32));
    if (b == ENG_REF) {
        if (kv == DT_Q8_0) { eng_close(g); return err_set(e, EXIT_USAGE, "--cache-type q8_0 is a GPU cache: the reference backend keeps its cache in f32 (use --backend gpu)"); }
        u64 bytes;
        if (!ref_state_bytes(&m->cfg, n_ctx, &bytes) || bytes > UINT64_MAX / g->n_seq) { eng_close(g); return err_set(e, EXIT_USAGE, "reference state size overflows"); }
        arena_init(&g->ref_arena, "reference state", bytes * g->n_seq);
        g->refs = calloc(g->n_seq, sizeof *g->refs);
        for (u32 i = 0; i < g->n_seq; i++)
            if (!ref_init(&g->refs[i], m, n_ctx, &g->ref_arena, e)) { eng_close(g); return false; }
        return true;
    }
    if (!vk_init(&g->vk, e)) { eng_close(g); return false; }
    g->vk_up = true;
    if (act == DT_COUNT) act = g->vk.caps.f16_arith ? DT_F16 : DT_F32;   /* default: f16 where the device has it */
    u32 t_max = MAX(MIN(n_ctx, MAX(batch, 1u)), g->n_seq);    /* (a batched step takes a row per sequence) */
    XfOpts o = { .kv = kv != DT_COUNT ? kv : last_row ? eng_kv_default(&g->vk.caps, act) : act, .last_row = last_row, .n_seq = g->n_seq };
    if (!xf_init(&g->xf, &g->vk, m, n_ctx, t_max, act, &o, e)) { eng_close(g); return false; }
    g->xf_up = true;
    g->chain = true;
    for (u32 il = 0; il < m->cfg.n_layer; il++) g->ring = MIN(g->ring, (u32)g->xf.s.kv[il].k.ne[1]);   /* (a sliding-window ring's rows) */
    if (!g->xf.one_row || g->n_seq > 1) g->batch = calloc((u64)g->n_vocab * (g->xf.one_row ? g->n_seq : t_max), sizeof(f32));
    return true;
}

/* Generation's KV cache: the activation dtype (f16 caches with f32 activations: see docs/usage.md) */
DType eng_kv_default(const VkCaps *caps, DType act) { (void)caps; return act; }

void eng_close(Engine *g) {
    if (g->xf_up && xf_debug.profile) xf_profile_print(&g->xf, stderr);
    if (g->xf_up) xf_free(&g->xf);
    if (g->vk_up) vk_shutdown(&g->vk);
    if (g->ref_arena.base) arena_free(&g->ref_arena);
    free(g->last); free(g->batch); free(g->seq_pos); free(g->refs);
    memset(g, 0, sizeof *g);
}

void eng_reset(Engine *g) {
    eng_decode_end(g);
    g->pos = 0;
    if (g->backend == ENG_REF) ref_reset(&g->refs[g->cur]);
}

bool eng_feed(Engine *g, const i32 *tokens, u32 n, f32 *logits, Err *e) {
    eng_decode_end(g);                  /* (a chained step in flight ends there) */
    if (g->backend == ENG_GPU) vk_phase = n > 1 || g->pos == 0 ? VK_PHASE_PREFILL : VK_PHASE_DECODE;
    if ((u64)g->pos + n > g->n_ctx)
        return err_set(e, EXIT_USAGE, "%u more tokens at position %u exceed the context of %u", n, g->pos, g->n_ctx);
    for (u32 i = 0; i < n; i++)
        if (tokens[i] < 0 || (u32)tokens[i] >= g->n_vocab)
            return err_set(e, EXIT_USAGE, "token id %d out of range (vocabulary of %u)", tokens[i], g->n_vocab);
    u64 nv = g->n_vocab;
    if (g->backend == ENG_REF) {
        for (u32 i = 0; i < n; i++) {
            if (!ref_step(&g->refs[g->cur], tokens[i], e)) return false;
            if (logits) memcpy(logits + i * nv, g->refs[g->cur].logits, nv * sizeof(f32));
        }
        memcpy(g->last, g->refs[g->cur].logits, nv * sizeof(f32));
    } else {
        for (u32 done = 0; done < n;) {
            u32 T = MIN(n - done, g->xf.t_max);
            if (logits) {           /* every row wanted (eval) */
                if (!g->batch) return err_set(e, EXIT_USAGE, "every row's logits wanted from an engine that keeps one row (eng_open_gen)");
                if (!xf_forward(&g->xf, tokens + done, T, g->pos + done, g->cur, false, g->batch, 0, e)) return false;
                memcpy(logits + done * nv, g->batch, T * nv * sizeof(f32));
                memcpy(g->last, g->batch + (T - 1) * nv, nv * sizeof(f32));
            } else {                /* generation: the LM head and the readback for the last row only */
                if (!xf_forward(&g->xf, tokens + done, T, g->pos + done, g->cur, true, 0, 0, e)) return false;
                if (done + T == n && !xf_last_logits(&g->xf, T, g->pos + done, g->last, e)) return false;
            }
            done += T;
        }
    }
    g->pos += n;
    return true;
}

/* One decode step on the GPU, one command buffer: token at the current position; its argmax id. */
static bool eng_step_id(Engine *g, i32 token, i32 *next, Err *e) {
    u32 id;
    if (!xf_forward(&g->xf, &token, 1, g->pos, g->cur, false, 0, &id, e)) return false;
    g->pos++;
    *next = (i32)id;
    return true;
}

/* A chained step: the id after g->gtok, from steps queued on the GPU before the host waits. */
static bool eng_chain_step(Engine *g, i32 token, bool more, i32 *next, Err *e) {
    if (!g->chained || token != g->gtok) {          /* not the id the chain is on: start one from token */
        eng_decode_end(g);
        if (!xf_chain_start(&g->xf, token, g->pos, g->cur, e)) return false;
        g->chained = true;
    }
    u32 id;
    if (!xf_chain_next(&g->xf, more, &id, e)) { eng_decode_end(g); return false; }
    g->pos++;
    *next = g->gtok = (i32)id;
    return true;
}

bool eng_decode(Engine *g, i32 token, bool more, i32 *next, Err *e) {
    if (token < 0 || (u32)token >= g->n_vocab)
        return err_set(e, EXIT_USAGE, "token id %d out of range (vocabulary of %u)", token, g->n_vocab);
    if (g->pos + 1 > g->n_ctx) return err_set(e, EXIT_USAGE, "position %u is past the context of %u", g->pos, g->n_ctx);
    if (g->backend == ENG_REF) {
        if (!eng_feed(g, &token, 1, 0, e)) return false;
        *next = (i32)ref_argmax(g->last, g->n_vocab);
        return true;
    }
    vk_phase = VK_PHASE_DECODE;
    if (g->chain && xf_chain_ok(&g->xf)) return eng_chain_step(g, token, more, next, e);
    eng_decode_end(g);
    return eng_step_id(g, token, next, e);
}

void eng_decode_end(Engine *g) {
    if (g->chained) xf_chain_stop(&g->xf);
    g->chained = false;
}

void eng_set_chain(Engine *g, bool on) { eng_decode_end(g); g->chain = on; }

void eng_select(Engine *g, u32 seq) {
    if (seq == g->cur || seq >= g->n_seq) return;
    eng_decode_end(g);
    g->seq_pos[g->cur] = g->pos;
    g->cur = seq;
    g->pos = g->seq_pos[seq];
}

bool eng_copy_prefix(Engine *g, u32 src, u32 dst, u32 n, Err *e) {
    if (src >= g->n_seq || dst >= g->n_seq || src == dst || n > eng_seq_pos(g, src) || n > g->n_ctx)
        return err_set(e, EXIT_USAGE, "prefix of %u tokens from sequence %u (at %u) to %u of %u", n, src, src < g->n_seq ? eng_seq_pos(g, src) : 0, dst, g->n_seq);
    eng_decode_end(g);
    if (g->backend == ENG_REF) {
        RefState *a = &g->refs[src], *b = &g->refs[dst];
        u64 kvd = (u64)g->m->cfg.n_head_kv * g->m->cfg.head_dim;
        for (u32 il = 0; il < g->m->cfg.n_layer; il++) {
            u64 o = (u64)il * g->n_ctx * kvd;
            memcpy(b->k_cache + o, a->k_cache + o, (u64)n * kvd * sizeof(f32));
            memcpy(b->v_cache + o, a->v_cache + o, (u64)n * kvd * sizeof(f32));
        }
        b->n_past = n;
    } else if (!xf_kv_copy(&g->xf, src, dst, n, e)) return false;
    g->seq_pos[g->cur] = g->pos;
    g->seq_pos[dst] = n;
    g->pos = g->seq_pos[g->cur];
    return true;
}

bool eng_truncate(Engine *g, u32 n, Err *e) {
    if (n > g->pos) return err_set(e, EXIT_USAGE, "truncate to %u tokens, but the context holds %u", n, g->pos);
    eng_decode_end(g);
    g->pos = n;
    if (g->backend == ENG_REF) g->refs[g->cur].n_past = n;
    return true;
}

/* One decode step for n sequences: the reference one sequence after the other, the GPU in one
   batched step (xf_decode_rows). */
bool eng_step(Engine *g, u32 n, const u32 *seqs, const i32 *tokens, i32 *ids, f32 *logits, Err *e) {
    eng_decode_end(g);
    g->seq_pos[g->cur] = g->pos;
    u32 pos[EDGE_MAX_SEQ] = {0};
    if (n == 0 || n > g->n_seq) return err_set(e, EXIT_USAGE, "a step of %u sequences (1..%u)", n, g->n_seq);
    for (u32 t = 0; t < n; t++) {
        if (seqs[t] >= g->n_seq) return err_set(e, EXIT_USAGE, "sequence %u of %u", seqs[t], g->n_seq);
        pos[t] = g->seq_pos[seqs[t]];
        if (pos[t] + 1 > g->n_ctx) return err_set(e, EXIT_USAGE, "sequence %u: position %u is past the context of %u", seqs[t], pos[t], g->n_ctx);
    }
    u64 nv = g->n_vocab;
    if (g->backend == ENG_REF) {
        for (u32 t = 0; t < n; t++) {
            RefState *r = &g->refs[seqs[t]];
            if (!ref_step(r, tokens[t], e)) return false;
            if (logits) memcpy(logits + t * nv, r->logits, nv * sizeof(f32));
            if (ids) ids[t] = (i32)ref_argmax(r->logits, g->n_vocab);
        }
    } else {
        vk_phase = VK_PHASE_DECODE;
        u32 *out = ids ? (u32 *)ids : 0;
        if (!xf_decode_rows(&g->xf, tokens, n, pos, seqs, logits, out, e)) return false;
    }
    for (u32 t = 0; t < n; t++) g->seq_pos[seqs[t]]++;
    g->pos = g->seq_pos[g->cur];
    return true;
}

EngInfo eng_info(const Engine *g) {
    EngInfo i = { .act = DT_F32 };
    if (g->backend != ENG_GPU) return i;
    const Xf *xf = &g->xf;
    i.act = xf->act; i.kv = xf->kv; i.device = g->vk.props.deviceName; i.timestamps = g->vk.caps.timestamps;
    i.weight_bytes = xf->w.arena.used; i.state_bytes = xf->s.arena.used; i.state_pos = xf->s.arena.pos; i.plan_bytes = xf->w.plan + xf->s.plan;
    for (u32 b = 0; b < xf->w.arena.n_blocks; b++) i.alloc_bytes += xf->w.arena.blocks[b].size;
    for (u32 b = 0; b < xf->s.arena.n_blocks; b++) i.alloc_bytes += xf->s.arena.blocks[b].size;
    i.embd_bytes = xf->w.tok_embd.nbytes; i.dispatches = xf->r.n_dispatch_last;
    return i;
}

void eng_time_decode(Engine *g, bool on) { g->xf.r.time_decode = on; }
f64 eng_decode_gpu_ns(Engine *g) { return g->backend == ENG_GPU ? xf_decode_gpu_ns(&g->xf) : 0; }

/* Parses "ID ID ..." (spaces, tabs or commas between ids). Returns false on anything else. */
bool eng_parse_tokens(const char *s, Arena *a, i32 **ids, u32 *n) {
    u32 count = 0;
    for (const char *p = s; *p;) {
        while (*p == ' ' || *p == '\t' || *p == ',' || *p == '\n') p++;
        if (!*p) break;
        if (*p < '0' || *p > '9') return false;
        while (*p >= '0' && *p <= '9') p++;
        count++;
    }
    *ids = push_array(a, i32, count ? count : 1);
    *n = 0;
    for (const char *p = s; *p;) {
        while (*p == ' ' || *p == '\t' || *p == ',' || *p == '\n') p++;
        if (!*p) break;
        u64 v = 0;
        while (*p >= '0' && *p <= '9') { v = v * 10 + (u64)(*p - '0'); if (v > 0x7fffffff) return false; p++; }
        (*ids)[(*n)++] = (i32)v;
    }
    return true;
}

/* ---- the device without a model: edge info, paths, plan ----------------------------------- */
bool eng_open_device(Engine *g, Err *e) {
    memset(g, 0, sizeof *g);
    g->backend = ENG_GPU;
    if (!vk_init(&g->vk, e)) return false;
    g->vk_up = true;
    return true;
}

EngCaps eng_caps(const Engine *g) {
    const VkCaps *c = &g->vk.caps;
    return (EngCaps){ .device = g->vk.props.deviceName, .f16_arith = c->f16_arith, .storage16 = c->storage16,
                      .coopmat = c->coopmat, .subgroup_arith = (c->subgroup_ops & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) != 0,
                      .timestamps = c->timestamps, .max_storage_range = c->max_storage_range };
}

void eng_print_device(const Engine *g) { vk_print_info(&g->vk); }
void eng_print_kernels(void) { kernel_print_table(); }

/* Both phases described (xf_describe: recorded without the GPU) at a context of min(n_ctx, 256):
   the plan, prefill and decode op by op, dispatch counts (and a decode step's at 128 keys, the key level
   whose attention is one dispatch where attn_short fits) and the dtype-chain verdict; with n_seq > 1
   also a batched step of n_seq rows (xf_decode_rows: each row a lone decode step's kernels, or the
   batch path on the prefill products from EDGE_BATCH_TILES_MIN sequences where they fit). */
bool eng_print_paths(Engine *g, const Model *m, DType act, u32 n_seq) {
    const ModelConfig *c = &m->cfg;
    u32 n_ctx = MIN(c->n_ctx, 256u), t_max = MIN(n_ctx, (u32)EDGE_PREFILL_BATCH);
    Xf xp, xd, xb = {0}; XfDesc dp, dd, db = {0};
    bool okp = xf_describe(&xp, &g->vk, m, n_ctx, t_max, act, t_max, 1, &dp);
    bool okd = xf_describe(&xd, &g->vk, m, n_ctx, t_max, act, 1, 1, &dd);
    bool okb = n_seq < 2 || xf_describe(&xb, &g->vk, m, n_ctx, t_max, act, n_seq, n_seq, &db);
    Xf xs; XfDesc ds = {0};
    bool oks = n_ctx > 128 && xf_describe(&xs, &g->vk, m, 128, MIN(t_max, 128u), act, 1, 1, &ds);
    out("\nkernel-path plan (xf_path_decide, once per model and device; the debug tools that read each op record it unfused):\n");
    xf_path_print(&xd);
    /* decode fuses ops that prefill runs apart (q/k/v, gate/up/activation), so each phase is listed */
    out("\nprefill (a batch of %u tokens):\n", t_max);
    xf_paths_print(&dp, c->n_layer, &g->vk);
    out("\ndecode (one token):\n");
    xf_paths_print(&dd, c->n_layer, &g->vk);
    if (n_seq > 1) {
        out("\nbatched decode step (-np %u: a row per sequence, %s):\n", n_seq, xb.batch_tiles
            ? "the prefill products over the rows, each weight read once for all (xf_batch_tiles)"
            : "each row a lone decode step's kernels, the row in the grid");
        xf_paths_print(&db, c->n_layer, &g->vk);
    }
    out("\ndispatches: %u per prefill batch of %u tokens, %u per decode token", dp.n_dispatch, t_max, dd.n_dispatch);
    if (oks && ds.n_dispatch != dd.n_dispatch) out(" (%u up to 128 keys)", ds.n_dispatch);
    if (n_seq > 1) out(", %u per batched step of %u rows", db.n_dispatch, n_seq);
    out("\n");
    if (okp && okd && okb) out("dtype chain: ok (every op reads each activation with the dtype the op before it wrote)\n");
    else out("dtype chain: BROKEN: %s\n", !okp ? dp.chain_msg : !okd ? dd.chain_msg : db.chain_msg[0] ? db.chain_msg
                                                  : "a batched step of this many rows does not fit the context");
    if (n_ctx > 128) { xf_desc_free(&ds); xf_free(&xs); }
    xf_desc_free(&dp); xf_desc_free(&dd);
    xf_free(&xp); xf_free(&xd);
    if (n_seq > 1) { xf_desc_free(&db); xf_free(&xb); }
    return okp && okd && okb;
}
