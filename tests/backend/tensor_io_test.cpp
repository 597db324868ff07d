// tensor_set/get/memset/copy and their async forms, on host (CPU) and
// non-host (mini) buffers, including every argument check.

#include "backend_test_utils.h"
#include "ggml-backend-impl.h"
#include "ggml-cpu.h"
#include "mini_backend.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

using lmtest::BackendLogCapture;

namespace {

struct CtxDeleter {
    void operator()(lm_ggml_context * c) const { lm_ggml_free(c); }
};
using CtxPtr = std::unique_ptr<lm_ggml_context, CtxDeleter>;

std::vector<float> iota_f32(size_t n, float start) {
    std::vector<float> v(n);
    std::iota(v.begin(), v.end(), start);
    return v;
}

// One F32 (8, 3) tensor in a buffer of buft, plus a row view (8 floats at row 1).
struct Fixture {
    CtxPtr ctx{lmtest::new_meta_ctx()};
    lm_ggml_tensor * t = nullptr;
    lm_ggml_tensor * row1 = nullptr;
    lm_ggml_backend_buffer_t buf = nullptr;

    explicit Fixture(lm_ggml_backend_buffer_type_t buft) {
        t = lm_ggml_new_tensor_2d(ctx.get(), LM_GGML_TYPE_F32, 8, 3);
        row1 = lm_ggml_view_1d(ctx.get(), t, 8, t->nb[1]);
        buf = lmtest::place_ctx_tensors(ctx.get(), buft);
    }
    ~Fixture() { lm_ggml_backend_buffer_free(buf); }
};

class TensorIo : public ::testing::TestWithParam<bool> {
protected:
    minibk::Mini mini = minibk::make();
    lm_ggml_backend_buffer_type_t buft() const { return GetParam() ? mini.buft : lm_ggml_backend_cpu_buffer_type(); }
};

} // namespace

TEST_P(TensorIo, SetGetRoundTripWholeAndPartial) {
    Fixture f(buft());
    ASSERT_NE(f.buf, nullptr);
    const std::vector<float> v = iota_f32(24, 1.0f);
    lmtest::set_f32(f.t, v);
    EXPECT_EQ(lmtest::get_f32(f.t), v);

    // partial: floats 5..9 overwritten
    const float patch[4] = {-1, -2, -3, -4};
    lm_ggml_backend_tensor_set(f.t, patch, 5 * sizeof(float), sizeof(patch));
    std::vector<float> expect = v;
    std::copy(patch, patch + 4, expect.begin() + 5);
    EXPECT_EQ(lmtest::get_f32(f.t), expect);

    // through a view: row 1 is floats 8..15 of t
    EXPECT_EQ(lmtest::get_f32(f.row1), std::vector<float>(expect.begin() + 8, expect.begin() + 16));
    float two[2];
    lm_ggml_backend_tensor_get(f.row1, two, 3 * sizeof(float), sizeof(two));
    EXPECT_EQ(two[0], expect[11]);
    EXPECT_EQ(two[1], expect[12]);
}

TEST_P(TensorIo, MemsetRange) {
    Fixture f(buft()); // mini has no memset_tensor: the wrapper emulates it
    ASSERT_NE(f.buf, nullptr);
    std::vector<uint8_t> bytes(96);
    std::iota(bytes.begin(), bytes.end(), 0);
    lm_ggml_backend_tensor_set(f.t, bytes.data(), 0, bytes.size());
    lm_ggml_backend_tensor_memset(f.t, 0xEE, 10, 20);
    std::vector<uint8_t> got(96);
    lm_ggml_backend_tensor_get(f.t, got.data(), 0, got.size());
    for (size_t i = 0; i < bytes.size(); i++) {
        EXPECT_EQ(got[i], (i >= 10 && i < 30) ? 0xEE : bytes[i]) << "byte " << i;
    }
}

TEST_P(TensorIo, OutOfRangeAndUnallocatedAreRefusedWithOneLine) {
    Fixture f(buft());
    ASSERT_NE(f.buf, nullptr);
    const std::vector<float> v = iota_f32(24, 1.0f);
    lmtest::set_f32(f.t, v);
    std::vector<uint8_t> big(200, 0x11);

    struct Case {
        const char * what;
        size_t offset, size;
    };
    for (const Case & c : {Case{"size past end", 0, 97}, Case{"offset+size past end", 90, 8},
                           Case{"offset past end", 97, 1}, Case{"overflowing offset", SIZE_MAX, 2}}) {
        {
            BackendLogCapture log;
            lm_ggml_backend_tensor_set(f.t, big.data(), c.offset, c.size);
            EXPECT_EQ(log.errors(), 1u) << "set " << c.what << ": " << log.text();
        }
        {
            std::vector<uint8_t> out(200, 0x77);
            BackendLogCapture log;
            lm_ggml_backend_tensor_get(f.t, out.data(), c.offset, c.size);
            EXPECT_EQ(log.errors(), 1u) << "get " << c.what << ": " << log.text();
            EXPECT_EQ(out, std::vector<uint8_t>(200, 0x77)) << "get " << c.what << " wrote output";
        }
        {
            BackendLogCapture log;
            lm_ggml_backend_tensor_memset(f.t, 0, c.offset, c.size);
            EXPECT_EQ(log.errors(), 1u) << "memset " << c.what << ": " << log.text();
        }
    }
    EXPECT_EQ(lmtest::get_f32(f.t), v); // nothing was written

    // a tensor that was never placed
    lm_ggml_tensor * loose = lm_ggml_new_tensor_1d(f.ctx.get(), LM_GGML_TYPE_F32, 4);
    float x[4] = {};
    for (int which = 0; which < 3; which++) {
        BackendLogCapture log;
        if (which == 0) lm_ggml_backend_tensor_set(loose, x, 0, sizeof(x));
        if (which == 1) lm_ggml_backend_tensor_get(loose, x, 0, sizeof(x));
        if (which == 2) lm_ggml_backend_tensor_memset(loose, 0, 0, sizeof(x));
        EXPECT_EQ(log.errors(), 1u) << which << ": " << log.text();
    }
    // NULL tensor / NULL data; size 0 is a silent no-op
    {
        BackendLogCapture log;
        lm_ggml_backend_tensor_set(nullptr, x, 0, 4);
        lm_ggml_backend_tensor_get(nullptr, x, 0, 4);
        lm_ggml_backend_tensor_memset(nullptr, 0, 0, 4);
        lm_ggml_backend_tensor_set(f.t, nullptr, 0, 4);
        lm_ggml_backend_tensor_get(f.t, nullptr, 0, 4);
        EXPECT_EQ(log.errors(), 5u) << log.text();
    }
    {
        BackendLogCapture log;
        lm_ggml_backend_tensor_set(f.t, x, 0, 0);
        lm_ggml_backend_tensor_get(f.t, x, 96, 0);
        lm_ggml_backend_tensor_memset(f.t, 0, 0, 0);
        EXPECT_EQ(log.lines(), 0u) << log.text();
    }
}

TEST_P(TensorIo, CopyBetweenHostAndThisBufferType) {
    Fixture host(lm_ggml_backend_cpu_buffer_type());
    Fixture other(buft());
    Fixture third(buft());
    ASSERT_NE(host.buf, nullptr);
    ASSERT_NE(other.buf, nullptr);
    ASSERT_NE(third.buf, nullptr);
    const std::vector<float> v = iota_f32(24, -5.0f);
    lmtest::set_f32(host.t, v);

    lm_ggml_backend_tensor_copy(host.t, other.t); // host -> X
    EXPECT_EQ(lmtest::get_f32(other.t), v);
    lm_ggml_backend_tensor_copy(other.t, third.t); // X -> X (mini: staged through host)
    EXPECT_EQ(lmtest::get_f32(third.t), v);
    lmtest::set_f32(host.t, std::vector<float>(24, 0.0f));
    lm_ggml_backend_tensor_copy(third.t, host.t); // X -> host
    EXPECT_EQ(lmtest::get_f32(host.t), v);

    BackendLogCapture log;
    lm_ggml_backend_tensor_copy(host.t, host.t); // same tensor: nothing to do
    EXPECT_EQ(log.lines(), 0u);
    lm_ggml_backend_tensor_copy(host.row1, other.t); // different shape
    EXPECT_EQ(log.errors(), 1u) << log.text();
}

TEST_P(TensorIo, AsyncVariantsFallBackToSynchronousCopies) {
    Fixture f(buft());
    ASSERT_NE(f.buf, nullptr);
    lm_ggml_backend_t backend = GetParam() ? lm_ggml_backend_dev_init(mini.dev, nullptr) : lm_ggml_backend_cpu_init();
    ASSERT_NE(backend, nullptr);
    const std::vector<float> v = iota_f32(24, 3.0f);
    lm_ggml_backend_tensor_set_async(backend, f.t, v.data(), 0, v.size() * sizeof(float));
    std::vector<float> got(24, 0.0f);
    lm_ggml_backend_tensor_get_async(backend, f.t, got.data(), 0, got.size() * sizeof(float));
    lm_ggml_backend_synchronize(backend);
    EXPECT_EQ(got, v);

    Fixture g(buft());
    lm_ggml_backend_tensor_copy_async(backend, backend, f.t, g.t);
    lm_ggml_backend_synchronize(backend);
    EXPECT_EQ(lmtest::get_f32(g.t), v);

    BackendLogCapture log;
    lm_ggml_backend_tensor_set_async(backend, f.t, v.data(), 4, v.size() * sizeof(float)); // out of range
    EXPECT_EQ(log.errors(), 1u) << log.text();
    log.clear();
    lm_ggml_backend_tensor_get_async(nullptr, f.t, got.data(), 0, 4);
    EXPECT_EQ(log.errors(), 1u) << log.text();
    log.clear();
    lm_ggml_backend_tensor_copy_async(backend, backend, f.t, f.row1); // layouts differ
    EXPECT_EQ(log.errors(), 1u) << log.text();
    lm_ggml_backend_free(backend);
}

INSTANTIATE_TEST_SUITE_P(HostAndMini, TensorIo, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool> & i) { return i.param ? "mini" : "cpu"; });

namespace {
int g_sync_calls = 0;
int g_sets_after_sync = 0;
void counting_sync(lm_ggml_backend_t) { g_sync_calls++; }
} // namespace

TEST(TensorIoAsync, MissingSetAsyncSynchronizesFirst) {
    minibk::Mini mini = minibk::make();
    lm_ggml_backend_t backend = lm_ggml_backend_dev_init(mini.dev, nullptr);
    ASSERT_NE(backend, nullptr);
    backend->iface.synchronize = counting_sync; // pretend it queues work
    Fixture f(mini.buft);
    const std::vector<float> v = iota_f32(24, 0.5f);
    g_sync_calls = 0;
    lm_ggml_backend_tensor_set_async(backend, f.t, v.data(), 0, v.size() * sizeof(float));
    g_sets_after_sync = g_sync_calls;
    EXPECT_EQ(g_sets_after_sync, 1);
    EXPECT_EQ(lmtest::get_f32(f.t), v);
    std::vector<float> got(24);
    lm_ggml_backend_tensor_get_async(backend, f.t, got.data(), 0, got.size() * sizeof(float));
    EXPECT_EQ(g_sync_calls, 2);
    EXPECT_EQ(got, v);
    lm_ggml_backend_free(backend);
}

TEST(BufferCopyTensor, OnlyBuffersWithCpyTensorAnswerTrue) {
    minibk::Mini mini = minibk::make();
    Fixture host_a(lm_ggml_backend_cpu_buffer_type());
    Fixture host_b(lm_ggml_backend_cpu_buffer_type());
    Fixture dev(mini.buft);
    const std::vector<float> v = iota_f32(24, 7.0f);
    lmtest::set_f32(host_a.t, v);
    BackendLogCapture log;
    EXPECT_FALSE(lm_ggml_backend_buffer_copy_tensor(host_a.t, dev.t)); // mini: no cpy_tensor
    EXPECT_EQ(log.lines(), 0u) << "'not supported' is not an error";
    EXPECT_TRUE(lm_ggml_backend_buffer_copy_tensor(host_a.t, host_b.t));
    EXPECT_EQ(lmtest::get_f32(host_b.t), v);
}

// Two views of one host buffer that overlap (an RPC client may ask for such a
// copy): the destination ends with the source's values from before the copy,
// in both directions, through the buffer's cpy_tensor and the public copy.
// glibc's memcpy happens to move as well; the ASan build (scripts/sanitize)
// is where a memcpy of overlapping ranges fails this test.
TEST(BufferCopyTensor, OverlappingViewsOfOneHostBufferCopyAsIfStaged) {
    for (const bool forward : {true, false}) {
        for (const bool through_public_copy : {true, false}) {
            Fixture f(lm_ggml_backend_cpu_buffer_type());
            ASSERT_NE(f.buf, nullptr);
            const std::vector<float> v = iota_f32(24, 1.0f);
            lmtest::set_f32(f.t, v);
            // 16 floats at float 2 and 16 floats at float 4 (or the other way)
            const size_t from = forward ? 2 : 4;
            const size_t to = forward ? 4 : 2;
            lm_ggml_tensor * src = lm_ggml_view_1d(f.ctx.get(), f.t, 16, from * sizeof(float));
            lm_ggml_tensor * dst = lm_ggml_view_1d(f.ctx.get(), f.t, 16, to * sizeof(float));
            std::vector<float> expect = v;
            for (size_t i = 0; i < 16; ++i) {
                expect[to + i] = v[from + i];
            }
            if (through_public_copy) {
                lm_ggml_backend_tensor_copy(src, dst);
            } else {
                ASSERT_TRUE(lm_ggml_backend_buffer_copy_tensor(src, dst));
            }
            EXPECT_EQ(lmtest::get_f32(f.t), expect) << "forward " << forward << " public " << through_public_copy;
        }
    }
}
