// Scalar twins of the F16 attention kernels (kernels.h AttnF16): plain loops
// in float, the sums in index order.
#include "ref.h"

#include "../../core/ggml-impl.h" // fp16 conversion

#include <cstring>

namespace lmggml::cpu::arch::ref {
namespace {

float half_at(const char * row, int64_t c) {
    lm_ggml_fp16_t h;
    std::memcpy(&h, row + c * (int64_t) sizeof(h), sizeof(h));
    return lm_ggml_compute_fp16_to_fp32(h);
}

} // namespace

void attn_f16_scores(int64_t d, int64_t n, const void * k, size_t ldk, const float * q, int64_t g, float * s) {
    for (int64_t j = 0; j < n; ++j) {
        const char * row = static_cast<const char *>(k) + j * (int64_t) ldk;
        for (int64_t i = 0; i < g; ++i) {
            float sum = 0.0f;
            for (int64_t c = 0; c < d; ++c) sum += q[i * d + c] * half_at(row, c);
            s[i * n + j] = sum;
        }
    }
}

void attn_f16_accumulate(int64_t d, int64_t n, const void * v, size_t ldv, const float * p, int64_t g, float * acc) {
    for (int64_t j = 0; j < n; ++j) {
        const char * row = static_cast<const char *>(v) + j * (int64_t) ldv;
        for (int64_t i = 0; i < g; ++i) {
            const float w = p[i * n + j];
            for (int64_t c = 0; c < d; ++c) acc[i * d + c] += w * half_at(row, c);
        }
    }
}

} // namespace lmggml::cpu::arch::ref
