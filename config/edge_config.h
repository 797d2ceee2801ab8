/* edge_config.h — compile-time knobs, each with a default and its unit.
   Override with -DNAME=VALUE (build.sh passes EDGE_CFLAGS through). */
#ifndef EDGE_CONFIG_H
#define EDGE_CONFIG_H

#ifndef EDGE_HOST_ARENA_MIB
#define EDGE_HOST_ARENA_MIB 64          /* MiB: host scratch arena for tables, tokenizer, plans */
#endif

#ifndef EDGE_MAX_CTX
#define EDGE_MAX_CTX 8192               /* tokens: upper bound on -c regardless of the model's limit */
#endif

#endif
