// Convolution helpers and resampling (tier 2, speech and vision models):
// IM2COL, POOL_1D/2D, UPSCALE, PAD, ARANGE, TIMESTEP_EMBEDDING.
// Layouts: docs/OPS.md.

#include "ops_common.h"

#include <cmath>

using namespace lmggml::ops;

namespace {

// Output length of a convolution (integer arithmetic, as ggml).
int64_t conv_out_size(int64_t in, int64_t k, int s, int p, int d) { return (in + 2 * p - d * (k - 1) - 1) / s + 1; }

// Output length of a pooling window; ggml evaluates it in float (padding
// may be fractional for pool_2d) and truncates.
int64_t pool_out_size(int64_t in, int k, int s, float p) {
    return (int64_t) (((float) in + 2 * p - (float) k) / (float) s + 1);
}

bool valid_pool_op(lm_ggml_op_pool op) { return op == LM_GGML_OP_POOL_MAX || op == LM_GGML_OP_POOL_AVG; }

} // namespace

extern "C" {

// a: kernel, only its shape is used — 2D: (KW, KH, IC, OC), 1D: (K, IC, OC)
// b: input — 2D: (IW, IH, IC, N), 1D: (IL, IC, N)
// result — 2D: (IC*KH*KW, OW, OH, N), 1D: (IC*K, OL, N, 1), type dst_type
lm_ggml_tensor * lm_ggml_im2col(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_tensor * b, int s0, int s1, int p0,
                                int p1, int d0, int d1, bool is_2D, lm_ggml_type dst_type) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}, {"b", b}})) {
        return nullptr;
    }
    if (is_2D) {
        LM_GGML_ASSERT(a->ne[2] == b->ne[2]);
    } else {
        LM_GGML_ASSERT(b->ne[1] == a->ne[1]);
        LM_GGML_ASSERT(b->ne[3] == 1);
    }
    LM_GGML_ASSERT(s0 != 0 && (!is_2D || s1 != 0)); // strides divide
    const int64_t OH = is_2D ? conv_out_size(b->ne[1], a->ne[1], s1, p1, d1) : 0;
    const int64_t OW = conv_out_size(b->ne[0], a->ne[0], s0, p0, d0);
    LM_GGML_ASSERT((!is_2D || OH > 0) && "b too small compared to a");
    LM_GGML_ASSERT(OW > 0 && "b too small compared to a");

    const int64_t ne[4] = {
        is_2D ? a->ne[2] * a->ne[1] * a->ne[0] : a->ne[1] * a->ne[0],
        OW,
        is_2D ? OH : b->ne[2],
        is_2D ? b->ne[3] : 1,
    };
    lm_ggml_tensor * r = lm_ggml_new_tensor(ctx, dst_type, 4, ne);
    if (r == nullptr) {
        return nullptr;
    }
    const int32_t params[7] = {s0, s1, p0, p1, d0, d1, is_2D ? 1 : 0};
    lm_ggml_set_op_params(r, params, sizeof(params));
    return finish(r, LM_GGML_OP_IM2COL, a, b);
}

lm_ggml_tensor * lm_ggml_pool_1d(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_op_pool op, int k0, int s0,
                                 int p0) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}})) {
        return nullptr;
    }
    if (!valid_pool_op(op)) {
        LM_GGML_LOG_ERROR("%s: op: %d is not an lm_ggml_op_pool\n", __func__, (int) op);
        return nullptr;
    }
    LM_GGML_ASSERT(s0 != 0);
    const int64_t ne[4] = {pool_out_size(a->ne[0], k0, s0, (float) p0), a->ne[1], a->ne[2], a->ne[3]};
    lm_ggml_tensor * r = lm_ggml_new_tensor(ctx, LM_GGML_TYPE_F32, 4, ne);
    if (r == nullptr) {
        return nullptr;
    }
    const int32_t params[4] = {(int32_t) op, k0, s0, p0};
    lm_ggml_set_op_params(r, params, sizeof(params));
    return finish(r, LM_GGML_OP_POOL_1D, a);
}

lm_ggml_tensor * lm_ggml_pool_2d(lm_ggml_context * ctx, lm_ggml_tensor * a, lm_ggml_op_pool op, int k0, int k1, int s0,
                                 int s1, float p0, float p1) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}})) {
        return nullptr;
    }
    if (!valid_pool_op(op)) {
        LM_GGML_LOG_ERROR("%s: op: %d is not an lm_ggml_op_pool\n", __func__, (int) op);
        return nullptr;
    }
    LM_GGML_ASSERT(s0 != 0 && s1 != 0);
    const int64_t ne[4] = {pool_out_size(a->ne[0], k0, s0, p0), pool_out_size(a->ne[1], k1, s1, p1), a->ne[2],
                           a->ne[3]};
    lm_ggml_tensor * r = lm_ggml_new_tensor(ctx, LM_GGML_TYPE_F32, 4, ne);
    if (r == nullptr) {
        return nullptr;
    }
    // ggml stores the paddings as truncated integers, not as float bits
    const int32_t params[7] = {(int32_t) op, k0, k1, s0, s1, (int32_t) p0, (int32_t) p1};
    lm_ggml_set_op_params(r, params, sizeof(params));
    return finish(r, LM_GGML_OP_POOL_2D, a);
}

// Nearest-neighbour resize to (ne0, ne1, ne2, ne3); never shrinks.
lm_ggml_tensor * lm_ggml_upscale_ext(lm_ggml_context * ctx, lm_ggml_tensor * a, int ne0, int ne1, int ne2, int ne3) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}})) {
        return nullptr;
    }
    LM_GGML_ASSERT(a->ne[0] <= ne0);
    LM_GGML_ASSERT(a->ne[1] <= ne1);
    LM_GGML_ASSERT(a->ne[2] <= ne2);
    LM_GGML_ASSERT(a->ne[3] <= ne3);
    return finish(lm_ggml_new_tensor_4d(ctx, a->type, ne0, ne1, ne2, ne3), LM_GGML_OP_UPSCALE, a);
}

// Dims 0 and 1 grow by scale_factor.
lm_ggml_tensor * lm_ggml_upscale(lm_ggml_context * ctx, lm_ggml_tensor * a, int scale_factor) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}})) {
        return nullptr;
    }
    return lm_ggml_upscale_ext(ctx, a, (int) (a->ne[0] * scale_factor), (int) (a->ne[1] * scale_factor), (int) a->ne[2],
                               (int) a->ne[3]);
}

// Zeros appended at the end of each dimension.
lm_ggml_tensor * lm_ggml_pad(lm_ggml_context * ctx, lm_ggml_tensor * a, int p0, int p1, int p2, int p3) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"a", a}})) {
        return nullptr;
    }
    return finish(lm_ggml_new_tensor_4d(ctx, a->type, a->ne[0] + p0, a->ne[1] + p1, a->ne[2] + p2, a->ne[3] + p3),
                  LM_GGML_OP_PAD, a);
}

// Sinusoidal embeddings of timesteps (N): result (dim rounded up to even, N).
lm_ggml_tensor * lm_ggml_timestep_embedding(lm_ggml_context * ctx, lm_ggml_tensor * timesteps, int dim,
                                            int max_period) {
    if (!args_ok(__func__, {{"ctx", ctx}, {"timesteps", timesteps}})) {
        return nullptr;
    }
    const int actual_dim = dim % 2 != 0 ? dim + 1 : dim;
    lm_ggml_tensor * r = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, actual_dim, timesteps->ne[0]);
    if (r == nullptr) {
        return nullptr;
    }
    lm_ggml_set_op_params_i32(r, 0, dim);
    lm_ggml_set_op_params_i32(r, 1, max_period);
    return finish(r, LM_GGML_OP_TIMESTEP_EMBEDDING, timesteps);
}

// start, start+step, ... below stop (F32, no sources)
lm_ggml_tensor * lm_ggml_arange(lm_ggml_context * ctx, float start, float stop, float step) {
    if (!args_ok(__func__, {{"ctx", ctx}})) {
        return nullptr;
    }
    LM_GGML_ASSERT(stop > start);
    const int64_t steps = (int64_t) ceilf((stop - start) / step);
    lm_ggml_tensor * r = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, steps);
    if (r == nullptr) {
        return nullptr;
    }
    lm_ggml_set_op_params_f32(r, 0, start);
    lm_ggml_set_op_params_f32(r, 1, stop);
    lm_ggml_set_op_params_f32(r, 2, step);
    return finish(r, LM_GGML_OP_ARANGE);
}

} // extern "C"
