// The gradient rule of every op that has one (ggml 1.4.1's set): given the
// gradient of a node, the ops that add each source's share to that source's
// gradient. Shapes: every source's gradient has the source's shape.

#include "backward.h"

#include <cstring>

namespace lmggml::backward {

namespace {

float param_f32(const lm_ggml_tensor * t, int i) {
    float v;
    std::memcpy(&v, reinterpret_cast<const float *>(t->op_params) + i, sizeof(v));
    return v;
}

bool unary_has_rule(lm_ggml_unary_op op) {
    switch (op) {
        case LM_GGML_UNARY_OP_ABS:
        case LM_GGML_UNARY_OP_SGN:
        case LM_GGML_UNARY_OP_NEG:
        case LM_GGML_UNARY_OP_STEP:
        case LM_GGML_UNARY_OP_RELU:
        case LM_GGML_UNARY_OP_SILU:
        case LM_GGML_UNARY_OP_EXP: return true;
        default: return false;
    }
}

} // namespace

bool ignores_src(const lm_ggml_tensor * node, int j) {
    switch (node->op) {
        case LM_GGML_OP_IM2COL: // the kernel is only a shape
        case LM_GGML_OP_IM2COL_BACK: return j == 0;
        case LM_GGML_OP_UNARY: {
            const lm_ggml_unary_op u = lm_ggml_get_unary_op(node);
            return j == 0 && (u == LM_GGML_UNARY_OP_SGN || u == LM_GGML_UNARY_OP_STEP); // piecewise constant
        }
        case LM_GGML_OP_CPY:      // the destination is overwritten
        case LM_GGML_OP_GET_ROWS: // row indices
        case LM_GGML_OP_GET_ROWS_BACK:
        case LM_GGML_OP_ROPE: // positions
            return j == 1;
        default: return false;
    }
}

const char * missing_rule(const lm_ggml_tensor * node, const bool need[LM_GGML_MAX_SRC]) {
    switch (node->op) {
        case LM_GGML_OP_NONE:
        case LM_GGML_OP_DUP:
        case LM_GGML_OP_ADD:
        case LM_GGML_OP_ADD1:
        case LM_GGML_OP_ACC:
        case LM_GGML_OP_SUB:
        case LM_GGML_OP_MUL:
        case LM_GGML_OP_DIV:
        case LM_GGML_OP_SQR:
        case LM_GGML_OP_SQRT:
        case LM_GGML_OP_LOG:
        case LM_GGML_OP_SIN:
        case LM_GGML_OP_COS:
        case LM_GGML_OP_SUM:
        case LM_GGML_OP_SUM_ROWS:
        case LM_GGML_OP_MEAN:
        case LM_GGML_OP_REPEAT:
        case LM_GGML_OP_REPEAT_BACK:
        case LM_GGML_OP_RMS_NORM:
        case LM_GGML_OP_MUL_MAT:
        case LM_GGML_OP_SCALE:
        case LM_GGML_OP_SET:
        case LM_GGML_OP_CPY:
        case LM_GGML_OP_CONT:
        case LM_GGML_OP_RESHAPE:
        case LM_GGML_OP_VIEW:
        case LM_GGML_OP_PERMUTE:
        case LM_GGML_OP_TRANSPOSE:
        case LM_GGML_OP_GET_ROWS:
        case LM_GGML_OP_DIAG_MASK_INF:
        case LM_GGML_OP_DIAG_MASK_ZERO:
        case LM_GGML_OP_IM2COL:
        case LM_GGML_OP_POOL_2D: return nullptr;
        case LM_GGML_OP_SOFT_MAX: return need[1] ? "no gradient rule for the soft_max mask" : nullptr;
        case LM_GGML_OP_ROPE: return need[2] ? "no gradient rule for rope frequency factors" : nullptr;
        case LM_GGML_OP_CROSS_ENTROPY_LOSS: return need[1] ? "no gradient rule for cross_entropy_loss labels" : nullptr;
        case LM_GGML_OP_UNARY:
            return unary_has_rule(lm_ggml_get_unary_op(node)) ? nullptr : "no gradient rule for this unary op";
        default: return "no gradient rule for this op";
    }
}

void Builder::apply(lm_ggml_tensor * node, lm_ggml_tensor * grad) {
    lm_ggml_context * c = ctx_;
    lm_ggml_tensor * s0 = node->src[0];
    lm_ggml_tensor * s1 = node->src[1];
    lm_ggml_tensor * s2 = node->src[2];
    const bool n0 = s0 && needs(s0);
    const bool n1 = s1 && needs(s1);

    switch (node->op) {
        case LM_GGML_OP_DUP:
        case LM_GGML_OP_CPY:  // y = s0 (s1 is only the destination)
        case LM_GGML_OP_CONT: // the same values, possibly in another shape (cpy, cont_4d)
            if (n0) {
                lm_ggml_tensor * d = grad;
                if (!lm_ggml_are_same_shape(d, s0))
                    d = lm_ggml_reshape(c, lm_ggml_is_contiguous(d) ? d : lm_ggml_cont(c, d), s0);
                add(s0, d);
            }
            break;
        case LM_GGML_OP_ADD:
            if (n0) add(s0, grad);
            if (n1) add(s1, lm_ggml_are_same_shape(s0, s1) ? grad : lm_ggml_repeat_back(c, grad, s1));
            break;
        case LM_GGML_OP_ADD1:
            if (n0) add(s0, grad);
            // s1 is added to every element: its gradient is the sum (ggml 1.4.1
            // takes the mean here, which is not the derivative)
            if (n1) add(s1, lm_ggml_sum(c, grad));
            break;
        case LM_GGML_OP_ACC: {
            if (n0) add(s0, grad);
            if (n1) {
                const int32_t * p = node->op_params;
                lm_ggml_tensor * region = lm_ggml_view_4d(c, grad, s1->ne[0], s1->ne[1], s1->ne[2], s1->ne[3],
                                                          (size_t) p[0], (size_t) p[1], (size_t) p[2], (size_t) p[3]);
                add(s1, lm_ggml_reshape(c, lm_ggml_cont(c, region), s1));
            }
        } break;
        case LM_GGML_OP_SUB:
            if (n0) add(s0, grad);
            if (n1) sub(s1, lm_ggml_are_same_shape(s0, s1) ? grad : lm_ggml_repeat_back(c, grad, s1));
            break;
        case LM_GGML_OP_MUL:
            if (n0) add(s0, lm_ggml_mul(c, grad, s1));
            if (n1) {
                lm_ggml_tensor * d = lm_ggml_mul(c, s0, grad);
                add(s1, lm_ggml_are_same_shape(s0, s1) ? d : lm_ggml_repeat_back(c, d, s1));
            }
            break;
        case LM_GGML_OP_DIV: // y = a/b: da = g/b, db = -g*y/b
            if (n0) add(s0, lm_ggml_div(c, grad, s1));
            if (n1) {
                lm_ggml_tensor * d = lm_ggml_mul(c, grad, lm_ggml_div(c, node, s1));
                sub(s1, lm_ggml_are_same_shape(s0, s1) ? d : lm_ggml_repeat_back(c, d, s1));
            }
            break;
        case LM_GGML_OP_SQR:
            if (n0) add(s0, lm_ggml_scale(c, lm_ggml_mul(c, s0, grad), 2.0f));
            break;
        case LM_GGML_OP_SQRT: // d sqrt(x) = 1 / (2 sqrt(x))
            if (n0) add(s0, lm_ggml_scale(c, lm_ggml_div(c, grad, node), 0.5f));
            break;
        case LM_GGML_OP_LOG:
            if (n0) add(s0, lm_ggml_div(c, grad, s0));
            break;
        case LM_GGML_OP_SIN:
            if (n0) add(s0, lm_ggml_mul(c, grad, lm_ggml_cos(c, s0)));
            break;
        case LM_GGML_OP_COS:
            if (n0) sub(s0, lm_ggml_mul(c, grad, lm_ggml_sin(c, s0)));
            break;
        case LM_GGML_OP_SUM:
            if (n0) add1(s0, grad);
            break;
        case LM_GGML_OP_SUM_ROWS:
        case LM_GGML_OP_REPEAT_BACK:
            if (n0) add(s0, lm_ggml_repeat(c, grad, s0));
            break;
        case LM_GGML_OP_MEAN: // per row: every element gets g / ne0
            if (n0) add(s0, lm_ggml_repeat(c, lm_ggml_scale(c, grad, 1.0f / (float) s0->ne[0]), s0));
            break;
        case LM_GGML_OP_REPEAT:
            if (n0) add(s0, lm_ggml_repeat_back(c, grad, s0));
            break;
        case LM_GGML_OP_RMS_NORM:
            if (n0) add(s0, lm_ggml_rms_norm_back(c, grad, s0, param_f32(node, 0)));
            break;
        case LM_GGML_OP_MUL_MAT: {
            // y[m,p] = sum_n a[n,m] b[n,p]: da[n,m] = sum_p b[n,p] g[m,p],
            // db[n,p] = sum_m a[n,m] g[m,p]; a may be broadcast over dims 2, 3.
            if (n0) {
                lm_ggml_tensor * d = lm_ggml_out_prod(c, s1, grad);
                if (d && (d->ne[2] > s0->ne[2] || d->ne[3] > s0->ne[3])) d = lm_ggml_repeat_back(c, d, s0);
                add(s0, d);
            }
            if (n1) add(s1, lm_ggml_out_prod(c, s0, lm_ggml_transpose(c, grad)));
        } break;
        case LM_GGML_OP_SCALE:
            if (n0) add(s0, lm_ggml_scale(c, grad, param_f32(node, 0)));
            break;
        case LM_GGML_OP_SET: {
            // y = s0 with a region replaced by s1
            const int32_t * p = node->op_params;
            const size_t nb1 = (size_t) p[0], nb2 = (size_t) p[1], nb3 = (size_t) p[2], off = (size_t) p[3];
            lm_ggml_tensor * region = nullptr;
            if (n0 || n1)
                region = lm_ggml_view_4d(c, grad, s1->ne[0], s1->ne[1], s1->ne[2], s1->ne[3], nb1, nb2, nb3, off);
            if (n0) add(s0, lm_ggml_acc(c, grad, lm_ggml_neg(c, region), nb1, nb2, nb3, off)); // the region gets 0
            if (n1) add(s1, lm_ggml_reshape(c, lm_ggml_cont(c, region), s1));
        } break;
        case LM_GGML_OP_RESHAPE:
            if (n0) add(s0, lm_ggml_reshape(c, lm_ggml_is_contiguous(grad) ? grad : lm_ggml_cont(c, grad), s0));
            break;
        case LM_GGML_OP_VIEW: {
            if (!n0) break;
            size_t off;
            std::memcpy(&off, node->op_params, sizeof(off));
            size_t nb1 = node->nb[1], nb2 = node->nb[2], nb3 = node->nb[3];
            lm_ggml_tensor * have = this->grad(s0);
            if (have && have->type != s0->type) {
                // the view's strides are in s0's element size, the gradient's differ
                const size_t es = lm_ggml_element_size(s0), eg = lm_ggml_element_size(have);
                off = off / es * eg;
                nb1 = nb1 / es * eg;
                nb2 = nb2 / es * eg;
                nb3 = nb3 / es * eg;
            }
            acc(s0, grad, nb1, nb2, nb3, off);
        } break;
        case LM_GGML_OP_PERMUTE: {
            if (!n0) break;
            // node's axis k came from s0's axis axes[k]; invert the permutation
            const int32_t * axes = node->op_params;
            int back[4] = {0, 1, 2, 3};
            for (int k = 0; k < 4; k++) back[axes[k] & 3] = k;
            add(s0, lm_ggml_permute(c, grad, back[0], back[1], back[2], back[3]));
        } break;
        case LM_GGML_OP_TRANSPOSE:
            if (n0) add(s0, lm_ggml_transpose(c, grad));
            break;
        case LM_GGML_OP_GET_ROWS:
            if (n0) add(s0, lm_ggml_get_rows_back(c, grad, s1, s0));
            break;
        case LM_GGML_OP_DIAG_MASK_INF:
        case LM_GGML_OP_DIAG_MASK_ZERO: // masked entries are constants
            if (n0) add(s0, lm_ggml_diag_mask_zero(c, grad, lm_ggml_get_op_params_i32(node, 0)));
            break;
        case LM_GGML_OP_SOFT_MAX:
            if (n0) add(s0, lm_ggml_soft_max_ext_back(c, grad, node, param_f32(node, 0), param_f32(node, 1)));
            break;
        case LM_GGML_OP_ROPE: {
            if (!n0) break;
            const int32_t * p = node->op_params;
            int sections[4];
            std::memcpy(sections, p + 11, sizeof(sections));
            const float fb = param_f32(node, 5), fs = param_f32(node, 6), ef = param_f32(node, 7),
                        af = param_f32(node, 8), bf = param_f32(node, 9), bs = param_f32(node, 10);
            // one position per token: plain rope; four per token: M-RoPE
            lm_ggml_tensor * d =
                grad->ne[2] == s1->ne[0]
                    ? lm_ggml_rope_ext_back(c, grad, s1, s2, p[1], p[2], p[4], fb, fs, ef, af, bf, bs)
                    : lm_ggml_rope_multi_back(c, grad, s1, s2, p[1], sections, p[2], p[4], fb, fs, ef, af, bf, bs);
            add(s0, d);
        } break;
        case LM_GGML_OP_IM2COL:
            if (n1) {
                const int32_t * p = node->op_params;
                add(s1, lm_ggml_im2col_back(c, grad, s0, s1->ne, p[0], p[1], p[2], p[3], p[4], p[5], p[6] == 1));
            }
            break;
        case LM_GGML_OP_POOL_2D:
            if (n0) {
                const int32_t * p = node->op_params;
                add(s0, lm_ggml_pool_2d_back(c, grad, s0, (lm_ggml_op_pool) p[0], p[1], p[2], p[3], p[4], (float) p[5],
                                             (float) p[6]));
            }
            break;
        case LM_GGML_OP_UNARY:
            switch (lm_ggml_get_unary_op(node)) {
                case LM_GGML_UNARY_OP_ABS:
                    if (n0) add(s0, lm_ggml_mul(c, lm_ggml_sgn(c, s0), grad));
                    break;
                case LM_GGML_UNARY_OP_NEG:
                    if (n0) sub(s0, grad);
                    break;
                case LM_GGML_UNARY_OP_RELU:
                    if (n0) add(s0, lm_ggml_mul(c, lm_ggml_step(c, s0), grad));
                    break;
                case LM_GGML_UNARY_OP_SILU:
                    if (n0) add(s0, lm_ggml_silu_back(c, grad, s0));
                    break;
                case LM_GGML_UNARY_OP_EXP:
                    if (n0) add(s0, lm_ggml_mul(c, node, grad));
                    break;
                default: // SGN, STEP: zero almost everywhere
                    break;
            }
            break;
        case LM_GGML_OP_CROSS_ENTROPY_LOSS:
            if (n0) add(s0, lm_ggml_cross_entropy_loss_back(c, grad, s0, s1));
            break;
        default: // NONE, and ops missing_rule rejected before the pass started
            break;
    }
}

} // namespace lmggml::backward
