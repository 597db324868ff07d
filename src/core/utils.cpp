// Small utilities of ggml's public surface: processor clock, UTF-8 fopen,
// context object dumps, per-element type size, file type -> tensor type.
#include "ggml-impl.h"
#include "context.h"

#include <cerrno>
#include <cstdio>
#include <ctime>

extern "C" int64_t lm_ggml_cycles(void) {
    return (int64_t) std::clock(); // processor time of the process, in clock ticks
}

extern "C" int64_t lm_ggml_cycles_per_ms(void) { return (int64_t) (CLOCKS_PER_SEC / 1000); }

#if defined(_WIN32)
#include <windows.h>
#include <vector>

namespace {
// UTF-8 -> UTF-16 for _wfopen; empty on invalid input.
std::vector<wchar_t> widen(const char * s) {
    const int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, nullptr, 0);
    std::vector<wchar_t> w(n > 0 ? (size_t) n : 0);
    if (n > 0 && MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, w.data(), n) != n) {
        w.clear();
    }
    return w;
}
} // namespace
#endif

extern "C" FILE * lm_ggml_fopen(const char * fname, const char * mode) {
    if (fname == nullptr || mode == nullptr) {
        lm_ggml_null_arg("lm_ggml_fopen");
        return nullptr;
    }
#if defined(_WIN32)
    std::vector<wchar_t> wname = widen(fname);
    std::vector<wchar_t> wmode = widen(mode);
    if (wname.empty() || wmode.empty()) {
        errno = EINVAL;
        return nullptr;
    }
    return _wfopen(wname.data(), wmode.data());
#else
    return std::fopen(fname, mode); // POSIX paths are bytes: UTF-8 passes through
#endif
}

extern "C" void lm_ggml_print_object(const struct lm_ggml_object * obj) {
    if (obj == nullptr) {
        lm_ggml_null_arg("lm_ggml_print_object");
        return;
    }
    LM_GGML_LOG_INFO(" - lm_ggml_object: type = %d, offset = %zu, size = %zu, next = %p\n", (int) obj->type, obj->offs,
                     obj->size, (const void *) obj->next);
}

extern "C" void lm_ggml_print_objects(const struct lm_ggml_context * ctx) {
    if (ctx == nullptr) {
        lm_ggml_null_arg("lm_ggml_print_objects");
        return;
    }
    LM_GGML_LOG_INFO("lm_ggml_print_objects: objects in context %p:\n", (const void *) ctx);
    for (const lm_ggml_object * obj = ctx->objects_begin; obj != nullptr; obj = obj->next) {
        lm_ggml_print_object(obj);
    }
    LM_GGML_LOG_INFO("lm_ggml_print_objects: --- end ---\n");
}

extern "C" double lm_ggml_type_sizef(enum lm_ggml_type type) {
    const int64_t blck = lm_ggml_blck_size(type);
    if (blck <= 0) {
        LM_GGML_LOG_ERROR("lm_ggml_type_sizef: type %d is not a tensor type\n", (int) type);
        return 0.0;
    }
    return (double) lm_ggml_type_size(type) / (double) blck;
}

extern "C" enum lm_ggml_type lm_ggml_ftype_to_lm_ggml_type(enum lm_ggml_ftype ftype) {
    switch (ftype) {
        case LM_GGML_FTYPE_ALL_F32: return LM_GGML_TYPE_F32;
        case LM_GGML_FTYPE_MOSTLY_F16: return LM_GGML_TYPE_F16;
        case LM_GGML_FTYPE_MOSTLY_BF16: return LM_GGML_TYPE_BF16;
        case LM_GGML_FTYPE_MOSTLY_Q4_0: return LM_GGML_TYPE_Q4_0;
        case LM_GGML_FTYPE_MOSTLY_Q4_1: return LM_GGML_TYPE_Q4_1;
        case LM_GGML_FTYPE_MOSTLY_Q5_0: return LM_GGML_TYPE_Q5_0;
        case LM_GGML_FTYPE_MOSTLY_Q5_1: return LM_GGML_TYPE_Q5_1;
        case LM_GGML_FTYPE_MOSTLY_Q8_0: return LM_GGML_TYPE_Q8_0;
        case LM_GGML_FTYPE_MOSTLY_Q2_K: return LM_GGML_TYPE_Q2_K;
        case LM_GGML_FTYPE_MOSTLY_Q3_K: return LM_GGML_TYPE_Q3_K;
        case LM_GGML_FTYPE_MOSTLY_Q4_K: return LM_GGML_TYPE_Q4_K;
        case LM_GGML_FTYPE_MOSTLY_Q5_K: return LM_GGML_TYPE_Q5_K;
        case LM_GGML_FTYPE_MOSTLY_Q6_K: return LM_GGML_TYPE_Q6_K;
        case LM_GGML_FTYPE_MOSTLY_IQ2_XXS: return LM_GGML_TYPE_IQ2_XXS;
        case LM_GGML_FTYPE_MOSTLY_IQ2_XS: return LM_GGML_TYPE_IQ2_XS;
        case LM_GGML_FTYPE_MOSTLY_IQ3_XXS: return LM_GGML_TYPE_IQ3_XXS;
        case LM_GGML_FTYPE_MOSTLY_IQ1_S: return LM_GGML_TYPE_IQ1_S;
        case LM_GGML_FTYPE_MOSTLY_IQ1_M: return LM_GGML_TYPE_IQ1_M;
        case LM_GGML_FTYPE_MOSTLY_IQ4_NL: return LM_GGML_TYPE_IQ4_NL;
        case LM_GGML_FTYPE_MOSTLY_IQ4_XS: return LM_GGML_TYPE_IQ4_XS;
        case LM_GGML_FTYPE_MOSTLY_IQ3_S: return LM_GGML_TYPE_IQ3_S;
        case LM_GGML_FTYPE_MOSTLY_IQ2_S: return LM_GGML_TYPE_IQ2_S;
        case LM_GGML_FTYPE_UNKNOWN:
        case LM_GGML_FTYPE_MOSTLY_Q4_1_SOME_F16: break; // no single tensor type (ggml aborts; we answer COUNT)
    }
    LM_GGML_LOG_ERROR("lm_ggml_ftype_to_lm_ggml_type: file type %d has no single tensor type\n", (int) ftype);
    return LM_GGML_TYPE_COUNT;
}
