/* options.h — the runtime options: every environment variable edge reads, read once.

   Why: configuration lives in one place. options_load() reads the environment into edge_opt
   once at start (main in edge.c, the test runner's main); nothing else calls getenv. A flag
   that has an option (--device) sets its field; a test sets a field directly (TEST_OPTION in
   test/test.h puts it back). docs/options.md is the table of every variable: default, unit,
   what it is for, and which ones are testing aids.

   API:
     options_load()      fill edge_opt from the environment (unset or empty: the default)
     edge_opt            the options, read where they are used

   Kinds: FLAG  bool, on when set to anything but "" or "0"
          STR   the value, or 0 when unset or empty
          INT   OptInt: set (not empty) and the value as strtoll reads it (base 10)

   Knobs: none here; compile-time knobs are in config/edge_config.h. */
#ifndef EDGE_OPTIONS_H
#define EDGE_OPTIONS_H

typedef struct OptInt { bool set; i64 v; } OptInt;

#define OPT_TYPE_FLAG bool
#define OPT_TYPE_STR  const char *
#define OPT_TYPE_INT  OptInt

/* X(kind, field, variable): one line per variable, in the order of docs/options.md. */
#define EDGE_OPTIONS(X)                                                                                   \
    /* device and driver */                                                                               \
    X(STR,  vulkan_lib,        "EDGE_VULKAN_LIB")        /* path of the Vulkan loader to dlopen */          \
    X(STR,  device,            "EDGE_DEVICE")            /* physical device index (--device sets it) */     \
    X(STR,  profile,           "EDGE_PROFILE")           /* config/profiles.def name: restrict the caps */  \
    X(FLAG, no_idot,           "EDGE_NO_IDOT")           /* never the int8 dot-product lanes */             \
    X(FLAG, idot,              "EDGE_IDOT")              /* int8 lanes also where not accelerated (no f16: wq_s8) */        \
    X(FLAG, no_coopmat,        "EDGE_NO_COOPMAT")        /* never cooperative matrices */                   \
    X(FLAG, no_attn_tile,      "EDGE_NO_ATTN_TILE")      /* attn_flash where attn_tile would run */         \
    X(INT,  max_binding,       "EDGE_MAX_BINDING")       /* bytes: cap on one storage binding */            \
    X(INT,  splitk,            "EDGE_SPLITK")            /* k slices of split prefill / batch products */   \
    X(INT,  batch_tiles,       "EDGE_BATCH_TILES")       /* -np from which batched steps run the tiles */   \
    X(INT,  fence_spin_us,     "EDGE_FENCE_SPIN_US")     /* us a GPU fence is polled before sleeping */     \
    X(INT,  fence_timeout_ms,  "EDGE_FENCE_TIMEOUT_MS")  /* ms: a submit that takes longer is an error */    \
    /* pipeline cache */                                                                                  \
    X(FLAG, no_pipeline_cache, "EDGE_NO_PIPELINE_CACHE") /* neither read nor write the cache */             \
    X(STR,  xdg_cache_home,    "XDG_CACHE_HOME")         /* the cache's folder is $XDG_CACHE_HOME/edge */   \
    X(STR,  home,              "HOME")                   /* else $HOME/.cache/edge */                       \
    /* diagnostics */                                                                                     \
    X(FLAG, verbose,           "EDGE_VERBOSE")           /* notes on stderr (pipelines, cache) */           \
    X(FLAG, validation,        "EDGE_VALIDATION")        /* the Khronos validation layer */                 \
    X(FLAG, debug_names,       "EDGE_DEBUG_NAMES")       /* name Vulkan objects (debug utils) */            \
    X(FLAG, pipe_stats,        "EDGE_PIPE_STATS")        /* the driver's statistics per pipeline */         \
    /* testing aids */                                                                                    \
    X(STR,  fault,             "EDGE_FAULT")             /* NAME[:N]: the Nth matching Vulkan call fails */ \
    X(STR,  inject_nan,        "EDGE_INJECT_NAN")        /* OP:LAYER[:phase]: a NaN into that output */     \
    X(STR,  fat_perturb,       "EDGE_FAT_PERTURB")       /* edge fat: perturb this kernel */                \
    X(FLAG, fat_nondet,        "EDGE_FAT_NONDET")        /* edge fat: flip a token of one run */            \
    X(FLAG, fat_memfault,      "EDGE_FAT_MEMFAULT")      /* edge fat: corrupt one memory word */

typedef struct EdgeOptions {
#define OPT_FIELD(kind, field, name) OPT_TYPE_##kind field;
    EDGE_OPTIONS(OPT_FIELD)
#undef OPT_FIELD
} EdgeOptions;

extern EdgeOptions edge_opt;      /* all unset (the defaults) until options_load() */

void options_load(void);

#endif
