// ROPE: rotary position embedding of x (head_dim, n_head, n_tokens, n_seq),
// F32 or F16, normal and NeoX modes, with optional frequency factors (src2)
// and YaRN scaling. Token i2 is at position pos[i2] (src1, I32).
//
// Pair k (0 <= k < n_dims/2) is rotated by theta_k = pos * base^(-2k/n_dims) / ff[k],
// computed as ggml does (repeated float multiplication by base^(-2/n_dims))
// so results match it bit for bit. Normal mode rotates (x[2k], x[2k+1]),
// NeoX mode (x[k], x[k + n_dims/2]); dims from n_dims on are copied.
//
// Multimodal modes (lm_ggml_rope_multi): src1 holds 4 positions per token
// (t, h, w, e: pos[i2 + j*ne2]) and i32 op_params[11..14] the sections, how
// many consecutive pairs take each position (cycling every sum(sections)
// pairs). M-RoPE rotates NeoX pairs with theta_k = p_section(k) * base^(-2k/n_dims);
// vision (n_dims == ne0/2) rotates the ne0/2 pairs (x[k], x[k + n_dims]) and
// restarts the exponent at the start of each section.
//
// op_params: i32[1]=n_dims [2]=mode [4]=n_ctx_orig; f32[5]=freq_base
// [6]=freq_scale [7]=ext_factor [8]=attn_factor [9]=beta_fast [10]=beta_slow;
// i32[11..14]=sections.
#include "la_ops.h"
#include "la_common.h"

#include <numbers>

namespace lmggml::cpu::la {
namespace {

struct RopeArgs {
    int n_dims, mode, n_ctx_orig;
    float freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow;
    int sections[4];
};

RopeArgs args_of(const lm_ggml_tensor * dst) {
    RopeArgs a{};
    a.n_dims = lm_ggml_get_op_params_i32(dst, 1);
    a.mode = lm_ggml_get_op_params_i32(dst, 2);
    a.n_ctx_orig = lm_ggml_get_op_params_i32(dst, 4);
    a.freq_base = lm_ggml_get_op_params_f32(dst, 5);
    a.freq_scale = lm_ggml_get_op_params_f32(dst, 6);
    a.ext_factor = lm_ggml_get_op_params_f32(dst, 7);
    a.attn_factor = lm_ggml_get_op_params_f32(dst, 8);
    a.beta_fast = lm_ggml_get_op_params_f32(dst, 9);
    a.beta_slow = lm_ggml_get_op_params_f32(dst, 10);
    for (int i = 0; i < 4; ++i) {
        a.sections[i] = lm_ggml_get_op_params_i32(dst, 11 + i);
    }
    return a;
}

// YaRN: the dims whose wavelength fits n_rot rotations in n_ctx_orig tokens
// (same float formula as lm_ggml_rope_yarn_corr_dims).
float corr_dim(int n_dims, int n_ctx_orig, float n_rot, float base) {
    return (float) n_dims * logf((float) n_ctx_orig / (n_rot * 2.0f * std::numbers::pi_v<float>) ) /
           (2.0f * logf(base));
}

struct Yarn {
    float low, high; // ramp between these pair indices
    float ext_factor;
    float freq_scale;
    float mscale; // attn_factor, times YaRN's magnitude correction when extrapolating
};

Yarn yarn_of(const RopeArgs & a) {
    Yarn y{};
    const float start = floorf(corr_dim(a.n_dims, a.n_ctx_orig, a.beta_fast, a.freq_base));
    const float end = ceilf(corr_dim(a.n_dims, a.n_ctx_orig, a.beta_slow, a.freq_base));
    y.low = std::max(0.0f, start);
    y.high = std::min((float) (a.n_dims - 1), end);
    y.ext_factor = a.ext_factor;
    y.freq_scale = a.freq_scale;
    y.mscale = a.attn_factor;
    if (a.ext_factor != 0.0f) {
        y.mscale *= 1.0f + 0.1f * logf(1.0f / a.freq_scale);
    }
    return y;
}

// cos/sin of pair k's angle, theta_extrap being the unscaled angle
void yarn_rotation(const Yarn & y, float theta_extrap, int64_t k, float * c, float * s) {
    const float theta_interp = y.freq_scale * theta_extrap;
    float theta = theta_interp;
    if (y.ext_factor != 0.0f) {
        const float t = ((float) k - y.low) / std::max(0.001f, y.high - y.low);
        const float ramp = (1.0f - std::min(1.0f, std::max(0.0f, t))) * y.ext_factor;
        theta = theta_interp * (1.0f - ramp) + theta_extrap * ramp;
    }
    *c = cosf(theta) * y.mscale;
    *s = sinf(theta) * y.mscale;
}

// cache = (cos, sin) of each of the n_dims/2 pairs for one position
void fill_cache(float * cache, int64_t pos, int n_dims, float theta_scale, const float * ff, const Yarn & y) {
    float theta = (float) pos;
    for (int64_t k = 0; k < n_dims / 2; ++k) {
        const float f = ff != nullptr ? ff[k] : 1.0f;
        yarn_rotation(y, theta / f, k, &cache[2 * k], &cache[2 * k + 1]);
        theta *= theta_scale;
    }
}

// Multimodal cache for n_pairs pairs: pair k takes one of the 4 positions by
// its sector k % sum(sections). Each position's angle advances by
// theta_scale every pair; with indep (vision) it restarts from the position
// on entering its section. The if-chains follow ggml's, so sections of size
// 0 behave as there.
void fill_cache_multi(float * cache, const int64_t pos[4], int64_t n_pairs, const int sec[4], bool indep,
                      float theta_scale, const float * ff, const Yarn & y) {
    float theta[4] = {(float) pos[0], (float) pos[1], (float) pos[2], (float) pos[3]};
    const int64_t sect_dims = (int64_t) sec[0] + sec[1] + sec[2] + sec[3];
    const int64_t sec_w = (int64_t) sec[0] + sec[1];
    const int64_t sec_e = sec_w + sec[2];
    for (int64_t k = 0; k < n_pairs; ++k) {
        const int64_t sector = k % sect_dims;
        if (indep) {
            if (sector == 0) {
                theta[0] = (float) pos[0];
            } else if (sector == sec[0]) {
                theta[1] = (float) pos[1];
            } else if (sector == sec_w) {
                theta[2] = (float) pos[2];
            } else if (sector == sec_e) {
                theta[3] = (float) pos[3];
            }
        }
        int which = 0;
        if (sector >= sec[0] && sector < sec_w) {
            which = 1;
        } else if (sector >= sec_w && sector < sec_e) {
            which = 2;
        } else if (sector >= sec_e) {
            which = 3;
        }
        const float f = ff != nullptr ? ff[k] : 1.0f;
        yarn_rotation(y, theta[which] / f, k, &cache[2 * k], &cache[2 * k + 1]);
        for (float & t : theta) {
            t *= theta_scale;
        }
    }
}

inline float load(const float * p) { return *p; }
inline float load(const lm_ggml_fp16_t * p) { return fp16_to_f32(*p); }
inline void store(float * p, float v) { *p = v; }
inline void store(lm_ggml_fp16_t * p, float v) { *p = lm_ggml_compute_fp32_to_fp16(v); }

// Rotate one row (element stride 1): n_pairs pairs, (k, k + gap) or, with
// gap 0, (2k, 2k + 1); elements from 2*n_pairs on are copied. x and y may
// be the same row.
template <typename T>
void rotate_row(const T * x, T * y, int64_t ne0, int64_t n_pairs, int64_t gap, const float * cache) {
    for (int64_t k = 0; k < n_pairs; ++k) {
        const int64_t j0 = gap != 0 ? k : 2 * k;
        const int64_t j1 = gap != 0 ? k + gap : 2 * k + 1;
        const float c = cache[2 * k];
        const float s = cache[2 * k + 1];
        const float x0 = load(x + j0);
        const float x1 = load(x + j1);
        store(y + j0, x0 * c - x1 * s);
        store(y + j1, x0 * s + x1 * c);
    }
    for (int64_t i = 2 * n_pairs; i < ne0; ++i) {
        y[i] = x[i];
    }
}

template <typename T> void rope(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * src = dst->src[0];
    const lm_ggml_tensor * pos = dst->src[1];
    const lm_ggml_tensor * ffs = dst->src[2];
    const RopeArgs a = args_of(dst);
    const Yarn y = yarn_of(a);
    const bool multi = (a.mode & LM_GGML_ROPE_TYPE_MROPE) != 0;
    const bool vision = a.mode == LM_GGML_ROPE_TYPE_VISION;
    const bool neox = (a.mode & LM_GGML_ROPE_TYPE_NEOX) != 0 || multi;
    // vision rotates ne0/2 == n_dims pairs n_dims apart
    const int64_t n_pairs = vision ? a.n_dims : a.n_dims / 2;
    const int64_t gap = vision ? a.n_dims : (neox ? a.n_dims / 2 : 0);
    const float theta_scale = powf(a.freq_base, -2.0f / (float) a.n_dims);
    const float * ff = ffs != nullptr ? (const float *) ffs->data : nullptr;

    const int64_t ne0 = src->ne[0];
    const int64_t ne1 = src->ne[1];
    const int64_t ne2 = src->ne[2];
    float * cache = (float *) lm_cpu_thread_scratch(params); // ne0 floats
    int64_t cached_i2 = -1;

    const Range r = split(ne1 * ne2 * src->ne[3], params->ith, params->nth);
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const int64_t i3 = ir / (ne1 * ne2);
        const int64_t i2 = (ir / ne1) % ne2;
        const int64_t i1 = ir % ne1;
        if (i2 != cached_i2) {
            auto pos_at = [&](int64_t i) { return *(const int32_t *) ((const char *) pos->data + i * pos->nb[0]); };
            if (multi) {
                const int64_t p[4] = {pos_at(i2), pos_at(i2 + ne2), pos_at(i2 + 2 * ne2), pos_at(i2 + 3 * ne2)};
                fill_cache_multi(cache, p, n_pairs, a.sections, vision, theta_scale, ff, y);
            } else {
                fill_cache(cache, pos_at(i2), a.n_dims, theta_scale, ff, y);
            }
            cached_i2 = i2;
        }
        rotate_row((const T *) row_of(src, i1, i2, i3), (T *) row_of(dst, i1, i2, i3), ne0, n_pairs, gap, cache);
    }
}

} // namespace

bool rope_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * src = dst->src[0];
    const lm_ggml_tensor * pos = dst->src[1];
    const lm_ggml_tensor * ffs = dst->src[2];
    if (src == nullptr || pos == nullptr || (src->type != LM_GGML_TYPE_F32 && src->type != LM_GGML_TYPE_F16) ||
        dst->type != src->type || !lm_ggml_are_same_shape(src, dst) || src->nb[0] != lm_ggml_type_size(src->type) ||
        dst->nb[0] != lm_ggml_type_size(dst->type)) {
        return false;
    }
    const RopeArgs a = args_of(dst);
    if ((a.mode & 1) != 0 || a.n_dims <= 0 || a.n_dims % 2 != 0 || a.n_dims > src->ne[0]) {
        return false;
    }
    const bool multi = (a.mode & LM_GGML_ROPE_TYPE_MROPE) != 0;
    const bool vision = a.mode == LM_GGML_ROPE_TYPE_VISION;
    // bits other than NeoX / M-RoPE / vision mean nothing to ggml's CPU either,
    // but are refused rather than guessed at
    if ((a.mode & ~(LM_GGML_ROPE_TYPE_NEOX | LM_GGML_ROPE_TYPE_VISION)) != 0 ||
        ((a.mode & LM_GGML_ROPE_TYPE_VISION) != 0 && !multi)) {
        return false;
    }
    int64_t n_ff = a.n_dims / 2;
    if (multi) {
        int64_t sect_dims = 0;
        for (int s : a.sections) {
            if (s < 0) {
                return false;
            }
            sect_dims += s;
        }
        // ggml: some of the first three sections non-empty, all of them within ne0
        if (a.sections[0] + a.sections[1] + a.sections[2] <= 0 || sect_dims > src->ne[0]) {
            return false;
        }
        if (vision && (int64_t) a.n_dims * 2 != src->ne[0]) {
            return false;
        }
        n_ff = vision ? a.n_dims : n_ff;
    }
    if (pos->type != LM_GGML_TYPE_I32 || pos->ne[0] < src->ne[2] * (multi ? 4 : 1)) {
        return false;
    }
    return ffs == nullptr || (ffs->type == LM_GGML_TYPE_F32 && ffs->nb[0] == sizeof(float) && ffs->ne[0] >= n_ff);
}

size_t rope_work_size(const lm_ggml_tensor * dst, int n_threads) {
    return (size_t) n_threads * pad_line((size_t) dst->ne[0] * sizeof(float));
}

void rope_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    if (dst->src[0]->type == LM_GGML_TYPE_F16) {
        rope<lm_ggml_fp16_t>(params, dst);
    } else {
        rope<float>(params, dst);
    }
}

} // namespace lmggml::cpu::la
