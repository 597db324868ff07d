// CPU_REPACK, the CPU device's extra buffer type, through the public API:
// Q4_0 / Q4_1 tensors (from AVX2 up; Q5_0, Q5_1, Q8_0 and IQ4_NL too at the
// AVX-512 VNNI level) with whole groups of 8 rows are stored in the
// permuted x8 layout, everything else plain, and get/set/memset/copy (whole
// tensors, random sub-ranges, views) always see ggml's layout. MUL_MAT (x8
// path for < 8 columns, gemm path otherwise, 1 and 2 threads, broadcast over
// planes) is checked against a double-precision reference and against the
// same weights in a plain CPU buffer; GET_ROWS must be bit-exact; any other
// use of a repacked tensor must be refused by supports_op and by compute.

#include "cpu_test_util.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <random>

using namespace cputest;

namespace {

lm_ggml_backend_dev_t cpu_dev() { return lm_ggml_backend_dev_by_type(LM_GGML_BACKEND_DEVICE_TYPE_CPU); }

// The types with an x8 layout; which of them a CPU repacks depends on its
// kernel level (repacked_here). The others go through the same tests
// stored plain.
const lm_ggml_type kRepackTypes[] = {LM_GGML_TYPE_Q4_0, LM_GGML_TYPE_Q4_1, LM_GGML_TYPE_Q5_0,
                                     LM_GGML_TYPE_Q5_1, LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_IQ4_NL};

// Q8_0 (and Q5_0, Q5_1, IQ4_NL on ARM64) have x8 kernels only from the AVX-512 VNNI
// level (with VBMI, as the CPU backend's level requires,
// and not capped below it by LMGGML_CPU_ISA; the AMX level sits above it)
bool vnni_level() {
    const char * cap = std::getenv("LMGGML_CPU_ISA");
    if (cap != nullptr && std::strcmp(cap, "avx512_vnni") != 0 && std::strcmp(cap, "amx") != 0) return false;
    return lm_ggml_cpu_has_avx512_vnni() && lm_ggml_cpu_has_avx512_vbmi();
}

// The level LMGGML_CPU_ISA caps the CPU backend at, if any ("" when unset).
std::string isa_cap() {
    const char * cap = std::getenv("LMGGML_CPU_ISA");
    return cap != nullptr ? cap : "";
}

// Whether this CPU's level stores a tensor of `type` (whole groups of 8
// rows) repacked: Q4_0 / Q4_1 from AVX2 (x86) or dotprod (ARM64) up, Q5_0 /
// Q5_1 / IQ4_NL from AVX2 (x86 only), the others at the AVX-512 VNNI level. The CPU_REPACK buffer keeps the rest
// plain, and supports_op then refuses ops on them (as ggml's extra buffer
// types).
bool repacked_here(lm_ggml_type type) {
    const bool q4 = type == LM_GGML_TYPE_Q4_0 || type == LM_GGML_TYPE_Q4_1;
    const bool avx2 = type == LM_GGML_TYPE_Q5_0 || type == LM_GGML_TYPE_Q5_1 || type == LM_GGML_TYPE_IQ4_NL;
    const std::string cap = isa_cap();
#if defined(__aarch64__)
    if (!q4) return vnni_level();
    return cap != "scalar" && cap != "neon" && lm_ggml_cpu_has_dotprod();
#else
    if (!q4 && !avx2) return vnni_level();
    return cap != "scalar" && lm_ggml_cpu_has_avx2();
#endif
}

// Whether MUL_MAT of n columns takes the level's Gemm on repacked and on
// plain weights alike, so the two agree bit for bit: x86 from 8 columns
// (for Q4_0 / Q4_1 from AVX2, the others at VNNI; below that both are
// plain); ARM64 only at the i8mm level from 24 columns (its Gemm's
// threshold on x8 weights; dotprod multiplies repacked Q4 with its x8
// kernel and plain Q4 row by row).
bool both_on_gemm(lm_ggml_type type, int64_t n) {
#if defined(__aarch64__)
    const std::string cap = isa_cap();
    if (!repacked_here(type)) return false; // both plain, but maybe not on a Gemm (neon)
    return (cap.empty() || cap == "i8mm") && lm_ggml_cpu_has_matmul_int8() && n >= 24;
#else
    (void) type;
    return n >= 8;
#endif
}

// Row-wise quantization of uniform random floats in [-1, 1).
std::vector<uint8_t> random_quant(lm_ggml_type type, int64_t k, int64_t rows, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> f((size_t) (k * rows));
    for (float & v : f) v = u(rng);
    std::vector<uint8_t> q(lm_ggml_row_size(type, k) * (size_t) rows);
    EXPECT_EQ(lm_ggml_quantize_chunk(type, f.data(), q.data(), 0, rows, k, nullptr), q.size());
    return q;
}

std::vector<uint8_t> random_bytes(size_t n, std::mt19937 & rng) {
    std::vector<uint8_t> b(n);
    for (uint8_t & v : b) v = (uint8_t) rng();
    return b;
}

std::vector<float> dequant(lm_ggml_type type, const std::vector<uint8_t> & q, int64_t k) {
    const size_t row = lm_ggml_row_size(type, k);
    std::vector<float> f(q.size() / row * (size_t) k);
    for (size_t r = 0; r < q.size() / row; ++r) {
        lm_ggml_get_type_traits(type)->to_float(q.data() + r * row, f.data() + r * (size_t) k, k);
    }
    return f;
}

std::vector<uint8_t> get_bytes(const lm_ggml_tensor * t, size_t off, size_t size) {
    std::vector<uint8_t> b(size);
    lm_ggml_backend_tensor_get(t, b.data(), off, size);
    return b;
}
std::vector<uint8_t> get_bytes(const lm_ggml_tensor * t) { return get_bytes(t, 0, lm_ggml_nbytes(t)); }

void set_bytes(lm_ggml_tensor * t, const std::vector<uint8_t> & b) {
    ASSERT_EQ(b.size(), lm_ggml_nbytes(t));
    lm_ggml_backend_tensor_set(t, b.data(), 0, b.size());
}

// The bytes in memory. The buffer is host RAM underneath, so this reads the
// stored (possibly permuted) layout; it is not something the API promises.
std::vector<uint8_t> raw_bytes(const lm_ggml_tensor * t) {
    const auto * p = static_cast<const uint8_t *>(t->data);
    return std::vector<uint8_t>(p, p + lm_ggml_nbytes(t));
}

// Activations in [-0.4, 1): a nonzero mean makes the per-block offset terms
// (Q4_0's -8, Q4_1's minimum) matter, so errors in them show.
std::vector<float> activations(size_t n, float seed) {
    std::vector<float> v = ramp(n, seed);
    for (float & e : v) e = 0.3f + 0.7f * e;
    return v;
}

// out[m, n, px] against W[k, m, pw] (dequantized) x X[k, n, px] in double;
// each error must be within rel * sum |w||x| of that dot.
void expect_mul_mat_close(const std::vector<float> & w, const std::vector<float> & x, const std::vector<float> & out,
                          int64_t k, int64_t m, int64_t n, int64_t pw, int64_t px, double rel) {
    EXPECT_EQ(out.size(), (size_t) (m * n * px));
    int bad = 0;
    for (int64_t p = 0; p < px; ++p) {
        for (int64_t j = 0; j < n; ++j) {
            for (int64_t i = 0; i < m; ++i) {
                const float * wr = &w[(size_t) (((p / (px / pw)) * m + i) * k)];
                const float * xc = &x[(size_t) ((p * n + j) * k)];
                double ref = 0.0, mag = 0.0;
                for (int64_t e = 0; e < k; ++e) {
                    ref += (double) wr[e] * xc[e];
                    mag += std::fabs((double) wr[e] * xc[e]);
                }
                const double got = out[(size_t) ((p * n + j) * m + i)];
                const double err = std::fabs(got - ref);
                if (!(err <= rel * mag + 1e-6) && bad++ < 5) {
                    ADD_FAILURE() << "out[" << i << ", " << j << ", " << p << "] = " << got << ", reference " << ref
                                  << " (sum |w||x| " << mag << ")";
                }
            }
        }
    }
    EXPECT_EQ(bad, 0) << "elements out of tolerance";
}

struct CpuRepack : ::testing::Test {
    lm_ggml_backend_buffer_type_t buft = nullptr;
    lm_ggml_backend_t backend = nullptr;

    void SetUp() override {
        auto get = (lm_ggml_backend_dev_get_extra_bufts_t) lm_ggml_backend_reg_get_proc_address(
            lm_ggml_backend_cpu_reg(), "lm_ggml_backend_dev_get_extra_bufts");
        ASSERT_NE(get, nullptr) << "the CPU registry exports lm_ggml_backend_dev_get_extra_bufts";
        lm_ggml_backend_buffer_type_t * list = get(cpu_dev());
        ASSERT_NE(list, nullptr);
        if (list[0] == nullptr) {
            GTEST_SKIP()
                << "no extra CPU buffer type: CPU_REPACK needs x8 kernels (x86 AVX2 + FMA + F16C, ARM64 dotprod)";
        }
        EXPECT_EQ(list[1], nullptr) << "the list holds CPU_REPACK only";
        buft = list[0];
        backend = lm_ggml_backend_cpu_init();
        ASSERT_NE(backend, nullptr);
    }
    void TearDown() override {
        if (backend) lm_ggml_backend_free(backend);
    }

    // Allocates the context's tensors in a CPU_REPACK buffer.
    void alloc_repack(GraphCtx & g) {
        g.buffer = lm_ggml_backend_alloc_ctx_tensors_from_buft(g.ctx, buft);
        ASSERT_NE(g.buffer, nullptr);
    }
};

TEST_F(CpuRepack, BufferTypeProperties) {
    EXPECT_STREQ(lm_ggml_backend_buft_name(buft), "CPU_REPACK");
    EXPECT_FALSE(lm_ggml_backend_buft_is_host(buft)) << "repacked bytes are not ggml's layout";
    EXPECT_TRUE(lm_ggml_backend_dev_supports_buft(cpu_dev(), buft));
    EXPECT_EQ(lm_ggml_backend_buft_get_device(buft), cpu_dev());

    lm_ggml_backend_buffer_t buf = lm_ggml_backend_buft_alloc_buffer(buft, 4096);
    ASSERT_NE(buf, nullptr);
    EXPECT_STREQ(lm_ggml_backend_buffer_name(buf), "CPU_REPACK");
    EXPECT_FALSE(lm_ggml_backend_buffer_is_host(buf));
    EXPECT_GE(lm_ggml_backend_buffer_get_size(buf), 4096u);
    lm_ggml_backend_buffer_free(buf);
}

// Whole-tensor set/get, copies to and from a plain CPU tensor, and proof
// that the stored bytes really are permuted (within each group of 8 rows).
TEST_F(CpuRepack, RoundTripWholeTensor) {
    struct Shape {
        lm_ggml_type type;
        int64_t k, rows, planes;
    };
    const Shape shapes[] = {
        {LM_GGML_TYPE_Q4_0, 96, 16, 1},  {LM_GGML_TYPE_Q4_0, 576, 24, 1}, {LM_GGML_TYPE_Q4_1, 96, 24, 1},
        {LM_GGML_TYPE_Q4_1, 576, 16, 1}, {LM_GGML_TYPE_Q4_0, 96, 48, 1},  {LM_GGML_TYPE_Q4_1, 160, 8, 1},
        {LM_GGML_TYPE_Q4_0, 64, 8, 3},   {LM_GGML_TYPE_Q4_1, 64, 8, 3},   {LM_GGML_TYPE_Q4_0, 160, 8, 2},
        {LM_GGML_TYPE_Q5_0, 96, 16, 1},  {LM_GGML_TYPE_Q5_1, 576, 16, 1}, {LM_GGML_TYPE_Q8_0, 96, 24, 1},
        {LM_GGML_TYPE_Q8_0, 160, 8, 2},  {LM_GGML_TYPE_IQ4_NL, 96, 8, 3}, {LM_GGML_TYPE_Q5_0, 64, 8, 2},
    };
    uint32_t seed = 1;
    for (const Shape & s : shapes) {
        if (!repacked_here(s.type)) {
            continue; // stored plain below the VNNI level (NonRepackableTensorsStayPlain's case)
        }
        SCOPED_TRACE(std::string(lm_ggml_type_name(s.type)) + " [" + std::to_string(s.k) + ", " +
                     std::to_string(s.rows) + ", " + std::to_string(s.planes) + "]");
        GraphCtx g(4), plain(4);
        lm_ggml_tensor * t = lm_ggml_new_tensor_3d(g.ctx, s.type, s.k, s.rows, s.planes);
        lm_ggml_tensor * t2 = lm_ggml_new_tensor_3d(g.ctx, s.type, s.k, s.rows, s.planes);
        lm_ggml_tensor * tp = lm_ggml_new_tensor_3d(plain.ctx, s.type, s.k, s.rows, s.planes);
        alloc_repack(g);
        ASSERT_TRUE(plain.alloc(backend));

        const std::vector<uint8_t> src = random_quant(s.type, s.k, s.rows * s.planes, seed++);
        set_bytes(t, src);
        EXPECT_EQ(get_bytes(t), src);

        const std::vector<uint8_t> mem = raw_bytes(t);
        EXPECT_NE(mem, src) << "stored bytes are in ggml's layout: nothing was repacked";
        const size_t group = 8 * t->nb[1];
        ASSERT_EQ(src.size() % group, 0u);
        for (size_t g0 = 0; g0 < src.size(); g0 += group) { // a permutation inside each group of 8 rows
            std::vector<uint8_t> a(src.begin() + g0, src.begin() + g0 + group);
            std::vector<uint8_t> b(mem.begin() + g0, mem.begin() + g0 + group);
            std::sort(a.begin(), a.end());
            std::sort(b.begin(), b.end());
            EXPECT_EQ(a, b) << "group at byte " << g0;
        }

        lm_ggml_backend_tensor_copy(t, tp); // repacked -> plain host tensor
        EXPECT_EQ(raw_bytes(tp), src);
        lm_ggml_backend_tensor_copy(tp, t2); // plain -> repacked: same stored layout as t
        EXPECT_EQ(raw_bytes(t2), mem);
        EXPECT_EQ(get_bytes(t2), src);

        lm_ggml_backend_buffer_clear(g.buffer, 0x5A);
        EXPECT_EQ(get_bytes(t), std::vector<uint8_t>(src.size(), 0x5A));
    }
}

// Random sub-range writes (set and memset) that cut blocks and rows, mirrored
// in a vector; the whole tensor and random sub-ranges must read back as the
// mirror, and the stored bytes must equal those of one whole write.
TEST_F(CpuRepack, PartialSetGetMemset) {
    struct Shape {
        lm_ggml_type type;
        int64_t k, rows, planes;
    };
    const Shape shapes[] = {
        {LM_GGML_TYPE_Q4_1, 96, 16, 1}, {LM_GGML_TYPE_Q4_0, 64, 8, 3}, {LM_GGML_TYPE_Q4_0, 576, 8, 1}};
    uint32_t seed = 100;
    for (const Shape & s : shapes) {
        SCOPED_TRACE(lm_ggml_type_name(s.type));
        GraphCtx g(4);
        lm_ggml_tensor * t = lm_ggml_new_tensor_3d(g.ctx, s.type, s.k, s.rows, s.planes);
        lm_ggml_tensor * ref = lm_ggml_new_tensor_3d(g.ctx, s.type, s.k, s.rows, s.planes);
        alloc_repack(g);
        const size_t n = lm_ggml_nbytes(t), row = t->nb[1], group = 8 * row, blk = lm_ggml_type_size(s.type);
        std::vector<uint8_t> mirror = random_quant(s.type, s.k, s.rows * s.planes, seed++);
        set_bytes(t, mirror);
        std::mt19937 rng(seed++);
        LogCapture log; // an out-of-range call would only log

        // fixed ranges first: one whole group, mid-block to mid-row, first and last byte, all but one byte
        std::vector<std::pair<size_t, size_t>> ranges = {
            {group, std::min(group, n - group)}, {blk / 2, row + blk}, {0, 1}, {n - 1, 1}, {1, n - 1}, {row - 3, 7}};
        for (int i = 0; i < 300; ++i) {
            const size_t off = rng() % n;
            const size_t cap = std::min(n - off, i % 3 == 0 ? 2 * group : (size_t) 3 * blk);
            ranges.push_back({off, 1 + rng() % cap});
        }
        for (size_t i = 0; i < ranges.size(); ++i) {
            const auto [off, size] = ranges[i];
            if (i % 2 == 0) {
                const std::vector<uint8_t> bytes = random_bytes(size, rng);
                lm_ggml_backend_tensor_set(t, bytes.data(), off, size);
                std::copy(bytes.begin(), bytes.end(), mirror.begin() + off);
            } else {
                const uint8_t v = (uint8_t) rng();
                lm_ggml_backend_tensor_memset(t, v, off, size);
                std::fill(mirror.begin() + off, mirror.begin() + off + size, v);
            }
            if (i % 25 == 0) {
                ASSERT_EQ(get_bytes(t), mirror) << "after write " << i << " at " << off << " size " << size;
            }
        }
        ASSERT_EQ(get_bytes(t), mirror);
        for (int i = 0; i < 200; ++i) {
            const size_t off = rng() % n;
            const size_t size = 1 + rng() % std::min(n - off, 2 * group);
            ASSERT_EQ(get_bytes(t, off, size), std::vector<uint8_t>(mirror.begin() + off, mirror.begin() + off + size))
                << "read at " << off << " size " << size;
        }
        set_bytes(ref, mirror);
        EXPECT_EQ(raw_bytes(t), raw_bytes(ref)) << "partial writes left a different stored layout";
        EXPECT_NE(raw_bytes(t), mirror) << "not repacked";
        EXPECT_EQ(log.errors(), 0) << log.text();
    }
}

// Views of a repacked tensor: one created before allocation (initialized by
// the allocator), one after; reads and writes at byte offsets inside them.
TEST_F(CpuRepack, SetGetThroughViews) {
    GraphCtx g(8);
    lm_ggml_tensor * w = lm_ggml_new_tensor_2d(g.ctx, LM_GGML_TYPE_Q4_0, 128, 16);
    const size_t row = lm_ggml_row_size(LM_GGML_TYPE_Q4_0, 128), blk = lm_ggml_type_size(LM_GGML_TYPE_Q4_0);
    const size_t off1 = 3 * row + blk; // block 1 of row 3, running into row 4
    lm_ggml_tensor * v1 = lm_ggml_view_1d(g.ctx, w, 128, off1);
    alloc_repack(g);
    ASSERT_EQ(v1->buffer, g.buffer);
    ASSERT_EQ((const char *) v1->data, (const char *) w->data + off1);
    const size_t off2 = 6 * row + blk;
    lm_ggml_tensor * v2 = lm_ggml_view_2d(g.ctx, w, 32, 5, w->nb[1], off2); // block 1 of rows 6..10
    ASSERT_EQ(v2->buffer, g.buffer);

    std::vector<uint8_t> mirror = random_quant(LM_GGML_TYPE_Q4_0, 128, 16, 7);
    set_bytes(w, mirror);
    std::mt19937 rng(8);
    LogCapture log; // an out-of-range call would only log
    auto expect_view = [&](const lm_ggml_tensor * v, size_t base) {
        const size_t n = lm_ggml_nbytes(v);
        EXPECT_EQ(get_bytes(v), std::vector<uint8_t>(mirror.begin() + base, mirror.begin() + base + n));
        EXPECT_EQ(get_bytes(v, 5, n - 9),
                  std::vector<uint8_t>(mirror.begin() + base + 5, mirror.begin() + base + n - 4));
    };
    expect_view(v1, off1);
    expect_view(v2, off2);

    std::vector<uint8_t> bytes = random_bytes(50, rng);
    lm_ggml_backend_tensor_set(v1, bytes.data(), 5, bytes.size());
    std::copy(bytes.begin(), bytes.end(), mirror.begin() + off1 + 5);
    lm_ggml_backend_tensor_memset(v1, 0xC3, 40, 25); // v1 is 72 bytes
    std::fill(mirror.begin() + off1 + 40, mirror.begin() + off1 + 65, 0xC3);
    bytes = random_bytes(200, rng);
    lm_ggml_backend_tensor_set(v2, bytes.data(), 10, bytes.size());
    std::copy(bytes.begin(), bytes.end(), mirror.begin() + off2 + 10);
    lm_ggml_backend_tensor_memset(v2, 0x11, 0, 3);
    std::fill(mirror.begin() + off2, mirror.begin() + off2 + 3, 0x11);

    EXPECT_EQ(get_bytes(w), mirror);
    expect_view(v1, off1);
    expect_view(v2, off2);
    EXPECT_NE(raw_bytes(w), mirror) << "not repacked";
    EXPECT_EQ(log.errors(), 0) << log.text();
}

// Tensors the x8 layout does not apply to are stored as is and still work.
TEST_F(CpuRepack, NonRepackableTensorsStayPlain) {
    GraphCtx g(8);
    lm_ggml_tensor * f32 = lm_ggml_new_tensor_2d(g.ctx, LM_GGML_TYPE_F32, 32, 5);
    lm_ggml_tensor * q12 = lm_ggml_new_tensor_2d(g.ctx, LM_GGML_TYPE_Q4_0, 64, 12);  // 12 % 8 != 0
    lm_ggml_tensor * f16 = lm_ggml_new_tensor_2d(g.ctx, LM_GGML_TYPE_F16, 64, 8);    // no x8 layout
    lm_ggml_tensor * q4k = lm_ggml_new_tensor_2d(g.ctx, LM_GGML_TYPE_Q4_K, 256, 16); // no x8 layout
    lm_ggml_tensor * ctrl = lm_ggml_new_tensor_2d(g.ctx, LM_GGML_TYPE_Q4_0, 64, 16); // repacked
    alloc_repack(g);
    std::mt19937 rng(21);
    for (lm_ggml_tensor * t : {f32, q12, f16, q4k}) {
        SCOPED_TRACE(lm_ggml_type_name(t->type));
        std::vector<uint8_t> src = t->type == LM_GGML_TYPE_Q4_0 || t->type == LM_GGML_TYPE_Q4_K
                                       ? random_quant(t->type, t->ne[0], t->ne[1], 22)
                                       : random_bytes(lm_ggml_nbytes(t), rng);
        set_bytes(t, src);
        EXPECT_EQ(get_bytes(t), src);
        EXPECT_EQ(raw_bytes(t), src) << "stored permuted although not repackable";
        const std::vector<uint8_t> patch = random_bytes(13, rng);
        lm_ggml_backend_tensor_set(t, patch.data(), 29, patch.size());
        std::copy(patch.begin(), patch.end(), src.begin() + 29);
        lm_ggml_backend_tensor_memset(t, 0x7E, 3, 4);
        std::fill(src.begin() + 3, src.begin() + 7, 0x7E);
        EXPECT_EQ(raw_bytes(t), src);
        EXPECT_EQ(get_bytes(t), src);
    }
    const std::vector<uint8_t> c = random_quant(LM_GGML_TYPE_Q4_0, 64, 16, 23);
    set_bytes(ctrl, c);
    EXPECT_NE(raw_bytes(ctrl), c) << "the same buffer repacks a repackable tensor";

    // the plain 12-row Q4_0 tensor multiplies on the ordinary path
    GraphCtx gc(8);
    lm_ggml_tensor * x = lm_ggml_new_tensor_2d(gc.ctx, LM_GGML_TYPE_F32, 64, 2);
    lm_ggml_tensor * mm = lm_ggml_mul_mat(gc.ctx, q12, x);
    lm_ggml_cgraph * gf = lm_ggml_new_graph(gc.ctx);
    lm_ggml_build_forward_expand(gf, mm);
    ASSERT_TRUE(gc.alloc(backend));
    const std::vector<float> xv = ramp(128, 3.0f);
    set_f32(x, xv);
    // the device declines it (CPU_REPACK takes only what it repacks, so a
    // loader keeps such weights elsewhere), but a graph with it still computes
    EXPECT_FALSE(lm_ggml_backend_dev_supports_op(cpu_dev(), mm));
    ASSERT_EQ(lm_ggml_backend_graph_compute(backend, gf), LM_GGML_STATUS_SUCCESS);
    expect_mul_mat_close(dequant(LM_GGML_TYPE_Q4_0, get_bytes(q12), 64), xv, get_f32(mm), 64, 12, 2, 1, 1, 1e-2);
}

// MUL_MAT on repacked weights: x8 path (n < 8) and gemm path (n >= 8), at 1
// and 2 threads, against the reference and against plain weights.
TEST_F(CpuRepack, MulMatMatchesReferenceAndPlainWeights) {
    uint32_t seed = 300;
    for (lm_ggml_type type : kRepackTypes) {
        for (int64_t k : {64, 576}) {
            for (int64_t m : {8, 40, 136}) {
                const std::vector<uint8_t> wq = random_quant(type, k, m, seed++);
                const std::vector<float> wf = dequant(type, wq, k);
                GraphCtx gw(2);
                lm_ggml_tensor * wr = lm_ggml_new_tensor_2d(gw.ctx, type, k, m);
                alloc_repack(gw);
                set_bytes(wr, wq);
                for (int64_t n :
                     {1, 3, 17, 40}) { // x8 path, then gemm (40: columns split between threads; ARM i8mm: 17 on x8)
                    SCOPED_TRACE(std::string(lm_ggml_type_name(type)) + " k=" + std::to_string(k) +
                                 " m=" + std::to_string(m) + " n=" + std::to_string(n));
                    GraphCtx g(8);
                    lm_ggml_tensor * wp = lm_ggml_new_tensor_2d(g.ctx, type, k, m);
                    lm_ggml_tensor * x = lm_ggml_new_tensor_2d(g.ctx, LM_GGML_TYPE_F32, k, n);
                    lm_ggml_tensor * out_r = lm_ggml_mul_mat(g.ctx, wr, x);
                    lm_ggml_tensor * out_p = lm_ggml_mul_mat(g.ctx, wp, x);
                    lm_ggml_cgraph * gf = lm_ggml_new_graph(g.ctx);
                    lm_ggml_build_forward_expand(gf, out_r);
                    lm_ggml_build_forward_expand(gf, out_p);
                    ASSERT_TRUE(g.alloc(backend));
                    set_bytes(wp, wq);
                    const std::vector<float> xv = activations((size_t) (k * n), (float) seed++);
                    set_f32(x, xv);
                    // a tensor the level keeps plain still computes (plain bytes)
                    EXPECT_EQ(lm_ggml_backend_dev_supports_op(cpu_dev(), out_r), repacked_here(type));

                    std::vector<float> first;
                    for (int threads : {1, 2}) {
                        SCOPED_TRACE("threads=" + std::to_string(threads));
                        lm_ggml_backend_cpu_set_n_threads(backend, threads);
                        ASSERT_EQ(lm_ggml_backend_graph_compute(backend, gf), LM_GGML_STATUS_SUCCESS);
                        const std::vector<float> r = get_f32(out_r), p = get_f32(out_p);
                        expect_mul_mat_close(wf, xv, r, k, m, n, 1, 1, 1e-2);
                        for (size_t i = 0; i < r.size(); ++i) {
                            double mag = 0.0;
                            for (int64_t e = 0; e < k; ++e) {
                                mag += std::fabs((double) wf[(i % m) * k + e] * xv[(i / m) * k + e]);
                            }
                            ASSERT_LE(std::fabs((double) r[i] - p[i]), 1e-2 * mag + 1e-6)
                                << "repacked vs plain weights at " << i << ": " << r[i] << " vs " << p[i];
                        }
                        if (both_on_gemm(type, n)) { // the repacked one on panels packed from x8: same bits
                            EXPECT_EQ(r, p) << "gemm on repacked weights differs from gemm on plain weights";
                        }
                        if (first.empty()) {
                            first = r;
                        } else {
                            EXPECT_EQ(r, first) << "result depends on the thread count";
                        }
                    }
                }
            }
        }
    }
}

// Broadcast over planes: W [k, 16, 2] repacked, X [k, n, px] (px / 2 planes of X per plane of W).
TEST_F(CpuRepack, MulMatBroadcastOverPlanes) {
    const int64_t k = 64, m = 16, pw = 2;
    uint32_t seed = 500;
    for (lm_ggml_type type : kRepackTypes) {
        const std::vector<uint8_t> wq = random_quant(type, k, m * pw, seed++);
        const std::vector<float> wf = dequant(type, wq, k);
        GraphCtx gw(2);
        lm_ggml_tensor * w = lm_ggml_new_tensor_3d(gw.ctx, type, k, m, pw);
        alloc_repack(gw);
        set_bytes(w, wq);
        for (auto [n, px] : {std::pair<int64_t, int64_t>{1, 2}, {1, 4}, {3, 4}, {9, 4}}) {
            SCOPED_TRACE(std::string(lm_ggml_type_name(type)) + " n=" + std::to_string(n) +
                         " px=" + std::to_string(px));
            GraphCtx g(4);
            lm_ggml_tensor * x = lm_ggml_new_tensor_3d(g.ctx, LM_GGML_TYPE_F32, k, n, px);
            lm_ggml_tensor * out = lm_ggml_mul_mat(g.ctx, w, x);
            lm_ggml_cgraph * gf = lm_ggml_new_graph(g.ctx);
            lm_ggml_build_forward_expand(gf, out);
            ASSERT_TRUE(g.alloc(backend));
            const std::vector<float> xv = activations((size_t) (k * n * px), (float) seed++);
            set_f32(x, xv);
            for (int threads : {1, 2}) {
                lm_ggml_backend_cpu_set_n_threads(backend, threads);
                ASSERT_EQ(lm_ggml_backend_graph_compute(backend, gf), LM_GGML_STATUS_SUCCESS);
                expect_mul_mat_close(wf, xv, get_f32(out), k, m, n, pw, px, 1e-2);
            }
        }
    }
}

// GET_ROWS on repacked weights returns exactly the dequantized rows.
TEST_F(CpuRepack, GetRowsBitExact) {
    uint32_t seed = 700;
    for (lm_ggml_type type : kRepackTypes) {
        SCOPED_TRACE(lm_ggml_type_name(type));
        GraphCtx gw(4);
        lm_ggml_tensor * w2 = lm_ggml_new_tensor_2d(gw.ctx, type, 96, 24);
        lm_ggml_tensor * w3 = lm_ggml_new_tensor_3d(gw.ctx, type, 64, 8, 3);
        alloc_repack(gw);
        const std::vector<uint8_t> q2 = random_quant(type, 96, 24, seed++), q3 = random_quant(type, 64, 24, seed++);
        set_bytes(w2, q2);
        set_bytes(w3, q3);
        const std::vector<float> f2 = dequant(type, q2, 96), f3 = dequant(type, q3, 64);

        GraphCtx g(8);
        lm_ggml_tensor * ids2 = lm_ggml_new_tensor_1d(g.ctx, LM_GGML_TYPE_I32, 5);
        lm_ggml_tensor * ids3 = lm_ggml_new_tensor_2d(g.ctx, LM_GGML_TYPE_I32, 2, 3); // 2 ids per plane
        lm_ggml_tensor * r2 = lm_ggml_get_rows(g.ctx, w2, ids2);
        lm_ggml_tensor * r3 = lm_ggml_get_rows(g.ctx, w3, ids3);
        lm_ggml_cgraph * gf = lm_ggml_new_graph(g.ctx);
        lm_ggml_build_forward_expand(gf, r2);
        lm_ggml_build_forward_expand(gf, r3);
        ASSERT_TRUE(g.alloc(backend));
        const int32_t id2[5] = {0, 7, 8, 13, 23}, id3[6] = {7, 0, 3, 5, 0, 7};
        lm_ggml_backend_tensor_set(ids2, id2, 0, sizeof(id2));
        lm_ggml_backend_tensor_set(ids3, id3, 0, sizeof(id3));
        EXPECT_EQ(lm_ggml_backend_dev_supports_op(cpu_dev(), r2), repacked_here(type));

        for (int threads : {1, 2}) {
            lm_ggml_backend_cpu_set_n_threads(backend, threads);
            ASSERT_EQ(lm_ggml_backend_graph_compute(backend, gf), LM_GGML_STATUS_SUCCESS);
            const std::vector<float> o2 = get_f32(r2), o3 = get_f32(r3);
            for (int j = 0; j < 5; ++j) {
                EXPECT_EQ(0, std::memcmp(&o2[j * 96], &f2[id2[j] * 96], 96 * sizeof(float))) << "row id " << id2[j];
            }
            for (int p = 0; p < 3; ++p) {
                for (int j = 0; j < 2; ++j) {
                    const int id = id3[p * 2 + j];
                    EXPECT_EQ(0, std::memcmp(&o3[(p * 2 + j) * 64], &f3[(p * 8 + id) * 64], 64 * sizeof(float)))
                        << "plane " << p << " row id " << id;
                }
            }
        }
    }
}

// Every other use of a repacked tensor is refused by supports_op and fails
// compute cleanly, before anything is written.
TEST_F(CpuRepack, OtherUsesAreRefused) {
    GraphCtx gw(4);
    lm_ggml_tensor * w = lm_ggml_new_tensor_2d(gw.ctx, LM_GGML_TYPE_Q4_0, 64, 16);
    lm_ggml_tensor * we = lm_ggml_new_tensor_3d(gw.ctx, LM_GGML_TYPE_Q4_0, 64, 8, 2); // 2 experts
    alloc_repack(gw);
    const std::vector<uint8_t> wq = random_quant(LM_GGML_TYPE_Q4_0, 64, 16, 900);
    set_bytes(w, wq);

    GraphCtx g(32);
    lm_ggml_tensor * x = lm_ggml_new_tensor_2d(g.ctx, LM_GGML_TYPE_F32, 64, 2);
    lm_ggml_tensor * x16 = lm_ggml_new_tensor_2d(g.ctx, LM_GGML_TYPE_F16, 64, 2);
    lm_ggml_tensor * ids = lm_ggml_new_tensor_1d(g.ctx, LM_GGML_TYPE_I32, 2);
    lm_ggml_tensor * dst = lm_ggml_new_tensor_2d(g.ctx, LM_GGML_TYPE_F32, 64, 16);
    lm_ggml_tensor * plain = lm_ggml_new_tensor_2d(g.ctx, LM_GGML_TYPE_Q4_0, 64, 16);
    lm_ggml_tensor * xe = lm_ggml_new_tensor_3d(g.ctx, LM_GGML_TYPE_F32, 64, 1, 2);
    lm_ggml_tensor * eids = lm_ggml_new_tensor_2d(g.ctx, LM_GGML_TYPE_I32, 1, 2);

    lm_ggml_tensor * ok_mm = lm_ggml_mul_mat(g.ctx, w, x);
    lm_ggml_tensor * ok_rows = lm_ggml_get_rows(g.ctx, w, ids);
    lm_ggml_tensor * cpy = lm_ggml_cpy(g.ctx, w, dst); // dequantizing copy reads the permuted bytes
    lm_ggml_tensor * dup = lm_ggml_dup(g.ctx, w);
    lm_ggml_tensor * mm_view = lm_ggml_mul_mat(g.ctx, lm_ggml_view_2d(g.ctx, w, 64, 8, w->nb[1], 0), x);
    lm_ggml_tensor * mm_f16 = lm_ggml_mul_mat(g.ctx, w, x16);
    lm_ggml_tensor * into = lm_ggml_cpy(g.ctx, plain, w); // writes the repacked tensor
    lm_ggml_tensor * mm_id = lm_ggml_mul_mat_id(g.ctx, we, xe, eids);
    // controls: the same ops on the plain copy of the weights
    lm_ggml_tensor * cpy_plain = lm_ggml_cpy(g.ctx, plain, lm_ggml_new_tensor_2d(g.ctx, LM_GGML_TYPE_F32, 64, 16));
    lm_ggml_tensor * view_plain = lm_ggml_mul_mat(g.ctx, lm_ggml_view_2d(g.ctx, plain, 64, 8, plain->nb[1], 0), x);
    lm_ggml_tensor * id_plain =
        lm_ggml_mul_mat_id(g.ctx, lm_ggml_new_tensor_3d(g.ctx, LM_GGML_TYPE_Q4_0, 64, 8, 2), xe, eids);
    ASSERT_TRUE(g.alloc(backend));
    set_bytes(plain, random_quant(LM_GGML_TYPE_Q4_0, 64, 16, 901));
    set_f32(x, ramp(128, 5.0f));
    const int32_t idv[2] = {3, 12}, eidv[2] = {1, 0};
    lm_ggml_backend_tensor_set(ids, idv, 0, sizeof(idv));
    lm_ggml_backend_tensor_set(eids, eidv, 0, sizeof(eidv));
    set_bytes(we, random_quant(LM_GGML_TYPE_Q4_0, 64, 16, 902));
    set_f32(xe, ramp(128, 6.0f));

    EXPECT_TRUE(lm_ggml_backend_dev_supports_op(cpu_dev(), ok_mm));
    EXPECT_TRUE(lm_ggml_backend_dev_supports_op(cpu_dev(), ok_rows));
    EXPECT_TRUE(lm_ggml_backend_dev_supports_op(cpu_dev(), cpy_plain));
    EXPECT_TRUE(lm_ggml_backend_dev_supports_op(cpu_dev(), view_plain));
    EXPECT_TRUE(lm_ggml_backend_dev_supports_op(cpu_dev(), id_plain));
    const std::pair<const char *, lm_ggml_tensor *> refused[] = {{"CPY to F32", cpy},
                                                                 {"DUP", dup},
                                                                 {"MUL_MAT of a view", mm_view},
                                                                 {"MUL_MAT with F16 src1", mm_f16},
                                                                 {"CPY into the repacked tensor", into},
                                                                 {"MUL_MAT_ID", mm_id}};
    for (const auto & [what, node] : refused) {
        EXPECT_FALSE(lm_ggml_backend_dev_supports_op(cpu_dev(), node)) << what;
    }

    lm_ggml_init_params gp = {lm_ggml_graph_overhead() * 8, nullptr, true};
    lm_ggml_context * gctx = lm_ggml_init(gp);
    ASSERT_NE(gctx, nullptr);
    auto compute_one = [&](lm_ggml_tensor * node) {
        lm_ggml_cgraph * gf = lm_ggml_new_graph(gctx);
        lm_ggml_build_forward_expand(gf, node);
        return lm_ggml_backend_graph_compute(backend, gf);
    };
    const std::vector<float> sentinel(64 * 16, -777.0f);
    for (const auto & [what, node] : refused) {
        SCOPED_TRACE(what);
        set_f32(dst, sentinel);
        LogCapture log;
        EXPECT_NE(compute_one(node), LM_GGML_STATUS_SUCCESS);
        EXPECT_GT(log.errors(), 0);
        if (node != mm_f16) { // F16 src1 is refused by the MUL_MAT kernel's type check already
            EXPECT_TRUE(log.contains("CPU_REPACK")) << log.text();
        }
        EXPECT_EQ(get_f32(dst), sentinel) << "a refused graph wrote its output";
        EXPECT_EQ(get_bytes(w), wq) << "the repacked tensor changed";
    }
    lm_ggml_backend_cpu_set_n_threads(backend, 2);
    EXPECT_EQ(compute_one(ok_mm), LM_GGML_STATUS_SUCCESS);
    EXPECT_EQ(compute_one(ok_rows), LM_GGML_STATUS_SUCCESS);
    const std::vector<float> rows = get_f32(ok_rows), wf = dequant(LM_GGML_TYPE_Q4_0, wq, 64);
    EXPECT_EQ(0, std::memcmp(rows.data(), &wf[3 * 64], 64 * sizeof(float)));
    lm_ggml_free(gctx);
}

} // namespace
