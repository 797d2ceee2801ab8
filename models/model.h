/* model.h — model configs (config/models.def) and matching a GGUF against them.
   Filled in by the models issue. */
#ifndef EDGE_MODEL_H
#define EDGE_MODEL_H
#endif
