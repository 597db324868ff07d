// FLASH_ATTN_BACK: gradients of attention O = softmax(scale * q.k^T) v per
// query row (scale = 1/sqrt(D); with the mask, query i sees keys
// j <= M - N + i), for the incoming gradient d of O. With P = softmax row
// and g = v^T-projected d (g_j = sum_c v[j, c] d[c]):
//   dS_j = scale * P_j * (g_j - sum_i P_i g_i)
//   grad q += sum_j dS_j k_j,  grad k_j += dS_j q,  grad v[j, :] += P_j d
// dst is one F32 vector holding grad q, grad k, grad v (layouts: docs/OPS.md).
// Threads split the (kv head, batch) pairs: each owns the grad k / grad v of
// its heads and the grad q of the query heads that read them.
#include "la_backward.h"
#include "la_common.h"

namespace lmggml::cpu::la {
namespace {

struct AttnGrads {
    float * q;
    float * k;
    float * v;
};

AttnGrads grads_of(lm_ggml_tensor * dst) {
    const size_t nq = (size_t) lm_ggml_nelements(dst->src[0]);
    const size_t nk = (size_t) lm_ggml_nelements(dst->src[1]);
    const size_t offs_k = LM_GGML_PAD(nq * sizeof(float), LM_GGML_MEM_ALIGN);
    const size_t offs_v = offs_k + LM_GGML_PAD(nk * sizeof(float), LM_GGML_MEM_ALIGN);
    char * base = (char *) dst->data;
    return {(float *) base, (float *) (base + offs_k), (float *) (base + offs_v)};
}

inline const float * at(const lm_ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return (const float *) ((const char *) t->data + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3]);
}

bool packed_f32(const lm_ggml_tensor * t) {
    return t != nullptr && t->type == LM_GGML_TYPE_F32 && t->nb[0] == sizeof(float);
}

} // namespace

bool flash_attn_back_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * q = dst->src[0];
    const lm_ggml_tensor * k = dst->src[1];
    const lm_ggml_tensor * v = dst->src[2];
    const lm_ggml_tensor * d = dst->src[3];
    if (!packed_f32(q) || !packed_f32(k) || !packed_f32(v) || !packed_f32(d) || dst->type != LM_GGML_TYPE_F32 ||
        !lm_ggml_is_contiguous(dst)) {
        return false;
    }
    const int64_t D = q->ne[0], N = q->ne[1], M = k->ne[1];
    const size_t need = LM_GGML_PAD((size_t) lm_ggml_nelements(q) * 4, LM_GGML_MEM_ALIGN) +
                        LM_GGML_PAD((size_t) lm_ggml_nelements(k) * 4, LM_GGML_MEM_ALIGN) +
                        (size_t) lm_ggml_nelements(v) * 4;
    return k->ne[0] == D && v->ne[0] == M && v->ne[1] == D && d->ne[0] == D && d->ne[1] == N && v->ne[2] == k->ne[2] &&
           k->ne[3] == q->ne[3] && v->ne[3] == q->ne[3] && d->ne[2] == q->ne[2] && d->ne[3] == q->ne[3] &&
           k->ne[2] > 0 && q->ne[2] % k->ne[2] == 0 && M >= N && lm_ggml_nbytes(dst) >= need;
}

// two rows of M floats per thread (scores, probabilities)
size_t flash_attn_back_work_size(const lm_ggml_tensor * dst, int n_threads) {
    return (size_t) n_threads * 2 * pad_line((size_t) dst->src[1]->ne[1] * sizeof(float));
}

void flash_attn_back_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * q = dst->src[0];
    const lm_ggml_tensor * k = dst->src[1];
    const lm_ggml_tensor * v = dst->src[2];
    const lm_ggml_tensor * d = dst->src[3];
    const bool masked = lm_ggml_get_op_params_i32(dst, 0) != 0;
    const int64_t D = q->ne[0], N = q->ne[1], M = k->ne[1];
    const int64_t H = q->ne[2], Hkv = k->ne[2], B = q->ne[3];
    const float scale = 1.0f / sqrtf((float) D);

    // every thread adds into memory that starts at zero (padding included)
    const Range z = split((int64_t) lm_ggml_nbytes(dst), params->ith, params->nth);
    memset((char *) dst->data + z.begin, 0, (size_t) (z.end - z.begin));
    sync(params);

    const AttnGrads g = grads_of(dst);
    float * S = (float *) lm_cpu_thread_scratch(params); // scores, then their gradient
    float * SM = S + pad_line((size_t) M * sizeof(float)) / sizeof(float);
    const Range r = split(Hkv * B, params->ith, params->nth);
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const int64_t hk = ir % Hkv, b = ir / Hkv;
        for (int64_t hq = hk; hq < H; hq += Hkv) { // the query heads that read kv head hk
            for (int64_t i = 0; i < N; ++i) {
                const int64_t n_keys = masked ? M - N + i + 1 : M;
                const float * qi = at(q, 0, i, hq, b);
                const float * di = at(d, 0, i, hq, b);
                float mx = -INFINITY;
                for (int64_t j = 0; j < n_keys; ++j) {
                    S[j] = scale * dot_f32(D, at(k, 0, j, hk, b), qi);
                    mx = std::max(mx, S[j]);
                }
                double sum = 0.0;
                for (int64_t j = 0; j < n_keys; ++j) {
                    SM[j] = expf(S[j] - mx);
                    sum += SM[j];
                }
                const float inv = (float) (1.0 / sum);
                for (int64_t j = 0; j < n_keys; ++j) {
                    SM[j] *= inv;
                }
                // S := gradient of the probabilities (v . d), then of the scores
                double dot_pg = 0.0;
                for (int64_t j = 0; j < n_keys; ++j) {
                    float gj = 0.0f;
                    for (int64_t c = 0; c < D; ++c) {
                        gj += *at(v, j, c, hk, b) * di[c];
                    }
                    S[j] = gj;
                    dot_pg += (double) SM[j] * gj;
                }
                for (int64_t j = 0; j < n_keys; ++j) {
                    S[j] = scale * SM[j] * (S[j] - (float) dot_pg);
                }
                float * gq = g.q + ((b * H + hq) * N + i) * D;
                for (int64_t j = 0; j < n_keys; ++j) {
                    mad_f32(D, gq, at(k, 0, j, hk, b), S[j]);
                    mad_f32(D, g.k + ((b * Hkv + hk) * M + j) * D, qi, S[j]);
                }
                for (int64_t c = 0; c < D; ++c) {
                    mad_f32(n_keys, g.v + ((b * Hkv + hk) * D + c) * M, SM, di[c]);
                }
            }
        }
    }
}

} // namespace lmggml::cpu::la
