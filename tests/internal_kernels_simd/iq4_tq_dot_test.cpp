// IQ4_NL, IQ4_XS, TQ1_0, TQ2_0 row dots at every level this CPU runs (the
// scalar twin included) against a double dot of both rows decoded from the
// format description (lmtest_iq4_tq.h; q8_0 / q8_K decoded here), at lengths
// of one to many blocks, with weight rows ending at an unreadable page; and
// MUL_MAT / GET_ROWS with these weights through the kernel table at this
// process's level (extra.cmake runs SimdMulMat.* once per forced level).
#include "../internal_kernels_la/la_test_util.h"
#include "lmtest_iq4_tq.h"
#include "simd_test_util.h"

namespace {

using namespace simdtest;
namespace ref = lmtest::iq4tq;

const lm_ggml_type kTypes[] = {LM_GGML_TYPE_IQ4_NL, LM_GGML_TYPE_IQ4_XS, LM_GGML_TYPE_TQ1_0, LM_GGML_TYPE_TQ2_0};

lm_ggml_type act_type(lm_ggml_type t) { return t == LM_GGML_TYPE_IQ4_NL ? LM_GGML_TYPE_Q8_0 : LM_GGML_TYPE_Q8_K; }

// q8_0: d f16 | qs[32];  q8_K: d f32 | qs[256] | bsums[16]
std::vector<double> decode_act(lm_ggml_type vt, const uint8_t * p, int64_t n) {
    std::vector<double> y((size_t) n);
    if (vt == LM_GGML_TYPE_Q8_0) {
        for (int64_t b = 0; b < n / 32; ++b, p += 34) {
            for (int j = 0; j < 32; ++j) y[32 * b + j] = ref::half(p) * (int8_t) p[2 + j];
        }
    } else {
        for (int64_t b = 0; b < n / 256; ++b, p += 292) {
            float d;
            std::memcpy(&d, p, 4);
            for (int j = 0; j < 256; ++j) y[256 * b + j] = (double) d * (int8_t) p[4 + j];
        }
    }
    return y;
}

// An activation block at the int8 extreme: every q = -128 (which q8_K's
// quantizer writes for each block's largest value), with consistent bsums.
void extreme_act_block(lm_ggml_type vt, uint8_t * p) {
    if (vt == LM_GGML_TYPE_Q8_0) {
        ref::put_half(p, 0.5);
        std::memset(p + 2, 0x80, 32);
    } else {
        const float d = 0.25f;
        std::memcpy(p, &d, 4);
        std::memset(p + 4, 0x80, 256);
        for (int g = 0; g < 16; ++g) {
            const int16_t s = -128 * 16;
            std::memcpy(p + 260 + 2 * g, &s, 2);
        }
    }
}

void check_type(lm_ggml_type t, const std::vector<int64_t> & lengths) {
    const lm_ggml_type vt = act_type(t);
    const int64_t be = lm_ggml_blck_size(t);
    const size_t bb = lm_ggml_type_size(t);
    for (int64_t n : lengths) {
        SCOPED_TRACE(std::string(lm_ggml_type_name(t)) + " n " + std::to_string(n));
        lmtest::Rng rng(lmtest::seed_from_name(lm_ggml_type_name(t)) + (uint64_t) n);
        GuardedBytes w(lm_ggml_row_size(t, n));
        for (int64_t b = 0; b < n / be; ++b) ref::random_block(t, rng, w.data() + b * bb);
        if (t == LM_GGML_TYPE_IQ4_NL || t == LM_GGML_TYPE_IQ4_XS) {
            std::memset(w.data() + 2 + (t == LM_GGML_TYPE_IQ4_XS ? 6 : 0), 0x00, 16); // levels -127 against -128
        }
        std::vector<double> wd((size_t) n);
        for (int64_t b = 0; b < n / be; ++b) ref::dequantize_block(t, w.data() + b * bb, wd.data() + b * be);

        for (int variant = 0; variant < 2; ++variant) {
            SCOPED_TRACE(variant ? "extreme activations in block 0" : "quantized activations");
            const std::vector<float> x = activations((size_t) n, 77 + (uint64_t) n);
            GuardedBytes a(lm_ggml_row_size(vt, n));
            scalar_level().from_float[vt](x.data(), a.data(), n);
            if (variant) extreme_act_block(vt, a.data());
            const std::vector<double> ad = decode_act(vt, a.data(), n);
            double exact = 0, mag = 0;
            for (int64_t i = 0; i < n; ++i) {
                exact += wd[i] * ad[i];
                mag += std::fabs(wd[i] * ad[i]);
            }
            for (const arch::KernelSet * lv : all_levels()) {
                ASSERT_NE(lv->vec_dot[t], nullptr) << lv->name;
                float got = NAN;
                lv->vec_dot[t]((int) n, &got, 0, w.data(), 0, a.data(), 0, 1);
                EXPECT_NEAR(got, exact, 2e-6 * mag + 1e-30) << lv->name;
            }
        }
    }
}

TEST(SimdVecDotIq4Tq, EveryLevelAgainstDoubleDot) {
    check_type(LM_GGML_TYPE_IQ4_NL, {32, 64, 96, 288, 1024});
    for (lm_ggml_type t : {LM_GGML_TYPE_IQ4_XS, LM_GGML_TYPE_TQ1_0, LM_GGML_TYPE_TQ2_0}) {
        check_type(t, {256, 512, 768, 2048});
    }
}

TEST(SimdVecDotIq4Tq, TableLevelsAndPairing) {
    // every level has a kernel for these types; the x86 levels above scalar
    // that the CPU runs replace it (the dispatch chose a vector kernel). The
    // ARM levels keep the scalar kernels of these types for now (issue 28).
    for (lm_ggml_type t : kTypes) {
        for (const arch::KernelSet * lv : vector_levels()) {
            if (lv->isa == arch::Isa::neon || lv->isa == arch::Isa::dotprod || lv->isa == arch::Isa::i8mm) continue;
            EXPECT_NE(lv->vec_dot[t], scalar_level().vec_dot[t]) << lm_ggml_type_name(t) << " " << lv->name;
        }
        EXPECT_NE(scalar_level().from_float[act_type(t)], nullptr);
    }
}

// MUL_MAT: weights [K, M] of these types times F32 activations [K, N]
TEST(SimdMulMat, IqTqWeights) {
    for (lm_ggml_type t : kTypes) {
        const int64_t be = lm_ggml_blck_size(t);
        const size_t bb = lm_ggml_type_size(t);
        for (int64_t K : {be, 3 * be, be == 32 ? (int64_t) 512 : (int64_t) 1024}) {
            for (int64_t N : {(int64_t) 1, (int64_t) 7, (int64_t) 33}) {
                const int64_t M = 19;
                const std::string what = std::string(lm_ggml_type_name(t)) + " K" + std::to_string(K) + " N" +
                                         std::to_string(N) + " level " + arch::kernels().name;
                SCOPED_TRACE(what);
                latest::Context ctx;
                lmtest::Rng rng(lmtest::seed_from_name(what));
                lm_ggml_tensor * a = lm_ggml_new_tensor_2d(ctx, t, K, M);
                lm_ggml_tensor * x = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, K, N);
                std::vector<double> wd((size_t) (K * M));
                for (int64_t b = 0; b < K * M / be; ++b) {
                    ref::random_block(t, rng, (uint8_t *) a->data + b * bb);
                    ref::dequantize_block(t, (const uint8_t *) a->data + b * bb, wd.data() + b * be);
                }
                latest::fill(x, rng);
                lm_ggml_tensor * dst = lm_ggml_mul_mat(ctx, a, x);
                const latest::Ref want = latest::make_ref(dst, [&](int64_t i0, int64_t i1, int64_t, int64_t) {
                    double s = 0;
                    for (int64_t k = 0; k < K; ++k) s += wd[i0 * K + k] * latest::get(x, k, i1);
                    return s;
                });
                latest::check(dst, want, 5e-4, what);
            }
        }
    }
}

// GET_ROWS of these types gives the decoded rows exactly (every product is exact in float)
TEST(SimdMulMat, IqTqGetRows) {
    for (lm_ggml_type t : kTypes) {
        SCOPED_TRACE(lm_ggml_type_name(t));
        const int64_t be = lm_ggml_blck_size(t), K = 2 * be, rows = 9;
        const size_t bb = lm_ggml_type_size(t);
        latest::Context ctx;
        lmtest::Rng rng(5);
        lm_ggml_tensor * a = lm_ggml_new_tensor_2d(ctx, t, K, rows);
        lm_ggml_tensor * ids = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_I32, 6);
        std::vector<double> wd((size_t) (K * rows));
        for (int64_t b = 0; b < K * rows / be; ++b) {
            ref::random_block(t, rng, (uint8_t *) a->data + b * bb);
            ref::dequantize_block(t, (const uint8_t *) a->data + b * bb, wd.data() + b * be);
        }
        const int32_t pick[6] = {8, 0, 3, 3, 7, 1};
        std::memcpy(ids->data, pick, sizeof(pick));
        lm_ggml_tensor * dst = lm_ggml_get_rows(ctx, a, ids);
        ASSERT_EQ(dst->type, LM_GGML_TYPE_F32);
        latest::run(dst, 2);
        for (int64_t r = 0; r < 6; ++r)
            for (int64_t k = 0; k < K; ++k) ASSERT_EQ(latest::get(dst, k, r), wd[pick[r] * K + k]) << r << " " << k;
    }
}

// CPY F32 -> these types writes the reference quantizer's bytes; CPY back decodes them
TEST(SimdVecDotIq4Tq, CpyConvertsBothWays) {
    for (lm_ggml_type t : kTypes) {
        SCOPED_TRACE(lm_ggml_type_name(t));
        const int64_t K = 2 * lm_ggml_blck_size(t), rows = 3;
        latest::Context ctx;
        lmtest::Rng rng(9);
        lm_ggml_tensor * f = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, K, rows);
        lm_ggml_tensor * q = lm_ggml_new_tensor_2d(ctx, t, K, rows);
        lm_ggml_tensor * back = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, K, rows);
        latest::fill(f, rng);
        lm_ggml_tensor * to_q = lm_ggml_cpy(ctx, f, q);
        latest::run(to_q, 2);
        std::vector<uint8_t> want(lm_ggml_row_size(t, K * rows));
        lm_ggml_get_type_traits(t)->from_float_ref((const float *) f->data, want.data(), K * rows);
        ASSERT_EQ(std::memcmp(q->data, want.data(), want.size()), 0);
        lm_ggml_tensor * to_f = lm_ggml_cpy(ctx, q, back);
        latest::run(to_f, 2);
        std::vector<double> dec((size_t) (K * rows));
        for (int64_t b = 0; b < K * rows / lm_ggml_blck_size(t); ++b) {
            ref::dequantize_block(t, want.data() + b * lm_ggml_type_size(t), dec.data() + b * lm_ggml_blck_size(t));
        }
        for (int64_t i = 0; i < K * rows; ++i) ASSERT_EQ((double) ((const float *) back->data)[i], dec[i]) << i;
    }
}

} // namespace
