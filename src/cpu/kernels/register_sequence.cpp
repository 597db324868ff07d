// Registration of the sequence op kernels (see kernel.h).
#include "kernel.h"

void lm_cpu_register_sequence_ops(struct lm_cpu_op_table * /*table*/) {
}
