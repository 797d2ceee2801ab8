/* reference.c — scalar CPU forward pass (the oracle). Filled in by the models issue. */
