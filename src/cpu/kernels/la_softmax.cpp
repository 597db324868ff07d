// SOFT_MAX and DIAG_MASK_INF / DIAG_MASK_ZERO, row by row over dim 0.
//
// SOFT_MAX: y = softmax(x * scale + slope * mask), op_params f32[0]=scale,
// f32[1]=max_bias. The mask (F32 or F16, one matrix (ne0, >= ne1)) is
// broadcast over dims 2, 3: row i1 of every head uses mask row i1. With
// max_bias > 0 each head h (dim 2) gets the ALiBi slope ggml uses:
//   n_log2 = 2^floor(log2(n_head)), m0 = 2^(-max_bias/n_log2), m1 = 2^(-max_bias/2/n_log2)
//   slope  = h < n_log2 ? m0^(h+1) : m1^(2(h - n_log2) + 1)
#include "la_ops.h"
#include "la_common.h"
#include "../arch/kernels.h"

namespace lmggml::cpu::la {
namespace {

struct Alibi {
    uint32_t n_log2;
    float m0, m1;
    bool on;

    float slope(uint32_t h) const {
        if (!on) {
            return 1.0f;
        }
        return h < n_log2 ? powf(m0, (float) (h + 1)) : powf(m1, (float) (2 * (h - n_log2) + 1));
    }
};

Alibi alibi_of(float max_bias, int64_t n_head) {
    Alibi a{};
    a.n_log2 = 1u << (uint32_t) floor(log2((double) n_head));
    a.m0 = powf(2.0f, -(max_bias) / (float) a.n_log2);
    a.m1 = powf(2.0f, -(max_bias / 2.0f) / (float) a.n_log2);
    a.on = max_bias > 0.0f;
    return a;
}

void diag_mask(const lm_cpu_params * params, lm_ggml_tensor * dst, float value) {
    const lm_ggml_tensor * src = dst->src[0];
    const int64_t n_past = lm_ggml_get_op_params_i32(dst, 0);
    const int64_t nc = src->ne[0];
    const int64_t ne1 = src->ne[1];
    const int64_t ne2 = src->ne[2];

    const Range r = split(ne1 * ne2 * src->ne[3], params->ith, params->nth);
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const int64_t i3 = ir / (ne1 * ne2);
        const int64_t i2 = (ir / ne1) % ne2;
        const int64_t j = ir % ne1;
        const char * x = row_of(src, j, i2, i3);
        float * y = (float *) row_of(dst, j, i2, i3);
        if ((const char *) y != x) {
            memmove(y, x, (size_t) nc * sizeof(float));
        }
        // column i of row j is masked when i > n_past + j
        for (int64_t i = std::max<int64_t>(0, n_past + j + 1); i < nc; ++i) {
            y[i] = value;
        }
    }
}

} // namespace

bool soft_max_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * src = dst->src[0];
    const lm_ggml_tensor * mask = dst->src[1];
    if (src == nullptr || src->type != LM_GGML_TYPE_F32 || dst->type != LM_GGML_TYPE_F32 ||
        !lm_ggml_are_same_shape(src, dst) || src->nb[0] != sizeof(float) || dst->nb[0] != sizeof(float)) {
        return false;
    }
    if (mask == nullptr) {
        return true; // no mask: ALiBi has nothing to scale
    }
    return (mask->type == LM_GGML_TYPE_F32 || mask->type == LM_GGML_TYPE_F16) &&
           mask->nb[0] == lm_ggml_type_size(mask->type) && mask->ne[0] == src->ne[0] && mask->ne[1] >= src->ne[1] &&
           mask->ne[2] == 1 && mask->ne[3] == 1;
}

size_t soft_max_work_size(const lm_ggml_tensor * dst, int n_threads) {
    return (size_t) n_threads * pad_line((size_t) dst->ne[0] * sizeof(float));
}

void soft_max_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * src = dst->src[0];
    const lm_ggml_tensor * mask = dst->src[1];
    const float scale = lm_ggml_get_op_params_f32(dst, 0);
    const Alibi alibi = alibi_of(lm_ggml_get_op_params_f32(dst, 1), src->ne[2]);

    const int64_t nc = src->ne[0];
    const int64_t ne1 = src->ne[1];
    const int64_t ne2 = src->ne[2];
    float * wp = (float *) lm_cpu_thread_scratch(params); // nc floats

    // the row goes through the CPU's vector kernels (arch/kernels.h): scaled
    // and masked into the scratch row, exp and sum into dst, then normalized
    const arch::VecMath & vm = arch::kernels().math;
    const Range r = split(ne1 * ne2 * src->ne[3], params->ith, params->nth);
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const int64_t i3 = ir / (ne1 * ne2);
        const int64_t i2 = (ir / ne1) % ne2;
        const int64_t i1 = ir % ne1;
        const float * x = (const float *) row_of(src, i1, i2, i3);
        const char * m = mask ? (const char *) mask->data + i1 * mask->nb[1] : nullptr;
        const bool h = mask && mask->type == LM_GGML_TYPE_F16;
        const float max = vm.scale_mask_max(nc, x, scale, m && !h ? (const float *) m : nullptr,
                                            h ? (const uint16_t *) m : nullptr, alibi.slope((uint32_t) i2), wp);
        float * y = (float *) row_of(dst, i1, i2, i3);
        const float sum = vm.exp_sum(nc, wp, max, y);
        vm.scale(nc, y, 1.0f / sum);
    }
}

bool diag_mask_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * src = dst->src[0];
    return src != nullptr && src->type == LM_GGML_TYPE_F32 && dst->type == LM_GGML_TYPE_F32 &&
           lm_ggml_are_same_shape(src, dst) && src->nb[0] == sizeof(float) && dst->nb[0] == sizeof(float);
}

void diag_mask_inf_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) { diag_mask(params, dst, -INFINITY); }

void diag_mask_zero_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) { diag_mask(params, dst, 0.0f); }

} // namespace lmggml::cpu::la
