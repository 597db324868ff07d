// MUL_MAT, MUL_MAT_ID and OUT_PROD against double-precision references:
// odd and even sizes, broadcasts over dims 2 and 3, permuted / strided
// operands, F32 / F16 / BF16 / block-quantized weights, 1-3 threads.
#include "cpu/kernels/la_ops.h"
#include "la_test_util.h"

using latest::get;
namespace la = lmggml::cpu::la;

namespace {

constexpr double kF32Limit = 1e-7;
constexpr double kHalfLimit = 5e-4; // F16 / BF16 / quantized weights

latest::Ref mul_mat_ref(const lm_ggml_tensor * a, const lm_ggml_tensor * b, const lm_ggml_tensor * dst) {
    const int64_t r2 = b->ne[2] / a->ne[2], r3 = b->ne[3] / a->ne[3];
    return latest::make_ref(dst, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
        double s = 0;
        for (int64_t k = 0; k < a->ne[0]; ++k) {
            s += get(a, k, i0, i2 / r2, i3 / r3) * get(b, k, i1, i2, i3);
        }
        return s;
    });
}

struct MulMatCase {
    lm_ggml_type ta, tb;
    int64_t K, M, N;
    int64_t a2, a3, b2, b3;
};

std::string name_of(const MulMatCase & c) {
    return std::string(lm_ggml_type_name(c.ta)) + "x" + lm_ggml_type_name(c.tb) + " K" + std::to_string(c.K) + " M" +
           std::to_string(c.M) + " N" + std::to_string(c.N) + " a" + std::to_string(c.a2) + "x" + std::to_string(c.a3) +
           " b" + std::to_string(c.b2) + "x" + std::to_string(c.b3);
}

} // namespace

TEST(LaMulMat, ContiguousShapesTypesAndBroadcasts) {
    const MulMatCase cases[] = {
        {LM_GGML_TYPE_F32, LM_GGML_TYPE_F32, 37, 13, 7, 1, 1, 2, 3},  // odd sizes, broadcast both dims
        {LM_GGML_TYPE_F32, LM_GGML_TYPE_F32, 64, 48, 40, 1, 1, 1, 1}, // many 16x16 chunks
        {LM_GGML_TYPE_F32, LM_GGML_TYPE_F32, 16, 130, 1, 1, 1, 1, 1}, // matrix x vector
        {LM_GGML_TYPE_F32, LM_GGML_TYPE_F32, 5, 1, 70, 1, 1, 1, 1},   // single weight row
        {LM_GGML_TYPE_F32, LM_GGML_TYPE_F32, 1, 3, 2, 2, 2, 4, 2},    // K = 1
        {LM_GGML_TYPE_F16, LM_GGML_TYPE_F32, 33, 17, 9, 2, 1, 4, 1},  // b converted to F16
        {LM_GGML_TYPE_F16, LM_GGML_TYPE_F32, 256, 20, 18, 1, 1, 1, 1},
        {LM_GGML_TYPE_F16, LM_GGML_TYPE_F16, 40, 11, 6, 1, 1, 1, 2}, // b already F16
        {LM_GGML_TYPE_BF16, LM_GGML_TYPE_F32, 35, 9, 8, 1, 1, 3, 1}, // b converted to BF16
        {LM_GGML_TYPE_BF16, LM_GGML_TYPE_BF16, 18, 7, 5, 1, 1, 1, 1},
    };
    for (const MulMatCase & c : cases) {
        latest::Context ctx;
        lmtest::Rng rng(lmtest::seed_from_name(name_of(c)));
        lm_ggml_tensor * a = lm_ggml_new_tensor_4d(ctx, c.ta, c.K, c.M, c.a2, c.a3);
        lm_ggml_tensor * b = lm_ggml_new_tensor_4d(ctx, c.tb, c.K, c.N, c.b2, c.b3);
        latest::fill(a, rng);
        latest::fill(b, rng);
        lm_ggml_tensor * dst = lm_ggml_mul_mat(ctx, a, b);
        ASSERT_NE(dst, nullptr);
        const double limit = (c.ta == LM_GGML_TYPE_F32) ? kF32Limit : kHalfLimit;
        latest::check(dst, mul_mat_ref(a, b, dst), limit, name_of(c));
    }
}

// b = permute of a contiguous tensor (rows of one "head" are strided), and a
// permuted like a KV-cache view: rows of a plane are not adjacent.
TEST(LaMulMat, PermutedOperands) {
    for (lm_ggml_type ta : {LM_GGML_TYPE_F32, LM_GGML_TYPE_F16}) {
        latest::Context ctx;
        lmtest::Rng rng(11);
        const int64_t K = 24, M = 19, N = 5, H = 3;
        lm_ggml_tensor * a_full = lm_ggml_new_tensor_3d(ctx, ta, K, H, M);               // (K, heads, M)
        lm_ggml_tensor * b_full = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, K, H, N); // (K, heads, N)
        latest::fill(a_full, rng);
        latest::fill(b_full, rng);
        lm_ggml_tensor * a = lm_ggml_permute(ctx, a_full, 0, 2, 1, 3); // (K, M, heads)
        lm_ggml_tensor * b = lm_ggml_permute(ctx, b_full, 0, 2, 1, 3); // (K, N, heads)
        ASSERT_FALSE(lm_ggml_is_contiguous(a));
        ASSERT_FALSE(lm_ggml_is_contiguous(b));
        lm_ggml_tensor * dst = lm_ggml_mul_mat(ctx, a, b);
        latest::check(dst, mul_mat_ref(a, b, dst), ta == LM_GGML_TYPE_F32 ? kF32Limit : kHalfLimit,
                      lm_ggml_type_name(ta));
    }
}

// Rows of b with gaps between them (a view of every other row).
TEST(LaMulMat, StridedRowsOfB) {
    for (lm_ggml_type ta : {LM_GGML_TYPE_F32, LM_GGML_TYPE_F16}) {
        latest::Context ctx;
        lmtest::Rng rng(12);
        const int64_t K = 21, M = 6, N = 7;
        lm_ggml_tensor * a = lm_ggml_new_tensor_2d(ctx, ta, K, M);
        lm_ggml_tensor * b_full = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, K + 3, 2 * N);
        latest::fill(a, rng);
        latest::fill(b_full, rng);
        lm_ggml_tensor * b = lm_ggml_view_2d(ctx, b_full, K, N, 2 * b_full->nb[1], b_full->nb[0]);
        lm_ggml_tensor * dst = lm_ggml_mul_mat(ctx, a, b);
        latest::check(dst, mul_mat_ref(a, b, dst), ta == LM_GGML_TYPE_F32 ? kF32Limit : kHalfLimit,
                      lm_ggml_type_name(ta));
    }
}

// Block-quantized weights: without a fast dot the kernel decodes rows
// (to_float) and dots in F32; the reference uses the decoded weights too.
TEST(LaMulMat, QuantizedWeights) {
    for (lm_ggml_type ta : {LM_GGML_TYPE_Q4_0, LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_Q4_K, LM_GGML_TYPE_Q6_K}) {
        const lm_ggml_type_traits * tr = lm_ggml_get_type_traits(ta);
        if (tr == nullptr || tr->to_float == nullptr || tr->from_float_ref == nullptr) {
            ADD_FAILURE() << lm_ggml_type_name(ta) << ": no quantizer/decoder in the library yet";
            continue;
        }
        latest::Context ctx;
        lmtest::Rng rng(lmtest::seed_from_name(lm_ggml_type_name(ta)));
        const int64_t K = 512, M = 21, N = 10;
        lm_ggml_tensor * a = lm_ggml_new_tensor_3d(ctx, ta, K, M, 2);
        lm_ggml_tensor * b = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, K, N, 2);
        std::vector<float> w((size_t) (K * M * 2));
        for (float & v : w) {
            v = (float) rng.uniform(-1, 1);
        }
        lm_ggml_quantize_chunk(ta, w.data(), a->data, 0, M * 2, K, nullptr);
        latest::fill(b, rng);

        // decoded weights as the reference sees them
        std::vector<float> dec((size_t) (K * M * 2));
        for (int64_t r = 0; r < M * 2; ++r) {
            tr->to_float((const char *) a->data + r * a->nb[1], dec.data() + r * K, K);
        }
        lm_ggml_tensor * dst = lm_ggml_mul_mat(ctx, a, b);
        ASSERT_TRUE(latest::supported(dst));
        const latest::Ref ref = latest::make_ref(dst, [&](int64_t i0, int64_t i1, int64_t i2, int64_t) {
            double s = 0;
            for (int64_t k = 0; k < K; ++k) {
                s += (double) dec[(size_t) ((i2 * M + i0) * K + k)] * get(b, k, i1, i2, 0);
            }
            return s;
        });
        latest::check(dst, ref, kHalfLimit, lm_ggml_type_name(ta));
    }
}

// The decode path (rows through to_float, then dot_f32), which a weight type
// takes when it has no direct dot: forced here for types that do have one.
namespace {

la::Plan decode_plan(lm_ggml_type t) {
    la::Plan p{};
    p.to_float = la::decoder_of(t);
    p.vec_dot_type = LM_GGML_TYPE_F32;
    p.ok = p.to_float != nullptr;
    return p;
}

// a filled with random weights (quantized through the library for block types)
// and its values as F32 rows, (K, rows) in a's row order
std::vector<float> fill_weights(lm_ggml_tensor * a, lmtest::Rng & rng) {
    const int64_t K = a->ne[0], rows = a->ne[1] * a->ne[2] * a->ne[3];
    std::vector<float> dec((size_t) (K * rows));
    if (!lm_ggml_is_quantized(a->type)) {
        latest::fill(a, rng);
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t k = 0; k < K; ++k)
                dec[(size_t) (r * K + k)] =
                    (float) get(a, k, r % a->ne[1], (r / a->ne[1]) % a->ne[2], r / (a->ne[1] * a->ne[2]));
        return dec;
    }
    std::vector<float> w(dec.size());
    for (float & v : w) {
        v = (float) rng.uniform(-1, 1);
    }
    lm_ggml_quantize_chunk(a->type, w.data(), a->data, 0, rows, K, nullptr);
    for (int64_t r = 0; r < rows; ++r) {
        la::decoder_of(a->type)((const char *) a->data + r * a->nb[1], dec.data() + r * K, K);
    }
    return dec;
}

} // namespace

TEST(LaMulMat, DecodePath) {
    for (lm_ggml_type ta : {LM_GGML_TYPE_F16, LM_GGML_TYPE_BF16, LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_Q4_K}) {
        for (int64_t N : {1, 70}) {
            const la::Plan plan = decode_plan(ta);
            ASSERT_TRUE(plan.ok) << lm_ggml_type_name(ta);
            latest::Context ctx;
            lmtest::Rng rng(lmtest::seed_from_name(lm_ggml_type_name(ta)) + N);
            const int64_t K = 256, M = 37;
            lm_ggml_tensor * a = lm_ggml_new_tensor_3d(ctx, ta, K, M, 2);
            lm_ggml_tensor * b = lm_ggml_new_tensor_4d(ctx, LM_GGML_TYPE_F32, K, N, 4, 2); // a broadcast over dims 2, 3
            const std::vector<float> dec = fill_weights(a, rng);
            latest::fill(b, rng);
            lm_ggml_tensor * dst = lm_ggml_mul_mat(ctx, a, b);
            const latest::Ref ref = latest::make_ref(dst, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
                double s = 0;
                for (int64_t k = 0; k < K; ++k) {
                    s += (double) dec[(size_t) (((i2 / 2) * M + i0) * K + k)] * get(b, k, i1, i2, i3);
                }
                return s;
            });
            const latest::Kernel kernel{
                [plan](const lm_cpu_params * p, lm_ggml_tensor * d) { la::mul_mat_forward_with(p, d, plan); },
                [plan](const lm_ggml_tensor * d, int n) { return la::mul_mat_work_size_with(d, n, plan); }};
            // weights decoded exactly and activations kept F32: as tight as F32
            latest::check(dst, ref, kF32Limit, std::string(lm_ggml_type_name(ta)) + " N" + std::to_string(N), {},
                          kernel);
        }
    }
}

TEST(LaMulMat, RefusesWhatItDoesNotImplement) {
    latest::Context ctx;
    lm_ggml_tensor * a = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 8, 4);
    lm_ggml_tensor * bh = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F16, 8, 3);
    lm_ggml_tensor * b = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 8, 3);
    // F32 weights with F16 activations: ggml does not take it either
    EXPECT_FALSE(latest::supported(lm_ggml_mul_mat(ctx, a, bh)));
    // a weight type with neither a dot nor a decoder
    lm_ggml_tensor * d = lm_ggml_mul_mat(ctx, a, b);
    lm_ggml_tensor * ai = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_I32, 8, 4);
    d->src[0] = ai;
    EXPECT_FALSE(latest::supported(d));
    // elements of a row not adjacent (a transposed operand)
    lm_ggml_tensor * at = lm_ggml_view_tensor(ctx, a);
    at->nb[0] = 8;
    d->src[0] = at;
    EXPECT_FALSE(latest::supported(d));
    d->src[0] = a;
    EXPECT_TRUE(latest::supported(d));
}

// ---------------------------------------------------------------- MUL_MAT_ID
namespace {

void mul_mat_id_case(lm_ggml_type ta, int64_t K, int64_t M, int64_t n_as, int64_t n_used, int64_t ne11, int64_t n_tok) {
    const std::string what = std::string(lm_ggml_type_name(ta)) + " M" + std::to_string(M) + " tok" +
                             std::to_string(n_tok) + " ne11 " + std::to_string(ne11);
    latest::Context ctx;
    lmtest::Rng rng(lmtest::seed_from_name(what));
    lm_ggml_tensor * as = lm_ggml_new_tensor_3d(ctx, ta, K, M, n_as);
    lm_ggml_tensor * b = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, K, ne11, n_tok);
    lm_ggml_tensor * ids = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_I32, n_used, n_tok);
    latest::fill(as, rng);
    latest::fill(b, rng);
    for (int64_t t = 0; t < n_tok; ++t) {
        // distinct experts per token, as top-k routing gives
        const int64_t first = rng.int_in(0, n_as - 1);
        for (int64_t s = 0; s < n_used; ++s) {
            ((int32_t *) ids->data)[t * n_used + s] = (int32_t) ((first + s * 3) % n_as);
        }
    }
    lm_ggml_tensor * dst = lm_ggml_mul_mat_id(ctx, as, b, ids);
    ASSERT_NE(dst, nullptr);
    const latest::Ref ref = latest::make_ref(dst, [&](int64_t i0, int64_t s, int64_t t, int64_t) {
        const int32_t e = ((const int32_t *) ids->data)[t * n_used + s];
        double acc = 0;
        for (int64_t k = 0; k < K; ++k) {
            acc += get(as, k, i0, e) * get(b, k, s % ne11, t);
        }
        return acc;
    });
    latest::check(dst, ref, ta == LM_GGML_TYPE_F32 ? kF32Limit : kHalfLimit, what);
}

} // namespace

TEST(LaMulMatId, DecodePath) {
    latest::Context ctx;
    lmtest::Rng rng(71);
    const int64_t K = 64, M = 12, n_as = 5, n_used = 2, n_tok = 9;
    lm_ggml_tensor * as = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_Q8_0, K, M, n_as);
    lm_ggml_tensor * b = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, K, n_used, n_tok);
    lm_ggml_tensor * ids = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_I32, n_used, n_tok);
    const std::vector<float> dec = fill_weights(as, rng);
    latest::fill(b, rng);
    for (int64_t t = 0; t < n_tok; ++t) {
        for (int64_t s = 0; s < n_used; ++s) {
            ((int32_t *) ids->data)[t * n_used + s] = (int32_t) ((t + 2 * s) % n_as);
        }
    }
    lm_ggml_tensor * dst = lm_ggml_mul_mat_id(ctx, as, b, ids);
    const latest::Ref ref = latest::make_ref(dst, [&](int64_t i0, int64_t s, int64_t t, int64_t) {
        const int32_t e = ((const int32_t *) ids->data)[t * n_used + s];
        double acc = 0;
        for (int64_t k = 0; k < K; ++k) {
            acc += (double) dec[(size_t) ((e * M + i0) * K + k)] * get(b, k, s, t);
        }
        return acc;
    });
    const la::Plan plan = decode_plan(LM_GGML_TYPE_Q8_0);
    const latest::Kernel kernel{
        [plan](const lm_cpu_params * p, lm_ggml_tensor * d) { la::mul_mat_id_forward_with(p, d, plan); },
        [plan](const lm_ggml_tensor * d, int n) { return la::mul_mat_id_work_size_with(d, n, plan); }};
    latest::check(dst, ref, kF32Limit, "q8_0 decoded", {}, kernel);
}

// An id outside [0, n_as) must not read out of bounds; its column becomes 0.
TEST(LaMulMatId, InvalidExpertGivesZeros) {
    latest::Context ctx;
    lmtest::Rng rng(72);
    lm_ggml_tensor * as = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, 8, 4, 3);
    lm_ggml_tensor * b = lm_ggml_new_tensor_3d(ctx, LM_GGML_TYPE_F32, 8, 1, 2);
    lm_ggml_tensor * ids = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_I32, 2, 2);
    latest::fill(as, rng);
    latest::fill(b, rng);
    const int32_t expert[4] = {1, 7, -1, 2}; // (slot, token): (0,0)=1 (1,0)=7 (0,1)=-1 (1,1)=2
    memcpy(ids->data, expert, sizeof(expert));
    lm_ggml_tensor * dst = lm_ggml_mul_mat_id(ctx, as, b, ids);
    const latest::Ref ref = latest::make_ref(dst, [&](int64_t i0, int64_t s, int64_t t, int64_t) {
        const int32_t e = expert[t * 2 + s];
        double acc = 0;
        for (int64_t k = 0; e >= 0 && e < 3 && k < 8; ++k) {
            acc += get(as, k, i0, e) * get(b, k, 0, t);
        }
        return acc;
    });
    latest::check(dst, ref, kF32Limit, "invalid ids");
}

TEST(LaMulMatId, ExpertsPerToken) {
    mul_mat_id_case(LM_GGML_TYPE_F32, 32, 10, 4, 2, 2, 5); // more weight rows than pairs
    mul_mat_id_case(LM_GGML_TYPE_F32, 17, 3, 5, 2, 1, 20); // shared input row, more pairs than rows
    mul_mat_id_case(LM_GGML_TYPE_F16, 48, 37, 8, 3, 3, 6);
    mul_mat_id_case(LM_GGML_TYPE_F32, 20, 40, 6, 4, 4, 33);
}

// ---------------------------------------------------------------- OUT_PROD
TEST(LaOutProd, BroadcastAndTransposedB) {
    for (lm_ggml_type ta : {LM_GGML_TYPE_F32, LM_GGML_TYPE_F16}) {
        for (bool transposed : {false, true}) {
            latest::Context ctx;
            lmtest::Rng rng(21 + transposed);
            const int64_t M = 9, K = 7, N = 5;
            lm_ggml_tensor * a = lm_ggml_new_tensor_4d(ctx, ta, M, K, 2, 1);
            latest::fill(a, rng);
            lm_ggml_tensor * b;
            if (transposed) {
                lm_ggml_tensor * b0 = lm_ggml_new_tensor_4d(ctx, LM_GGML_TYPE_F32, K, N, 4, 3);
                latest::fill(b0, rng);
                b = lm_ggml_transpose(ctx, b0); // (N, K, 4, 3), elements of a row K apart
            } else {
                b = lm_ggml_new_tensor_4d(ctx, LM_GGML_TYPE_F32, N, K, 4, 3);
                latest::fill(b, rng);
            }
            lm_ggml_tensor * dst = lm_ggml_out_prod(ctx, a, b);
            ASSERT_NE(dst, nullptr);
            const int64_t r2 = b->ne[2] / a->ne[2], r3 = b->ne[3] / a->ne[3];
            const latest::Ref ref = latest::make_ref(dst, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
                double s = 0;
                for (int64_t k = 0; k < K; ++k) {
                    s += get(a, i0, k, i2 / r2, i3 / r3) * get(b, i1, k, i2, i3);
                }
                return s;
            });
            latest::check(dst, ref, kF32Limit, std::string(lm_ggml_type_name(ta)) + (transposed ? " bT" : ""));
        }
    }
}
