#!/usr/bin/env bash
# cli_engine_door.sh — the engine is cli/'s only door to the forward pass (issue 31). In cli/*.c:
#   1. no name of a module below models/engine.h that runs the model: kernels/ (vk_, op_, kernel_,
#      kdef_, spv_ and the Vulkan API: Vk*/VK_*/vk*()), models/transformer.h and xf_debug.c (xf_, Xf*),
#      models/reference.h (ref_, Ref*) — types, calls and globals alike (vk_phase, xf_debug, ...);
#      and no #include of their headers;
#   2. no field of the engine's own state touched (.vk .xf .ref .ref_arena .vk_up .xf_up .chained .gtok),
#      no field of an Engine variable (g, r->g) assigned, no eng_ global assigned (options are arguments).
# Model files, tokenizer, chat, sampler, JSON, plan and gen-model (modules cli/ may use) are not checked.
# Each finding is printed with its file and line. The patterns are first tried on known offenders, so a
# broken pattern fails instead of passing.
set -u
cd "$(dirname "$0")/../.."
fail=0

below='\b(vk|xf|op|kernel|kdef|spv|ref)_[A-Za-z0-9_]+|\b(Vk|Xf|Ref|Kernel|Kdef|Op)([A-Z][A-Za-z0-9_]*)?\b|\bVK_[A-Z0-9_]+|\bvk[A-Z][A-Za-z0-9]*[[:space:]]*\(|#[[:space:]]*include[[:space:]]*"(kernels/|models/(transformer|reference|xf_))'
fields='(\.|->)(vk|xf|ref|ref_arena|vk_up|xf_up|chained|gtok)\b'
writes='(\b(g|r->g|r\.g)(\.|->)[a-z_]+(\[[^]]*\])?|\beng_[a-z_]+)[[:space:]]*([-+*/|&^]|<<|>>)?=[^=]'

# the patterns catch what they are meant to (each sample must match its pattern)
while IFS='|' read -r pat sample; do
    echo "$sample" | grep -qE "${!pat}" || { echo "pattern '$pat' misses '$sample' (the check is broken)"; fail=1; }
done <<'EOF'
below|    if (!vk_init(&vk, &e)) return 1;
below|    Vk vk;
below|    Xf xp, xd; XfDesc dp, dd;
below|    xf_paths_print(&dd, c->n_layer, &vk);
below|    vk_phase = VK_PHASE_DECODE;
below|    tok = (i32)ref_argmax(eng_last_logits(g), nv);
below|    vkDeviceWaitIdle(dev);
below|#include "models/transformer.h"
fields|    u32 n = r->g.xf.t_max;
fields|    if (g->vk_up) x();
writes|    g.chain = false;
writes|    r->g.pos += 3;
writes|    eng_prefill_batch = (u32)b;
EOF
# ... and leave alone what cli/ may use
for ok in 'eng_open_device(&g, &e)' 'EngCaps k = eng_caps(&g);' 'u32 nv = g->n_vocab;' 'if (g.pos == 0) x();' 'tok_encode(t, s, n)' 'samp_init(&s)' 'if (eng_pos(&g) == 0) x();' 'bool ok = eng_feed(&g, t, n, 0, &e);'; do
    echo "$ok" | grep -qE "$below|$fields|$writes" && { echo "a pattern matches the allowed '$ok' (the check is broken)"; fail=1; }
done

hits=$(grep -nE "$below" cli/*.c)
[ -z "$hits" ] || { echo "cli/ names modules below models/engine.h (use the engine's API, or add to it):"; echo "$hits"; fail=1; }
hits=$(grep -nE "$fields" cli/*.c)
[ -z "$hits" ] || { echo "cli/ reaches into the engine's state:"; echo "$hits"; fail=1; }
hits=$(grep -nE "$writes" cli/*.c)
[ -z "$hits" ] || { echo "cli/ writes engine state (a field of an Engine, or an eng_ global):"; echo "$hits"; fail=1; }

n=$(ls cli/*.c | wc -l)
[ "$n" -ge 8 ] || { echo "only $n files in cli/ (the glob is broken?)"; fail=1; }
[ $fail = 0 ] && echo "cli_engine_door: $n files in cli/ reach the forward pass only through models/engine.h"
exit $fail
