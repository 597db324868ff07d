// Tier-2 generators and GROUP_NORM: ARANGE, TIMESTEP_EMBEDDING, GROUP_NORM.
// Float expressions are evaluated in the same order and precision as ggml
// 1.4.1 so results match it to the last bit where the libm agrees.

#include "ew_common.h"
#include "ew_ops.h"

#include <cmath>

namespace lm_cpu_ew {

// ---------------------------------------------------------------- ARANGE
// f32[0]=start [1]=stop [2]=step; dst[i] = start + step*i (no src).
void arange_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const float start = lm_ggml_get_op_params_f32(dst, 0);
    const float step = lm_ggml_get_op_params_f32(dst, 2);
    const Range r = split(dst->ne[0], params->ith, params->nth);
    char * d = static_cast<char *>(dst->data);
    for (int64_t i = r.begin; i < r.end; ++i) {
        store_one(dst->type, d + i * dst->nb[0], start + step * static_cast<float>(i));
    }
}

bool arange_supports(const lm_ggml_tensor * dst) {
    return is_float_type(dst->type) && dst->ne[1] == 1 && dst->ne[2] == 1 && dst->ne[3] == 1;
}

// ---------------------------------------------------------------- TIMESTEP_EMBEDDING
// i32[0]=dim, i32[1]=max_period; src0 (n) timesteps, dst (dim rounded up to
// even, n). Row i: [cos(t*f_0) .. cos(t*f_{h-1}), sin(t*f_0) .. sin(t*f_{h-1})]
// with h = dim/2, f_j = exp(-ln(max_period)*j/h); the odd dim's extra column
// is 0.
void timestep_embedding_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * t = dst->src[0];
    const int dim = lm_ggml_get_op_params_i32(dst, 0);
    const int half = dim / 2;
    const float neg_log_period = -std::log(static_cast<float>(lm_ggml_get_op_params_i32(dst, 1)));
    const Range r = split(t->ne[0], params->ith, params->nth);
    for (int64_t i = r.begin; i < r.end; ++i) {
        const float ts = load_one(t->type, static_cast<const char *>(t->data) + i * t->nb[0]);
        char * row = static_cast<char *>(dst->data) + i * dst->nb[1];
        for (int j = 0; j < half; ++j) {
            const float freq = std::exp(neg_log_period * static_cast<float>(j) / static_cast<float>(half));
            const float arg = ts * freq;
            store_one(dst->type, row + j * dst->nb[0], std::cos(arg));
            store_one(dst->type, row + (j + half) * dst->nb[0], std::sin(arg));
        }
        for (int64_t j = 2 * half; j < dst->ne[0]; ++j) {
            store_one(dst->type, row + j * dst->nb[0], 0.0f);
        }
    }
}

bool timestep_embedding_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * t = dst->src[0];
    const int dim = lm_ggml_get_op_params_i32(dst, 0);
    return t && is_float_type(t->type) && is_float_type(dst->type) && dim >= 0 && dst->ne[0] == dim + (dim % 2) &&
           dst->ne[1] == t->ne[0] && dst->ne[2] == 1 && dst->ne[3] == 1 && lm_ggml_get_op_params_i32(dst, 1) > 0;
}

// ---------------------------------------------------------------- GROUP_NORM
// i32[0]=n_groups, f32[1]=eps. Channels (dim 2) form n_groups groups of
// ceil(C/n_groups) channels (the last may be short); each (group, i3) block is
// normalised to zero mean and unit variance: y = (x - mean) / sqrt(var + eps).
namespace {

struct GroupBlock {
    const lm_ggml_tensor * src;
    int64_t c0, c1, i3;
};

// Calls fn(channel, i1) for every row of one (group, i3) block.
template <class F> void for_block_rows(const GroupBlock & g, const F & fn) {
    for (int64_t c = g.c0; c < g.c1; ++c) {
        for (int64_t i1 = 0; i1 < g.src->ne[1]; ++i1) {
            fn(c, i1);
        }
    }
}

} // namespace

void group_norm_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    const int64_t n_groups = lm_ggml_get_op_params_i32(dst, 0);
    const float eps = lm_ggml_get_op_params_f32(dst, 1);
    const int64_t C = a->ne[2];
    const int64_t per = (C + n_groups - 1) / n_groups;
    const int64_t ne00 = a->ne[0];
    const size_t anb0 = a->nb[0];
    const size_t dnb0 = dst->nb[0];

    float buf[kChunk];
    const Range r = split(n_groups * a->ne[3], params->ith, params->nth);
    for (int64_t w = r.begin; w < r.end; ++w) {
        const int64_t g = w % n_groups;
        const GroupBlock blk{a, g * per, std::min((g + 1) * per, C), w / n_groups};
        if (blk.c0 >= blk.c1) {
            continue; // more groups than channels: nothing in this one
        }
        const int64_t count = ne00 * a->ne[1] * (blk.c1 - blk.c0);

        double sum = 0.0;
        for_block_rows(blk, [&](int64_t c, int64_t i1) {
            const char * x = row_ptr(a, i1, c, blk.i3);
            for (int64_t k0 = 0; k0 < ne00; k0 += kChunk) {
                const int64_t m = std::min<int64_t>(kChunk, ne00 - k0);
                load_run(a->type, x + k0 * anb0, anb0, m, buf);
                for (int64_t k = 0; k < m; ++k) sum += static_cast<double>(buf[k]);
            }
        });
        const float mean = static_cast<float>(sum / static_cast<double>(count));

        double sum2 = 0.0;
        for_block_rows(blk, [&](int64_t c, int64_t i1) {
            const char * x = row_ptr(a, i1, c, blk.i3);
            for (int64_t k0 = 0; k0 < ne00; k0 += kChunk) {
                const int64_t m = std::min<int64_t>(kChunk, ne00 - k0);
                load_run(a->type, x + k0 * anb0, anb0, m, buf);
                for (int64_t k = 0; k < m; ++k) {
                    const float v = buf[k] - mean;
                    sum2 += static_cast<double>(v * v);
                }
            }
        });
        const float variance = static_cast<float>(sum2 / static_cast<double>(count));
        const float scale = 1.0f / std::sqrt(variance + eps);

        for_block_rows(blk, [&](int64_t c, int64_t i1) {
            const char * x = row_ptr(a, i1, c, blk.i3);
            char * y = row_ptr_mut(dst, i1, c, blk.i3);
            for (int64_t k0 = 0; k0 < ne00; k0 += kChunk) {
                const int64_t m = std::min<int64_t>(kChunk, ne00 - k0);
                load_run(a->type, x + k0 * anb0, anb0, m, buf);
                for (int64_t k = 0; k < m; ++k) buf[k] = (buf[k] - mean) * scale;
                store_run(dst->type, y + k0 * dnb0, dnb0, m, buf);
            }
        });
    }
}

bool group_norm_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    return a && is_float_type(a->type) && is_float_type(dst->type) && same_shape(a, dst) &&
           lm_ggml_get_op_params_i32(dst, 0) > 0;
}

} // namespace lm_cpu_ew
