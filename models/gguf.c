/* models/gguf.c — filled in by the models issue (GGUF reader / dequantization). */
