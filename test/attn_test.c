/* attn_test.c — rope, attention, activations, norms, sampling kernels against C references. */
