// MUL_MAT through the kernel table with this process's kernel set (the
// highest level, or LMGGML_CPU_ISA: extra.cmake runs this binary once per
// level): the rowdot and gemm paths against a double reference on 1-3
// threads (bit-identical across thread counts), and against the plain
// row-dot loop run with the scalar twin's dot.
#include "../internal_kernels_la/la_test_util.h"
#include "cpu/kernels/la_mul_mat_fast.h"
#include "cpu/kernels/la_ops.h"
#include "simd_test_util.h"

namespace {

namespace la = lmggml::cpu::la;
using simdtest::arch::kernels;

struct Case {
    lm_ggml_type t;
    int64_t K, M, N, a2, b2;
};

std::string name_of(const Case & c) {
    return std::string(lm_ggml_type_name(c.t)) + " K" + std::to_string(c.K) + " M" + std::to_string(c.M) + " N" +
           std::to_string(c.N) + " a2 " + std::to_string(c.a2) + " b2 " + std::to_string(c.b2);
}

// The scalar twin's dot behind a pointer of its own: where the level has no
// vector dot for the type (ARM's IQ4_XS), the twin's plan must still differ
// from the type's own plan, which is what keeps it off the fast paths.
lm_ggml_vec_dot_t g_twin_dot = nullptr;
void twin_dot(int n, float * s, size_t bs, const void * x, size_t bx, const void * y, size_t by, int nrc) {
    g_twin_dot(n, s, bs, x, bx, y, by, nrc);
}

// Weights from random floats (quantized for block types); decoded copy in double.
std::vector<std::vector<double>> fill_weights(lm_ggml_tensor * a, lmtest::Rng & rng) {
    const int64_t K = a->ne[0];
    std::vector<std::vector<double>> rows;
    std::vector<float> src((size_t) K), dec((size_t) K);
    for (int64_t r = 0; r < a->ne[1] * a->ne[2]; ++r) {
        for (float & v : src) v = (float) rng.uniform(-1.0, 1.0);
        char * row = (char *) a->data + r * a->nb[1];
        if (a->type == LM_GGML_TYPE_F32) {
            std::memcpy(row, src.data(), K * sizeof(float));
            dec = src;
        } else if (a->type == LM_GGML_TYPE_F16) {
            lm_ggml_fp32_to_fp16_row(src.data(), (lm_ggml_fp16_t *) row, K);
            lm_ggml_get_type_traits(a->type)->to_float(row, dec.data(), K);
        } else {
            lm_ggml_quantize_chunk(a->type, src.data(), row, 0, 1, K, nullptr);
            lm_ggml_get_type_traits(a->type)->to_float(row, dec.data(), K);
        }
        rows.emplace_back(dec.begin(), dec.end());
    }
    return rows;
}

void run_case(const Case & c) {
    SCOPED_TRACE(name_of(c) + " level " + kernels().name);
    latest::Context ctx;
    lmtest::Rng rng(lmtest::seed_from_name(name_of(c)));
    lm_ggml_tensor * a = lm_ggml_new_tensor_3d(ctx, c.t, c.K, c.M, c.a2);
    lm_ggml_tensor * b = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, c.K, c.N, c.b2);
    const auto w = fill_weights(a, rng);
    latest::fill(b, rng);
    lm_ggml_tensor * dst = lm_ggml_mul_mat(ctx, a, b);

    const int64_t r2 = c.b2 / c.a2;
    auto mag = [&](int64_t i0, int64_t i1, int64_t i2) {
        double s = 0;
        for (int64_t k = 0; k < c.K; ++k) s += std::fabs(w[(i2 / r2) * c.M + i0][k] * latest::get(b, k, i1, i2));
        return s;
    };
    const latest::Ref ref = latest::make_ref(dst, [&](int64_t i0, int64_t i1, int64_t i2, int64_t) {
        double s = 0;
        for (int64_t k = 0; k < c.K; ++k) s += w[(i2 / r2) * c.M + i0][k] * latest::get(b, k, i1, i2);
        return s;
    });
    const double limit = c.t == LM_GGML_TYPE_F32 ? 1e-10 : c.t == LM_GGML_TYPE_F16 ? 5e-5 : 5e-4;
    latest::check(dst, ref, limit, name_of(c));
    const latest::Ref fast = latest::read(dst);

    // the row-dot loop with the scalar twin's dot: the same activation
    // rounding, except the K-quant Gemm and the IQ4_XS RowDot, which round
    // per sub-block where the dot rounds per 256 (Q8_K; layouts.h): there the
    // two may differ by up to one activation level, at most max|x| / 127 per
    // product term
    const la::FastPath::Kind kind = la::fast_path_for(la::plan_for(c.t), dst).kind;
    const bool per_sub = lm_ggml_blck_size(c.t) == 256 &&
                         (kind == la::FastPath::gemm || (c.t == LM_GGML_TYPE_IQ4_XS && kind == la::FastPath::rowdot));
    const double twin_tol = per_sub ? 1.0 / 127 : 4e-6;
    la::Plan twin = la::plan_for(c.t);
    g_twin_dot = simdtest::scalar_level().vec_dot[c.t];
    twin.vec_dot = twin_dot;
    EXPECT_EQ(la::fast_path_for(twin, dst).kind, la::FastPath::none);
    latest::Kernel k;
    k.forward = [&](const lm_cpu_params * p, lm_ggml_tensor * d) { la::mul_mat_forward_with(p, d, twin); };
    k.work_size = [&](const lm_ggml_tensor * d, int nth) { return la::mul_mat_work_size_with(d, nth, twin); };
    latest::run(dst, 1, k);
    const latest::Ref slow = latest::read(dst);
    size_t i = 0;
    for (int64_t i2 = 0; i2 < c.b2; ++i2)
        for (int64_t i1 = 0; i1 < c.N; ++i1)
            for (int64_t i0 = 0; i0 < c.M; ++i0, ++i) {
                ASSERT_NEAR(fast[i], slow[i], twin_tol * mag(i0, i1, i2) + 1e-30)
                    << "(" << i0 << ", " << i1 << ", " << i2 << ")";
            }
}

TEST(SimdMulMat, FastPathsAgainstReferenceAndTwin) {
    const lm_ggml_type types[] = {LM_GGML_TYPE_Q4_0, LM_GGML_TYPE_Q4_1, LM_GGML_TYPE_Q5_0, LM_GGML_TYPE_Q5_1,
                                  LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_F16,  LM_GGML_TYPE_F32};
    for (lm_ggml_type t : types) {
        for (const Case & c : {Case{t, 64, 45, 1, 1, 1}, // matrix x vector
                               Case{t, 96, 33, 2, 1, 1}, // few columns
                               Case{t, 96, 70, 7, 1, 1}, // just under the gemm threshold
                               Case{t, 64, 33, la::kGemmMinCols, 1, 1}, Case{t, 288, 70, 9, 1, 1},
                               Case{t, 64, 40, 33, 1, 3},     // broadcast over dim 2
                               Case{t, 128, 96, 20, 2, 2},    // one weight plane per b plane
                               Case{t, 32, 5, 40, 1, 1},      // one small panel: the columns are split
                               Case{t, 1536, 40, 9, 1, 1}}) { // long rows: chunks of k
            run_case(c);
        }
    }
}

TEST(SimdMulMat, KQuants) {
    for (lm_ggml_type t : {LM_GGML_TYPE_Q2_K, LM_GGML_TYPE_Q3_K, LM_GGML_TYPE_Q4_K, LM_GGML_TYPE_Q5_K,
                           LM_GGML_TYPE_Q6_K, LM_GGML_TYPE_IQ4_XS}) {
        for (const Case & c : {Case{t, 256, 45, 1, 1, 1}, Case{t, 512, 33, 9, 1, 1}, Case{t, 256, 40, 33, 1, 3},
                               Case{t, 256 * 7, 40, 9, 1, 1}}) {
            run_case(c);
        }
    }
}

TEST(SimdMulMat, PathChoice) {
    latest::Context ctx;
    lm_ggml_tensor * a = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_Q8_0, 64, 8);
    lm_ggml_tensor * b1 = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 64, 1);
    lm_ggml_tensor * bn = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 64, la::kGemmMinCols);
    lm_ggml_tensor * bq = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_Q8_0, 64, la::kGemmMinCols);
    const la::Plan p = la::plan_for(LM_GGML_TYPE_Q8_0);
    const auto & ks = kernels();
    EXPECT_EQ(la::fast_path_for(p, lm_ggml_mul_mat(ctx, a, b1)).kind,
              ks.rowdot[LM_GGML_TYPE_Q8_0] ? la::FastPath::rowdot : la::FastPath::none);
    EXPECT_EQ(la::fast_path_for(p, lm_ggml_mul_mat(ctx, a, bn)).kind,
              ks.gemm[LM_GGML_TYPE_Q8_0] ? la::FastPath::gemm
                                         : (ks.rowdot[LM_GGML_TYPE_Q8_0] ? la::FastPath::rowdot : la::FastPath::none));
    // activations already in the vec_dot type are used as they are
    EXPECT_EQ(la::fast_path_for(p, lm_ggml_mul_mat(ctx, a, bq)).kind, la::FastPath::none);
}

} // namespace
