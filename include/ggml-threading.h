#pragma once

// lmggml: the library-wide critical section (as ggml's ggml-threading.h).
// One process-wide lock for rare one-time work (building quantization grids,
// lazy global tables) that backends and the library must not run twice at
// once. Not recursive: a thread that holds it must not take it again.

#include "ggml.h"

#ifdef __cplusplus
extern "C" {
#endif

LM_GGML_API void lm_ggml_critical_section_start(void);
LM_GGML_API void lm_ggml_critical_section_end(void);

#ifdef __cplusplus
}
#endif
