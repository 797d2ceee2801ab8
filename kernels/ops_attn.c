/* ops_attn.c — norms, rope, KV store, attention, GLU, softcap, argmax (see ops.h). */
