// Strided float loads/stores and the flat-order copy shared by DUP/CPY/CONT,
// SET, ACC and GET_ROWS.

#include "ew_common.h"
#include "../arch/kernels.h"

namespace lm_cpu_ew {

namespace {

template <size_t N> void copy_units_fixed(const char * src, size_t ss, char * dst, size_t ds, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        std::memcpy(dst + i * ds, src + i * ss, N);
    }
}

} // namespace

void load_run(lm_ggml_type t, const char * src, size_t stride, int64_t n, float * out) {
    switch (t) {
        case LM_GGML_TYPE_F32:
            if (stride == sizeof(float)) {
                std::memcpy(out, src, n * sizeof(float));
            } else {
                for (int64_t i = 0; i < n; ++i) std::memcpy(&out[i], src + i * stride, sizeof(float));
            }
            break;
        case LM_GGML_TYPE_F16:
            for (int64_t i = 0; i < n; ++i) {
                lm_ggml_fp16_t h;
                std::memcpy(&h, src + i * stride, sizeof(h));
                out[i] = lm_ggml_compute_fp16_to_fp32(h);
            }
            break;
        case LM_GGML_TYPE_BF16:
            for (int64_t i = 0; i < n; ++i) {
                lm_ggml_bf16_t h;
                std::memcpy(&h, src + i * stride, sizeof(h));
                out[i] = lm_ggml_compute_bf16_to_fp32(h);
            }
            break;
        default: LM_GGML_ABORT("load_run: type %d is not a float type", (int) t);
    }
}

void store_run(lm_ggml_type t, char * dst, size_t stride, int64_t n, const float * in) {
    switch (t) {
        case LM_GGML_TYPE_F32:
            if (stride == sizeof(float)) {
                std::memmove(dst, in, n * sizeof(float));
            } else {
                for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * stride, &in[i], sizeof(float));
            }
            break;
        case LM_GGML_TYPE_F16: {
            // the CPU's vector converter (round to nearest even, as the scalar one)
            const auto convert = lmggml::cpu::arch::kernels().from_float[LM_GGML_TYPE_F16];
            if (stride == sizeof(lm_ggml_fp16_t)) {
                convert(in, dst, n);
                break;
            }
            lm_ggml_fp16_t h[kChunk];
            for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
                const int64_t m = std::min<int64_t>(kChunk, n - i0);
                convert(in + i0, h, m);
                for (int64_t i = 0; i < m; ++i) std::memcpy(dst + (i0 + i) * stride, &h[i], sizeof(h[i]));
            }
            break;
        }
        case LM_GGML_TYPE_BF16:
            for (int64_t i = 0; i < n; ++i) {
                const lm_ggml_bf16_t h = lm_ggml_compute_fp32_to_bf16(in[i]);
                std::memcpy(dst + i * stride, &h, sizeof(h));
            }
            break;
        default: LM_GGML_ABORT("store_run: type %d is not a float type", (int) t);
    }
}

void copy_run(lm_ggml_type st, const char * src, size_t s_stride, lm_ggml_type dt, char * dst, size_t d_stride,
              int64_t n, size_t unit) {
    if (n <= 0) {
        return;
    }
    if (st == dt) {
        if (src == dst && s_stride == d_stride) {
            return; // copying onto itself (in-place views)
        }
        if (s_stride == unit && d_stride == unit) {
            std::memmove(dst, src, n * unit);
            return;
        }
        switch (unit) {
            case 1: copy_units_fixed<1>(src, s_stride, dst, d_stride, n); break;
            case 2: copy_units_fixed<2>(src, s_stride, dst, d_stride, n); break;
            case 4: copy_units_fixed<4>(src, s_stride, dst, d_stride, n); break;
            case 8: copy_units_fixed<8>(src, s_stride, dst, d_stride, n); break;
            default:
                for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * d_stride, src + i * s_stride, unit);
                break;
        }
        return;
    }
    float buf[kChunk];
    for (int64_t i = 0; i < n; i += kChunk) {
        const int64_t m = std::min<int64_t>(kChunk, n - i);
        load_run(st, src + i * s_stride, s_stride, m, buf);
        store_run(dt, dst + i * d_stride, d_stride, m, buf);
    }
}

namespace {

// The same elements in the same flat order as fewer, longer rows: dims of
// size 1 are dropped and a dim that continues the one below it without a gap
// is merged into it. A transposed column (ne 1 x n) becomes one strided run
// instead of n one-element rows. Only for types with one element per unit.
lm_ggml_tensor squeezed(const lm_ggml_tensor * t) {
    lm_ggml_tensor s = *t;
    int n = 0;
    for (int i = 0; i < LM_GGML_MAX_DIMS; ++i) {
        if (t->ne[i] == 1) {
            continue;
        }
        if (n > 0 && t->nb[i] == s.nb[n - 1] * (size_t) s.ne[n - 1]) {
            s.ne[n - 1] *= t->ne[i];
            continue;
        }
        s.ne[n] = t->ne[i];
        s.nb[n] = t->nb[i];
        ++n;
    }
    if (n == 0) {
        s.ne[0] = 1;
        s.nb[0] = lm_ggml_type_size(t->type);
        n = 1;
    }
    for (int i = n; i < LM_GGML_MAX_DIMS; ++i) {
        s.ne[i] = 1;
        s.nb[i] = s.nb[i - 1] * (size_t) s.ne[i - 1];
    }
    return s;
}

} // namespace

void copy_flat_range(const lm_ggml_tensor * src_in, lm_ggml_tensor * dst_in, int64_t f0, int64_t f1) {
    const bool scalar_units = lm_ggml_blck_size(src_in->type) == 1 && lm_ggml_blck_size(dst_in->type) == 1;
    lm_ggml_tensor src_s{}, dst_s{};
    if (scalar_units) {
        src_s = squeezed(src_in);
        dst_s = squeezed(dst_in);
    }
    const lm_ggml_tensor * src = scalar_units ? &src_s : src_in;
    lm_ggml_tensor * dst = scalar_units ? &dst_s : dst_in;
    const int64_t us = units_per_row(src); // units per src row
    const int64_t ud = units_per_row(dst); // units per dst row
    if (us == 0 || ud == 0) {
        return;
    }
    // same type: byte copies of whole units (a block for block types)
    const size_t unit = src->type == dst->type ? lm_ggml_type_size(src->type) : 0;

    int64_t f = f0;
    while (f < f1) {
        const int64_t sr = f / us;
        const int64_t si = f - sr * us;
        const int64_t dr = f / ud;
        const int64_t di = f - dr * ud;
        const int64_t n = std::min({us - si, ud - di, f1 - f});

        const RowIdx s = row_idx(sr, src->ne);
        const RowIdx d = row_idx(dr, dst->ne);
        const char * sp = row_ptr(src, s.i1, s.i2, s.i3) + si * src->nb[0];
        char * dp = row_ptr_mut(dst, d.i1, d.i2, d.i3) + di * dst->nb[0];
        copy_run(src->type, sp, src->nb[0], dst->type, dp, dst->nb[0], n, unit);
        f += n;
    }
}

} // namespace lm_cpu_ew
