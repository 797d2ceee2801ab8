/* base_test.c — arenas, checked arithmetic, half-precision conversion. */

TEST(arena_push_align_and_pop) {
    Arena a; arena_init(&a, "test", 256);
    u8 *p = (u8 *)arena_push(&a, 3, 1);
    u32 *q = push_array(&a, u32, 4);
    CHECK(((uintptr_t)q & 3) == 0);
    CHECK((u8 *)q >= p + 3);
    u64 pos = arena_pos(&a);
    Temp t = temp_begin(&a);
    arena_push(&a, 100, 64);
    temp_end(t);
    CHECK(arena_pos(&a) == pos);
    arena_free(&a);
}

TEST(arena_exhaustion_names_arena_sizes_and_site) {
    Arena a; arena_init(&a, "scratch-arena", 100);
    arena_push(&a, 60, 1);
    int code = 0;
    bool died = EXPECT_DIE(&code, arena_push(&a, 50, 1));
    CHECK(died);
    CHECK(code == EXIT_USAGE);
    CHECKF(strstr(die_trap_msg, "'scratch-arena'") != 0, "%s", die_trap_msg);
    CHECKF(strstr(die_trap_msg, "asked for 50 bytes") != 0, "%s", die_trap_msg);
    CHECKF(strstr(die_trap_msg, "used 60 of 100") != 0, "%s", die_trap_msg);
    CHECKF(strstr(die_trap_msg, "base_test.c:") != 0, "%s", die_trap_msg);
    CHECK(arena_pos(&a) == 60);                     /* a failed push moves nothing */
    died = EXPECT_DIE(&code, push_array(&a, u64, (u64)1 << 62));
    CHECK(died);
    CHECKF(strstr(die_trap_msg, "overflow") != 0, "%s", die_trap_msg);
    arena_free(&a);
}

TEST(checked_arithmetic) {
    u64 r;
    CHECK(mul_u64(1ull << 31, 1ull << 32, &r) && r == 1ull << 63);
    CHECK(!mul_u64(1ull << 32, 1ull << 32, &r));
    CHECK(!add_u64(~0ull, 1, &r));
}

/* f16 conversion checked against the compiler's own _Float16 (an independent implementation). */
TEST(f16_conversion_matches_compiler) {
    u32 bad = 0;
    for (u32 h = 0; h < 65536; h++) {
        _Float16 x; u16 hh = (u16)h; memcpy(&x, &hh, 2);
        f32 want = (f32)x, got = f32_from_f16(hh);
        if (want != want) { if (got == got) bad++; continue; }
        if (memcmp(&want, &got, 4) != 0) bad++;
    }
    CHECKF(bad == 0, "%u of 65536 halves widen differently", bad);
    u32 seed = 1234567; bad = 0;
    for (int i = 0; i < 200000; i++) {
        seed = seed * 1664525u + 1013904223u;
        u32 bits = seed; f32 f; memcpy(&f, &bits, 4);
        if (f != f) continue;
        _Float16 x = (_Float16)f; u16 want; memcpy(&want, &x, 2);
        if (f16_from_f32(f) != want) bad++;
    }
    CHECKF(bad == 0, "%u of 200000 random floats round differently", bad);
}

TEST(stb_sprintf_formats_floats) {
    char b[64];
    fmt_buf(b, sizeof b, "%.3f %d %s", 1.5, -7, "x");
    CHECK(strcmp(b, "1.500 -7 x") == 0);
}
