/* run_par.c — `edge run -np N`: up to N prompts decoded together (part of cli/run.c's module; the
   unity build includes it right after run.c, whose statics it uses).

   Each prompt takes a slot; slot i is the engine's sequence i (its own KV cache and context). One
   scheduler turn (run_par):
     1. admit: while no prompt is being prefilled and a slot is free, read the next record,
        template and tokenize it (r->toks), and start its prefill
     2. prefill: feed the admitted prompt one batch (EDGE_PREFILL_BATCH tokens) per turn while
        other prompts decode, so they are not starved; all of it when nothing else decodes
     3. decode: every decoding slot takes its picked token (stop tokens, stop strings, -n and the
        context end finish it), then one eng_step runs them all: each weight read once for the rows
   A slot that finishes frees itself for the next record at once (continuous batching). Sampling
   is per slot (its own sampler, seeded from its request), so answers do not depend on N or on
   what else is in the batch. Text modes write answers in input order: the oldest unfinished prompt
   (the head) streams, the others keep their text until it is their turn; jsonl writes each answer
   when it finishes, with its id. Failed prompts keep their place (text modes: an empty record). */

enum { RS_FREE, RS_PREFILL, RS_DECODE, RS_DONE };
#define RUN_PAR_KEEP 4096               /* bytes per slot for the request's stop strings and JSON id */

typedef struct RunSlot {
    u32        state;                   /* RS_* */
    u32        index;                   /* the prompt's number */
    u64        line;                    /* its input line (jsonl) */
    RunReq     q;                       /* its settings; strings it needs later live in keep */
    JsonVal    id;                      /* jsonl: the request's id (type JSON_NULL: none) */
    char      *keep; u32 kept;
    RunResult  res;
    RunText    out;
    Sampler    samp;
    TokDecoder dec;
    i32        next;                    /* the picked token, not yet in the context */
    u32        fed, n_prompt;           /* RS_PREFILL: prompt tokens fed, of n_prompt */
    u32        pre_gen, pre_n;          /* the system prefix (r->pre's gen) whose pre_n tokens this slot's cache holds (0: none) */
    f64        t0, t1;                  /* prefill start, decode start (ms) */
} RunSlot;

typedef struct RunPar {
    RunSlot *slot;
    u32      n;
    u32      index;                     /* prompts read */
    u64      line;                      /* input lines read */
    u32      head;                      /* text modes: the prompt to write next */
    u32      prefill;                   /* the slot being prefilled (n: none) */
    bool     eof;
    u32     *seqs; i32 *toks, *ids;     /* (n) one step's rows */
    f32     *logits;                    /* (n, n_vocab) */
    Arena    mem;
} RunPar;

static bool run_par_text(const Run *r) { return r->o.input != RUN_IN_JSONL; }

/* ---- a finished prompt's output ---------------------------------------------------------- */
static void run_par_free(RunSlot *s) { s->state = RS_FREE; s->kept = 0; }

/* Writes the head and every finished prompt after it (text modes); the new head streams what it has. */
static void run_par_flush(Run *r, RunPar *P) {
    for (;;) {
        RunSlot *s = 0;
        for (u32 i = 0; i < P->n; i++) if (P->slot[i].state != RS_FREE && P->slot[i].index == P->head) s = &P->slot[i];
        if (!s) return;
        if (s->state != RS_DONE) { if (s->state == RS_DECODE) run_emit(r, &s->out, &s->q, "", 0, true); return; }
        if (s->out.printed < s->out.n) run_stream(r, &s->out, s->out.n, true);
        run_write(r, r->o.sep, r->o.sep_len);
        if (s->res.stop == RUN_STOP_ERROR) r->n_failed++; else r->n_answered++;
        run_report(r, s->index, &s->res);
        if (r->o.stats_every && s->index % r->o.stats_every == 0) run_stats(r, s->index);
        run_par_free(s);
        P->head++;
    }
}

static void run_par_finish(Run *r, RunPar *P, RunSlot *s, RunStop stop) {
    s->res.stop = stop;
    if (stop != RUN_STOP_ERROR && stop != RUN_STOP_STRING) {
        char piece[64];
        u32 k = tok_decode_flush(r->tok, &s->dec, piece, sizeof piece);
        if (run_emit(r, &s->out, &s->q, piece, k, s->index == P->head && run_par_text(r))) s->res.stop = RUN_STOP_STRING;
    }
    if (s->state == RS_DECODE) s->res.decode_ms = run_now_ms() - s->t1;
    if (P->prefill == (u32)(s - P->slot)) P->prefill = P->n;
    s->state = RS_DONE;
    if (run_par_text(r)) { run_par_flush(r, P); return; }
    const JsonVal *id = s->id.type == JSON_NULL ? 0 : &s->id;
    if (s->res.stop == RUN_STOP_ERROR) { run_json_error(r, id, s->line, s->res.err); r->n_failed++; }
    else { run_json_result(r, id, s->line, &s->res, &s->out); r->n_answered++; }
    run_report(r, s->index, &s->res);
    if (r->o.stats_every && s->index % r->o.stats_every == 0) run_stats(r, s->index);
    run_par_free(s);
}

static void run_par_fail(Run *r, RunPar *P, RunSlot *s, const char *msg, int code) {
    fmt_buf(s->res.err, sizeof s->res.err, "%s", msg);
    run_fault(r, code);
    run_par_finish(r, P, s, RUN_STOP_ERROR);
}

/* ---- admission ---------------------------------------------------------------------------- */
/* A copy of n bytes (NUL-terminated) in the slot's keep buffer; NULL when it is full. */
static const char *run_par_keep(RunSlot *s, const char *p, u64 n) {
    if (n + 1 > RUN_PAR_KEEP - s->kept) return 0;
    char *d = s->keep + s->kept;
    memcpy(d, p, n); d[n] = 0;
    s->kept += (u32)n + 1;
    return d;
}

/* The request's strings that outlive its record (stop strings; jsonl: the id) into keep. */
static bool run_par_hold(RunSlot *s, const JsonVal *id, char *msg, u32 cap) {
    s->id = (JsonVal){ .type = JSON_NULL };
    for (u32 i = 0; i < s->q.n_stops; i++)
        if (!(s->q.stops[i] = run_par_keep(s, s->q.stops[i], s->q.stop_len[i]))) goto full;
    if (id) {
        s->id = *id;
        if (!(s->id.str = run_par_keep(s, id->str, id->len))) goto full;
    }
    return true;
full:
    fmt_buf(msg, (int)cap, "the stop strings and id take more than %u bytes (RUN_PAR_KEEP, with -np)", RUN_PAR_KEEP);
    return false;
}

/* The request of record r->rec in slot s (its strings held there); false with msg, and for jsonl
   the request's id when it has one (*id, valid until the scratch is reset). */
static bool run_par_request(Run *r, RunSlot *s, u64 len, char *msg, u32 cap, const JsonVal **id) {
    *id = 0;
    if (r->o.input != RUN_IN_JSONL) {
        run_req_defaults(r, &s->q);
        s->q.text = r->rec; s->q.len = len;
        return run_par_hold(s, 0, msg, cap);
    }
    JsonDoc doc;
    if (!json_parse(r->rec, len, &r->scratch, &doc)) {
        fmt_buf(msg, (int)cap, "invalid JSON at byte %llu: %s", (unsigned long long)doc.err_at + 1, doc.err);
        return false;
    }
    *id = json_get(doc.root, "id");
    if (*id && (*id)->type != JSON_STR && (*id)->type != JSON_NUM) *id = 0;
    if (!run_req_from_json(r, doc.root, &s->q, msg, cap) || !run_par_hold(s, *id, msg, cap)) return false;
    if (doc.n_replaced) errf("edge: line %llu: %u invalid UTF-8 byte%s replaced with U+FFFD\n", (unsigned long long)s->line, doc.n_replaced, doc.n_replaced == 1 ? "" : "s");
    return true;
}

/* The prompt's system prefix from a cache (run_prefix_held): this slot's own (kept by truncating its
   context), else another slot's (its rows copied); the tokens reused, 0 when none holds it. */
static u32 run_par_reuse(Run *r, RunPar *P, RunSlot *s) {
    u32 n = s->res.n_prefix, seq = (u32)(s - P->slot);
    Err e = {0};
    bool mine = s->pre_gen == r->pre.gen && run_prefix_held(r, s->pre_n, eng_pos(&r->g), n);
    s->pre_n = 0;
    if (mine && eng_truncate(&r->g, n, &e)) { s->pre_n = n; return n; }
    for (u32 i = 0; i < P->n; i++) {
        RunSlot *h = &P->slot[i];
        if (h == s || h->pre_gen != r->pre.gen || !run_prefix_held(r, h->pre_n, eng_seq_pos(&r->g, i), n)) continue;
        if (!eng_copy_prefix(&r->g, i, seq, n, &e)) break;
        s->pre_n = n; s->pre_gen = r->pre.gen;
        return n;
    }
    return 0;
}

/* Reads, templates and tokenizes the next record into a free slot and starts its prefill. */
static void run_par_admit_one(Run *r, RunPar *P, RunSlot *s) {
    u64 len; bool over;
    if (!run_next(r, &P->line, &len, &over)) { P->eof = true; return; }
    s->line = P->line;
    u32 index = ++P->index;
    memset(&s->res, 0, sizeof s->res);
    s->index = index; s->state = RS_DONE; s->kept = 0; s->out.n = s->out.printed = 0;
    s->id = (JsonVal){ .type = JSON_NULL };
    if (over && !r->o.truncate && run_par_text(r)) {   /* (its place kept: reported in order) */
        fmt_buf(s->res.err, sizeof s->res.err, "longer than %u bytes (EDGE_RUN_MAX_PROMPT_BYTES; --truncate keeps the end)", EDGE_RUN_MAX_PROMPT_BYTES);
        run_par_finish(r, P, s, RUN_STOP_ERROR);
        return;
    }
    if (!run_fits(r, index, s->line, len, over)) { run_par_free(s); return; }   /* (jsonl: its error line written) */
    Temp t = temp_begin(&r->scratch);
    char msg[256];
    u32 n = 0;
    const JsonVal *jid;
    if (!run_par_request(r, s, len, msg, sizeof msg, &jid)) {
        if (run_par_text(r)) run_par_fail(r, P, s, msg, 0);
        else { run_json_error(r, jid, s->line, msg); r->n_failed++; run_par_free(s); }
        temp_end(t);
        return;
    }
    if (!run_prepare(r, &s->q, index, &s->res, &n)) { temp_end(t); run_par_finish(r, P, s, RUN_STOP_ERROR); return; }
    temp_end(t);
    u32 seq = (u32)(s - P->slot);
    eng_select(&r->g, seq);
    s->fed = run_par_reuse(r, P, s);
    if (!s->fed) eng_reset(&r->g);
    s->res.n_reused = s->fed;
    samp_reset(&s->samp, &s->q.sp);
    for (u32 i = n > s->samp.max_hist ? n - s->samp.max_hist : 0; i < n; i++) samp_accept(&s->samp, r->toks[i]);
    tok_decoder_init(&s->dec);
    s->dec.at_start = false;            /* a continuation keeps the first piece's leading space */
    s->state = RS_PREFILL; s->n_prompt = n; s->t0 = run_now_ms();
    P->prefill = seq;
}

static void run_par_admit(Run *r, RunPar *P) {
    while (P->prefill == P->n && !P->eof) {
        if (run_interrupted || r->worst == EXIT_DEVICE || r->pipe_closed) { P->eof = true; return; }
        RunSlot *s = 0;
        for (u32 i = 0; i < P->n && !s; i++) if (P->slot[i].state == RS_FREE) s = &P->slot[i];
        if (!s) return;
        run_par_admit_one(r, P, s);
    }
}

/* ---- prefill and decode ------------------------------------------------------------------- */
/* The admitted prompt's next batch (all of it when nothing decodes); at its end the first pick. */
static void run_par_prefill(Run *r, RunPar *P, bool others) {
    RunSlot *s = &P->slot[P->prefill];
    u32 seq = P->prefill, left = s->n_prompt - s->fed, pre = s->res.n_prefix;
    u32 chunk = others ? MIN(left, (u32)EDGE_PREFILL_BATCH) : left;
    if (s->fed < pre) chunk = MIN(chunk, pre - s->fed);        /* (run_feed's split: up to the system prefix, then on) */
    Err e = {0};
    eng_select(&r->g, seq);
    if (!eng_feed(&r->g, r->toks + s->fed, chunk, 0, &e)) { run_par_fail(r, P, s, e.msg, e.code); return; }
    s->fed += chunk;
    if (pre && s->fed == pre) { s->pre_n = pre; s->pre_gen = r->pre.gen; }   /* it holds the prefix now */
    if (s->fed < s->n_prompt) return;
    P->prefill = P->n;
    s->res.prefill_ms = run_now_ms() - s->t0;
    const f32 *lg = eng_last_logits(&r->g);
    if (!run_finite(lg, r->m.cfg.n_vocab)) { run_par_fail(r, P, s, "NaN or Inf in the logits after the prompt", EXIT_NUMERIC); return; }
    s->next = samp_pick(&s->samp, lg);
    s->state = RS_DECODE; s->t1 = run_now_ms();
    if (s->q.max_tokens <= 0) run_par_finish(r, P, s, RUN_STOP_LENGTH);
}

/* Slot s's picked token: written out, or what finishes the prompt; true when it goes into the step. */
static bool run_par_take(Run *r, RunPar *P, RunSlot *s) {
    i32 tok = s->next;
    if (chat_is_stop(run_family(r), r->tok, tok)) { run_par_finish(r, P, s, RUN_STOP_EOS); return false; }
    char piece[1024];
    u32 k = tok_decode(r->tok, &s->dec, tok, piece, sizeof piece);
    s->res.n_gen++;
    samp_accept(&s->samp, tok);
    if (run_emit(r, &s->out, &s->q, piece, k, s->index == P->head && run_par_text(r))) { run_par_finish(r, P, s, RUN_STOP_STRING); return false; }
    RunStop stop = r->pipe_closed ? RUN_STOP_LENGTH : s->res.n_gen >= s->q.max_tokens ? RUN_STOP_LENGTH :
                   run_interrupted ? RUN_STOP_INTERRUPT : eng_seq_pos(&r->g, (u32)(s - P->slot)) >= r->n_ctx ? RUN_STOP_CONTEXT : RUN_STOP_ERROR;
    if (stop != RUN_STOP_ERROR) { run_par_finish(r, P, s, stop); return false; }
    return true;
}

/* One decode step of every decoding slot: the picks of greedy rows from the GPU's argmax, the
   others sampled from their logits rows. */
static void run_par_decode(Run *r, RunPar *P) {
    u32 m = 0;
    bool sample = false;
    RunSlot *row[EDGE_MAX_SEQ];
    for (u32 i = 0; i < P->n; i++) {
        RunSlot *s = &P->slot[i];
        if (s->state != RS_DECODE || !run_par_take(r, P, s)) continue;
        row[m] = s; P->seqs[m] = i; P->toks[m] = s->next; m++;
        sample |= !samp_is_greedy(&s->q.sp);
    }
    if (!m) return;
    Err e = {0};
    if (!eng_step(&r->g, m, P->seqs, P->toks, P->ids, sample ? P->logits : 0, &e)) {
        for (u32 t = 0; t < m; t++) run_par_fail(r, P, row[t], e.msg, e.code);
        return;
    }
    u32 nv = r->m.cfg.n_vocab;
    for (u32 t = 0; t < m; t++) {
        RunSlot *s = row[t];
        const f32 *lg = P->logits + (u64)t * nv;
        if (samp_is_greedy(&s->q.sp)) s->next = P->ids[t];
        else if (!run_finite(lg, nv)) { run_par_fail(r, P, s, "NaN or Inf in the logits", EXIT_NUMERIC); continue; }
        else s->next = samp_pick(&s->samp, lg);
        if (s->next < 0 || (u32)s->next >= nv) run_par_fail(r, P, s, "the argmax returned an id outside the vocabulary: NaN in the logits?", EXIT_NUMERIC);
    }
}

/* ---- the loop ------------------------------------------------------------------------------ */
static void run_par_open(Run *r, RunPar *P) {
    u32 n = r->g.n_seq, nv = r->m.cfg.n_vocab;
    P->n = n; P->head = 1; P->prefill = n;
    u64 bytes = (u64)n * (sizeof(RunSlot) + RUN_PAR_KEEP + r->out.cap + 4ull * r->n_ctx + 12 + 4ull * nv + 256) + 256;
    arena_init(&P->mem, "run -np slots", bytes);
    P->slot = push_array(&P->mem, RunSlot, n);
    P->seqs = push_array(&P->mem, u32, n); P->toks = push_array(&P->mem, i32, n); P->ids = push_array(&P->mem, i32, n);
    P->logits = push_array(&P->mem, f32, (u64)n * nv);
    for (u32 i = 0; i < n; i++) {
        RunSlot *s = &P->slot[i];
        memset(s, 0, sizeof *s);
        s->keep = push_array(&P->mem, char, RUN_PAR_KEEP);
        s->out = (RunText){ .buf = push_array(&P->mem, char, r->out.cap), .cap = r->out.cap };
        samp_init_share(&s->samp, &r->samp, r->n_ctx, &P->mem);
    }
}

static bool run_par_busy(const RunPar *P) {
    for (u32 i = 0; i < P->n; i++) if (P->slot[i].state != RS_FREE) return true;
    return false;
}

static void run_par(Run *r) {
    RunPar P;
    memset(&P, 0, sizeof P);
    run_par_open(r, &P);
    for (;;) {
        run_par_admit(r, &P);
        bool decoding = false;
        for (u32 i = 0; i < P.n; i++) decoding |= P.slot[i].state == RS_DECODE;
        if (P.prefill < P.n) run_par_prefill(r, &P, decoding);
        run_par_decode(r, &P);
        if (P.eof && !run_par_busy(&P)) break;
        if (r->worst == EXIT_DEVICE) break;
    }
    arena_free(&P.mem);
}
