// OUT_PROD: dst(i0, i1, i2, i3) = sum_k a(i0, k, i2/r2, i3/r3) * b(i1, k, i2, i3)
//   a   (ne00, K, ne02, ne03)  F32, or any type with to_float (decoded per row)
//   b   (ne10, K, ne12, ne13)  F32, any strides (b is often a transposed view)
//   dst (ne00, ne10, ne12, ne13)
// Threads own whole dst rows (zeroed, then accumulated over k in ascending
// order, as ggml does), so no barrier is needed.
#include "la_ops.h"
#include "la_vec_dot.h"

namespace lmggml::cpu::la {
namespace {

size_t row_bytes(const lm_ggml_tensor * a) {
    return a->type == LM_GGML_TYPE_F32 ? 0 : pad_line((size_t) a->ne[0] * sizeof(float));
}

} // namespace

bool out_prod_supports(const lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    const lm_ggml_tensor * b = dst->src[1];
    if (a == nullptr || b == nullptr || dst->type != LM_GGML_TYPE_F32 || dst->nb[0] != sizeof(float) ||
        b->type != LM_GGML_TYPE_F32) {
        return false;
    }
    if (a->type != LM_GGML_TYPE_F32 && decoder_of(a->type) == nullptr) {
        return false;
    }
    if (a->nb[0] != lm_ggml_type_size(a->type)) {
        return false;
    }
    return dst->ne[0] == a->ne[0] && dst->ne[1] == b->ne[0] && dst->ne[2] == b->ne[2] && dst->ne[3] == b->ne[3] &&
           a->ne[1] == b->ne[1] && a->ne[2] > 0 && a->ne[3] > 0 && b->ne[2] % a->ne[2] == 0 &&
           b->ne[3] % a->ne[3] == 0;
}

size_t out_prod_work_size(const lm_ggml_tensor * dst, int n_threads) {
    return (size_t) n_threads * row_bytes(dst->src[0]);
}

void out_prod_forward(const lm_cpu_params * params, lm_ggml_tensor * dst) {
    const lm_ggml_tensor * a = dst->src[0];
    const lm_ggml_tensor * b = dst->src[1];

    const int64_t ne0 = dst->ne[0];
    const int64_t ne1 = dst->ne[1];
    const int64_t ne2 = dst->ne[2];
    const int64_t K   = a->ne[1];
    const int64_t r2  = ne2 / a->ne[2];
    const int64_t r3  = dst->ne[3] / a->ne[3];

    lm_ggml_to_float_t to_float = nullptr;
    if (a->type != LM_GGML_TYPE_F32) {
        to_float = decoder_of(a->type);
    }
    float * decoded = (float *) ((char *) params->wdata + (size_t) params->ith * row_bytes(a));

    const Range r = split(ne1 * ne2 * dst->ne[3], params->ith, params->nth);
    for (int64_t ir = r.begin; ir < r.end; ++ir) {
        const int64_t i3 = ir / (ne1 * ne2);
        const int64_t i2 = (ir / ne1) % ne2;
        const int64_t i1 = ir % ne1;

        float * d = (float *) row_of(dst, i1, i2, i3);
        std::fill_n(d, ne0, 0.0f);
        for (int64_t k = 0; k < K; ++k) {
            const char * xa = row_of(a, k, i2 / r2, i3 / r3);
            const float  vb = *(const float *) ((const char *) b->data + i1 * b->nb[0] + k * b->nb[1] +
                                                i2 * b->nb[2] + i3 * b->nb[3]);
            const float * x = (const float *) xa;
            if (to_float != nullptr) {
                to_float(xa, decoded, ne0);
                x = decoded;
            }
            mad_f32(ne0, d, x, vb);
        }
    }
}

} // namespace lmggml::cpu::la
