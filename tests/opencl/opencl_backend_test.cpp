// The OpenCL plugin's device, buffers, host buffers, streams and events,
// through the public backend API (the op kernels are covered by tests/ops,
// which runs every case on every registered device, this one included).
// Without the plugin or an OpenCL device every test says so and skips;
// LMGGML_REQUIRE_OPENCL=1 (set where PoCL is installed, as in CI) turns
// that into a failure, so a broken install cannot pass silently.
#include "backend_test_utils.h"
#include "lmtest_backends.h"

#include "ggml-backend-impl.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace {

using lmtest::BackendLogCapture;

lm_ggml_backend_dev_t opencl_device() {
    lmtest::load_backends_once(LMGGML_PLUGIN_DIR);
    lm_ggml_backend_reg_t reg = lm_ggml_backend_reg_by_name("OpenCL");
    if (reg == nullptr || lm_ggml_backend_reg_dev_count(reg) == 0) {
        return nullptr;
    }
    return lm_ggml_backend_reg_dev_get(reg, 0);
}

struct CtxDeleter {
    void operator()(lm_ggml_context * c) const { lm_ggml_free(c); }
};
struct BackendDeleter {
    void operator()(lm_ggml_backend * b) const { lm_ggml_backend_free(b); }
};
struct BufferDeleter {
    void operator()(lm_ggml_backend_buffer * b) const { lm_ggml_backend_buffer_free(b); }
};
using CtxPtr = std::unique_ptr<lm_ggml_context, CtxDeleter>;
using BackendPtr = std::unique_ptr<lm_ggml_backend, BackendDeleter>;
using BufferPtr = std::unique_ptr<lm_ggml_backend_buffer, BufferDeleter>;

std::vector<float> ramp(size_t n, float a, float b) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; i++) {
        v[i] = a + b * (float) ((i * 37) % 101) / 101.0f;
    }
    return v;
}

class OpenCL : public ::testing::Test {
protected:
    void SetUp() override {
        dev_ = opencl_device();
        if (dev_ == nullptr) {
            const char * req = std::getenv("LMGGML_REQUIRE_OPENCL");
            if (req != nullptr && std::strcmp(req, "1") == 0) {
                FAIL() << "LMGGML_REQUIRE_OPENCL=1 but no OpenCL device is registered (plugin dir " << LMGGML_PLUGIN_DIR
                       << ")";
            }
            GTEST_SKIP() << "no OpenCL device: the opencl plugin was not built (no OpenCL headers / ICD loader) or no "
                            "OpenCL platform is installed (Debian: ocl-icd-opencl-dev opencl-headers pocl-opencl-icd)";
        }
        buft_ = lm_ggml_backend_dev_buffer_type(dev_);
    }

    lm_ggml_backend_dev_t dev_ = nullptr;
    lm_ggml_backend_buffer_type_t buft_ = nullptr;
};

TEST_F(OpenCL, DeviceDescribesItself) {
    EXPECT_STREQ(lm_ggml_backend_reg_name(lm_ggml_backend_dev_backend_reg(dev_)), "OpenCL");
    EXPECT_STREQ(lm_ggml_backend_dev_name(dev_), "OpenCL0");
    EXPECT_GT(std::strlen(lm_ggml_backend_dev_description(dev_)), 0u);
    lm_ggml_backend_dev_props props;
    lm_ggml_backend_dev_get_props(dev_, &props);
    EXPECT_NE(props.type, LM_GGML_BACKEND_DEVICE_TYPE_CPU) << "its memory is not the host's";
    EXPECT_TRUE(props.caps.async);
    EXPECT_TRUE(props.caps.host_buffer);
    EXPECT_TRUE(props.caps.events);
    EXPECT_GT(props.memory_total, 0u);
    EXPECT_LE(props.memory_free, props.memory_total);

    // the free memory it reports follows what lmggml holds there
    size_t free0 = 0, total = 0;
    lm_ggml_backend_dev_memory(dev_, &free0, &total);
    BufferPtr buf(lm_ggml_backend_buft_alloc_buffer(buft_, 1 << 20));
    ASSERT_NE(buf, nullptr);
    size_t free1 = 0;
    lm_ggml_backend_dev_memory(dev_, &free1, &total);
    EXPECT_EQ(free0 - free1, size_t(1) << 20);
    buf.reset();
    lm_ggml_backend_dev_memory(dev_, &free1, &total);
    EXPECT_EQ(free1, free0);

    // listed among the devices, and chosen by name
    EXPECT_EQ(lm_ggml_backend_dev_by_name("OpenCL0"), dev_);
}

TEST_F(OpenCL, DeviceBufferRoundTripsMemsetAndClear) {
    EXPECT_FALSE(lm_ggml_backend_buft_is_host(buft_));
    EXPECT_EQ(lm_ggml_backend_buft_get_alignment(buft_), 128u);
    EXPECT_TRUE(lm_ggml_backend_dev_supports_buft(dev_, buft_));

    CtxPtr ctx(lmtest::new_meta_ctx(4));
    lm_ggml_tensor * a = lm_ggml_new_tensor_1d(ctx.get(), LM_GGML_TYPE_F32, 300);
    lm_ggml_tensor * b = lm_ggml_new_tensor_1d(ctx.get(), LM_GGML_TYPE_F32, 300);
    BufferPtr buf(lmtest::place_ctx_tensors(ctx.get(), buft_));
    ASSERT_NE(buf, nullptr);
    EXPECT_FALSE(lm_ggml_backend_buffer_is_host(buf.get()));

    const std::vector<float> va = ramp(300, -1.0f, 2.0f);
    lmtest::set_f32(a, va);
    EXPECT_EQ(lmtest::get_f32(a), va);

    // a partial write lands exactly where asked
    const float patch[3] = {7.0f, 8.0f, 9.0f};
    lm_ggml_backend_tensor_set(a, patch, 10 * sizeof(float), sizeof(patch));
    std::vector<float> expect = va;
    expect[10] = 7.0f, expect[11] = 8.0f, expect[12] = 9.0f;
    EXPECT_EQ(lmtest::get_f32(a), expect);

    // memset of a range, then clear of the whole buffer
    lm_ggml_backend_tensor_memset(b, 0, 0, lm_ggml_nbytes(b));
    EXPECT_EQ(lmtest::get_f32(b), std::vector<float>(300, 0.0f));
    lm_ggml_backend_buffer_clear(buf.get(), 0xFF);
    std::vector<uint8_t> raw(lm_ggml_nbytes(a));
    lm_ggml_backend_tensor_get(a, raw.data(), 0, raw.size());
    for (uint8_t x : raw) {
        ASSERT_EQ(x, 0xFF);
    }
}

TEST_F(OpenCL, OutOfRangeTransfersLogOneLineAndChangeNothing) {
    CtxPtr ctx(lmtest::new_meta_ctx(2));
    lm_ggml_tensor * a = lm_ggml_new_tensor_1d(ctx.get(), LM_GGML_TYPE_F32, 16);
    BufferPtr buf(lmtest::place_ctx_tensors(ctx.get(), buft_));
    ASSERT_NE(buf, nullptr);
    const std::vector<float> va = ramp(16, 0.0f, 1.0f);
    lmtest::set_f32(a, va);
    // a range past the tensor's buffer reaches the plugin only if the core
    // lets it through; either way exactly one error line and no change
    lm_ggml_tensor fake = *a;
    fake.data = (char *) a->data + lm_ggml_backend_buffer_get_size(buf.get());
    BackendLogCapture log;
    std::vector<float> junk(16, 5.0f);
    buf->iface.set_tensor(buf.get(), &fake, junk.data(), 0, sizeof(float) * 16);
    EXPECT_EQ(log.errors(), 1u) << log.text();
    EXPECT_EQ(lmtest::get_f32(a), va);
}

TEST_F(OpenCL, TensorCopiesBetweenDeviceAndHost) {
    CtxPtr ctx(lmtest::new_meta_ctx(4));
    lm_ggml_tensor * a = lm_ggml_new_tensor_2d(ctx.get(), LM_GGML_TYPE_F32, 33, 5);
    lm_ggml_tensor * b = lm_ggml_new_tensor_2d(ctx.get(), LM_GGML_TYPE_F32, 33, 5);
    BufferPtr dbuf(lmtest::place_ctx_tensors(ctx.get(), buft_));
    ASSERT_NE(dbuf, nullptr);
    CtxPtr hctx(lmtest::new_meta_ctx(2));
    lm_ggml_tensor * h = lm_ggml_new_tensor_2d(hctx.get(), LM_GGML_TYPE_F32, 33, 5);
    BufferPtr hbuf(lmtest::place_ctx_tensors(hctx.get(), lm_ggml_backend_cpu_buffer_type()));
    ASSERT_NE(hbuf, nullptr);

    const std::vector<float> vh = ramp(33 * 5, 3.0f, -1.5f);
    lmtest::set_f32(h, vh);
    lm_ggml_backend_tensor_copy(h, a); // host -> device
    EXPECT_EQ(lmtest::get_f32(a), vh);
    lm_ggml_backend_tensor_copy(a, b); // device -> device
    EXPECT_EQ(lmtest::get_f32(b), vh);
    lmtest::set_f32(h, std::vector<float>(33 * 5, 0.0f));
    lm_ggml_backend_tensor_copy(b, h); // device -> host
    EXPECT_EQ(lmtest::get_f32(h), vh);
}

TEST_F(OpenCL, HostBufferIsMappedHostMemory) {
    lm_ggml_backend_buffer_type_t hbt = lm_ggml_backend_dev_host_buffer_type(dev_);
    ASSERT_NE(hbt, nullptr);
    EXPECT_TRUE(lm_ggml_backend_buft_is_host(hbt));
    EXPECT_STREQ(lm_ggml_backend_buft_name(hbt), "OpenCL0_Host");
    EXPECT_STREQ(lm_ggml_backend_buft_name(buft_), "OpenCL0");
    EXPECT_FALSE(lm_ggml_backend_dev_supports_buft(dev_, hbt)) << "kernels read device buffers only";
    lm_ggml_backend_dev_t cpu = lm_ggml_backend_dev_by_type(LM_GGML_BACKEND_DEVICE_TYPE_CPU);
    ASSERT_NE(cpu, nullptr);
    EXPECT_TRUE(lm_ggml_backend_dev_supports_buft(cpu, hbt)) << "the CPU computes in pinned host memory";

    CtxPtr ctx(lmtest::new_meta_ctx(2));
    lm_ggml_tensor * h = lm_ggml_new_tensor_1d(ctx.get(), LM_GGML_TYPE_F32, 1000);
    BufferPtr hbuf(lmtest::place_ctx_tensors(ctx.get(), hbt));
    ASSERT_NE(hbuf, nullptr);
    EXPECT_TRUE(lm_ggml_backend_buffer_is_host(hbuf.get()));
    const std::vector<float> v = ramp(1000, 1.0f, 4.0f);
    std::memcpy(h->data, v.data(), v.size() * sizeof(float)); // host-addressable
    EXPECT_EQ(lmtest::get_f32(h), v);

    // and it uploads to the device like any host memory
    CtxPtr dctx(lmtest::new_meta_ctx(2));
    lm_ggml_tensor * d = lm_ggml_new_tensor_1d(dctx.get(), LM_GGML_TYPE_F32, 1000);
    BufferPtr dbuf(lmtest::place_ctx_tensors(dctx.get(), buft_));
    ASSERT_NE(dbuf, nullptr);
    lm_ggml_backend_tensor_copy(h, d);
    EXPECT_EQ(lmtest::get_f32(d), v);
}

// (a + b) * 0.5 through async uploads, one graph and an async download
TEST_F(OpenCL, StreamComputesBetweenAsyncTransfers) {
    BackendPtr s(lm_ggml_backend_dev_init(dev_, nullptr));
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(lm_ggml_backend_get_device(s.get()), dev_);
    EXPECT_STREQ(lm_ggml_backend_name(s.get()), "OpenCL0");

    CtxPtr ctx(lmtest::new_meta_ctx(8));
    const int n = 4099;
    lm_ggml_tensor * a = lm_ggml_new_tensor_1d(ctx.get(), LM_GGML_TYPE_F32, n);
    lm_ggml_tensor * b = lm_ggml_new_tensor_1d(ctx.get(), LM_GGML_TYPE_F32, n);
    lm_ggml_tensor * r = lm_ggml_scale(ctx.get(), lm_ggml_add(ctx.get(), a, b), 0.5f);
    lm_ggml_cgraph * g = lm_ggml_new_graph(ctx.get());
    lm_ggml_build_forward_expand(g, r);
    BufferPtr buf(lmtest::place_ctx_tensors(ctx.get(), buft_));
    ASSERT_NE(buf, nullptr);

    const std::vector<float> va = ramp(n, -2.0f, 3.0f), vb = ramp(n, 1.0f, -0.25f);
    std::vector<float> out(n, NAN);
    lm_ggml_backend_tensor_set_async(s.get(), a, va.data(), 0, n * sizeof(float));
    lm_ggml_backend_tensor_set_async(s.get(), b, vb.data(), 0, n * sizeof(float));
    ASSERT_EQ(lm_ggml_backend_graph_compute_async(s.get(), g), LM_GGML_STATUS_SUCCESS);
    lm_ggml_backend_tensor_get_async(s.get(), r, out.data(), 0, n * sizeof(float));
    lm_ggml_backend_synchronize(s.get());
    for (int i = 0; i < n; i++) {
        const double want = ((double) va[i] + (double) vb[i]) * 0.5;
        ASSERT_NEAR(out[i], want, 1e-6 * (1.0 + std::fabs(want))) << "element " << i;
    }
}

// A second stream waits for the first one's upload through an event, then
// copies it device to device and computes on it.
TEST_F(OpenCL, EventsOrderTwoStreams) {
    BackendPtr s1(lm_ggml_backend_dev_init(dev_, nullptr));
    BackendPtr s2(lm_ggml_backend_dev_init(dev_, nullptr));
    ASSERT_NE(s1, nullptr);
    ASSERT_NE(s2, nullptr);
    lm_ggml_backend_event_t ev = lm_ggml_backend_event_new(dev_);
    ASSERT_NE(ev, nullptr);
    EXPECT_EQ(ev->device, dev_);

    CtxPtr ctx(lmtest::new_meta_ctx(8));
    const int n = 1 << 16;
    lm_ggml_tensor * a = lm_ggml_new_tensor_1d(ctx.get(), LM_GGML_TYPE_F32, n);
    lm_ggml_tensor * c = lm_ggml_new_tensor_1d(ctx.get(), LM_GGML_TYPE_F32, n);
    lm_ggml_tensor * r = lm_ggml_sqr(ctx.get(), c);
    lm_ggml_cgraph * g = lm_ggml_new_graph(ctx.get());
    lm_ggml_build_forward_expand(g, r);
    BufferPtr buf(lmtest::place_ctx_tensors(ctx.get(), buft_));
    ASSERT_NE(buf, nullptr);

    BackendLogCapture log;
    // synchronizing an event never recorded returns at once
    lm_ggml_backend_event_synchronize(ev);

    const std::vector<float> va = ramp(n, -1.0f, 2.0f);
    std::vector<float> out(n, NAN);
    lm_ggml_backend_tensor_set_async(s1.get(), a, va.data(), 0, n * sizeof(float));
    lm_ggml_backend_event_record(ev, s1.get());
    lm_ggml_backend_event_wait(s2.get(), ev);
    lm_ggml_backend_tensor_copy_async(s1.get(), s2.get(), a, c);
    ASSERT_EQ(lm_ggml_backend_graph_compute_async(s2.get(), g), LM_GGML_STATUS_SUCCESS);
    lm_ggml_backend_tensor_get_async(s2.get(), r, out.data(), 0, n * sizeof(float));
    lm_ggml_backend_event_record(ev, s2.get()); // recording again replaces the marker
    lm_ggml_backend_event_synchronize(ev);
    for (int i = 0; i < n; i++) {
        const double want = (double) va[i] * (double) va[i];
        ASSERT_NEAR(out[i], want, 1e-6 * (1.0 + want)) << "element " << i;
    }
    EXPECT_EQ(lmtest::get_f32(c), va);
    EXPECT_EQ(log.lines(), 0u) << log.text();
    lm_ggml_backend_event_free(ev);
}

TEST_F(OpenCL, UnsupportedOpIsRefusedNotFaked) {
    CtxPtr ctx(lmtest::new_meta_ctx(4));
    lm_ggml_tensor * a = lm_ggml_new_tensor_1d(ctx.get(), LM_GGML_TYPE_F32, 8);
    lm_ggml_tensor * r = lm_ggml_argsort(ctx.get(), a, LM_GGML_SORT_ORDER_ASC);
    EXPECT_FALSE(lm_ggml_backend_dev_supports_op(dev_, r));
    lm_ggml_cgraph * g = lm_ggml_new_graph(ctx.get());
    lm_ggml_build_forward_expand(g, r);
    BufferPtr buf(lmtest::place_ctx_tensors(ctx.get(), buft_));
    ASSERT_NE(buf, nullptr);
    BackendPtr s(lm_ggml_backend_dev_init(dev_, nullptr));
    ASSERT_NE(s, nullptr);
    BackendLogCapture log;
    EXPECT_EQ(lm_ggml_backend_graph_compute(s.get(), g), LM_GGML_STATUS_FAILED);
    EXPECT_EQ(log.errors(), 1u) << log.text();
}

TEST_F(OpenCL, OffloadsLargeBatchesOnly) {
    CtxPtr ctx(lmtest::new_meta_ctx(8));
    lm_ggml_tensor * w = lm_ggml_new_tensor_2d(ctx.get(), LM_GGML_TYPE_Q4_0, 64, 16);
    lm_ggml_tensor * x1 = lm_ggml_new_tensor_2d(ctx.get(), LM_GGML_TYPE_F32, 64, 1);
    lm_ggml_tensor * xb = lm_ggml_new_tensor_2d(ctx.get(), LM_GGML_TYPE_F32, 64, 64);
    lm_ggml_tensor * ids = lm_ggml_new_tensor_1d(ctx.get(), LM_GGML_TYPE_I32, 64);
    EXPECT_FALSE(lm_ggml_backend_dev_offload_op(dev_, lm_ggml_mul_mat(ctx.get(), w, x1)));
    EXPECT_TRUE(lm_ggml_backend_dev_offload_op(dev_, lm_ggml_mul_mat(ctx.get(), w, xb)));
    EXPECT_FALSE(lm_ggml_backend_dev_offload_op(dev_, lm_ggml_get_rows(ctx.get(), w, ids)));
}

// Both matrix-vector kernels (work-group per dot product, the GPU default;
// a row per work-item, the CPU-device default) against a double reference
// over the dequantized weights. tests/ops covers whichever one the device
// picks by default; this covers the other.
TEST_F(OpenCL, BothMatrixVectorKernelsMatchTheReference) {
    const int64_t K = 512, M = 37;
    const lm_ggml_type types[] = {LM_GGML_TYPE_F32,  LM_GGML_TYPE_F16,  LM_GGML_TYPE_Q4_0,
                                  LM_GGML_TYPE_Q4_1, LM_GGML_TYPE_Q5_0, LM_GGML_TYPE_Q5_1,
                                  LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_Q4_K, LM_GGML_TYPE_Q6_K};
    const std::vector<float> wf = ramp(K * M, -1.0f, 2.0f);
    const std::vector<float> xf = ramp(K, 0.5f, -1.0f);
    for (const char * kind : {"wg", "rows"}) {
        ASSERT_EQ(setenv("LMGGML_OPENCL_MATVEC", kind, 1), 0);
        BackendPtr s(lm_ggml_backend_dev_init(dev_, nullptr));
        unsetenv("LMGGML_OPENCL_MATVEC");
        ASSERT_NE(s, nullptr);
        for (lm_ggml_type t : types) {
            CtxPtr ctx(lmtest::new_meta_ctx(8));
            lm_ggml_tensor * w = lm_ggml_new_tensor_2d(ctx.get(), t, K, M);
            lm_ggml_tensor * x = lm_ggml_new_tensor_2d(ctx.get(), LM_GGML_TYPE_F32, K, 1);
            lm_ggml_tensor * y = lm_ggml_mul_mat(ctx.get(), w, x);
            ASSERT_TRUE(lm_ggml_backend_dev_supports_op(dev_, y)) << lm_ggml_type_name(t);
            lm_ggml_cgraph * g = lm_ggml_new_graph(ctx.get());
            lm_ggml_build_forward_expand(g, y);
            BufferPtr buf(lmtest::place_ctx_tensors(ctx.get(), buft_));
            ASSERT_NE(buf, nullptr);

            std::vector<uint8_t> wq(lm_ggml_nbytes(w));
            lm_ggml_quantize_chunk(t, wf.data(), wq.data(), 0, M, K, nullptr);
            std::vector<float> wd(K * M);
            if (t == LM_GGML_TYPE_F32) {
                std::memcpy(wd.data(), wq.data(), wq.size());
            } else {
                ASSERT_NE(lm_ggml_get_type_traits(t)->to_float, nullptr) << lm_ggml_type_name(t);
                lm_ggml_get_type_traits(t)->to_float(wq.data(), wd.data(), K * M);
            }
            lm_ggml_backend_tensor_set(w, wq.data(), 0, wq.size());
            lmtest::set_f32(x, xf);
            ASSERT_EQ(lm_ggml_backend_graph_compute(s.get(), g), LM_GGML_STATUS_SUCCESS);
            const std::vector<float> got = lmtest::get_f32(y);
            for (int64_t r = 0; r < M; r++) {
                double ref = 0.0, mag = 0.0;
                for (int64_t k = 0; k < K; k++) {
                    ref += (double) wd[r * K + k] * xf[k];
                    mag += std::fabs((double) wd[r * K + k] * xf[k]);
                }
                ASSERT_NEAR(got[r], ref, 1e-5 * mag + 1e-6) << kind << " " << lm_ggml_type_name(t) << " row " << r;
            }
        }
    }
}

} // namespace
