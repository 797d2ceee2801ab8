/* options.c — implementation of options.h: the only place edge reads its environment. */

EdgeOptions edge_opt;

static bool opt_read_FLAG(const char *v) { return v && *v && strcmp(v, "0"); }
static const char *opt_read_STR(const char *v) { return v && *v ? v : 0; }
static OptInt opt_read_INT(const char *v) {
    OptInt r = { false, 0 };
    if (v && *v) { r.set = true; r.v = strtoll(v, 0, 10); }
    return r;
}

void options_load(void) {
#define OPT_READ(kind, field, name) edge_opt.field = opt_read_##kind(getenv(name));
    EDGE_OPTIONS(OPT_READ)
#undef OPT_READ
}
