// The I-quant grids and sign tables: constants of the GGUF formats. Their values
// are written once, in the public include/ggml-common-tables.h, which plugins get
// as static arrays through ggml-common.h; the macros below turn the same lines
// into the library's tables (external, in lm_quant::iq). LM_GGML_COMMON_IMPL_C
// picks the header's iq1s_grid (int8 values) rather than C++'s iq1s_grid_gpu.
#include "q_iq_grids.h"

namespace lm_quant::iq {

#define LM_GGML_TABLE_BEGIN(type, name, size) const type name[size] = {
#define LM_GGML_TABLE_END() };
#define LM_GGML_COMMON_IMPL_C
#include "ggml-common-tables.h"
#undef LM_GGML_COMMON_IMPL_C
#undef LM_GGML_TABLE_END
#undef LM_GGML_TABLE_BEGIN

static_assert(NGRID_IQ1S == sizeof(iq1s_grid) / sizeof(iq1s_grid[0]), "iq1s_grid has NGRID_IQ1S entries");

} // namespace lm_quant::iq
