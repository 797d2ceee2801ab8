/* matmul_test.c — weight-type kernels against the CPU dequantizer and f64 references. */
