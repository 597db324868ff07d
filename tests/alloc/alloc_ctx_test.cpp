// lm_ggml_backend_alloc_ctx_tensors_from_buft sizes its buffers as ggml 1.4.1
// does: tensors in context order, each PAD(buft alloc size, alignment) bytes,
// a new buffer whenever the next tensor would pass the type's max size, and
// each buffer exactly the sum of its tensors' padded sizes. The expected
// sizes are computed here from that rule, on a buffer type of our own whose
// alignment, max size and alloc-size padding each case chooses.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "ggml-alloc.h"
#include "ggml-backend-impl.h"
#include "ggml-backend.h"
#include "ggml.h"

namespace {

struct TypeCfg {
    TypeCfg(size_t a, size_t m, size_t p) : alignment(a), max_size(m), alloc_pad(p) {}
    size_t alignment;
    size_t max_size;  // SIZE_MAX: unlimited
    size_t alloc_pad; // get_alloc_size rounds nbytes up to a multiple of this
    int n_alloc = 0;
    std::vector<size_t> sizes; // sizes asked of alloc_buffer, in order
};

TypeCfg & cfg_of(lm_ggml_backend_buffer_type_t buft) { return *static_cast<TypeCfg *>(buft->context); }

void * buf_base(lm_ggml_backend_buffer_t b) { return b->context; }
void buf_free(lm_ggml_backend_buffer_t b) { std::free(b->context); }

constexpr lm_ggml_backend_buffer_i kBufIface = {
    .free_buffer = buf_free,
    .get_base = buf_base,
    .init_tensor = nullptr,
    .memset_tensor = nullptr,
    .set_tensor = nullptr,
    .get_tensor = nullptr,
    .cpy_tensor = nullptr,
    .clear = nullptr,
    .reset = nullptr,
};

lm_ggml_backend_buffer_t type_alloc(lm_ggml_backend_buffer_type_t buft, size_t size) {
    TypeCfg & c = cfg_of(buft);
    c.n_alloc++;
    c.sizes.push_back(size);
    const size_t rounded = (size + c.alignment - 1) / c.alignment * c.alignment + c.alignment; // never 0
    void * mem = std::aligned_alloc(c.alignment, rounded);
    return mem ? lm_ggml_backend_buffer_init(buft, kBufIface, mem, size) : nullptr;
}

lm_ggml_backend_buffer_type make_type(TypeCfg * c) {
    lm_ggml_backend_buffer_type t{};
    t.iface.get_name = [](lm_ggml_backend_buffer_type_t) { return "SIZED"; };
    t.iface.alloc_buffer = type_alloc;
    t.iface.get_alignment = [](lm_ggml_backend_buffer_type_t b) { return cfg_of(b).alignment; };
    t.iface.get_max_size = [](lm_ggml_backend_buffer_type_t b) { return cfg_of(b).max_size; };
    t.iface.get_alloc_size = [](lm_ggml_backend_buffer_type_t b, const lm_ggml_tensor * x) {
        const size_t p = cfg_of(b).alloc_pad;
        return (lm_ggml_nbytes(x) + p - 1) / p * p;
    };
    t.context = c;
    return t;
}

struct Ctx {
    lm_ggml_context * ctx;
    Ctx() { ctx = lm_ggml_init({lm_ggml_tensor_overhead() * 64, nullptr, true}); }
    ~Ctx() { lm_ggml_free(ctx); }
};

size_t pad(size_t x, size_t a) { return (x + a - 1) / a * a; }

// The rule, applied to the byte counts of the tensors needing memory.
std::vector<size_t> expected_buffers(const std::vector<size_t> & nbytes, const TypeCfg & c) {
    std::vector<size_t> out;
    size_t cur = 0;
    for (size_t n : nbytes) {
        const size_t s = pad(pad(n, c.alloc_pad), c.alignment);
        if (cur + s > c.max_size) {
            out.push_back(cur);
            cur = 0;
        }
        cur += s;
    }
    if (cur > 0) out.push_back(cur);
    return out;
}

struct Case {
    size_t alignment, max_size, alloc_pad;
    std::vector<std::vector<int64_t>> shapes; // f32 tensors, 1 to 3 dims
};

TEST(AllocCtxSizes, BuffersAreExactlyThePaddedSumsLikeGgml) {
    const Case cases[] = {
        {32, SIZE_MAX, 1, {{10}, {7, 3}, {1}, {100, 2, 2}}},
        {64, SIZE_MAX, 1, {{16}}}, // already a multiple: no slack at all
        {128, SIZE_MAX, 1, {{33}, {5, 5}, {2, 2, 2}}},
        {256, SIZE_MAX, 48, {{3}, {70}, {9, 9}}},
        {32, 1024, 1, {{100}, {100}, {100}, {64}, {200}, {8}}}, // 416 B each: splits
        {64, 640, 1, {{160}, {16}, {16}, {160}, {1}}},          // exact fits at the max
        {16, 4096, 100, {{250}, {250}, {250}, {250}, {250}}},
    };
    for (const Case & k : cases) {
        TypeCfg c{k.alignment, k.max_size, k.alloc_pad};
        lm_ggml_backend_buffer_type buft = make_type(&c);
        Ctx ctx;
        std::vector<lm_ggml_tensor *> ts;
        std::vector<size_t> nbytes;
        for (const auto & sh : k.shapes) {
            lm_ggml_tensor * t = lm_ggml_new_tensor(ctx.ctx, LM_GGML_TYPE_F32, (int) sh.size(), sh.data());
            ts.push_back(t);
            nbytes.push_back(lm_ggml_nbytes(t));
        }
        const std::vector<size_t> want = expected_buffers(nbytes, c);
        lm_ggml_backend_buffer_t buf = lm_ggml_backend_alloc_ctx_tensors_from_buft(ctx.ctx, &buft);
        ASSERT_NE(buf, nullptr);
        SCOPED_TRACE("alignment " + std::to_string(k.alignment) + " max " + std::to_string(k.max_size));
        EXPECT_EQ(c.sizes, want);
        size_t total = 0;
        for (size_t w : want) total += w;
        EXPECT_EQ(lm_ggml_backend_buffer_get_size(buf), total);
        EXPECT_EQ(lm_ggml_backend_buffer_is_multi_buffer(buf), want.size() > 1);
        for (lm_ggml_tensor * t : ts) {
            ASSERT_NE(t->data, nullptr);
            EXPECT_EQ((uintptr_t) t->data % k.alignment, 0u);
        }
        lm_ggml_backend_buffer_free(buf);
    }
}

TEST(AllocCtxSizes, SplitPointsFollowContextOrder) {
    // 300, 300, 300, 600 bytes with a max of 1000 (alignment 4, so no padding):
    // [300 300 300] [600]; tensor 3 opens the second buffer
    TypeCfg c{4, 1000, 1};
    lm_ggml_backend_buffer_type buft = make_type(&c);
    Ctx ctx;
    lm_ggml_tensor * t[4];
    for (int i = 0; i < 3; i++) t[i] = lm_ggml_new_tensor_1d(ctx.ctx, LM_GGML_TYPE_F32, 75);
    t[3] = lm_ggml_new_tensor_1d(ctx.ctx, LM_GGML_TYPE_F32, 150);
    lm_ggml_backend_buffer_t buf = lm_ggml_backend_alloc_ctx_tensors_from_buft(ctx.ctx, &buft);
    ASSERT_NE(buf, nullptr);
    EXPECT_EQ(c.sizes, (std::vector<size_t>{900, 600}));
    EXPECT_EQ((char *) t[1]->data - (char *) t[0]->data, 300);
    EXPECT_EQ((char *) t[2]->data - (char *) t[1]->data, 300);
    EXPECT_NE(t[3]->buffer, t[0]->buffer);
    lm_ggml_backend_buffer_free(buf);
}

TEST(AllocCtxSizes, ViewsAndPreallocatedTensorsTakeNoSpace) {
    TypeCfg c{32, SIZE_MAX, 1};
    lm_ggml_backend_buffer_type buft = make_type(&c);
    Ctx pre;
    lm_ggml_tensor * p = lm_ggml_new_tensor_1d(pre.ctx, LM_GGML_TYPE_F32, 64);
    lm_ggml_backend_buffer_t pbuf = lm_ggml_backend_alloc_ctx_tensors_from_buft(pre.ctx, &buft);
    ASSERT_NE(pbuf, nullptr);
    EXPECT_EQ(lm_ggml_backend_buffer_get_size(pbuf), 256u);

    Ctx ctx;
    lm_ggml_tensor * a = lm_ggml_new_tensor_1d(ctx.ctx, LM_GGML_TYPE_F32, 10); // 40 -> 64
    lm_ggml_tensor * va = lm_ggml_view_1d(ctx.ctx, a, 4, 8);
    lm_ggml_tensor * vp = lm_ggml_view_1d(ctx.ctx, p, 8, 16); // view of a tensor with memory
    ASSERT_NE(vp->data, nullptr);
    lm_ggml_backend_buffer_t buf = lm_ggml_backend_alloc_ctx_tensors_from_buft(ctx.ctx, &buft);
    ASSERT_NE(buf, nullptr);
    EXPECT_EQ(lm_ggml_backend_buffer_get_size(buf), 64u);
    EXPECT_EQ((char *) va->data, (char *) a->data + 8);
    EXPECT_EQ(va->buffer, buf);
    EXPECT_EQ(vp->buffer, pbuf); // untouched, and takes no space in buf
    EXPECT_EQ((char *) vp->data, (char *) p->data + 16);
    lm_ggml_backend_buffer_free(buf);
    lm_ggml_backend_buffer_free(pbuf);
}

TEST(AllocCtxSizes, NothingToPlaceGivesNull) {
    TypeCfg c{32, SIZE_MAX, 1};
    lm_ggml_backend_buffer_type buft = make_type(&c);
    Ctx ctx;
    const int64_t ne[2] = {0, 4};
    lm_ggml_new_tensor(ctx.ctx, LM_GGML_TYPE_F32, 2, ne); // 0 bytes: ggml allocates no buffer
    EXPECT_EQ(lm_ggml_backend_alloc_ctx_tensors_from_buft(ctx.ctx, &buft), nullptr);
    EXPECT_EQ(c.n_alloc, 0);
}

TEST(AllocCtxSizes, TensorOverTheMaxSizeFailsWithoutAllocating) {
    TypeCfg c{32, 256, 1};
    lm_ggml_backend_buffer_type buft = make_type(&c);
    Ctx ctx;
    lm_ggml_new_tensor_1d(ctx.ctx, LM_GGML_TYPE_F32, 16);
    lm_ggml_tensor * big = lm_ggml_new_tensor_1d(ctx.ctx, LM_GGML_TYPE_F32, 65); // 260 -> 288 > 256
    EXPECT_EQ(lm_ggml_backend_alloc_ctx_tensors_from_buft(ctx.ctx, &buft), nullptr);
    EXPECT_EQ(c.n_alloc, 0);
    EXPECT_EQ(big->data, nullptr);
}

} // namespace
