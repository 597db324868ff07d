// NaN inputs reach the products. A NaN activation makes the scale of its
// block NaN at every level (Q8_0 / Q8_1 per 32 values, Q8_K per 256), where a
// NaN-dropping block max used to turn it into a finite level. MUL_MAT through
// this process's kernel set (extra.cmake runs SimdMulMat.* once per level)
// gives NaN exactly where a double-precision product over the same inputs
// does: NaN activations, and weight blocks whose F16 scale is NaN, on the
// rowdot, dot and gemm paths.
#include "../internal_kernels_la/la_test_util.h"
#include "cpu/kernels/la_mul_mat_fast.h"
#include "quant/quants.h"
#include "simd_test_util.h"

namespace {

using namespace simdtest;

bool is_nan_f16(lm_half h) { return std::isnan(lm_ggml_fp16_to_fp32(h)); }

const float kNans[] = {std::nanf(""), -std::nanf(""), std::bit_cast<float>(0xFFFFE000u) /* an F16 NaN, widened */,
                       std::bit_cast<float>(0x7F800001u) /* lowest payload */};

TEST(SimdActivation, NanInABlockMakesItsScaleNan) {
    const std::vector<float> clean = activations(96, 5);
    for (const arch::KernelSet * lv : all_levels()) {
        for (lm_ggml_type type : {LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_Q8_1}) {
            const size_t bs = lm_ggml_type_size(type);
            std::vector<uint8_t> want(3 * bs), got(3 * bs);
            lv->from_float[type](clean.data(), want.data(), 96);
            for (int p = 0; p <= 32; ++p) { // p == 32: the whole block
                for (float nan : kNans) {
                    SCOPED_TRACE(std::string(lv->name) + " " + lm_ggml_type_name(type) + " position " +
                                 std::to_string(p));
                    std::vector<float> x = clean;
                    for (int j = 0; j < 32; ++j) {
                        if (p == 32 || j == p) x[32 + j] = nan;
                    }
                    lv->from_float[type](x.data(), got.data(), 96);
                    // block 1 holds the NaN; blocks 0 and 2 are as before
                    EXPECT_EQ(std::memcmp(got.data(), want.data(), bs), 0);
                    EXPECT_EQ(std::memcmp(got.data() + 2 * bs, want.data() + 2 * bs, bs), 0);
                    if (type == LM_GGML_TYPE_Q8_0) {
                        EXPECT_TRUE(is_nan_f16(((const lm_block_q8_0 *) got.data())[1].d));
                    } else {
                        const lm_block_q8_1 & b = ((const lm_block_q8_1 *) got.data())[1];
                        EXPECT_TRUE(is_nan_f16(b.d));
                        EXPECT_TRUE(is_nan_f16(b.s));
                    }
                }
            }
        }
    }
}

TEST(SimdActivation, NanInASuperBlockMakesItsQ8KScaleNan) {
    const std::vector<float> clean = activations(768, 6);
    for (const arch::KernelSet * lv : all_levels()) {
        lm_block_q8_K want[3], got[3];
        lv->from_float[LM_GGML_TYPE_Q8_K](clean.data(), want, 768);
        for (int p = 0; p < 256; p += 13) {
            SCOPED_TRACE(std::string(lv->name) + " position " + std::to_string(p));
            std::vector<float> x = clean;
            x[256 + p] = kNans[p % 4];
            lv->from_float[LM_GGML_TYPE_Q8_K](x.data(), got, 768);
            EXPECT_TRUE(std::isnan(got[1].d));
            EXPECT_EQ(std::memcmp(&got[0], &want[0], sizeof(got[0])), 0);
            EXPECT_EQ(std::memcmp(&got[2], &want[2], sizeof(got[2])), 0);
        }
    }
}

// the K-quants whose last two bytes are an F16 scale (Q2_K's dmin, Q3_K's and Q6_K's d)
bool k_header_last(lm_ggml_type t) {
    return t == LM_GGML_TYPE_Q2_K || t == LM_GGML_TYPE_Q3_K || t == LM_GGML_TYPE_Q6_K;
}

// Weights from random floats; `nan_rows` get a NaN in one block: its F16
// scale (block types) or one value. Returns the rows as they decode.
std::vector<std::vector<double>> nan_weights(lm_ggml_tensor * a, lmtest::Rng & rng,
                                             const std::vector<int64_t> & nan_rows) {
    const int64_t K = a->ne[0];
    std::vector<float> src((size_t) K), dec((size_t) K);
    std::vector<std::vector<double>> rows;
    for (int64_t r = 0; r < a->ne[1]; ++r) {
        for (float & v : src) v = (float) rng.uniform(-1.0, 1.0);
        char * row = (char *) a->data + r * a->nb[1];
        if (a->type == LM_GGML_TYPE_F32) {
            std::memcpy(row, src.data(), K * sizeof(float));
        } else if (a->type == LM_GGML_TYPE_F16) {
            lm_ggml_fp32_to_fp16_row(src.data(), (lm_ggml_fp16_t *) row, K);
        } else {
            lm_ggml_quantize_chunk(a->type, src.data(), row, 0, 1, K, nullptr);
        }
        if (std::find(nan_rows.begin(), nan_rows.end(), r) != nan_rows.end()) {
            const int64_t nb = K / lm_ggml_blck_size(a->type);
            const int64_t b = r % nb;
            if (a->type == LM_GGML_TYPE_F32) {
                ((float *) row)[b] = std::nanf("");
            } else if (lm_ggml_is_quantized(a->type) && !k_header_last(a->type)) {
                std::memset(row + b * lm_ggml_type_size(a->type), 0xFF, 2); // d first: 0xFFFF is an F16 NaN
            } else { // F16, and the K-quants whose d (Q2_K: dmin) ends the block
                const size_t off = a->type == LM_GGML_TYPE_F16 ? b * 2 : (b + 1) * lm_ggml_type_size(a->type) - 2;
                std::memset(row + off, 0xFF, 2);
            }
        }
        if (a->type == LM_GGML_TYPE_F32) {
            std::memcpy(dec.data(), row, K * sizeof(float));
        } else {
            lm_ggml_get_type_traits(a->type)->to_float(row, dec.data(), K);
        }
        rows.emplace_back(dec.begin(), dec.end());
    }
    return rows;
}

void run_nan_case(lm_ggml_type t, int64_t K, int64_t M, int64_t N, bool in_weights) {
    const std::string what = std::string(lm_ggml_type_name(t)) + " K" + std::to_string(K) + " M" + std::to_string(M) +
                             " N" + std::to_string(N) + (in_weights ? " NaN weights" : " NaN activations") + " level " +
                             arch::kernels().name;
    latest::Context ctx;
    lmtest::Rng rng(lmtest::seed_from_name(what));
    lm_ggml_tensor * a = lm_ggml_new_tensor_2d(ctx, t, K, M);
    lm_ggml_tensor * b = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, K, N);
    const auto w = nan_weights(a, rng, in_weights ? std::vector<int64_t>{0, 3, M - 1} : std::vector<int64_t>{});
    latest::fill(b, rng);
    if (!in_weights) {
        // 1-4 NaNs at spread positions in every column but each third (clean)
        for (int64_t j = 0; j < N; ++j) {
            for (int64_t n = 0; n <= j % 4 && j % 3 != 2; ++n) {
                latest::set_f32(b, (j * 7 + n * 37) % K, j, 0, 0, kNans[(j + n) % 4]);
            }
        }
    }
    lm_ggml_tensor * dst = lm_ggml_mul_mat(ctx, a, b);
    const latest::Ref ref = latest::make_ref(dst, [&](int64_t i0, int64_t i1, int64_t, int64_t) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k) s += w[i0][k] * latest::get(b, k, i1);
        return s;
    });
    latest::check(dst, ref, t == LM_GGML_TYPE_F32 ? 1e-10 : t == LM_GGML_TYPE_F16 ? 5e-5 : 5e-4, what);
}

TEST(SimdMulMat, NanInputsReachTheirProducts) {
    const lm_ggml_type types[] = {LM_GGML_TYPE_Q4_0,  LM_GGML_TYPE_Q4_1, LM_GGML_TYPE_Q5_0, LM_GGML_TYPE_Q5_1,
                                  LM_GGML_TYPE_Q8_0,  LM_GGML_TYPE_F16,  LM_GGML_TYPE_F32,  LM_GGML_TYPE_Q2_K,
                                  LM_GGML_TYPE_Q3_K,  LM_GGML_TYPE_Q4_K, LM_GGML_TYPE_Q5_K, LM_GGML_TYPE_Q6_K,
                                  LM_GGML_TYPE_IQ4_XS};
    for (lm_ggml_type t : types) {
        const int64_t K = lm_ggml_blck_size(t) == 256 ? 512 : 128;
        for (int64_t N : {int64_t(1), int64_t(3), lmggml::cpu::la::kGemmMinCols + 3}) { // rowdot, x8 / dot, gemm
            for (bool in_weights : {false, true}) {
                run_nan_case(t, K, 40, N, in_weights);
            }
        }
    }
}

} // namespace
