/* profile_test.c — device profiles (config/profiles.def, EDGE_PROFILE) and vk_kernel_check:
   a profile only removes capabilities, an unknown name is refused with the valid names, and a
   kernel the restricted caps forbid (f16, shared memory, workgroup size) is refused by name. */

/* vk_pipeline under a trap for die(); its own frame keeps the caller's locals out of setjmp's way */
__attribute__((noinline)) static bool prof_pipeline_dies(Vk *vk, i32 ki, int *code) {
    return EXPECT_DIE(code, vk_pipeline(vk, ki));
}

TEST(profile_table_rows_are_sane_and_portable_is_the_minimum) {
    const DevProfile *port = vk_profile_find("portable");
    REQUIRE(port);
    static const char *const must[] = { "mali-g610", "mali-g720", "adreno-740", "adreno-750", "adreno-6xx-turnip", "v3d-7.1", "portable" };
    for (u32 i = 0; i < ARRAY_COUNT(must); i++) CHECKF(vk_profile_find(must[i]), "no profile '%s'", must[i]);
    for (u32 i = 0; i < PROF_COUNT; i++) {
        const DevProfile *p = &dev_profiles[i];
        CHECKF(vk_profile_find(p->name) == p, "profile name '%s' is not unique", p->name);
        /* Vulkan 1.1's required minimums: no real board reports less */
        CHECKF(p->max_shared >= 16384 && p->max_storage_range >= (128ull << 20) && p->max_wg_invocations >= 128,
               "%s: below Vulkan's required limits", p->name);
        CHECKF(p->subgroup_size && (p->subgroup_size & (p->subgroup_size - 1)) == 0, "%s: subgroup size %u", p->name, p->subgroup_size);
        CHECKF(port->max_shared <= p->max_shared && port->max_storage_range <= p->max_storage_range &&
               port->max_wg_invocations <= p->max_wg_invocations && port->subgroup_size <= p->subgroup_size &&
               (port->subgroup_ops & ~p->subgroup_ops) == 0 && (!port->f16_arith || p->f16_arith) &&
               (!port->storage16 || p->storage16), "portable is not at most %s", p->name);
    }
    const DevProfile *v3d = vk_profile_find("v3d-7.1");
    REQUIRE(v3d);
    CHECK(!v3d->f16_arith && v3d->max_shared == 16384);
    CHECK(port->subgroup_ops == 0 && !port->f16_arith && !port->storage16);
}

TEST(profile_apply_only_removes) {
    Vk *vk = test_vk();
    for (u32 i = 0; i < PROF_COUNT; i++) {
        const DevProfile *p = &dev_profiles[i];
        VkCaps real = vk->caps, c = real;
        vk_profile_apply(&c, p);
        CHECKF(c.profile && !strcmp(c.profile, p->name), "%s", p->name);
        CHECKF(c.subgroup_size <= real.subgroup_size && c.subgroup_size <= p->subgroup_size, "%s subgroup size %u", p->name, c.subgroup_size);
        CHECKF((c.subgroup_ops & ~real.subgroup_ops) == 0 && (c.subgroup_ops & ~p->subgroup_ops) == 0, "%s subgroup ops %x", p->name, c.subgroup_ops);
        CHECKF(c.f16_arith == (real.f16_arith && p->f16_arith), "%s f16", p->name);
        CHECKF(c.storage16 == (real.storage16 && p->storage16), "%s 16-bit storage", p->name);
        CHECKF(c.max_shared == MIN(real.max_shared, p->max_shared), "%s shared %u", p->name, c.max_shared);
        CHECKF(c.max_storage_range == MIN(real.max_storage_range, p->max_storage_range), "%s range %llu", p->name,
               (unsigned long long)c.max_storage_range);
        CHECKF(c.max_wg_invocations == MIN(real.max_wg_invocations, p->max_wg_invocations), "%s invocations %u", p->name, c.max_wg_invocations);
        for (int d = 0; d < 3; d++) CHECKF(c.max_wg_size[d] <= real.max_wg_size[d] && c.max_wg_size[d] <= p->max_wg_invocations, "%s", p->name);
        /* the unchanged limits stay */
        CHECK(c.max_alloc == real.max_alloc && c.max_push == real.max_push && c.min_offset_align == real.min_offset_align);
        /* applying twice changes nothing */
        VkCaps twice = c; vk_profile_apply(&twice, p);
        CHECKF(!memcmp(&twice, &c, sizeof c), "%s: not idempotent", p->name);
    }
}

TEST(profile_env_reaches_vk_init_and_unknown_names_are_refused) {
    Vk *real = test_vk();
    static Vk pv; Err e = {0};
    TEST_OPTION(profile, "v3d-7.1");            /* EDGE_PROFILE, put back when the test ends */
    bool ok = vk_init(&pv, &e);
    if (ok) {
        CHECK(pv.caps.profile && !strcmp(pv.caps.profile, "v3d-7.1"));
        CHECK(!pv.caps.f16_arith && !pv.caps.storage16);
        CHECK(pv.caps.max_shared == MIN(real->caps.max_shared, 16384u));
        CHECK(pv.caps.max_wg_invocations <= 256);
        CHECK((pv.caps.subgroup_ops & ~(u32)VK_SUBGROUP_FEATURE_BASIC_BIT) == 0);
        vk_shutdown(&pv);
    } else CHECKF(0, "vk_init under v3d-7.1: %s", e.msg);
    edge_opt.profile = "mali-g999";
    ok = vk_init(&pv, &e);
    CHECK(!ok);
    if (!ok) {
        CHECK(e.code == EXIT_DEVICE);
        CHECKF(strstr(e.msg, "EDGE_PROFILE=mali-g999") && strstr(e.msg, "unknown") && strstr(e.msg, "v3d-7.1") &&
               strstr(e.msg, "portable") && strstr(e.msg, "adreno-6xx-turnip"), "message: %s", e.msg);
    } else vk_shutdown(&pv);
}

TEST(profile_v3d_refuses_a_kernel_that_needs_f16) {
    Vk *vk = test_vk();
    VkCaps c = vk->caps;
    vk_profile_apply(&c, vk_profile_find("v3d-7.1"));
    /* every embedded kernel that declares Float16 is refused, by name, through vk_pipeline */
    for (i32 i = 0; i < KERNEL_TABLE_COUNT; i++) {
        Err e;
        bool ok = vk_kernel_check(&c, &kernel_table[i], &e);
        if (kernel_table[i].cap_f16) CHECKF(!ok && strstr(e.msg, kernel_table[i].name) && strstr(e.msg, "shaderFloat16"), "%s", kernel_table[i].name);
    }
    /* and a kernel that declares it (a copy of a real one, marked f16) is refused naming kernel, feature and profile */
    KernelInfo k = kernel_table[vk_kernel_find("add_f32")];
    k.name = "add_f16_probe"; k.cap_f16 = 1;
    Err e;
    CHECK(!vk_kernel_check(&c, &k, &e));
    CHECKF(strstr(e.msg, "add_f16_probe") && strstr(e.msg, "shaderFloat16") && strstr(e.msg, "v3d-7.1"), "message: %s", e.msg);
    CHECK(e.code == EXIT_DEVICE);
    /* the same kernel without f16 passes: the refusal is about the feature */
    k.cap_f16 = 0;
    CHECKF(vk_kernel_check(&c, &k, &e), "%s", e.msg);
    /* subgroup kernels under portable (no subgroup operations) */
    VkCaps pc = vk->caps;
    vk_profile_apply(&pc, vk_profile_find("portable"));
    k.cap_subgroup = 1;
    CHECK(!vk_kernel_check(&pc, &k, &e) && strstr(e.msg, "subgroup") && strstr(e.msg, "portable"));
}

TEST(profile_refuses_kernels_over_shared_memory_and_workgroup_limits) {
    Vk *vk = test_vk();
    i32 ki = vk_kernel_find("rmsnorm_f32");
    REQUIRE(ki >= 0);
    const KernelInfo *rk = &kernel_table[ki];
    CHECKF(rk->shared_bytes == 256 * 4 + 256 * 8 + 16 * 8, "rmsnorm_f32 reflects %u bytes of workgroup memory (WGSL: array<f32, 256> + array<vec2<f32>, 256> + array<vec2<f32>, 16>)", rk->shared_bytes);
    CHECK(kernel_table[vk_kernel_find("add_f32")].shared_bytes == 0);
    /* a shared-memory kernel bigger than v3d-7.1's 16 KiB */
    VkCaps c = vk->caps;
    vk_profile_apply(&c, vk_profile_find("v3d-7.1"));
    KernelInfo big = *rk; big.name = "rmsnorm_big_probe"; big.shared_bytes = 32768;
    Err e;
    CHECK(!vk_kernel_check(&c, &big, &e));
    CHECKF(strstr(e.msg, "rmsnorm_big_probe") && strstr(e.msg, "32768") && strstr(e.msg, "maxComputeSharedMemorySize"), "message: %s", e.msg);
    /* a workgroup larger than the profile's invocations */
    KernelInfo wide = *rk; wide.name = "wide_probe"; wide.wg[0] = 512;
    CHECK(!vk_kernel_check(&c, &wide, &e));
    CHECKF(strstr(e.msg, "wide_probe") && strstr(e.msg, "512") && strstr(e.msg, "maxComputeWorkGroupInvocations"), "message: %s", e.msg);
    /* the real vk_pipeline refuses (dies with the message) when the device's caps are below a kernel's
       shared memory, and builds it again once they are not */
    VkCaps saved = vk->caps;
    vk->caps.max_shared = 512; vk->caps.profile = "test-512";
    int code = 0;
    bool died = prof_pipeline_dies(vk, ki, &code);
    vk->caps = saved;
    CHECK(died && code == EXIT_DEVICE);
    if (died) CHECKF(strstr(die_trap_msg, "rmsnorm_f32") && strstr(die_trap_msg, "3200") && strstr(die_trap_msg, "512"), "message: %s", die_trap_msg);
    CHECK(vk_pipeline(vk, ki) != 0);
    /* every profile keeps every embedded kernel runnable except for the features it removes, and
       for the optional wide attn_flash (OP_ATTN_FLASH_W), which the host picks only where it fits:
       where it does not, op_attention_flash_kernel must fall back to the plain kernel */
    for (u32 p = 0; p < PROF_COUNT; p++) {
        VkCaps pc = vk->caps;
        vk_profile_apply(&pc, &dev_profiles[p]);
        for (i32 i = 0; i < KERNEL_TABLE_COUNT; i++) {
            const KernelInfo *k = &kernel_table[i];
            if (k->cap_f16 || k->cap_s16 || k->cap_subgroup) continue;
            i32 d = -1;
            for (i32 j = 0; j < KDEF_COUNT; j++) if (!strcmp(kdefs[j].kernel, k->name)) d = j;
            if (d >= 0 && kdefs[d].op == OP_ATTN_FLASH_W && !vk_kernel_check(&pc, k, &e)) {
                VkCaps keep = vk->caps;
                vk->caps = pc;
                Op got = op_attention_flash_kernel(vk, 256, kdefs[d].wtype, kdefs[d].atype);
                vk->caps = keep;
                CHECKF(got == OP_ATTN_FLASH, "profile %s: %s does not fit, but the host still picks it", dev_profiles[p].name, k->name);
                continue;
            }
            CHECKF(vk_kernel_check(&pc, k, &e), "profile %s: %s", dev_profiles[p].name, e.msg);
        }
    }
}
