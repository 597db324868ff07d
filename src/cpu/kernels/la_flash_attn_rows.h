#pragma once
// What the two FLASH_ATTN_EXT paths over an F16 KV cache share: reading a
// mask row's visible span, and one query's step of the online softmax over a
// tile of scores (la_flash_attn_f16.cpp for generation and short batches,
// la_flash_attn_tiled.cpp for prompts).
#include "la_ops.h"

#include "../arch/kernels.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace lmggml::cpu::la::fa {

constexpr uint16_t kF16NegInf = 0xFC00;
constexpr uint64_t kF16NegInfx4 = 0xFC00FC00FC00FC00ull;

constexpr uint64_t kF32NegInfx2 = 0xFF800000FF800000ull;

// Four mask values at m, all -inf? (A long cache's hidden part is thousands
// of values, scanned per row and segment: four at a time, by their bits;
// -inf has one encoding in either type.)
inline bool hidden_x4(const uint16_t * m) {
    uint64_t w;
    std::memcpy(&w, m, sizeof(w));
    return w == kF16NegInfx4;
}
inline bool hidden_x4(const float * m) {
    uint64_t w[2];
    std::memcpy(w, m, sizeof(w));
    return (w[0] == kF32NegInfx2) & (w[1] == kF32NegInfx2);
}

// 1 + the last key the mask row does not hide (-inf); n_kv without a mask.
inline int64_t visible_keys(const lm_ggml_tensor * mask, const char * mrow, int64_t n_kv) {
    if (mask == nullptr) {
        return n_kv;
    }
    int64_t n = n_kv;
    if (mask->type == LM_GGML_TYPE_F16) {
        const auto * m = (const uint16_t *) mrow;
        while (n >= 4 && hidden_x4(m + n - 4)) n -= 4;
        while (n > 0 && m[n - 1] == kF16NegInf) --n;
    } else {
        const auto * m = (const float *) mrow;
        while (n >= 4 && hidden_x4(m + n - 4)) n -= 4;
        while (n > 0 && m[n - 1] == -INFINITY) --n;
    }
    return n;
}

// The first key at or after j the mask row does not hide (-inf); n when it hides all of [j, n).
inline int64_t first_visible_key(const lm_ggml_tensor * mask, const char * mrow, int64_t j, int64_t n) {
    if (mask == nullptr) {
        return j;
    }
    if (mask->type == LM_GGML_TYPE_F16) {
        const auto * m = (const uint16_t *) mrow;
        while (j + 4 <= n && hidden_x4(m + j)) j += 4;
        while (j < n && m[j] == kF16NegInf) ++j;
    } else {
        const auto * m = (const float *) mrow;
        while (j + 4 <= n && hidden_x4(m + j)) j += 4;
        while (j < n && m[j] == -INFINITY) ++j;
    }
    return j;
}

// The op's sizes: g query heads per KV head of head size D, n_q query rows
// per batch entry, n_kv keys, n_kvh KV heads, n_b batch entries.
struct Shape {
    int64_t g, D, n_q, n_kv, n_kvh, n_b;
    explicit Shape(const lm_ggml_tensor * dst)
        : g(dst->src[0]->ne[2] / dst->src[1]->ne[2]), D(dst->src[0]->ne[0]), n_q(dst->src[0]->ne[1]),
          n_kv(dst->src[1]->ne[1]), n_kvh(dst->src[1]->ne[2]), n_b(dst->src[0]->ne[3]) {}
};

// The op's scalars and the mask, for one query row's softmax steps.
struct SoftmaxParams {
    const arch::KernelSet & kern;
    const lm_ggml_tensor * mask;
    float scale, max_bias, softcap;
    int64_t n_head;
};

// The op's tensors, this CPU's kernels and the softmax parameters.
struct Operands {
    const lm_ggml_tensor * dst;
    const lm_ggml_tensor * q;
    const lm_ggml_tensor * k;
    const lm_ggml_tensor * v;
    const lm_ggml_tensor * mask;
    const arch::KernelSet & kern;
    SoftmaxParams sp;
    explicit Operands(const lm_ggml_tensor * d)
        : dst(d), q(d->src[0]), k(d->src[1]), v(d->src[2]), mask(d->src[3]),
          kern(arch::kernels()), sp{kern,
                                    mask,
                                    lm_ggml_get_op_params_f32(d, 0),
                                    lm_ggml_get_op_params_f32(d, 1),
                                    lm_ggml_get_op_params_f32(d, 2),
                                    q->ne[2]} {}
    const char * mask_row(int64_t iq1) const {
        return mask != nullptr ? (const char *) mask->data + iq1 * mask->nb[1] : nullptr;
    }
};

// One query's scores st[0..nt) for keys j0.. (raw q.k) become its
// unnormalised probabilities exp(s - M): softcap, scale, mask row mrow
// (NULL without a mask) at j0 and ALiBi slope of head h applied; when the
// tile raises the running max M, the accumulator row acc (D floats) and the
// running sum S are rescaled first. Returns false, with st zeroed and M, S,
// acc untouched, when every key of the tile is masked for this query.
inline bool softmax_tile_row(const SoftmaxParams & sp, float * st, int64_t nt, const char * mrow, int64_t j0, int64_t h,
                             float * acc, int64_t D, float * M, float * S) {
    float s1 = sp.scale;
    if (sp.softcap != 0.0f) { // s = softcap * tanh(q.k * scale / softcap), before the mask
        for (int64_t j = 0; j < nt; ++j) st[j] = sp.softcap * tanhf(st[j] * (sp.scale / sp.softcap));
        s1 = 1.0f;
    }
    const bool f16 = sp.mask != nullptr && sp.mask->type == LM_GGML_TYPE_F16;
    const float * m32 = sp.mask != nullptr && !f16 ? (const float *) mrow + j0 : nullptr;
    const uint16_t * m16 = f16 ? (const uint16_t *) mrow + j0 : nullptr;
    const float slope = flash_attn_slope(sp.max_bias, sp.n_head, h);
    const float mx = sp.kern.math.scale_mask_max(nt, st, s1, m32, m16, slope, st);
    if (mx == -INFINITY) { // every key of the tile masked for this query
        std::fill_n(st, nt, 0.0f);
        return false;
    }
    if (mx > *M) {
        if (*M != -INFINITY) {
            const float r = expf(*M - mx);
            sp.kern.math.scale(D, acc, r);
            *S *= r;
        }
        *M = mx;
    }
    *S += sp.kern.math.exp_sum(nt, st, *M, st);
    return true;
}

} // namespace lmggml::cpu::la::fa
