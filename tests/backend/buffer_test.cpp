// Buffer types, buffers and multi-buffers: defaults of optional slots,
// usage/clear/reset, tensor placement, and the error paths (one log line,
// no abort, no state change).

#include "backend_test_utils.h"
#include "ggml-backend-impl.h"
#include "ggml-cpu.h"
#include "mini_backend.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

using lmtest::BackendLogCapture;

namespace {

struct CtxDeleter {
    void operator()(lm_ggml_context * c) const { lm_ggml_free(c); }
};
using CtxPtr = std::unique_ptr<lm_ggml_context, CtxDeleter>;

// ---- a counting buffer over host memory, for free/reset/init_tensor hooks
struct Counters {
    int freed = 0, reset = 0, init_tensor = 0;
};
struct CountingCtx {
    std::vector<uint8_t> mem;
    Counters * counters;
};

void cnt_free(lm_ggml_backend_buffer_t b) {
    auto * c = static_cast<CountingCtx *>(b->context);
    c->counters->freed++;
    delete c;
}
void * cnt_base(lm_ggml_backend_buffer_t b) { return static_cast<CountingCtx *>(b->context)->mem.data(); }
void cnt_init_tensor(lm_ggml_backend_buffer_t b, lm_ggml_tensor *) {
    static_cast<CountingCtx *>(b->context)->counters->init_tensor++;
}
void cnt_clear(lm_ggml_backend_buffer_t b, uint8_t v) {
    auto * c = static_cast<CountingCtx *>(b->context);
    std::memset(c->mem.data(), v, c->mem.size());
}
void cnt_reset(lm_ggml_backend_buffer_t b) { static_cast<CountingCtx *>(b->context)->counters->reset++; }
void cnt_set(lm_ggml_backend_buffer_t, lm_ggml_tensor * t, const void * d, size_t o, size_t s) {
    std::memcpy((char *) t->data + o, d, s);
}
void cnt_get(lm_ggml_backend_buffer_t, const lm_ggml_tensor * t, void * d, size_t o, size_t s) {
    std::memcpy(d, (const char *) t->data + o, s);
}

lm_ggml_backend_buffer_t counting_buffer(size_t size, Counters * counters) {
    lm_ggml_backend_buffer_i iface = {
        .free_buffer = cnt_free,
        .get_base = cnt_base,
        .init_tensor = cnt_init_tensor,
        .memset_tensor = nullptr,
        .set_tensor = cnt_set,
        .get_tensor = cnt_get,
        .cpy_tensor = nullptr,
        .clear = cnt_clear,
        .reset = cnt_reset,
    };
    auto * ctx = new CountingCtx{std::vector<uint8_t>(size), counters};
    return lm_ggml_backend_buffer_init(lm_ggml_backend_cpu_buffer_type(), iface, ctx, size);
}

} // namespace

TEST(BufferType, MiniDefaultsForOptionalSlots) {
    minibk::Mini mini = minibk::make();
    EXPECT_STREQ(lm_ggml_backend_buft_name(mini.buft), "MINI0");
    EXPECT_EQ(lm_ggml_backend_buft_get_alignment(mini.buft), minibk::kAlignment);
    EXPECT_EQ(lm_ggml_backend_buft_get_max_size(mini.buft), SIZE_MAX); // no get_max_size
    EXPECT_FALSE(lm_ggml_backend_buft_is_host(mini.buft));             // no is_host
    EXPECT_EQ(lm_ggml_backend_buft_get_device(mini.buft), mini.dev);

    CtxPtr ctx(lmtest::new_meta_ctx());
    lm_ggml_tensor * t = lm_ggml_new_tensor_2d(ctx.get(), LM_GGML_TYPE_F32, 7, 3);
    EXPECT_EQ(lm_ggml_backend_buft_get_alloc_size(mini.buft, t), 7u * 3u * 4u); // no get_alloc_size: nbytes
}

TEST(BufferType, ProvidedSlotsAreUsed) {
    minibk::Mini mini = minibk::make({.dev_name = "CAPPED0", .max_size = 1024, .alloc_pad = 256});
    EXPECT_EQ(lm_ggml_backend_buft_get_max_size(mini.buft), 1024u);
    CtxPtr ctx(lmtest::new_meta_ctx());
    lm_ggml_tensor * t = lm_ggml_new_tensor_1d(ctx.get(), LM_GGML_TYPE_F32, 10); // 40 bytes
    EXPECT_EQ(lm_ggml_backend_buft_get_alloc_size(mini.buft, t), 256u);
    lm_ggml_backend_buffer_t b = lm_ggml_backend_buft_alloc_buffer(mini.buft, 1024);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(lm_ggml_backend_buffer_get_alloc_size(b, t), 256u);
    EXPECT_EQ(lm_ggml_backend_buffer_get_max_size(b), 1024u);
    lm_ggml_backend_buffer_free(b);

    // beyond max size: refused with one line
    BackendLogCapture log;
    EXPECT_EQ(lm_ggml_backend_buft_alloc_buffer(mini.buft, 2048), nullptr);
    EXPECT_EQ(log.errors(), 1u) << log.text();
}

TEST(BufferType, CpuIsHost) {
    lm_ggml_backend_buffer_type_t cpu = lm_ggml_backend_cpu_buffer_type();
    EXPECT_TRUE(lm_ggml_backend_buft_is_host(cpu));
    EXPECT_GT(lm_ggml_backend_buft_get_alignment(cpu), 0u);
    lm_ggml_backend_buffer_t b = lm_ggml_backend_buft_alloc_buffer(cpu, 100);
    ASSERT_NE(b, nullptr);
    EXPECT_TRUE(lm_ggml_backend_buffer_is_host(b));
    EXPECT_EQ(lm_ggml_backend_buffer_get_type(b), cpu);
    EXPECT_STREQ(lm_ggml_backend_buffer_name(b), lm_ggml_backend_buft_name(cpu));
    EXPECT_EQ(lm_ggml_backend_buffer_get_size(b), 100u);
    EXPECT_EQ(lm_ggml_backend_buffer_get_alignment(b), lm_ggml_backend_buft_get_alignment(cpu));
    EXPECT_EQ(lm_ggml_backend_buffer_get_max_size(b), lm_ggml_backend_buft_get_max_size(cpu));
    EXPECT_EQ((uintptr_t) lm_ggml_backend_buffer_get_base(b) % lm_ggml_backend_buffer_get_alignment(b), 0u);
    lm_ggml_backend_buffer_free(b);
}

TEST(Buffer, ZeroSizedBufferIsEmptyButValid) {
    minibk::Mini mini = minibk::make();
    lm_ggml_backend_buffer_t b = lm_ggml_backend_buft_alloc_buffer(mini.buft, 0);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(lm_ggml_backend_buffer_get_size(b), 0u);
    BackendLogCapture log;
    EXPECT_EQ(lm_ggml_backend_buffer_get_base(b), nullptr);
    lm_ggml_backend_buffer_clear(b, 1); // nothing to clear
    lm_ggml_backend_buffer_reset(b);
    EXPECT_EQ(log.lines(), 0u) << log.text();
    lm_ggml_backend_buffer_free(b);
}

TEST(Buffer, UsageDefaultsToAnyAndIsStored) {
    lm_ggml_backend_buffer_t b = lm_ggml_backend_buft_alloc_buffer(lm_ggml_backend_cpu_buffer_type(), 64);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(lm_ggml_backend_buffer_get_usage(b), LM_GGML_BACKEND_BUFFER_USAGE_ANY);
    lm_ggml_backend_buffer_set_usage(b, LM_GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    EXPECT_EQ(lm_ggml_backend_buffer_get_usage(b), LM_GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    lm_ggml_backend_buffer_set_usage(b, LM_GGML_BACKEND_BUFFER_USAGE_COMPUTE);
    EXPECT_EQ(lm_ggml_backend_buffer_get_usage(b), LM_GGML_BACKEND_BUFFER_USAGE_COMPUTE);
    lm_ggml_backend_buffer_free(b);
}

TEST(Buffer, ClearFillsEveryByte) {
    for (bool use_mini : {false, true}) {
        minibk::Mini mini = minibk::make();
        lm_ggml_backend_buffer_type_t buft = use_mini ? mini.buft : lm_ggml_backend_cpu_buffer_type();
        CtxPtr ctx(lmtest::new_meta_ctx());
        lm_ggml_tensor * t = lm_ggml_new_tensor_1d(ctx.get(), LM_GGML_TYPE_I8, 100);
        lm_ggml_backend_buffer_t b = lmtest::place_ctx_tensors(ctx.get(), buft);
        ASSERT_NE(b, nullptr);
        lm_ggml_backend_buffer_clear(b, 0xAB);
        std::vector<uint8_t> got(100, 0);
        lm_ggml_backend_tensor_get(t, got.data(), 0, got.size());
        EXPECT_EQ(got, std::vector<uint8_t>(100, 0xAB)) << "mini=" << use_mini;
        lm_ggml_backend_buffer_clear(b, 0x00);
        lm_ggml_backend_tensor_get(t, got.data(), 0, got.size());
        EXPECT_EQ(got, std::vector<uint8_t>(100, 0x00)) << "mini=" << use_mini;
        lm_ggml_backend_buffer_free(b);
    }
}

TEST(Buffer, ResetAndInitTensorReachTheBackend) {
    Counters c;
    lm_ggml_backend_buffer_t b = counting_buffer(256, &c);
    ASSERT_NE(b, nullptr);
    lm_ggml_backend_buffer_reset(b);
    EXPECT_EQ(c.reset, 1);

    CtxPtr ctx(lmtest::new_meta_ctx());
    lm_ggml_tensor * t = lm_ggml_new_tensor_1d(ctx.get(), LM_GGML_TYPE_F32, 4);
    lm_ggml_tensor * v = lm_ggml_view_1d(ctx.get(), t, 2, 8);
    lm_ggml_backend_tensor_alloc(b, t, (char *) lm_ggml_backend_buffer_get_base(b) + 64);
    EXPECT_EQ(c.init_tensor, 1);
    EXPECT_EQ(t->buffer, b);
    EXPECT_EQ(t->data, (char *) lm_ggml_backend_buffer_get_base(b) + 64);
    lm_ggml_backend_view_init(v);
    EXPECT_EQ(c.init_tensor, 2);
    EXPECT_EQ(v->buffer, b);
    EXPECT_EQ(v->data, (char *) t->data + 8);

    lm_ggml_backend_buffer_free(b);
    EXPECT_EQ(c.freed, 1);
}

TEST(Buffer, NoFreeSlotStillReleasesTheObject) {
    minibk::Mini mini = minibk::make(); // free_buffer is NULL
    lm_ggml_backend_buffer_t b = lm_ggml_backend_buft_alloc_buffer(mini.buft, 64);
    ASSERT_NE(b, nullptr);
    BackendLogCapture log;
    lm_ggml_backend_buffer_free(b);
    lm_ggml_backend_buffer_free(nullptr); // like free(NULL)
    EXPECT_EQ(log.lines(), 0u);
}

TEST(Buffer, TensorAllocErrorsLogOneLineAndChangeNothing) {
    lm_ggml_backend_buffer_t b = lm_ggml_backend_buft_alloc_buffer(lm_ggml_backend_cpu_buffer_type(), 64);
    ASSERT_NE(b, nullptr);
    char * base = (char *) lm_ggml_backend_buffer_get_base(b);
    CtxPtr ctx(lmtest::new_meta_ctx());
    lm_ggml_tensor * big = lm_ggml_new_tensor_1d(ctx.get(), LM_GGML_TYPE_F32, 17); // 68 bytes > 64
    lm_ggml_tensor * t = lm_ggml_new_tensor_1d(ctx.get(), LM_GGML_TYPE_F32, 4);    // 16 bytes
    lm_ggml_tensor * v = lm_ggml_view_1d(ctx.get(), t, 2, 0);

    struct Case {
        const char * what;
        lm_ggml_tensor * tensor;
        char * addr;
    };
    for (const Case & cs : {Case{"too big", big, base}, Case{"past the end", t, base + 56},
                            Case{"before base", t, base - 16}, Case{"a view", v, base}}) {
        BackendLogCapture log;
        lm_ggml_backend_tensor_alloc(b, cs.tensor, cs.addr);
        EXPECT_EQ(log.errors(), 1u) << cs.what << ": " << log.text();
        EXPECT_EQ(cs.tensor->buffer, nullptr) << cs.what;
        EXPECT_EQ(cs.tensor->data, nullptr) << cs.what;
    }
    lm_ggml_backend_tensor_alloc(b, t, base + 48); // exactly fits
    EXPECT_EQ(t->data, base + 48);
    {
        BackendLogCapture log;
        lm_ggml_backend_tensor_alloc(b, t, base); // already allocated
        EXPECT_EQ(log.errors(), 1u) << log.text();
        EXPECT_EQ(t->data, base + 48);
    }
    lm_ggml_backend_buffer_free(b);
}

TEST(Buffer, ViewInitErrors) {
    CtxPtr ctx(lmtest::new_meta_ctx());
    lm_ggml_tensor * t = lm_ggml_new_tensor_1d(ctx.get(), LM_GGML_TYPE_F32, 4);
    lm_ggml_tensor * v = lm_ggml_view_1d(ctx.get(), t, 2, 4);
    {
        BackendLogCapture log;
        lm_ggml_backend_view_init(v); // source not allocated
        EXPECT_EQ(log.errors(), 1u) << log.text();
        EXPECT_EQ(v->buffer, nullptr);
    }
    {
        BackendLogCapture log;
        lm_ggml_backend_view_init(t); // not a view
        EXPECT_EQ(log.errors(), 1u) << log.text();
    }
    lm_ggml_backend_buffer_t b = lmtest::place_ctx_tensors(ctx.get(), lm_ggml_backend_cpu_buffer_type());
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(v->data, (char *) t->data + 4); // placed by the helper through view_init
    {
        BackendLogCapture log;
        lm_ggml_backend_view_init(v); // already initialised
        EXPECT_EQ(log.errors(), 1u) << log.text();
    }
    lm_ggml_backend_buffer_free(b);
}

TEST(Buffer, NullArgumentsLogOneLine) {
    struct Call {
        const char * what;
        void (*fn)();
    };
    const Call calls[] = {
        {"buft_name", [] { EXPECT_STREQ(lm_ggml_backend_buft_name(nullptr), "NULL"); }},
        {"buft_alloc_buffer", [] { EXPECT_EQ(lm_ggml_backend_buft_alloc_buffer(nullptr, 16), nullptr); }},
        {"buft_get_alignment", [] { EXPECT_EQ(lm_ggml_backend_buft_get_alignment(nullptr), 0u); }},
        {"buft_get_max_size", [] { EXPECT_EQ(lm_ggml_backend_buft_get_max_size(nullptr), 0u); }},
        {"buft_get_alloc_size",
         [] { EXPECT_EQ(lm_ggml_backend_buft_get_alloc_size(lm_ggml_backend_cpu_buffer_type(), nullptr), 0u); }},
        {"buft_is_host", [] { EXPECT_FALSE(lm_ggml_backend_buft_is_host(nullptr)); }},
        {"buft_get_device", [] { EXPECT_EQ(lm_ggml_backend_buft_get_device(nullptr), nullptr); }},
        {"buffer_init", [] { EXPECT_EQ(lm_ggml_backend_buffer_init(nullptr, {}, nullptr, 0), nullptr); }},
        {"buffer_name", [] { EXPECT_STREQ(lm_ggml_backend_buffer_name(nullptr), "NULL"); }},
        {"buffer_get_size", [] { EXPECT_EQ(lm_ggml_backend_buffer_get_size(nullptr), 0u); }},
        {"buffer_get_base", [] { EXPECT_EQ(lm_ggml_backend_buffer_get_base(nullptr), nullptr); }},
        {"buffer_init_tensor", [] { lm_ggml_backend_buffer_init_tensor(nullptr, nullptr); }},
        {"buffer_clear", [] { lm_ggml_backend_buffer_clear(nullptr, 0); }},
        {"buffer_is_host", [] { EXPECT_FALSE(lm_ggml_backend_buffer_is_host(nullptr)); }},
        {"buffer_set_usage", [] { lm_ggml_backend_buffer_set_usage(nullptr, LM_GGML_BACKEND_BUFFER_USAGE_WEIGHTS); }},
        {"buffer_get_usage",
         [] { EXPECT_EQ(lm_ggml_backend_buffer_get_usage(nullptr), LM_GGML_BACKEND_BUFFER_USAGE_ANY); }},
        {"buffer_get_type", [] { EXPECT_EQ(lm_ggml_backend_buffer_get_type(nullptr), nullptr); }},
        {"buffer_reset", [] { lm_ggml_backend_buffer_reset(nullptr); }},
        {"buffer_get_alignment", [] { EXPECT_EQ(lm_ggml_backend_buffer_get_alignment(nullptr), 0u); }},
        {"buffer_get_max_size", [] { EXPECT_EQ(lm_ggml_backend_buffer_get_max_size(nullptr), 0u); }},
        {"buffer_get_alloc_size", [] { EXPECT_EQ(lm_ggml_backend_buffer_get_alloc_size(nullptr, nullptr), 0u); }},
        {"tensor_alloc", [] { lm_ggml_backend_tensor_alloc(nullptr, nullptr, nullptr); }},
        {"view_init", [] { lm_ggml_backend_view_init(nullptr); }},
        {"is_multi_buffer", [] { EXPECT_FALSE(lm_ggml_backend_buffer_is_multi_buffer(nullptr)); }},
        {"multi_alloc", [] { EXPECT_EQ(lm_ggml_backend_multi_buffer_alloc_buffer(nullptr, 1), nullptr); }},
        {"buffer_copy_tensor", [] { EXPECT_FALSE(lm_ggml_backend_buffer_copy_tensor(nullptr, nullptr)); }},
    };
    for (const Call & c : calls) {
        BackendLogCapture log;
        c.fn();
        EXPECT_EQ(log.errors(), 1u) << c.what << ": " << log.text();
        EXPECT_EQ(log.lines(), 1u) << c.what << ": " << log.text();
    }
}

TEST(Buffer, GetBaseReturningNullIsReported) {
    lm_ggml_backend_buffer_i iface = {};
    iface.get_base = [](lm_ggml_backend_buffer_t) -> void * { return nullptr; };
    lm_ggml_backend_buffer_t b = lm_ggml_backend_buffer_init(lm_ggml_backend_cpu_buffer_type(), iface, nullptr, 32);
    ASSERT_NE(b, nullptr);
    BackendLogCapture log;
    EXPECT_EQ(lm_ggml_backend_buffer_get_base(b), nullptr);
    EXPECT_EQ(log.errors(), 1u) << log.text();
    log.clear();
    lm_ggml_backend_buffer_clear(b, 0); // no clear slot
    EXPECT_EQ(log.errors(), 1u) << log.text();
    lm_ggml_backend_buffer_free(b);
}

// ---------------------------------------------------------------- multi-buffer

TEST(MultiBuffer, SizeUsageClearAndFreeReachEveryPart) {
    Counters c;
    lm_ggml_backend_buffer_t parts[2] = {counting_buffer(64, &c), counting_buffer(32, &c)};
    lm_ggml_backend_buffer_t multi = lm_ggml_backend_multi_buffer_alloc_buffer(parts, 2);
    ASSERT_NE(multi, nullptr);
    EXPECT_TRUE(lm_ggml_backend_buffer_is_multi_buffer(multi));
    EXPECT_FALSE(lm_ggml_backend_buffer_is_multi_buffer(parts[0]));
    EXPECT_EQ(lm_ggml_backend_buffer_get_size(multi), 96u);
    EXPECT_EQ(lm_ggml_backend_buffer_get_type(multi), lm_ggml_backend_buffer_get_type(parts[0]));

    lm_ggml_backend_buffer_set_usage(multi, LM_GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    EXPECT_EQ(lm_ggml_backend_buffer_get_usage(multi), LM_GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    EXPECT_EQ(lm_ggml_backend_buffer_get_usage(parts[0]), LM_GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    EXPECT_EQ(lm_ggml_backend_buffer_get_usage(parts[1]), LM_GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    lm_ggml_backend_multi_buffer_set_usage(multi, LM_GGML_BACKEND_BUFFER_USAGE_COMPUTE);
    EXPECT_EQ(lm_ggml_backend_buffer_get_usage(parts[0]), LM_GGML_BACKEND_BUFFER_USAGE_COMPUTE);
    EXPECT_EQ(lm_ggml_backend_buffer_get_usage(parts[1]), LM_GGML_BACKEND_BUFFER_USAGE_COMPUTE);

    // a tensor in each part sees the clear value
    CtxPtr ctx(lmtest::new_meta_ctx());
    lm_ggml_tensor * a = lm_ggml_new_tensor_1d(ctx.get(), LM_GGML_TYPE_I8, 64);
    lm_ggml_tensor * b = lm_ggml_new_tensor_1d(ctx.get(), LM_GGML_TYPE_I8, 32);
    lm_ggml_backend_tensor_alloc(parts[0], a, lm_ggml_backend_buffer_get_base(parts[0]));
    lm_ggml_backend_tensor_alloc(parts[1], b, lm_ggml_backend_buffer_get_base(parts[1]));
    lm_ggml_backend_buffer_clear(multi, 0x5A);
    std::vector<uint8_t> ga(64), gb(32);
    lm_ggml_backend_tensor_get(a, ga.data(), 0, 64);
    lm_ggml_backend_tensor_get(b, gb.data(), 0, 32);
    EXPECT_EQ(ga, std::vector<uint8_t>(64, 0x5A));
    EXPECT_EQ(gb, std::vector<uint8_t>(32, 0x5A));

    lm_ggml_backend_buffer_free(multi);
    EXPECT_EQ(c.freed, 2); // parts are owned by the multi-buffer
}

TEST(MultiBuffer, Errors) {
    lm_ggml_backend_buffer_t plain = lm_ggml_backend_buft_alloc_buffer(lm_ggml_backend_cpu_buffer_type(), 16);
    ASSERT_NE(plain, nullptr);
    {
        BackendLogCapture log;
        lm_ggml_backend_multi_buffer_set_usage(plain, LM_GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
        EXPECT_EQ(log.errors(), 1u) << log.text();
        EXPECT_EQ(lm_ggml_backend_buffer_get_usage(plain), LM_GGML_BACKEND_BUFFER_USAGE_ANY);
    }
    {
        BackendLogCapture log;
        EXPECT_EQ(lm_ggml_backend_multi_buffer_alloc_buffer(&plain, 0), nullptr);
        EXPECT_EQ(log.errors(), 1u) << log.text();
    }
    {
        lm_ggml_backend_buffer_t parts[2] = {plain, nullptr};
        BackendLogCapture log;
        EXPECT_EQ(lm_ggml_backend_multi_buffer_alloc_buffer(parts, 2), nullptr);
        EXPECT_EQ(log.errors(), 1u) << log.text();
    }
    lm_ggml_backend_buffer_free(plain); // still owned by us after the failures
}
