/* ops_matmul.c — op_get_rows and op_matmul for every weight type (see ops.h). */
