/* options_test.c — base/options: options_load reads each kind of variable (flag, string, number)
   from the environment, and an unset or empty variable gives the default. The variables it sets
   are put back, and edge_opt with them (test_save), when the test ends. */

static const char *const optt_vars[] = { "EDGE_FAT_NONDET", "EDGE_NO_COOPMAT", "EDGE_PROFILE", "EDGE_SPLITK", "EDGE_FENCE_SPIN_US" };

static void optt_set(const char *name, const char *value) { if (value) setenv(name, value, 1); else unsetenv(name); }

TEST(options_load_reads_values_and_defaults) {
    test_save(&edge_opt, sizeof edge_opt);
    char *old[ARRAY_COUNT(optt_vars)];
    for (u32 i = 0; i < ARRAY_COUNT(optt_vars); i++) { const char *v = getenv(optt_vars[i]); old[i] = v ? strdup(v) : 0; }

    /* set: the values */
    optt_set("EDGE_FAT_NONDET", "1"); optt_set("EDGE_NO_COOPMAT", "yes"); optt_set("EDGE_PROFILE", "v3d-7.1");
    optt_set("EDGE_SPLITK", "4"); optt_set("EDGE_FENCE_SPIN_US", "0");
    options_load();
    CHECK(edge_opt.fat_nondet && edge_opt.no_coopmat);
    CHECK(edge_opt.profile && !strcmp(edge_opt.profile, "v3d-7.1"));
    CHECK(edge_opt.splitk.set && edge_opt.splitk.v == 4);
    CHECK(edge_opt.fence_spin_us.set && edge_opt.fence_spin_us.v == 0);      /* 0 is a value, not the default */

    /* "0" turns a flag off; empty is unset */
    optt_set("EDGE_FAT_NONDET", "0"); optt_set("EDGE_NO_COOPMAT", ""); optt_set("EDGE_PROFILE", "");
    optt_set("EDGE_SPLITK", ""); optt_set("EDGE_FENCE_SPIN_US", "");
    options_load();
    CHECK(!edge_opt.fat_nondet && !edge_opt.no_coopmat);
    CHECK(edge_opt.profile == 0);
    CHECK(!edge_opt.splitk.set && edge_opt.splitk.v == 0);
    CHECK(!edge_opt.fence_spin_us.set);

    /* unset: the defaults */
    for (u32 i = 0; i < ARRAY_COUNT(optt_vars); i++) optt_set(optt_vars[i], 0);
    options_load();
    CHECK(!edge_opt.fat_nondet && !edge_opt.no_coopmat && edge_opt.profile == 0);
    CHECK(!edge_opt.splitk.set && !edge_opt.fence_spin_us.set);

    for (u32 i = 0; i < ARRAY_COUNT(optt_vars); i++) { optt_set(optt_vars[i], old[i]); free(old[i]); }
}

/* The options reach their users without the environment being read again: EDGE_SPLITK forces the
   slices of a split product (at most 64); unset, the device's choice (none without compute units). */
TEST(options_splitk_field_is_what_the_split_reads) {
    static Vk vk;                               /* no device: compute_units 0 */
    Tensor W = {0}, X = {0};
    W.ne[0] = 4096; W.nelem = 4096ull * 4096; W.dtype = DT_F32;
    X.ne[0] = 4096; X.nelem = 4096ull * 64;   X.dtype = DT_F32;
    TEST_OPTION(splitk, opt_int(3));
    CHECK(op_matmul_split_slices(&vk, &W, &X) == 3);
    edge_opt.splitk = opt_int(1000);
    CHECK(op_matmul_split_slices(&vk, &W, &X) == 64);
    edge_opt.splitk.set = false; edge_opt.splitk.v = 0;
    CHECK(op_matmul_split_slices(&vk, &W, &X) == 1);
}

/* matmul_cm's split-k count on the H200 (132 units): the fastest of 1 to 4 slices measured for
   attn_out and ffn_down of eight shapes at 512 tokens (docs/perf-log.md session 38, `--profile` with
   EDGE_SPLITK=2..8: e.g. qwen3-4b's ffn_down 386 us in 2 slices, 274 in 3, 303 in 4). */
TEST(matmul_cm_split_count_is_the_measured_fastest_on_the_h200) {
    static const struct { const char *nm; u32 m, k_attn, k_ffn, s_attn, s_ffn; } sh[] = {
        { "llama-3.2-1b", 2048, 2048, 8192, 2, 2 }, { "qwen2.5-1.5b", 1536, 1536, 8960, 2, 2 },
        { "llama-3.2-3b", 3072, 3072, 8192, 4, 4 }, { "qwen2.5-3b", 2048, 2048, 11008, 2, 2 },
        { "gemma-2-2b", 2304, 2048, 9216, 3, 3 },   { "qwen3-4b", 2560, 4096, 9728, 3, 3 },
        { "llama-3.1-8b", 4096, 4096, 14336, 2, 2 }, { "qwen3-1.7b", 2048, 2048, 6144, 2, 2 },
    };
    for (u32 i = 0; i < ARRAY_COUNT(sh); i++) {
        u32 sa = cm_split_best(sh[i].k_attn, sh[i].m, 512, 132), sf = cm_split_best(sh[i].k_ffn, sh[i].m, 512, 132);
        CHECKF(sa == sh[i].s_attn && sf == sh[i].s_ffn, "%s: attn_out %u slices (measured fastest %u), ffn_down %u (%u)",
               sh[i].nm, sa, sh[i].s_attn, sf, sh[i].s_ffn);
    }
    CHECK(cm_split_best(256, 4096, 512, 132) == 1);        /* one block of k: nothing to split */
    CHECK(cm_split_best(4096, 65536, 512, 132) == 1);      /* many tiles: several waves unsplit */
}
