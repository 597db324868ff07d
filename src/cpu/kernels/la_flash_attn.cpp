// FLASH_ATTN_EXT: for each query row, softmax(scale * q.k + slope * mask) . v
// in one pass over the keys (online softmax: running max M and sum S, the
// accumulator rescaled whenever M grows), accumulated in F32.
//   q    (D, n_q, n_head, n_batch)       F32
//   k, v (D, n_kv, n_head_kv, n_batch_kv) F32, F16, or types with a dot / to_float;
//        head h reads kv head h / (n_head / n_head_kv) (grouped-query attention)
//   mask (>= n_kv, >= n_q) F16 or F32, the same for every head; -inf skips a key
//   dst  (D, n_head, n_q, n_batch)       F32, already permuted as ggml returns it
// op_params f32[0]=scale [1]=max_bias (ALiBi) [2]=logit_softcap (s = c * tanh(s / c)).
// As in ggml, q is first converted to K's vec_dot_type (F16 for F16 keys).
#include "la_ops.h"
#include "la_vec_dot.h"

namespace lmggml::cpu::la {
namespace {

// Per-thread scratch: [acc: D floats][q converted][k row decoded][v row decoded]
struct Layout {
    size_t acc, q, k, v;
    size_t per_thread() const { return acc + q + k + v; }
};

Layout layout_of(const lm_ggml_tensor * dst, const Plan & kp) {
    const int64_t D = dst->src[0]->ne[0];
    const size_t f = pad_line((size_t) D * sizeof(float));
    return {f, pad_line(lm_ggml_row_size(kp.vec_dot_type, D)), f, f};
}

float mask_at(const lm_ggml_tensor * mask, const char * row, int64_t i) {
    if (mask->type == LM_GGML_TYPE_F16) {
        return fp16_to_f32(((const lm_ggml_fp16_t *) row)[i]);
    }
    return ((const float *) row)[i];
}

// acc += v_row * w, decoding v as needed
void add_v(const lm_ggml_tensor * v, const char * vrow, float w, float * acc, float * vdec,
           lm_ggml_to_float_t v_to_float, int64_t D) {
    if (v->type == LM_GGML_TYPE_F32) {
        mad_f32(D, acc, (const float *) vrow, w);
    } else if (v->type == LM_GGML_TYPE_F16) {
        const auto * h = (const lm_ggml_fp16_t *) vrow;
        for (int64_t d = 0; d < D; ++d) {
            acc[d] += fp16_to_f32(h[d]) * w;
        }
    } else {
        v_to_float(vrow, vdec, D);
        mad_f32(D, acc, vdec, w);
    }
}

} // namespace

float flash_attn_slope(float max_bias, int64_t n_head, int64_t h) {
    if (max_bias <= 0.0f) {
        return 1.0f;
    }
    const uint32_t n_log2 = 1u << (uint32_t) floor(log2((double) n_head));
    const float m0 = powf(2.0f, -(max_bias) / (float) n_log2);
    const float m1 = powf(2.0f, -(max_bias / 2.0f) / (float) n_log2);
    return (uint32_t) h < n_log2 ? powf(m0, (float) (h + 1)) : powf(m1, (float) (2 * ((uint32_t) h - n_log2) + 1));
}

bool flash_attn_ext_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * q = dst->src[0];
    const lm_ggml_tensor * k = dst->src[1];
    const lm_ggml_tensor * v = dst->src[2];
    const lm_ggml_tensor * mask = dst->src[3];
    if (q == nullptr || k == nullptr || v == nullptr || q->type != LM_GGML_TYPE_F32 || q->nb[0] != sizeof(float) ||
        dst->type != LM_GGML_TYPE_F32 || dst->nb[0] != sizeof(float)) {
        return false;
    }
    const Plan kp = plan_for(k->type);
    if (!kp.ok || k->nb[0] != lm_ggml_type_size(k->type) ||
        (kp.vec_dot_type != LM_GGML_TYPE_F32 && q->ne[0] % lm_ggml_blck_size(kp.vec_dot_type) != 0)) {
        return false;
    }
    if (v->type != LM_GGML_TYPE_F32 && v->type != LM_GGML_TYPE_F16 && decoder_of(v->type) == nullptr) {
        return false;
    }
    if (v->nb[0] != lm_ggml_type_size(v->type)) {
        return false;
    }
    const int64_t D = q->ne[0];
    if (k->ne[0] != D || v->ne[0] != D || k->ne[1] != v->ne[1] || k->ne[2] == 0 || k->ne[3] == 0 || v->ne[2] == 0 ||
        v->ne[3] == 0 || q->ne[2] % k->ne[2] != 0 || q->ne[3] % k->ne[3] != 0 || q->ne[2] % v->ne[2] != 0 ||
        q->ne[3] % v->ne[3] != 0) {
        return false;
    }
    if (dst->ne[0] != D || dst->ne[1] != q->ne[2] || dst->ne[2] != q->ne[1] || dst->ne[3] != q->ne[3]) {
        return false;
    }
    const int32_t prec = lm_ggml_get_op_params_i32(dst, 3);
    if (prec != LM_GGML_PREC_DEFAULT && prec != LM_GGML_PREC_F32) {
        return false;
    }
    return mask == nullptr || ((mask->type == LM_GGML_TYPE_F16 || mask->type == LM_GGML_TYPE_F32) &&
                               mask->nb[0] == lm_ggml_type_size(mask->type) && mask->ne[0] >= k->ne[1] &&
                               mask->ne[1] >= q->ne[1] && mask->ne[2] == 1 && mask->ne[3] == 1);
}

size_t flash_attn_ext_work_size(const lm_ggml_tensor * dst, int n_threads) {
    return flash_attn_ext_work_size_with(dst, n_threads, plan_for(dst->src[1]->type));
}

void flash_attn_ext_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    flash_attn_ext_forward_with(params, dst, plan_for(dst->src[1]->type));
}

// The F16 path (la_flash_attn_f16.cpp) is taken with K's own plan only:
// tests that force another plan get the generic loop.
static bool takes_f16_path(const lm_ggml_tensor * dst, const Plan & kp) {
    return flash_attn_f16_path(dst) && kp.vec_dot == plan_for(LM_GGML_TYPE_F16).vec_dot;
}

size_t flash_attn_ext_work_size_with(const lm_ggml_tensor * dst, int n_threads, const Plan & kp) {
    if (takes_f16_path(dst, kp)) {
        return flash_attn_f16_work_size(dst, n_threads);
    }
    return (size_t) n_threads * layout_of(dst, kp).per_thread();
}

bool flash_attn_ext_private_scratch(const lm_ggml_tensor * dst, int n_threads) {
    return !takes_f16_path(dst, plan_for(dst->src[1]->type)) || flash_attn_f16_private_scratch(dst, n_threads);
}

void flash_attn_ext_forward_with(const lm_cpu_params * params, lm_ggml_tensor * dst, const Plan & kp) {
    if (takes_f16_path(dst, kp)) {
        flash_attn_f16_forward(params, dst);
        return;
    }
    const lm_ggml_tensor * q = dst->src[0];
    const lm_ggml_tensor * k = dst->src[1];
    const lm_ggml_tensor * v = dst->src[2];
    const lm_ggml_tensor * mask = dst->src[3];

    const Layout l = layout_of(dst, kp);
    char * w = (char *) lm_cpu_thread_scratch(params); // l.per_thread() bytes
    float * acc = (float *) w;
    void * qc = w + l.acc;
    float * kdec = (float *) (w + l.acc + l.q);
    float * vdec = (float *) (w + l.acc + l.q + l.k);

    const lm_ggml_to_float_t v_to_float =
        (v->type == LM_GGML_TYPE_F32 || v->type == LM_GGML_TYPE_F16) ? nullptr : decoder_of(v->type);

    const int64_t D = q->ne[0];
    const int64_t n_q = q->ne[1];
    const int64_t n_head = q->ne[2];
    const int64_t n_kv = k->ne[1];
    const int64_t rk2 = n_head / k->ne[2], rk3 = q->ne[3] / k->ne[3];
    const int64_t rv2 = n_head / v->ne[2], rv3 = q->ne[3] / v->ne[3];

    float scale = lm_ggml_get_op_params_f32(dst, 0);
    const float max_bias = lm_ggml_get_op_params_f32(dst, 1);
    const float softcap = lm_ggml_get_op_params_f32(dst, 2);
    if (softcap != 0.0f) {
        scale /= softcap; // s = softcap * tanh(q.k * scale / softcap)
    }

    const Range r = split(n_q * n_head * q->ne[3], params->ith, params->nth);
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const int64_t iq3 = ir / (n_head * n_q);
        const int64_t iq2 = (ir / n_q) % n_head;
        const int64_t iq1 = ir % n_q;

        const float slope = flash_attn_slope(max_bias, n_head, iq2);
        const char * mrow = mask != nullptr ? (const char *) mask->data + iq1 * mask->nb[1] : nullptr;
        const float * qrow = (const float *) row_of(q, iq1, iq2, iq3);
        const void * qv = qrow;
        if (kp.vec_dot_type != LM_GGML_TYPE_F32) {
            kp.from_float(qrow, qc, D);
            qv = qc;
        }
        const int64_t ik2 = iq2 / rk2, ik3 = iq3 / rk3;
        const int64_t iv2 = iq2 / rv2, iv3 = iq3 / rv3;

        std::fill_n(acc, D, 0.0f);
        float S = 0.0f;      // sum of exp(s - M) over the keys seen
        float M = -INFINITY; // largest score seen

        for (int64_t ic = 0; ic < n_kv; ++ic) {
            const float mv = mrow != nullptr ? slope * mask_at(mask, mrow, ic) : 0.0f;
            if (mv == -INFINITY) {
                continue;
            }
            float s = plan_dot(kp, D, row_of(k, ic, ik2, ik3), qv, kdec) * scale;
            if (softcap != 0.0f) {
                s = softcap * tanhf(s);
            }
            s += mv;

            float ms = 1.0f; // rescale of what was accumulated, when the max grows
            float vs = 1.0f; // weight of this key, exp(s - M)
            if (s > M) {
                const float m_old = M;
                M = s;
                ms = expf(m_old - M);
                scale_f32(D, acc, ms);
            } else {
                vs = expf(s - M);
            }
            add_v(v, row_of(v, ic, iv2, iv3), vs, acc, vdec, v_to_float, D);
            S = S * ms + vs;
        }

        // as ggml: a row whose keys were all masked divides by zero
        const float inv = 1.0f / S;
        float * out = (float *) row_of(dst, iq2, iq1, iq3);
        for (int64_t d = 0; d < D; ++d) {
            out[d] = acc[d] * inv;
        }
    }
}

} // namespace lmggml::cpu::la
