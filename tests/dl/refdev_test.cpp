// The refdev plugin as a real second device: its memory is not host memory,
// it computes a graph of every op it claims, and its supports_op is exact.
// References are plain double-precision loops written here.

#include "backend_test_utils.h"
#include "ggml-backend-impl.h"
#include "ggml-cpu.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

using lmtest::BackendLogCapture;

namespace {

struct CtxDeleter {
    void operator()(lm_ggml_context * c) const { lm_ggml_free(c); }
};
using CtxPtr = std::unique_ptr<lm_ggml_context, CtxDeleter>;

lm_ggml_backend_dev_t refdev() {
    lm_ggml_backend_load_all_from_path(LMGGML_PLUGIN_DIR);
    return lm_ggml_backend_dev_by_name("REFDEV0");
}

using counter_fn = uint64_t (*)();

void expect_near_all(const std::vector<float> & got, const std::vector<double> & want, double rel, const char * what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t i = 0; i < got.size(); i++) {
        EXPECT_NEAR(got[i], want[i], rel * (1.0 + std::fabs(want[i]))) << what << " element " << i;
    }
}

} // namespace

TEST(Refdev, MemoryIsNotHostMemory) {
    lm_ggml_backend_dev_t dev = refdev();
    ASSERT_NE(dev, nullptr);
    lm_ggml_backend_buffer_type_t buft = lm_ggml_backend_dev_buffer_type(dev);
    EXPECT_FALSE(lm_ggml_backend_buft_is_host(buft));
    EXPECT_EQ(lm_ggml_backend_buft_get_device(buft), dev);
    EXPECT_EQ(lm_ggml_backend_dev_host_buffer_type(dev), nullptr);
    EXPECT_TRUE(lm_ggml_backend_dev_supports_buft(dev, buft));
    EXPECT_FALSE(lm_ggml_backend_dev_supports_buft(dev, lm_ggml_backend_cpu_buffer_type()));

    size_t free0 = 0, total = 0;
    lm_ggml_backend_dev_memory(dev, &free0, &total);
    EXPECT_GT(total, 0u);
    lm_ggml_backend_buffer_t b = lm_ggml_backend_buft_alloc_buffer(buft, 1000);
    ASSERT_NE(b, nullptr);
    size_t free1 = 0;
    lm_ggml_backend_dev_memory(dev, &free1, &total);
    EXPECT_EQ(free0 - free1, 1000u); // the device accounts for its memory
    EXPECT_FALSE(lm_ggml_backend_buffer_is_host(b));
    EXPECT_NE(lm_ggml_backend_buffer_get_base(b), nullptr);

    // tensor bytes round-trip only through the API (data is a device address)
    CtxPtr ctx(lmtest::new_meta_ctx());
    lm_ggml_tensor * t = lm_ggml_new_tensor_1d(ctx.get(), LM_GGML_TYPE_F32, 10);
    EXPECT_EQ(lm_ggml_backend_buft_get_alloc_size(buft, t) % 128, 0u); // refdev pads allocations
    lm_ggml_backend_tensor_alloc(b, t, (char *) lm_ggml_backend_buffer_get_base(b) + 64);
    ASSERT_EQ(t->buffer, b);
    const std::vector<float> v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    lmtest::set_f32(t, v);
    EXPECT_EQ(lmtest::get_f32(t), v);
    lm_ggml_backend_tensor_memset(t, 0, 8, 8);
    std::vector<float> w = v;
    w[2] = w[3] = 0;
    EXPECT_EQ(lmtest::get_f32(t), w);
    lm_ggml_backend_buffer_clear(b, 0);
    EXPECT_EQ(lmtest::get_f32(t), std::vector<float>(10, 0.0f));
    lm_ggml_backend_buffer_free(b);
    size_t free2 = 0;
    lm_ggml_backend_dev_memory(dev, &free2, &total);
    EXPECT_EQ(free2, free0);
}

TEST(Refdev, ComputesEveryOpItSupports) {
    lm_ggml_backend_dev_t dev = refdev();
    ASSERT_NE(dev, nullptr);
    lm_ggml_backend_t be = lm_ggml_backend_dev_init(dev, nullptr);
    ASSERT_NE(be, nullptr);
    auto counter = (counter_fn) lm_ggml_backend_reg_get_proc_address(lm_ggml_backend_dev_backend_reg(dev),
                                                                     "lm_ggml_backend_refdev_n_nodes_computed");
    ASSERT_NE(counter, nullptr);

    CtxPtr ctx(lmtest::new_meta_ctx(128));
    lm_ggml_context * c = ctx.get();
    lm_ggml_tensor * x = lm_ggml_new_tensor_2d(c, LM_GGML_TYPE_F32, 4, 3);
    lm_ggml_tensor * y = lm_ggml_new_tensor_2d(c, LM_GGML_TYPE_F32, 4, 1); // broadcast over rows
    lm_ggml_tensor * y2 = lm_ggml_new_tensor_2d(c, LM_GGML_TYPE_F32, 4, 3);
    lm_ggml_tensor * w = lm_ggml_new_tensor_2d(c, LM_GGML_TYPE_F32, 4, 5); // (K=4, M=5)
    lm_ggml_tensor * emb = lm_ggml_new_tensor_2d(c, LM_GGML_TYPE_F32, 4, 3);
    lm_ggml_tensor * ids = lm_ggml_new_tensor_1d(c, LM_GGML_TYPE_I32, 2);
    lm_ggml_tensor * h16 = lm_ggml_new_tensor_2d(c, LM_GGML_TYPE_F16, 4, 3);
    lm_ggml_tensor * f12 = lm_ggml_new_tensor_1d(c, LM_GGML_TYPE_F32, 12);

    lm_ggml_tensor * n_add = lm_ggml_add(c, x, y);
    lm_ggml_tensor * n_sub = lm_ggml_sub(c, x, y);
    lm_ggml_tensor * n_mul = lm_ggml_mul(c, n_add, n_sub);
    lm_ggml_tensor * n_div = lm_ggml_div(c, n_mul, y2);
    lm_ggml_tensor * n_scale = lm_ggml_scale(c, n_div, 0.5f);
    lm_ggml_tensor * n_t = lm_ggml_cont(c, lm_ggml_transpose(c, n_scale));           // (3, 4)
    lm_ggml_tensor * n_mm = lm_ggml_mul_mat(c, w, x);                                // (5, 3)
    lm_ggml_tensor * n_perm = lm_ggml_cont(c, lm_ggml_permute(c, n_mm, 1, 0, 2, 3)); // (3, 5)
    lm_ggml_tensor * n_sum = lm_ggml_sum_rows(c, n_mm);                              // (1, 3)
    lm_ggml_tensor * n_rows = lm_ggml_get_rows(c, emb, ids);                         // (4, 2)
    lm_ggml_tensor * n_dup = lm_ggml_dup(c, n_rows);
    lm_ggml_tensor * n_h = lm_ggml_cpy(c, n_scale, h16);                        // F32 -> F16
    lm_ggml_tensor * n_back = lm_ggml_cpy(c, n_h, f12);                         // F16 -> F32, new shape
    lm_ggml_tensor * xv = lm_ggml_view_2d(c, x, 2, 3, x->nb[1], sizeof(float)); // columns 1..2
    lm_ggml_tensor * n_vadd = lm_ggml_add(c, xv, xv);                           // strided input
    lm_ggml_tensor * n_resh = lm_ggml_reshape_1d(c, n_vadd, 6);
    lm_ggml_tensor * n_rsc = lm_ggml_scale(c, n_resh, 3.0f);

    lm_ggml_cgraph * g = lm_ggml_new_graph(c);
    for (lm_ggml_tensor * out : {n_t, n_perm, n_sum, n_dup, n_back, n_rsc}) {
        lm_ggml_build_forward_expand(g, out);
    }
    for (int i = 0; i < lm_ggml_graph_n_nodes(g); i++) {
        EXPECT_TRUE(lm_ggml_backend_supports_op(be, lm_ggml_graph_node(g, i)))
            << lm_ggml_op_name(lm_ggml_graph_node(g, i)->op);
    }
    lm_ggml_backend_buffer_t buf = lmtest::place_ctx_tensors(c, lm_ggml_backend_get_default_buffer_type(be));
    ASSERT_NE(buf, nullptr);

    std::vector<float> vx(12), vy(4), vy2(12), vw(20), vemb(12);
    for (int i = 0; i < 12; i++) {
        vx[i] = 0.75f * i - 3.0f;
        vy2[i] = 1.0f + 0.5f * i;
        vemb[i] = 10.0f + i;
    }
    for (int i = 0; i < 4; i++) vy[i] = 0.25f * i + 0.5f;
    for (int i = 0; i < 20; i++) vw[i] = std::sin(0.3 * i);
    const int32_t vids[2] = {2, 0};
    lmtest::set_f32(x, vx);
    lmtest::set_f32(y, vy);
    lmtest::set_f32(y2, vy2);
    lmtest::set_f32(w, vw);
    lmtest::set_f32(emb, vemb);
    lm_ggml_backend_tensor_set(ids, vids, 0, sizeof(vids));

    const uint64_t before = counter();
    ASSERT_EQ(lm_ggml_backend_graph_compute(be, g), LM_GGML_STATUS_SUCCESS);
    int computing = 0;
    for (int i = 0; i < lm_ggml_graph_n_nodes(g); i++) {
        const lm_ggml_op op = lm_ggml_graph_node(g, i)->op;
        computing +=
            op != LM_GGML_OP_VIEW && op != LM_GGML_OP_RESHAPE && op != LM_GGML_OP_PERMUTE && op != LM_GGML_OP_TRANSPOSE;
    }
    EXPECT_EQ(counter() - before, (uint64_t) computing);

    // references
    std::vector<double> scale(12), t(12), mm(15), perm(15), sum(3, 0.0), rows(8), back(12), rsc(6);
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 4; k++) {
            const double a = (double) vx[r * 4 + k] + vy[k], s = (double) vx[r * 4 + k] - vy[k];
            scale[r * 4 + k] = a * s / vy2[r * 4 + k] * 0.5;
            t[k * 3 + r] = scale[r * 4 + k];
        }
    for (int n = 0; n < 3; n++)
        for (int m = 0; m < 5; m++) {
            double s = 0;
            for (int k = 0; k < 4; k++) s += (double) vw[m * 4 + k] * vx[n * 4 + k];
            mm[n * 5 + m] = s;
            perm[m * 3 + n] = s;
            sum[n] += s;
        }
    for (int j = 0; j < 2; j++)
        for (int k = 0; k < 4; k++) rows[j * 4 + k] = vemb[vids[j] * 4 + k];
    back = scale; // through F16: compared with F16 precision below
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 2; k++) rsc[r * 2 + k] = 2.0 * vx[r * 4 + 1 + k] * 3.0;

    expect_near_all(lmtest::get_f32(n_scale), scale, 1e-6, "add/sub/mul/div/scale");
    expect_near_all(lmtest::get_f32(n_t), t, 1e-6, "cont(transpose)");
    expect_near_all(lmtest::get_f32(n_mm), mm, 1e-6, "mul_mat");
    expect_near_all(lmtest::get_f32(n_perm), perm, 1e-6, "cont(permute)");
    expect_near_all(lmtest::get_f32(n_sum), sum, 1e-6, "sum_rows");
    expect_near_all(lmtest::get_f32(n_dup), rows, 0, "get_rows/dup");
    expect_near_all(lmtest::get_f32(n_back), back, 1e-3, "cpy f32->f16->f32");
    expect_near_all(lmtest::get_f32(n_rsc), rsc, 1e-6, "strided add, reshape, scale");

    lm_ggml_backend_buffer_free(buf);
    lm_ggml_backend_free(be);
}

TEST(Refdev, SupportsOpIsExact) {
    lm_ggml_backend_dev_t dev = refdev();
    ASSERT_NE(dev, nullptr);
    CtxPtr ctx(lmtest::new_meta_ctx());
    lm_ggml_context * c = ctx.get();
    lm_ggml_tensor * a = lm_ggml_new_tensor_2d(c, LM_GGML_TYPE_F32, 4, 4);
    lm_ggml_tensor * b = lm_ggml_new_tensor_2d(c, LM_GGML_TYPE_F32, 4, 4);
    lm_ggml_tensor * a16 = lm_ggml_new_tensor_2d(c, LM_GGML_TYPE_F16, 4, 4);
    lm_ggml_tensor * fid = lm_ggml_new_tensor_1d(c, LM_GGML_TYPE_F32, 2);
    lm_ggml_tensor * iid = lm_ggml_new_tensor_1d(c, LM_GGML_TYPE_I32, 2);

    EXPECT_TRUE(lm_ggml_backend_dev_supports_op(dev, lm_ggml_mul_mat(c, a, b)));
    lm_ggml_tensor * wide = lm_ggml_new_tensor_2d(c, LM_GGML_TYPE_F32, 8, 4);
    lm_ggml_tensor * rows = lm_ggml_view_2d(c, wide, 4, 4, wide->nb[1], 0); // (4, 4), rows 32 bytes apart
    EXPECT_FALSE(lm_ggml_backend_dev_supports_op(dev, lm_ggml_mul_mat(c, rows, b))) << "non-contiguous";
    EXPECT_TRUE(lm_ggml_backend_dev_supports_op(dev, lm_ggml_add(c, rows, b))) << "strided add";
    EXPECT_FALSE(lm_ggml_backend_dev_supports_op(dev, lm_ggml_mul_mat(c, a16, b))) << "F16 weights";
    EXPECT_FALSE(lm_ggml_backend_dev_supports_op(dev, lm_ggml_add(c, a16, a16))) << "F16 add";
    EXPECT_TRUE(lm_ggml_backend_dev_supports_op(dev, lm_ggml_get_rows(c, a16, iid)));
    lm_ggml_tensor * gr = lm_ggml_get_rows(c, a, iid);
    EXPECT_TRUE(lm_ggml_backend_dev_supports_op(dev, gr));
    gr->src[1] = fid; // the constructor refuses F32 ids; a hand-built node may not
    EXPECT_FALSE(lm_ggml_backend_dev_supports_op(dev, gr)) << "F32 ids";
    EXPECT_FALSE(lm_ggml_backend_dev_supports_op(dev, lm_ggml_soft_max(c, a)));
    EXPECT_FALSE(lm_ggml_backend_dev_supports_op(dev, lm_ggml_rms_norm(c, a, 1e-5f)));
    EXPECT_FALSE(lm_ggml_backend_dev_supports_op(dev, lm_ggml_silu(c, a)));
    EXPECT_TRUE(lm_ggml_backend_dev_supports_op(dev, lm_ggml_cpy(c, a, a16)));

    lm_ggml_tensor * big = lm_ggml_new_tensor_2d(c, LM_GGML_TYPE_F32, 4, 64);
    EXPECT_TRUE(lm_ggml_backend_dev_offload_op(dev, lm_ggml_mul_mat(c, a, big))) << "large batch";
    EXPECT_FALSE(lm_ggml_backend_dev_offload_op(dev, lm_ggml_mul_mat(c, a, b))) << "small batch";
}

TEST(Refdev, InputsOutsideItsMemoryFailTheCompute) {
    lm_ggml_backend_dev_t dev = refdev();
    ASSERT_NE(dev, nullptr);
    lm_ggml_backend_t be = lm_ggml_backend_dev_init(dev, nullptr);
    CtxPtr ctx(lmtest::new_meta_ctx());
    lm_ggml_tensor * a = lm_ggml_new_tensor_1d(ctx.get(), LM_GGML_TYPE_F32, 4);
    lm_ggml_backend_buffer_t host = lmtest::place_ctx_tensors(ctx.get(), lm_ggml_backend_cpu_buffer_type());
    lm_ggml_tensor * s = lm_ggml_add(ctx.get(), a, a);
    lm_ggml_backend_buffer_t devbuf = lmtest::place_ctx_tensors(ctx.get(), lm_ggml_backend_dev_buffer_type(dev));
    ASSERT_NE(host, nullptr);
    ASSERT_NE(devbuf, nullptr);
    lmtest::set_f32(a, {1, 2, 3, 4});
    lmtest::set_f32(s, {9, 9, 9, 9});
    lm_ggml_cgraph * g = lm_ggml_new_graph(ctx.get());
    lm_ggml_build_forward_expand(g, s);
    EXPECT_EQ(lm_ggml_backend_graph_compute(be, g), LM_GGML_STATUS_FAILED);
    EXPECT_EQ(lmtest::get_f32(s), std::vector<float>(4, 9.0f)) << "nothing computed";
    lm_ggml_backend_buffer_free(devbuf);
    lm_ggml_backend_buffer_free(host);
    lm_ggml_backend_free(be);
}

TEST(Refdev, CopiesAcrossDevicesAndStreams) {
    lm_ggml_backend_dev_t dev = refdev();
    ASSERT_NE(dev, nullptr);
    lm_ggml_backend_t s1 = lm_ggml_backend_dev_init(dev, nullptr);
    lm_ggml_backend_t s2 = lm_ggml_backend_dev_init(dev, nullptr);
    lm_ggml_backend_t cpu = lm_ggml_backend_cpu_init();
    CtxPtr hctx(lmtest::new_meta_ctx()), dctx(lmtest::new_meta_ctx());
    lm_ggml_tensor * h = lm_ggml_new_tensor_2d(hctx.get(), LM_GGML_TYPE_F32, 5, 2);
    lm_ggml_tensor * h2 = lm_ggml_new_tensor_2d(hctx.get(), LM_GGML_TYPE_F32, 5, 2);
    lm_ggml_tensor * d1 = lm_ggml_new_tensor_2d(dctx.get(), LM_GGML_TYPE_F32, 5, 2);
    lm_ggml_tensor * d2 = lm_ggml_new_tensor_2d(dctx.get(), LM_GGML_TYPE_F32, 5, 2);
    lm_ggml_tensor * d3 = lm_ggml_new_tensor_2d(dctx.get(), LM_GGML_TYPE_F32, 5, 2);
    lm_ggml_backend_buffer_t hb = lmtest::place_ctx_tensors(hctx.get(), lm_ggml_backend_get_default_buffer_type(cpu));
    lm_ggml_backend_buffer_t db = lmtest::place_ctx_tensors(dctx.get(), lm_ggml_backend_dev_buffer_type(dev));
    ASSERT_NE(hb, nullptr);
    ASSERT_NE(db, nullptr);
    const std::vector<float> v = {1, -2, 3, -4, 5, -6, 7, -8, 9, -10};
    lmtest::set_f32(h, v);
    lm_ggml_backend_tensor_copy(h, d1);  // host -> device
    lm_ggml_backend_tensor_copy(d1, d2); // device -> device (its cpy_tensor)
    EXPECT_TRUE(lm_ggml_backend_buffer_copy_tensor(d1, d2));
    lm_ggml_backend_tensor_copy_async(s1, s2, d2, d3); // stream to stream
    lm_ggml_backend_synchronize(s2);
    lm_ggml_backend_tensor_copy(d3, h2); // device -> host
    EXPECT_EQ(lmtest::get_f32(d2), v);
    EXPECT_EQ(lmtest::get_f32(h2), v);

    std::vector<float> got(10);
    lm_ggml_backend_tensor_set_async(s1, d1, v.data(), 0, 40);
    lm_ggml_backend_tensor_get_async(s1, d1, got.data(), 0, 40);
    lm_ggml_backend_synchronize(s1);
    EXPECT_EQ(got, v);

    lm_ggml_backend_buffer_free(db);
    lm_ggml_backend_buffer_free(hb);
    lm_ggml_backend_free(cpu);
    lm_ggml_backend_free(s1);
    lm_ggml_backend_free(s2);
}

namespace {
double g_max_rel = 0;
int g_nodes = 0;
bool compare_cb(int, lm_ggml_tensor * t1, lm_ggml_tensor * t2, void *) {
    const std::vector<float> a = lmtest::get_f32(t1), b = lmtest::get_f32(t2);
    for (size_t i = 0; i < a.size(); i++) {
        g_max_rel = std::max(g_max_rel, std::fabs((double) a[i] - b[i]) / (1.0 + std::fabs((double) a[i])));
    }
    g_nodes++;
    return true;
}
} // namespace

TEST(Refdev, AgreesWithTheCpuBackendNodeByNode) {
    lm_ggml_backend_dev_t dev = refdev();
    ASSERT_NE(dev, nullptr);
    lm_ggml_backend_t cpu = lm_ggml_backend_cpu_init();
    lm_ggml_backend_t rd = lm_ggml_backend_dev_init(dev, nullptr);
    CtxPtr ctx(lmtest::new_meta_ctx());
    lm_ggml_context * c = ctx.get();
    lm_ggml_tensor * w = lm_ggml_new_tensor_2d(c, LM_GGML_TYPE_F32, 8, 6);
    lm_ggml_tensor * x = lm_ggml_new_tensor_2d(c, LM_GGML_TYPE_F32, 8, 3);
    lm_ggml_tensor * bias = lm_ggml_new_tensor_1d(c, LM_GGML_TYPE_F32, 6);
    lm_ggml_tensor * out = lm_ggml_scale(c, lm_ggml_add(c, lm_ggml_mul_mat(c, w, x), bias), 0.25f);
    out = lm_ggml_sum_rows(c, out);
    lm_ggml_cgraph * g = lm_ggml_new_graph(c);
    lm_ggml_build_forward_expand(g, out);
    lm_ggml_backend_buffer_t buf = lmtest::place_ctx_tensors(c, lm_ggml_backend_get_default_buffer_type(cpu));
    ASSERT_NE(buf, nullptr);
    std::vector<float> vw(48), vx(24), vb(6);
    for (int i = 0; i < 48; i++) vw[i] = std::cos(0.7 * i);
    for (int i = 0; i < 24; i++) vx[i] = 0.1f * i - 1.0f;
    for (int i = 0; i < 6; i++) vb[i] = i - 2.5f;
    lmtest::set_f32(w, vw);
    lmtest::set_f32(x, vx);
    lmtest::set_f32(bias, vb);
    g_max_rel = 0;
    g_nodes = 0;
    EXPECT_TRUE(lm_ggml_backend_compare_graph_backend(cpu, rd, g, compare_cb, nullptr));
    EXPECT_EQ(g_nodes, 4);
    EXPECT_LT(g_max_rel, 1e-5);
    lm_ggml_backend_buffer_free(buf);
    lm_ggml_backend_free(rd);
    lm_ggml_backend_free(cpu);
}

TEST(Refdev, InitBestPrefersItAsAGpu) {
    ASSERT_NE(refdev(), nullptr);
    lm_ggml_backend_t be = lm_ggml_backend_init_best();
    ASSERT_NE(be, nullptr);
    EXPECT_STREQ(lm_ggml_backend_name(be), "REFDEV0");
    lm_ggml_backend_free(be);
}
