/* plan.c — implementation of plan.h (the command `edge plan` is cli/plan.c).

   The device side is exactly xf_init's: xf_plan runs the same allocation sequence on planning
   arenas and reports every tensor as it is placed; the arena totals are the bytes xf_init then
   allocates (test/plan_test.c checks both against a real xf_init). Padding is everything in
   the arenas that is not tensor data: offset alignment (minStorageBufferOffsetAlignment), the
   4-byte tail of odd-sized tensors, and the unused end of a block when maxMemoryAllocationSize
   splits an arena. The host side lists what eng_open allocates for the GPU backend. */

typedef struct PlanWalk {
    Plan *p;
    bool  print;
    const DevArena *wa;
} PlanWalk;

static void plan_on_tensor(void *ctx, const Tensor *t) {
    PlanWalk *w = ctx;
    bool weights = t->arena == w->wa;
    bool kv = !weights && (!strncmp(t->name, "k_cache", 7) || !strncmp(t->name, "v_cache", 7));
    if (weights) w->p->weights += t->nbytes;
    else if (kv) {
        u32 swa = strstr(t->name, "_swa") != 0;   /* k_cache_swa, v_cache_swa: sliding-window layers */
        w->p->kv += t->nbytes;
        w->p->kv_kind[swa] += t->nbytes;
        w->p->kv_layers[swa] += t->name[0] == 'k';
        w->p->kv_pos[swa] = (u32)t->ne[1];
    } else w->p->act += t->nbytes;
    w->p->n_tensors++;
    if (!w->print) return;
    char shape[64];
    if (t->ndim == 1) fmt_buf(shape, sizeof shape, "[%llu]", (unsigned long long)t->ne[0]);
    else if (t->ndim == 2) fmt_buf(shape, sizeof shape, "[%llu, %llu]", (unsigned long long)t->ne[0], (unsigned long long)t->ne[1]);
    else fmt_buf(shape, sizeof shape, "[%llu, %llu, %llu]", (unsigned long long)t->ne[0], (unsigned long long)t->ne[1],
                 (unsigned long long)t->ne[2]);
    out("  %-34s %-5s %-22s %12llu  %-7s %u %12llu\n", t->name, dtype_name[t->dtype], shape, (unsigned long long)t->nbytes,
        weights ? "weights" : "state", t->block, (unsigned long long)t->offset);
}

/* The heap vk_block_alloc would take device memory from: the first memory type that is
   device-local and host-visible, else device-local. */
static bool plan_heap(const Vk *vk, u32 *heap, u64 *size) {
    const VkMemoryPropertyFlags HV = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    VkMemoryPropertyFlags prefs[2] = { VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | HV, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT };
    for (int p = 0; p < 2; p++)
        for (u32 i = 0; i < vk->mem.memoryTypeCount; i++)
            if ((vk->mem.memoryTypes[i].propertyFlags & prefs[p]) == prefs[p]) {
                *heap = vk->mem.memoryTypes[i].heapIndex;
                *size = vk->mem.memoryHeaps[*heap].size;
                return true;
            }
    return false;
}

static void plan_mib(char *buf, int n, u64 b) { fmt_buf(buf, n, "%.2f MiB", (f64)b / 1048576.0); }

/* The KV cache by layer kind (per sequence), per sequence and in all (edge run -np N holds N). */
static void plan_print_kv(const Plan *p, DType kv) {
    static const char *const kind[2] = { "global", "sliding" };
    char a[32];
    u32 n = MAX(p->n_seq, 1u);
    out("\nKV cache (%s, context %u, %u sequence%s):\n", dtype_name[kv], p->n_ctx, n, n == 1 ? "" : "s");
    for (u32 s = 0; s < 2; s++) {
        if (!p->kv_layers[s]) continue;
        plan_mib(a, sizeof a, p->kv_kind[s] / n);
        out("  %-8s %3u layers x %6u positions %14llu bytes (%s) per sequence\n", kind[s], p->kv_layers[s], p->kv_pos[s],
            (unsigned long long)(p->kv_kind[s] / n), a);
    }
    plan_mib(a, sizeof a, p->kv / n);
    out("  per sequence %40llu bytes (%s)\n", (unsigned long long)(p->kv / n), a);
    plan_mib(a, sizeof a, p->kv);
    out("  in all       %40llu bytes (%s)\n", (unsigned long long)p->kv, a);
}

bool plan_compute(Plan *p, Vk *vk, const Model *m, u32 n_ctx, DType act, u32 batch_tokens, const XfOpts *o, bool print, Err *e) {
    memset(p, 0, sizeof *p);
    p->n_ctx = n_ctx;
    p->n_seq = o && o->n_seq ? o->n_seq : 1;
    p->t_max = MAX(MIN(n_ctx, MAX(batch_tokens, 1u)), p->n_seq);  /* as eng_open_gen */
    PlanWalk w = { .p = p, .print = print };
    Xf xf;
    if (print) {
        out("device buffers (%s, context %u, batch %u, activations %s, KV cache %s, logits for %s; offsets aligned to %llu bytes):\n",
            m->cfg.name, n_ctx, p->t_max, dtype_name[act], dtype_name[o ? o->kv : act], o && o->last_row ? "the last row" : "every row",
            (unsigned long long)vk->caps.min_offset_align);
        out("  %-34s %-5s %-22s %12s  %-7s %s %12s\n", "name", "dtype", "shape", "bytes", "arena", "b", "offset");
    }
    /* xf_plan sets the planning arenas up before placing the first tensor; the walk needs the
       weights arena's address to tell the arenas apart, which is &xf.w.arena. */
    w.wa = &xf.w.arena;
    if (!xf_plan(&xf, vk, m, n_ctx, p->t_max, act, o, plan_on_tensor, &w, e)) return false;
    bool one_row = xf.one_row;
    p->plan_w = xf.w.plan; p->plan_s = xf.s.plan;
    p->pad_w = p->plan_w - p->weights;
    p->pad_s = p->plan_s - p->kv - p->act;
    u64 names = xf.w.names.cap, layers = (u64)m->cfg.n_layer * sizeof(XfLayer);
    xf_free(&xf);
    u64 logits = (u64)m->cfg.n_vocab * 4, batch = (u64)m->cfg.n_vocab * (one_row ? (p->n_seq > 1 ? p->n_seq : 0) : p->t_max) * 4;
    u64 staging = vk->caps.unified ? 0 : EDGE_VK_STAGING_BYTES;
    p->host = names + layers + logits + batch + staging;
    p->fits = false;
    if (plan_heap(vk, &p->heap, &p->heap_size)) p->fits = p->plan_w + p->plan_s <= p->heap_size;
    if (!print) return true;
    char a[32], b[32];
    u64 total = p->plan_w + p->plan_s;
    out("\ndevice totals:\n");
    plan_mib(a, sizeof a, p->plan_w);
    out("  weights arena  %14llu bytes (%s): tensors %llu, padding %llu\n", (unsigned long long)p->plan_w, a,
        (unsigned long long)p->weights, (unsigned long long)p->pad_w);
    plan_mib(a, sizeof a, p->plan_s);
    out("  state arena    %14llu bytes (%s): KV cache %llu, activations %llu, padding %llu\n", (unsigned long long)p->plan_s, a,
        (unsigned long long)p->kv, (unsigned long long)p->act, (unsigned long long)p->pad_s);
    plan_mib(a, sizeof a, total);
    out("  total          %14llu bytes (%s) in %llu tensors; padding %llu = %.5f%% overhead\n", (unsigned long long)total, a,
        (unsigned long long)p->n_tensors, (unsigned long long)(p->pad_w + p->pad_s), plan_overhead(p) * 100.0);
    plan_print_kv(p, o ? o->kv : act);
    out("\nhost (besides the mapped model file):\n");
    out("  logits (last row)     %12llu bytes\n", (unsigned long long)logits);
    out("  logits (batch)        %12llu bytes%s\n", (unsigned long long)batch, !one_row ? "" : p->n_seq > 1 ? " (a row per sequence)" : " (generation: one row)");
    out("  tensor names arena    %12llu bytes\n", (unsigned long long)names);
    out("  layer table           %12llu bytes\n", (unsigned long long)layers);
    out("  staging buffer        %12llu bytes%s\n", (unsigned long long)staging, staging ? " (host-visible, non-unified device)" : " (unified memory: none)");
    plan_mib(a, sizeof a, p->host);
    out("  total                 %12llu bytes (%s)\n", (unsigned long long)p->host, a);
    out("\ndevice: %s, maxMemoryAllocationSize %llu\n", vk->props.deviceName, (unsigned long long)vk->caps.max_alloc);
    if (!p->heap_size) { out("fits: no (no device-local memory type)\n"); return true; }
    plan_mib(a, sizeof a, total); plan_mib(b, sizeof b, p->heap_size);
    if (p->fits) out("fits: yes, %s of heap %u (%s), %.1f%% of it\n", a, p->heap, b, (f64)total * 100.0 / (f64)p->heap_size);
    else {
        char c[32]; plan_mib(c, sizeof c, total - p->heap_size);
        out("fits: NO, %s needed but heap %u has %s: %s (%llu bytes) short\n", a, p->heap, b, c,
            (unsigned long long)(total - p->heap_size));
    }
    return true;
}

bool plan_compute_eng(Plan *p, Engine *g, const Model *m, u32 n_ctx, DType act, DType kv, u32 batch, u32 n_seq, bool print, Err *e) {
    XfOpts o = { .kv = kv != DT_COUNT ? kv : eng_kv_default(&g->vk.caps, act), .last_row = true, .n_seq = n_seq };   /* as eng_open_gen for edge run */
    return plan_compute(p, &g->vk, m, n_ctx, act, batch, &o, print, e);
}
