// Bad input at the backend-API boundary (SPEC §4): out-of-range tensor I/O, a
// tensor with no buffer, mismatched copies, misplaced allocations, real
// allocation failures. Each must log exactly one error line and leave memory
// untouched -- never abort. What cannot be detected (a stale buffer pointer)
// is shown to be caught by AddressSanitizer instead; docs/RELIABILITY.md
// lists both.
#include "child.h"

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

// Let huge requests fail with NULL under ASan too (its default is to abort),
// so the library's own out-of-memory path is what gets tested.
extern "C" const char * __asan_default_options() { return "allocator_may_return_null=1"; }

namespace {

// Error lines logged while alive.
class ErrorLog {
public:
    ErrorLog() { lm_ggml_log_set(&ErrorLog::cb, this); }
    ~ErrorLog() { lm_ggml_log_set(nullptr, nullptr); }
    ErrorLog(const ErrorLog &) = delete;
    ErrorLog & operator=(const ErrorLog &) = delete;
    int take() { // error lines since the last take
        const int n = errors_;
        errors_ = 0;
        return n;
    }
    std::string last;

private:
    static void cb(lm_ggml_log_level level, const char * text, void * user) {
        auto * self = static_cast<ErrorLog *>(user);
        if (level == LM_GGML_LOG_LEVEL_ERROR) {
            self->errors_++;
            self->last = text ? text : "";
        }
    }
    int errors_ = 0;
};

constexpr uint8_t kGuard = 0xAB;

// A CPU buffer of 192 bytes filled with kGuard, holding one F32 (4) tensor
// placed at offset 64: bytes outside [64, 80) must never change.
class GuardedTensor : public ::testing::Test {
protected:
    void SetUp() override {
        backend_ = lm_ggml_backend_cpu_init();
        ASSERT_NE(backend_, nullptr);
        lm_ggml_init_params ip = {16 * lm_ggml_tensor_overhead(), nullptr, true};
        ctx_ = lm_ggml_init(ip);
        ASSERT_NE(ctx_, nullptr);
        t_ = lm_ggml_new_tensor_1d(ctx_, LM_GGML_TYPE_F32, 4);
        lm_ggml_set_name(t_, "t");
        buf_ = lm_ggml_backend_buft_alloc_buffer(lm_ggml_backend_cpu_buffer_type(), 192);
        ASSERT_NE(buf_, nullptr);
        lm_ggml_backend_buffer_clear(buf_, kGuard);
        base_ = static_cast<uint8_t *>(lm_ggml_backend_buffer_get_base(buf_));
        lm_ggml_backend_tensor_alloc(buf_, t_, base_ + 64);
        ASSERT_EQ(t_->data, base_ + 64);
    }
    void TearDown() override {
        lm_ggml_backend_buffer_free(buf_);
        lm_ggml_free(ctx_);
        lm_ggml_backend_free(backend_);
    }
    // true when no byte of the buffer changed
    bool untouched() const {
        for (int i = 0; i < 192; ++i) {
            if (base_[i] != kGuard) return false;
        }
        return true;
    }

    lm_ggml_backend_t backend_ = nullptr;
    lm_ggml_context * ctx_ = nullptr;
    lm_ggml_tensor * t_ = nullptr;
    lm_ggml_backend_buffer_t buf_ = nullptr;
    uint8_t * base_ = nullptr;
};

TEST_F(GuardedTensor, OutOfRangeSetGetMemsetAreRefused) {
    uint8_t src[64];
    std::memset(src, 0x11, sizeof(src));
    uint8_t dst[64];
    std::memset(dst, 0x22, sizeof(dst));
    // (offset, size) pairs outside the 16 bytes of t, including overflow
    const std::pair<size_t, size_t> bad[] = {{0, 17},       {16, 1},       {15, 2},           {17, 1},
                                             {SIZE_MAX, 4}, {4, SIZE_MAX}, {SIZE_MAX - 2, 8}, {1u << 30, 4}};
    ErrorLog log;
    int n_calls = 0;
    for (const auto & [off, size] : bad) {
        const std::string at = "offset " + std::to_string(off) + " size " + std::to_string(size);
        lm_ggml_backend_tensor_set(t_, src, off, size);
        EXPECT_EQ(log.take(), 1) << "tensor_set " << at;
        lm_ggml_backend_tensor_get(t_, dst, off, size);
        EXPECT_EQ(log.take(), 1) << "tensor_get " << at;
        lm_ggml_backend_tensor_memset(t_, 0x33, off, size);
        EXPECT_EQ(log.take(), 1) << "tensor_memset " << at;
        lm_ggml_backend_tensor_set_async(backend_, t_, src, off, size);
        EXPECT_EQ(log.take(), 1) << "tensor_set_async " << at;
        lm_ggml_backend_tensor_get_async(backend_, t_, dst, off, size);
        EXPECT_EQ(log.take(), 1) << "tensor_get_async " << at;
        n_calls += 5;
    }
    EXPECT_TRUE(untouched()) << "a refused call wrote into the buffer";
    for (uint8_t b : dst) ASSERT_EQ(b, 0x22) << "a refused get wrote into the destination";
    // the edges themselves are fine
    lm_ggml_backend_tensor_set(t_, src, 12, 4);
    lm_ggml_backend_tensor_get(t_, dst, 0, 16);
    EXPECT_EQ(log.take(), 0);
    EXPECT_EQ(dst[12], 0x11);
    EXPECT_EQ(dst[11], kGuard);
    EXPECT_EQ(base_[63], kGuard);
    EXPECT_EQ(base_[80], kGuard);
    EXPECT_EQ(n_calls, 40);
}

TEST_F(GuardedTensor, MisplacedTensorAllocIsRefused) {
    ErrorLog log;
    lm_ggml_tensor * u = lm_ggml_new_tensor_1d(ctx_, LM_GGML_TYPE_F32, 4);
    lm_ggml_backend_tensor_alloc(buf_, u, base_ + 180); // 16 bytes do not fit in the last 12
    EXPECT_EQ(log.take(), 1);
    lm_ggml_backend_tensor_alloc(buf_, u, base_ - 16); // before the buffer
    EXPECT_EQ(log.take(), 1);
    lm_ggml_backend_tensor_alloc(buf_, u, base_ + 1000);
    EXPECT_EQ(log.take(), 1);
    EXPECT_EQ(u->buffer, nullptr);
    EXPECT_EQ(u->data, nullptr);
    lm_ggml_backend_tensor_alloc(buf_, t_, base_ + 96); // already allocated
    EXPECT_EQ(log.take(), 1);
    EXPECT_EQ(t_->data, base_ + 64);
    lm_ggml_tensor * v = lm_ggml_view_1d(ctx_, t_, 2, 0); // a view is placed by view_init
    lm_ggml_backend_tensor_alloc(buf_, v, base_ + 96);
    EXPECT_EQ(log.take(), 1);
    EXPECT_TRUE(untouched());
}

TEST_F(GuardedTensor, TensorWithoutBufferIsRefused) {
    ErrorLog log;
    float vals[4] = {1, 2, 3, 4};
    // headers only: no data, no buffer
    lm_ggml_tensor * bare = lm_ggml_new_tensor_1d(ctx_, LM_GGML_TYPE_F32, 4);
    lm_ggml_backend_tensor_set(bare, vals, 0, 16);
    EXPECT_EQ(log.take(), 1);
    lm_ggml_backend_tensor_get(bare, vals, 0, 16);
    EXPECT_EQ(log.take(), 1);
    lm_ggml_backend_tensor_memset(bare, 0, 0, 16);
    EXPECT_EQ(log.take(), 1);
    lm_ggml_backend_tensor_copy(t_, bare);
    EXPECT_EQ(log.take(), 1);
    lm_ggml_backend_tensor_copy(bare, t_);
    EXPECT_EQ(log.take(), 1);
    // memory from a context (data set) but no backend buffer
    lm_ggml_init_params ip = {1024, nullptr, false};
    lm_ggml_context * host = lm_ggml_init(ip);
    ASSERT_NE(host, nullptr);
    lm_ggml_tensor * h = lm_ggml_new_tensor_1d(host, LM_GGML_TYPE_F32, 4);
    ASSERT_NE(h->data, nullptr);
    std::memset(h->data, 0x5A, 16);
    lm_ggml_backend_tensor_set(h, vals, 0, 16);
    EXPECT_EQ(log.take(), 1);
    EXPECT_EQ(((uint8_t *) h->data)[0], 0x5A);
    // a view of a tensor that was never allocated
    lm_ggml_tensor * view = lm_ggml_view_1d(ctx_, bare, 2, 4);
    lm_ggml_backend_view_init(view);
    EXPECT_EQ(log.take(), 1);
    EXPECT_EQ(view->buffer, nullptr);
    lm_ggml_free(host);
    EXPECT_TRUE(untouched());
}

TEST_F(GuardedTensor, MismatchedCopiesAreRefused) {
    ErrorLog log;
    // every candidate is 16 bytes in the same buffer: only the layout differs
    lm_ggml_tensor * f16 = lm_ggml_new_tensor_1d(ctx_, LM_GGML_TYPE_F16, 8);
    lm_ggml_tensor * i32 = lm_ggml_new_tensor_1d(ctx_, LM_GGML_TYPE_I32, 4);
    lm_ggml_tensor * m22 = lm_ggml_new_tensor_2d(ctx_, LM_GGML_TYPE_F32, 2, 2);
    lm_ggml_tensor * src2 = lm_ggml_new_tensor_2d(ctx_, LM_GGML_TYPE_F32, 2, 2);
    lm_ggml_backend_tensor_alloc(buf_, f16, base_ + 0);
    lm_ggml_backend_tensor_alloc(buf_, i32, base_ + 16);
    lm_ggml_backend_tensor_alloc(buf_, m22, base_ + 32);
    lm_ggml_backend_tensor_alloc(buf_, src2, base_ + 96);
    // same type and shape, other strides (a view made after its source was
    // allocated already shares the source's buffer)
    lm_ggml_tensor * tr = lm_ggml_transpose(ctx_, src2);
    ASSERT_EQ(log.take(), 0) << log.last;
    ASSERT_EQ(tr->buffer, buf_);

    struct Pair {
        lm_ggml_tensor * src;
        lm_ggml_tensor * dst;
        const char * what;
    };
    const Pair pairs[] = {{t_, f16, "F32 -> F16"},
                          {t_, i32, "F32 -> I32 (same size)"},
                          {t_, m22, "(4) -> (2, 2)"},
                          {tr, m22, "transposed -> contiguous"},
                          {f16, t_, "F16 -> F32"}};
    for (const Pair & p : pairs) {
        lm_ggml_backend_tensor_copy(p.src, p.dst);
        EXPECT_EQ(log.take(), 1) << p.what;
        lm_ggml_backend_tensor_copy_async(backend_, backend_, p.src, p.dst);
        EXPECT_EQ(log.take(), 1) << p.what << " (async)";
    }
    EXPECT_TRUE(untouched());
}

TEST(AllocationFailure, HugeRequestsFailCleanly) {
    ErrorLog log;
    lm_ggml_backend_buffer_type_t cpu = lm_ggml_backend_cpu_buffer_type();
    EXPECT_EQ(lm_ggml_backend_buft_alloc_buffer(cpu, SIZE_MAX / 2), nullptr);
    EXPECT_GE(log.take(), 1);
    EXPECT_EQ(lm_ggml_backend_buft_alloc_buffer(cpu, SIZE_MAX - 8), nullptr);
    EXPECT_GE(log.take(), 1);
    lm_ggml_backend_t backend = lm_ggml_backend_cpu_init();
    ASSERT_NE(backend, nullptr);
    EXPECT_EQ(lm_ggml_backend_alloc_buffer(backend, (size_t) 1 << 62), nullptr);
    EXPECT_GE(log.take(), 1);
    lm_ggml_backend_free(backend);
    // (lm_ggml_aligned_malloc and lm_ggml_init each log a line: one cause, two layers)
    lm_ggml_init_params ip = {SIZE_MAX / 2, nullptr, false};
    EXPECT_EQ(lm_ggml_init(ip), nullptr);
    EXPECT_GE(log.take(), 1);
    ip.mem_size = SIZE_MAX - 4; // padding to the arena alignment would wrap around to 0
    EXPECT_EQ(lm_ggml_init(ip), nullptr);
    EXPECT_EQ(log.take(), 1);
}

TEST(AllocationFailure, TensorsTooLargeForTheirContextFailCleanly) {
    lm_ggml_init_params ip = {8 * lm_ggml_tensor_overhead(), nullptr, true};
    lm_ggml_context * ctx = lm_ggml_init(ip);
    ASSERT_NE(ctx, nullptr);
    ErrorLog log;
    // element counts whose byte size overflows size_t (the row size alone, then the product)
    EXPECT_EQ(lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, INT64_MAX), nullptr);
    EXPECT_EQ(log.take(), 1);
    EXPECT_EQ(lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, (int64_t) 1 << 40, (int64_t) 1 << 40), nullptr);
    EXPECT_GE(log.take(), 1);
    lm_ggml_free(ctx);
    // a context with data: the arena is full
    lm_ggml_init_params small = {1024, nullptr, false};
    ctx = lm_ggml_init(small);
    ASSERT_NE(ctx, nullptr);
    EXPECT_EQ(lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 1024), nullptr);
    EXPECT_EQ(log.take(), 1);
    lm_ggml_free(ctx);
}

// Runs body in a child and returns (exit cleanly?, error lines, failure reported?).
struct Verdict {
    int failed = -1;
    int errors = 0;
};
int g_child_errors = 0;
void count_errors(lm_ggml_log_level level, const char *, void *) {
    if (level == LM_GGML_LOG_LEVEL_ERROR) ++g_child_errors;
}

TEST(GraphMisuse, ComputingUnallocatedTensorsFailsCleanly) {
    Verdict v;
    const rel::ChildStatus st = rel::run_in_child(
        [](void * out) {
            Verdict & r = *(Verdict *) out;
            lm_ggml_log_set(count_errors, nullptr);
            lm_ggml_backend_t backend = lm_ggml_backend_cpu_init();
            lm_ggml_init_params ip = {16 * lm_ggml_tensor_overhead() + lm_ggml_graph_overhead(), nullptr, true};
            lm_ggml_context * ctx = lm_ggml_init(ip);
            lm_ggml_tensor * a = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 8);
            lm_ggml_tensor * out_t = lm_ggml_add(ctx, a, a);
            lm_ggml_cgraph * g = lm_ggml_new_graph(ctx);
            lm_ggml_build_forward_expand(g, out_t);
            r.failed = lm_ggml_backend_graph_compute(backend, g) != LM_GGML_STATUS_SUCCESS;
            r.errors = g_child_errors;
            lm_ggml_free(ctx);
            lm_ggml_backend_free(backend);
        },
        &v, sizeof(v));
    ASSERT_TRUE(st.clean()) << "graph_compute on unallocated tensors: " << st.describe();
    EXPECT_EQ(v.failed, 1);
    EXPECT_GE(v.errors, 1);
}

// graph_size is a first guess for the scheduler's tables: a larger graph
// must either fail cleanly or be computed correctly (this one: x * 2^100).
TEST(GraphMisuse, GraphLargerThanTheSchedulerGuessIsHandled) {
    Verdict v;
    float result = 0;
    struct Out {
        Verdict v;
        float value;
    } out{};
    const rel::ChildStatus st = rel::run_in_child(
        [](void * o) {
            Out & r = *(Out *) o;
            lm_ggml_log_set(count_errors, nullptr);
            lm_ggml_backend_t backend = lm_ggml_backend_cpu_init();
            lm_ggml_init_params ip = {256 * lm_ggml_tensor_overhead() + lm_ggml_graph_overhead(), nullptr, true};
            lm_ggml_context * ctx = lm_ggml_init(ip);
            lm_ggml_tensor * in = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 8);
            lm_ggml_set_input(in);
            lm_ggml_tensor * x = in;
            for (int i = 0; i < 100; ++i) x = lm_ggml_add(ctx, x, x);
            lm_ggml_cgraph * g = lm_ggml_new_graph(ctx);
            lm_ggml_build_forward_expand(g, x);
            // a first guess of 16 tensors; the graph has 101
            lm_ggml_backend_sched_t sched = lm_ggml_backend_sched_new(&backend, nullptr, 1, 16, false);
            r.v.failed = sched == nullptr || !lm_ggml_backend_sched_alloc_graph(sched, g);
            if (!r.v.failed) {
                const float ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
                lm_ggml_backend_tensor_set(in, ones, 0, sizeof(ones));
                r.v.failed = lm_ggml_backend_sched_graph_compute(sched, g) != LM_GGML_STATUS_SUCCESS;
                if (!r.v.failed) lm_ggml_backend_tensor_get(x, &r.value, 7 * sizeof(float), sizeof(float));
            }
            r.v.errors = g_child_errors;
            lm_ggml_backend_sched_free(sched);
            lm_ggml_free(ctx);
            lm_ggml_backend_free(backend);
        },
        &out, sizeof(out));
    v = out.v;
    result = out.value;
    ASSERT_TRUE(st.clean()) << "a graph beyond graph_size: " << st.describe();
    if (v.failed) {
        EXPECT_GE(v.errors, 1) << "failed without logging";
    } else {
        EXPECT_EQ(result, 0x1p100f);
        EXPECT_EQ(v.errors, 0);
    }
}

TEST(LoaderMisuse, NonLibrariesAreRefused) {
    ErrorLog log;
    EXPECT_EQ(lm_ggml_backend_load("/nonexistent/liblmggml-x.so"), nullptr);
    EXPECT_EQ(log.take(), 1);
    EXPECT_EQ(lm_ggml_backend_load(LMGGML_TEST_DATA_DIR), nullptr); // a directory
    EXPECT_EQ(log.take(), 1);
    EXPECT_EQ(lm_ggml_backend_load("/proc/self/cmdline"), nullptr); // not an ELF file
    EXPECT_EQ(log.take(), 1);
    lm_ggml_backend_load_all_from_path("/nonexistent");
    EXPECT_EQ(log.take(), 1);
}

// --------------------------------------------------------------- not detectable

// A tensor whose buffer was freed keeps a dangling `buffer` pointer: the
// library cannot tell it from a live one without tracking every buffer, so
// this is a caller error it does not detect. AddressSanitizer does.
void set_tensor_of_freed_buffer() {
    lm_ggml_init_params ip = {4 * lm_ggml_tensor_overhead(), nullptr, true};
    lm_ggml_context * ctx = lm_ggml_init(ip);
    lm_ggml_tensor * t = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 4);
    lm_ggml_backend_buffer_t buf = lm_ggml_backend_alloc_ctx_tensors_from_buft(ctx, lm_ggml_backend_cpu_buffer_type());
    lm_ggml_backend_buffer_free(buf);
    const float v[4] = {1, 2, 3, 4};
    lm_ggml_backend_tensor_set(t, v, 0, sizeof(v));
}

TEST(NotDetectable, UseOfAFreedBufferIsCaughtByAddressSanitizerOnly) {
    if (!rel::have_leak_checker()) GTEST_SKIP() << "needs an AddressSanitizer build (scripts/sanitize)";
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(set_tensor_of_freed_buffer(), "heap-use-after-free");
}

} // namespace
