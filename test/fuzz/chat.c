/* chat.c — fuzz target: the chat-template renderer, every family, multi-turn, every role, with
   exact-size and too-small output buffers. Input: byte 0 = family (mod CHAT_COUNT), the
   generation prompt flag (bit3) and the thinking switch (bits 4-5 mod 3); then texts separated by NUL bytes, each preceded by a role byte
   (mod 3: system, user, assistant). */
#include "fuzz.h"

static void fuzz_chat(const u8 *data, size_t n) {
    if (n < 1) return;
    ChatFamily f = (ChatFamily)((data[0] & 7) % CHAT_COUNT);
    ChatOpts o = { .add_generation_prompt = (data[0] & 8) != 0, .think = (ChatThink)(((data[0] >> 4) & 3) % 3), .date = "26 Jul 2024" };
    static const char *const roles[] = { "system", "user", "assistant" };
    char *copy = (char *)malloc(n + 1);         /* NUL-terminated texts */
    memcpy(copy, data, n); copy[n] = 0;
    ChatTurn turns[64];
    u32 nt = 0;
    for (size_t i = 1; i < n && nt < ARRAY_COUNT(turns);) {
        const char *role = roles[(u8)copy[i] % 3];
        i++;
        turns[nt++] = (ChatTurn){ role, copy + i };
        i += strlen(copy + i) + 1;
    }
    u64 need = chat_render_turns(f, turns, nt, &o, 0, 0);
    char *full = (char *)malloc(need + 1);
    u64 k = chat_render_turns(f, turns, nt, &o, full, need + 1);
    FUZZ_ASSERT(k == need && full[need] == 0);
    u64 half = need / 2;
    char *part = (char *)malloc(half ? half : 1);
    k = chat_render_turns(f, turns, nt, &o, part, half);
    FUZZ_ASSERT(k == need);
    FUZZ_ASSERT(!half || !memcmp(part, full, half - 1));
    if (nt == 2 || nt == 1) {               /* the single-turn API agrees when the turns are (system,) user */
        const char *sys = nt == 2 && !strcmp(turns[0].role, "system") ? turns[0].text : 0;
        const ChatTurn *u = &turns[nt - 1];
        if (!strcmp(u->role, "user") && (nt == 1 || sys)) {
            u64 k1 = chat_render(f, 0, sys, u->text, 0, 0);
            FUZZ_ASSERT(k1 == chat_render_turns(f, turns, nt, 0, 0, 0));
        }
    }
    free(part); free(full); free(copy);
}

#ifndef FUZZ_IN_TESTS
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) { fuzz_chat(data, n); return 0; }
#endif
