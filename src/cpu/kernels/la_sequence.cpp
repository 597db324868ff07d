// Sequence-model kernels: SSM_CONV and SSM_SCAN (Mamba), RWKV_WKV6 and
// GATED_LINEAR_ATTN. The recurrences run token by token inside one thread;
// threads split the independent ones (channels, or sequence x head pairs),
// so every output element is written by exactly one thread and no barrier is
// needed. Arithmetic is float, in the order ggml uses.
#include "la_sequence.h"
#include "la_common.h"

#include <initializer_list>

namespace lmggml::cpu::la {
namespace {

bool all_f32(const lm_ggml_tensor * dst, int n_src) {
    if (dst->type != LM_GGML_TYPE_F32) {
        return false;
    }
    for (int i = 0; i < n_src; ++i) {
        if (dst->src[i] == nullptr || dst->src[i]->type != LM_GGML_TYPE_F32) {
            return false;
        }
    }
    return true;
}

// Element (i0, i1, i2) of a float tensor with any strides.
inline float at(const lm_ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2) {
    return *(const float *) ((const char *) t->data + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2]);
}

// softplus as Mamba's reference computes it: linear above 20
inline float softplus(float x) { return x <= 20.0f ? log1pf(expf(x)) : x; }

// ---------------------------------------------------------------- RWKV6 / GLA
// Shapes shared by the two linear-attention recurrences; src[1] is v.
struct LinearAttn {
    int64_t S, H, T, n_seqs;
};

LinearAttn linear_attn_shape(const lm_ggml_tensor * dst, const lm_ggml_tensor * state) {
    const lm_ggml_tensor * v = dst->src[1];
    return {v->ne[0], v->ne[1], v->ne[2], state->ne[1]};
}

// The operands the kernels index as flat contiguous arrays, and the result
// layout they write.
bool linear_attn_ok(const lm_ggml_tensor * dst, const lm_ggml_tensor * state,
                    std::initializer_list<const lm_ggml_tensor *> per_token) {
    const LinearAttn a = linear_attn_shape(dst, state);
    if (a.n_seqs <= 0 || a.T % a.n_seqs != 0 || !lm_ggml_is_contiguous(state) ||
        lm_ggml_nelements(state) != a.S * a.S * a.H * a.n_seqs) {
        return false;
    }
    for (const lm_ggml_tensor * t : per_token) {
        if (!lm_ggml_is_contiguous(t) || t->ne[0] != a.S || t->ne[1] != a.H || t->ne[2] != a.T || t->ne[3] != 1) {
            return false;
        }
    }
    return lm_ggml_is_contiguous(dst) && dst->ne[0] == a.S * a.H && dst->ne[1] == a.T + a.S * a.n_seqs &&
           dst->ne[2] == 1 && dst->ne[3] == 1;
}

// One (sequence, head) unit at a time, its tokens in order. Rule::factors
// gives the per-token, per-key-row factors f; then for every (i, j)
//   out[t, h, j] += Rule::out(prev[i, j], k_i v_j, f)
//   cur[i, j]     = Rule::update(prev[i, j], k_i v_j, f)
// where prev is the input state for a sequence's first token and, after it,
// the state being built in dst (updated in place).
template <class Rule>
void linear_attn_run(const lm_cpu_params * params, lm_ggml_tensor * dst, const lm_ggml_tensor * state_in,
                     const Rule & rule) {
    const LinearAttn a = linear_attn_shape(dst, state_in);
    const int64_t C = a.S * a.H;
    const int64_t Ts = a.T / a.n_seqs; // tokens per sequence
    const float * k = (const float *) dst->src[0]->data;
    const float * v = (const float *) dst->src[1]->data;
    float * out = (float *) dst->data;
    float * st = out + C * a.T;
    const Range u = split(a.n_seqs * a.H, params->ith, params->nth);
    for (int64_t unit = u.begin; unit < u.end; ++unit) {
        const int64_t seq = unit / a.H, h = unit % a.H;
        const size_t off = (size_t) (seq * a.S * C + h * a.S * a.S);
        float * cur = st + off;
        for (int64_t tt = 0; tt < Ts; ++tt) {
            const int64_t t = seq * Ts + tt;
            const float * prev = tt == 0 ? (const float *) state_in->data + off : cur;
            const size_t row = (size_t) (t * C + h * a.S);
            float * y = out + row;
            const float * vt = v + row;
            for (int64_t j = 0; j < a.S; ++j) {
                y[j] = 0.0f;
            }
            for (int64_t i = 0; i < a.S; ++i) {
                const float ki = k[row + i];
                const auto f = rule.factors(row + i, (size_t) (h * a.S + i));
                const float * p = prev + i * a.S;
                float * c = cur + i * a.S;
                for (int64_t j = 0; j < a.S; ++j) {
                    const float kv = ki * vt[j];
                    const float pj = p[j];
                    y[j] += rule.out(pj, kv, f);
                    c[j] = rule.update(pj, kv, f);
                }
            }
        }
    }
}

// RWKV v6: out += r_i (u_i k_i v_j + prev), state = prev w_i + k_i v_j, with
// the bonus u = tf[h, i] and the per-token decay w = td[t, h, i]
struct Wkv6 {
    const float * r;
    const float * tf;
    const float * td;
    struct F {
        float r, u, w;
    };
    F factors(size_t thi, size_t hi) const { return {r[thi], tf[hi], td[thi]}; }
    float out(float prev, float kv, const F & f) const { return (kv * f.u + prev) * f.r; }
    float update(float prev, float kv, const F & f) const { return prev * f.w + kv; }
};

// GLA: s = prev g_i + k_i v_j is both the new state and what q_i * scale reads
struct Gla {
    const float * q;
    const float * g;
    float scale;
    struct F {
        float q, g;
    };
    F factors(size_t thi, size_t) const { return {q[thi] * scale, g[thi]}; }
    float out(float prev, float kv, const F & f) const { return (prev * f.g + kv) * f.q; }
    float update(float prev, float kv, const F & f) const { return prev * f.g + kv; }
};

} // namespace

// ---------------------------------------------------------------- SSM_CONV
// sx (d_conv - 1 + n_t, d_inner, n_s), c (d_conv, d_inner) -> (d_inner, n_t, n_s);
// threads split the channels (d_inner).
bool ssm_conv_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * sx = dst->src[0];
    const lm_ggml_tensor * c = dst->src[1];
    return all_f32(dst, 2) && lm_ggml_is_contiguous(dst) && c->ne[1] == dst->ne[0] && sx->ne[1] == dst->ne[0] &&
           sx->ne[0] == c->ne[0] - 1 + dst->ne[1] && sx->ne[2] == dst->ne[2] && sx->ne[3] == 1 && dst->ne[3] == 1;
}

void ssm_conv_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * sx = dst->src[0];
    const lm_ggml_tensor * c = dst->src[1];
    const int64_t d_conv = c->ne[0];
    const int64_t d_inner = dst->ne[0];
    const Range r = split(d_inner, params->ith, params->nth);
    for (int64_t s = 0; s < dst->ne[2]; ++s) {
        for (int64_t t = 0; t < dst->ne[1]; ++t) {
            float * y = (float *) row_of(dst, t, s, 0);
            for (int64_t i1 = r.begin; i1 < r.end; ++i1) {
                float sum = 0.0f;
                for (int64_t k = 0; k < d_conv; ++k) {
                    sum += at(sx, t + k, i1, s) * at(c, k, i1, 0);
                }
                y[i1] = sum;
            }
        }
    }
}

// ---------------------------------------------------------------- SSM_SCAN
// Per sequence s and channel i1, with the state h (d_state) starting at s0:
//   d = softplus(dt[i1, t]);  h[i0] = h[i0] exp(d A[i0, i1]) + B[i0, t] x[i1, t] d
//   y[i1, t] = sum_i0 h[i0] C[i0, t]
// y lies in dst as a contiguous (d_inner, n_t, n_s), the final states after
// it as a contiguous (d_state, d_inner, n_s); threads split (sequence, channel).
bool ssm_scan_supports(const lm_ggml_tensor * dst) {
    if (!all_f32(dst, 6) || !lm_ggml_is_contiguous(dst)) {
        return false;
    }
    const lm_ggml_tensor * s = dst->src[0];
    const lm_ggml_tensor * x = dst->src[1];
    const lm_ggml_tensor * dt = dst->src[2];
    const lm_ggml_tensor * A = dst->src[3];
    const lm_ggml_tensor * B = dst->src[4];
    const lm_ggml_tensor * C = dst->src[5];
    const int64_t d_state = s->ne[0], d_inner = s->ne[1], n_t = x->ne[1], n_s = x->ne[2];
    return lm_ggml_are_same_shape(x, dt) && lm_ggml_are_same_shape(B, C) && x->ne[0] == d_inner && s->ne[2] == n_s &&
           A->ne[0] == d_state && A->ne[1] == d_inner && B->ne[0] == d_state && B->ne[1] == n_t && B->ne[2] == n_s &&
           s->ne[3] == 1 && x->ne[3] == 1 && B->ne[3] == 1 &&
           lm_ggml_nelements(dst) == lm_ggml_nelements(x) + lm_ggml_nelements(s);
}

void ssm_scan_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * s0 = dst->src[0];
    const lm_ggml_tensor * x = dst->src[1];
    const lm_ggml_tensor * dt = dst->src[2];
    const lm_ggml_tensor * A = dst->src[3];
    const lm_ggml_tensor * B = dst->src[4];
    const lm_ggml_tensor * C = dst->src[5];
    const int64_t d_state = s0->ne[0], d_inner = s0->ne[1], n_t = x->ne[1];
    float * y_all = (float *) dst->data;
    float * h_all = y_all + lm_ggml_nelements(x);
    const Range u = split(s0->ne[2] * d_inner, params->ith, params->nth);
    for (int64_t unit = u.begin; unit < u.end; ++unit) {
        const int64_t s = unit / d_inner, i1 = unit % d_inner;
        float * h = h_all + (s * d_inner + i1) * d_state;
        for (int64_t i0 = 0; i0 < d_state; ++i0) {
            h[i0] = at(s0, i0, i1, s);
        }
        for (int64_t t = 0; t < n_t; ++t) {
            const float d = softplus(at(dt, i1, t, s));
            const float x_d = at(x, i1, t, s) * d;
            float sum = 0.0f;
            for (int64_t i0 = 0; i0 < d_state; ++i0) {
                const float v = h[i0] * expf(d * at(A, i0, i1, 0)) + at(B, i0, t, s) * x_d;
                sum += v * at(C, i0, t, s);
                h[i0] = v;
            }
            y_all[(s * n_t + t) * d_inner + i1] = sum;
        }
    }
}

// ---------------------------------------------------------------- RWKV_WKV6, GLA
// k, v, r, tf, td, state
bool rwkv_wkv6_supports(const lm_ggml_tensor * dst) {
    if (!all_f32(dst, 6)) {
        return false;
    }
    const LinearAttn a = linear_attn_shape(dst, dst->src[5]);
    return linear_attn_ok(dst, dst->src[5], {dst->src[0], dst->src[1], dst->src[2], dst->src[4]}) &&
           lm_ggml_is_contiguous(dst->src[3]) && lm_ggml_nelements(dst->src[3]) == a.S * a.H;
}

void rwkv_wkv6_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const Wkv6 rule{(const float *) dst->src[2]->data, (const float *) dst->src[3]->data,
                    (const float *) dst->src[4]->data};
    linear_attn_run(params, dst, dst->src[5], rule);
}

// k, v, q, g, state; scale in f32 op_params[0]
bool gated_linear_attn_supports(const lm_ggml_tensor * dst) {
    return all_f32(dst, 5) && linear_attn_ok(dst, dst->src[4], {dst->src[0], dst->src[1], dst->src[2], dst->src[3]});
}

void gated_linear_attn_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const Gla rule{(const float *) dst->src[2]->data, (const float *) dst->src[3]->data,
                   lm_ggml_get_op_params_f32(dst, 0)};
    linear_attn_run(params, dst, dst->src[4], rule);
}

} // namespace lmggml::cpu::la
