// End to end through the core's op constructors and the CPU graph walk:
// checks that the op_params each constructor writes are the ones the
// element-wise kernels read (docs/OPS.md), with 1 and 3 threads.

#include "ew_test_util.h"

#include "ggml-cpu.h"

#include <algorithm>
#include <numeric>

using namespace ewtest;

namespace {

void compute(lm_ggml_context * ctx, lm_ggml_tensor * out, int n_threads) {
    lm_ggml_cgraph * g = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(g, out);
    ASSERT_EQ(lm_ggml_graph_compute_with_ctx(ctx, g, n_threads), LM_GGML_STATUS_SUCCESS);
}

} // namespace

// The KV-cache write: a token batch copied, transposed and converted, into
// a window of an F16 cache.
// One token (a 1 x n_embd column: one strided run) and a batch.
TEST(EwGraph, CopyIntoTransposedCacheWindow) {
    for (int nth : {1, 3})
        for (int n_tok : {1, 5}) {
            Context ctx;
            const int n_ctx = 16, n_embd = 8, pos = 3;
            lm_ggml_tensor * cache = lm_ggml_new_tensor_2d(ctx.get(), LM_GGML_TYPE_F16, n_ctx, n_embd);
            lm_ggml_tensor * v = lm_ggml_new_tensor_2d(ctx.get(), LM_GGML_TYPE_F32, n_embd, n_tok);
            std::memset(cache->data, 0, lm_ggml_nbytes(cache));
            fill(v, 200);
            lm_ggml_tensor * win = lm_ggml_view_2d(ctx.get(), cache, n_tok, n_embd, cache->nb[1], pos * cache->nb[0]);
            compute(ctx.get(), lm_ggml_cpy(ctx.get(), lm_ggml_transpose(ctx.get(), v), win), nth);
            for (int e = 0; e < n_embd; ++e) {
                for (int p = 0; p < n_ctx; ++p) {
                    const bool in = p >= pos && p < pos + n_tok;
                    const double want =
                        in ? lm_ggml_fp16_to_fp32(lm_ggml_fp32_to_fp16(float(get(v, e, p - pos)))) : 0.0;
                    ASSERT_EQ(get(cache, p, e), want) << "pos " << p << " embd " << e;
                }
            }
        }
}

// Unit dims dropped and gapless dims merged must keep the flat order: a
// permuted F32 source with a unit dim into an F16 view with a row gap.
TEST(EwGraph, CopyThroughUnitAndMergedDims) {
    for (int nth : {1, 2, 3})
        for (bool contiguous_first : {false, true}) {
            Context ctx;
            lm_ggml_tensor * a = lm_ggml_new_tensor_4d(ctx.get(), LM_GGML_TYPE_F32, 3, 1, 4, 5); // (3, 1, 4, 5)
            fill(a, 212);
            lm_ggml_tensor * p =
                lm_ggml_permute(ctx.get(), a, 0, 3, 2, 1); // (3, 5, 4, 1): p(i0, i1, i2) = a(i0, 0, i2, i1)
            lm_ggml_tensor * src = contiguous_first ? lm_ggml_cont(ctx.get(), p) : p;
            lm_ggml_tensor * big = lm_ggml_new_tensor_2d(ctx.get(), LM_GGML_TYPE_F16, 13, 5);
            std::memset(big->data, 0, lm_ggml_nbytes(big));
            lm_ggml_tensor * win =
                lm_ggml_view_2d(ctx.get(), big, 12, 5, big->nb[1], 0); // (12, 5), one-element gap per row
            compute(ctx.get(), lm_ggml_cpy(ctx.get(), src, win), nth);
            for (int i2 = 0; i2 < 4; ++i2)
                for (int i1 = 0; i1 < 5; ++i1)
                    for (int i0 = 0; i0 < 3; ++i0) {
                        const int f = i0 + 3 * i1 + 15 * i2; // flat index in p
                        const double want = lm_ggml_fp16_to_fp32(lm_ggml_fp32_to_fp16(float(get(a, i0, 0, i2, i1))));
                        ASSERT_EQ(get(big, f % 12, f / 12), want) << nth << ": " << i0 << "," << i1 << "," << i2;
                    }
            for (int r = 0; r < 5; ++r) ASSERT_EQ(get(big, 12, r), 0.0) << "gap of row " << r;
        }
}

TEST(EwGraph, AccSetConcatArgsortGetRows) {
    for (int nth : {1, 3}) {
        Context ctx;
        lm_ggml_tensor * a = lm_ggml_new_tensor_2d(ctx.get(), LM_GGML_TYPE_F32, 6, 4);
        lm_ggml_tensor * b = lm_ggml_new_tensor_2d(ctx.get(), LM_GGML_TYPE_F32, 2, 2);
        fill(a, 210);
        fill(b, 211);
        // acc: rows 1-2, columns 3-4 += b; then set_2d: row 0, columns 0-1 = b's first row
        lm_ggml_tensor * acc = lm_ggml_acc(ctx.get(), a, b, a->nb[1], a->nb[2], a->nb[3], a->nb[1] + 3 * sizeof(float));
        lm_ggml_tensor * row = lm_ggml_view_1d(ctx.get(), b, 2, 0);
        lm_ggml_tensor * set = lm_ggml_set_2d(ctx.get(), acc, row, a->nb[1], 0);
        lm_ggml_tensor * cat = lm_ggml_concat(ctx.get(), set, a, 1); // (6, 8)
        lm_ggml_tensor * top = lm_ggml_top_k(ctx.get(), cat, 2);     // (2, 8) view of an argsort
        lm_ggml_tensor * ids = lm_ggml_cont(ctx.get(), lm_ggml_view_1d(ctx.get(), top, 2, 0)); // top-2 of row 0
        lm_ggml_tensor * rows = lm_ggml_get_rows(ctx.get(), cat, ids); // rows of cat chosen by those indices
        lm_ggml_cgraph * g = lm_ggml_new_graph(ctx.get());
        lm_ggml_build_forward_expand(g, rows);
        lm_ggml_build_forward_expand(g, top);
        ASSERT_EQ(lm_ggml_graph_compute_with_ctx(ctx.get(), g, nth), LM_GGML_STATUS_SUCCESS);

        // reference
        double r[8][6];
        for (int i1 = 0; i1 < 4; ++i1)
            for (int i0 = 0; i0 < 6; ++i0) {
                r[i1][i0] = get(a, i0, i1);
                r[i1 + 4][i0] = get(a, i0, i1);
            }
        for (int j = 0; j < 2; ++j)
            for (int i = 0; i < 2; ++i) r[1 + j][3 + i] += get(b, i, j);
        r[0][0] = get(b, 0, 0);
        r[0][1] = get(b, 1, 0);
        for (int i1 = 0; i1 < 8; ++i1)
            for (int i0 = 0; i0 < 6; ++i0) ASSERT_NEAR(get(cat, i0, i1), r[i1][i0], 1e-6) << i0 << "," << i1;
        for (int i1 = 0; i1 < 8; ++i1) {
            std::vector<int> idx(6);
            std::iota(idx.begin(), idx.end(), 0);
            std::stable_sort(idx.begin(), idx.end(), [&](int x, int y) { return r[i1][x] > r[i1][y]; });
            EXPECT_EQ(get(top, 0, i1), idx[0]);
            EXPECT_EQ(get(top, 1, i1), idx[1]);
        }
        std::vector<int> row0(6);
        std::iota(row0.begin(), row0.end(), 0);
        std::stable_sort(row0.begin(), row0.end(), [&](int x, int y) { return r[0][x] > r[0][y]; });
        ASSERT_EQ(rows->ne[0], 6);
        ASSERT_EQ(rows->ne[1], 2);
        for (int k = 0; k < 2; ++k) {
            ASSERT_EQ(get(ids, k), row0[k]);
            for (int i0 = 0; i0 < 6; ++i0) ASSERT_EQ(get(rows, i0, k), get(cat, i0, row0[k])) << k;
        }
    }
}

TEST(EwGraph, VisionAndAudioHelpers) {
    for (int nth : {1, 3}) {
        Context ctx;
        lm_ggml_tensor * img = lm_ggml_new_tensor_4d(ctx.get(), LM_GGML_TYPE_F32, 6, 5, 2, 1);
        fill(img, 220);
        lm_ggml_tensor * pooled =
            lm_ggml_pool_2d(ctx.get(), img, LM_GGML_OP_POOL_AVG, 2, 2, 2, 2, 1.0f, 0.0f); // (4, 2, 2)
        lm_ggml_tensor * up = lm_ggml_upscale(ctx.get(), pooled, 2);                      // (8, 4, 2)
        lm_ggml_tensor * padded = lm_ggml_pad(ctx.get(), up, 1, 0, 1, 0);                 // (9, 4, 3)
        lm_ggml_tensor * act = lm_ggml_leaky_relu(ctx.get(), padded, 0.5f, false);
        lm_ggml_tensor * clamped = lm_ggml_clamp(ctx.get(), act, -0.25f, 0.75f);
        lm_ggml_tensor * kern = lm_ggml_new_tensor_4d(ctx.get(), LM_GGML_TYPE_F16, 3, 3, 2, 1);
        lm_ggml_tensor * cols =
            lm_ggml_im2col(ctx.get(), kern, img, 1, 1, 1, 1, 1, 1, true, LM_GGML_TYPE_F32); // (18, 6, 5, 1)
        lm_ggml_tensor * gn = lm_ggml_group_norm(ctx.get(), img, 2, 1e-6f);
        lm_ggml_tensor * ar = lm_ggml_arange(ctx.get(), 0.0f, 3.0f, 1.0f);
        lm_ggml_tensor * emb = lm_ggml_timestep_embedding(ctx.get(), ar, 4, 100);
        lm_ggml_cgraph * g = lm_ggml_new_graph(ctx.get());
        for (lm_ggml_tensor * t : {clamped, cols, gn, emb}) lm_ggml_build_forward_expand(g, t);
        ASSERT_EQ(lm_ggml_graph_compute_with_ctx(ctx.get(), g, nth), LM_GGML_STATUS_SUCCESS);

        ASSERT_EQ(pooled->ne[0], 4);
        ASSERT_EQ(pooled->ne[1], 2);
        for (int c = 0; c < 2; ++c)
            for (int oy = 0; oy < 2; ++oy)
                for (int ox = 0; ox < 4; ++ox) {
                    double s = 0;
                    for (int ky = 0; ky < 2; ++ky)
                        for (int kx = 0; kx < 2; ++kx) {
                            const int x = ox * 2 - 1 + kx, y = oy * 2 + ky;
                            if (x >= 0 && x < 6 && y < 5) s += get(img, x, y, c);
                        }
                    ASSERT_NEAR(get(pooled, ox, oy, c), s / 4, 1e-6);
                }
        for_each(clamped, [&](int64_t i0, int64_t i1, int64_t i2, int64_t, int64_t) {
            const double p = (i0 < 8 && i2 < 2) ? get(pooled, i0 / 2, i1 / 2, i2) : 0.0;
            const double l = p > 0 ? p : 0.5 * p;
            ASSERT_NEAR(get(clamped, i0, i1, i2), std::min(0.75, std::max(-0.25, l)), 1e-6);
        });
        // im2col 3x3, stride 1, pad 1: column (c*9 + ky*3 + kx) of pixel (x, y)
        for_each(cols, [&](int64_t i0, int64_t x, int64_t y, int64_t, int64_t) {
            const int64_t c = i0 / 9, ky = (i0 / 3) % 3, kx = i0 % 3;
            const int64_t sx = x + kx - 1, sy = y + ky - 1;
            const double want = (sx >= 0 && sx < 6 && sy >= 0 && sy < 5) ? get(img, sx, sy, c) : 0.0;
            ASSERT_EQ(get(cols, i0, x, y), want);
        });
        for (int c = 0; c < 2; ++c) { // 2 groups of 1 channel
            double m = 0, v = 0;
            for (int y = 0; y < 5; ++y)
                for (int x = 0; x < 6; ++x) m += get(img, x, y, c) / 30;
            for (int y = 0; y < 5; ++y)
                for (int x = 0; x < 6; ++x) v += (get(img, x, y, c) - m) * (get(img, x, y, c) - m) / 30;
            ASSERT_NEAR(get(gn, 4, 3, c), (get(img, 4, 3, c) - m) / std::sqrt(v + 1e-6), 1e-5);
        }
        for (int t = 0; t < 3; ++t) {
            for (int j = 0; j < 2; ++j) {
                const double arg = t * std::exp(-std::log(100.0) * j / 2);
                ASSERT_NEAR(get(emb, j, t), std::cos(arg), 1e-6);
                ASSERT_NEAR(get(emb, j + 2, t), std::sin(arg), 1e-6);
            }
        }
    }
}
