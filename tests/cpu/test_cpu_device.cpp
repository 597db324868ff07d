// The CPU registry, device, buffer types, feature probes, type traits and
// element helpers, through the public API. Expected values come from the
// system (/proc/cpuinfo, sysconf) or are written out here.

#include "cpu_test_util.h"

#include "ggml-backend-impl.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

using namespace cputest;

namespace {

// "model name" and the flag set from /proc/cpuinfo (first CPU).
struct CpuInfo {
    std::string model;
    std::set<std::string> flags;
    bool readable = false;
};

CpuInfo read_cpuinfo() {
    CpuInfo info;
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        info.readable = true;
        const size_t colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string key = line.substr(0, colon);
        key.erase(key.find_last_not_of(" \t") + 1);
        std::string value = line.substr(colon + 1);
        value.erase(0, value.find_first_not_of(" \t"));
        if (key == "model name" && info.model.empty()) info.model = value;
        if (key == "flags" && info.flags.empty()) {
            std::istringstream ss(value);
            for (std::string f; ss >> f;) info.flags.insert(f);
        }
    }
    return info;
}

lm_ggml_backend_dev_t cpu_dev() { return lm_ggml_backend_reg_dev_get(lm_ggml_backend_cpu_reg(), 0); }

TEST(CpuDevice, RegistryAndDevice) {
    lm_ggml_backend_reg_t reg = lm_ggml_backend_cpu_reg();
    ASSERT_NE(reg, nullptr);
    EXPECT_EQ(reg->api_version, LM_GGML_BACKEND_API_VERSION);
    EXPECT_STREQ(lm_ggml_backend_reg_name(reg), "CPU");
    EXPECT_EQ(lm_ggml_backend_reg_dev_count(reg), 1u);
    EXPECT_EQ(lm_ggml_backend_reg_by_name("CPU"), reg) << "the CPU registry is registered";

    lm_ggml_backend_dev_t dev = cpu_dev();
    ASSERT_NE(dev, nullptr);
    EXPECT_EQ(lm_ggml_backend_dev_backend_reg(dev), reg);
    EXPECT_STREQ(lm_ggml_backend_dev_name(dev), "CPU");
    EXPECT_EQ(lm_ggml_backend_dev_type(dev), LM_GGML_BACKEND_DEVICE_TYPE_CPU);
    EXPECT_EQ(lm_ggml_backend_dev_by_type(LM_GGML_BACKEND_DEVICE_TYPE_CPU), dev);

    const CpuInfo info = read_cpuinfo();
    if (!info.model.empty()) {
        EXPECT_EQ(std::string(lm_ggml_backend_dev_description(dev)), info.model);
    } else {
        EXPECT_STREQ(lm_ggml_backend_dev_description(dev), "CPU");
    }

    size_t free_mem = 0, total_mem = 0;
    lm_ggml_backend_dev_memory(dev, &free_mem, &total_mem);
    const double phys = (double) sysconf(_SC_PHYS_PAGES) * (double) sysconf(_SC_PAGESIZE);
    EXPECT_NEAR((double) total_mem, phys, phys * 0.02);
    EXPECT_GT(free_mem, 0u);
    EXPECT_LE(free_mem, total_mem);

    lm_ggml_backend_dev_props props;
    memset(&props, 0, sizeof(props));
    lm_ggml_backend_dev_get_props(dev, &props);
    EXPECT_STREQ(props.name, "CPU");
    EXPECT_STREQ(props.description, lm_ggml_backend_dev_description(dev));
    EXPECT_EQ(props.type, LM_GGML_BACKEND_DEVICE_TYPE_CPU);
    EXPECT_FALSE(props.caps.async);
    EXPECT_FALSE(props.caps.host_buffer);
    EXPECT_TRUE(props.caps.buffer_from_host_ptr);
    EXPECT_FALSE(props.caps.events);
    EXPECT_EQ(props.memory_total, total_mem);

    LogCapture log;
    EXPECT_EQ(lm_ggml_backend_reg_dev_get(reg, 1), nullptr);
    EXPECT_GE(log.errors(), 1);
}

TEST(CpuDevice, BackendFromDevice) {
    lm_ggml_backend_dev_t dev = cpu_dev();
    lm_ggml_backend_t backend = lm_ggml_backend_dev_init(dev, nullptr);
    ASSERT_NE(backend, nullptr);
    EXPECT_TRUE(lm_ggml_backend_is_cpu(backend));
    EXPECT_STREQ(lm_ggml_backend_name(backend), "CPU");
    EXPECT_EQ(lm_ggml_backend_get_device(backend), dev);
    EXPECT_EQ(lm_ggml_backend_get_default_buffer_type(backend), lm_ggml_backend_cpu_buffer_type());
    EXPECT_EQ(lm_ggml_backend_get_alignment(backend), 64u);

    lm_ggml_backend_t other = lm_ggml_backend_cpu_init();
    ASSERT_NE(other, nullptr);
    EXPECT_TRUE(lm_ggml_guid_matches(lm_ggml_backend_guid(backend), lm_ggml_backend_guid(other)));
    lm_ggml_backend_free(other);

    // A backend with another guid is not CPU, and CPU setters refuse it.
    static lm_ggml_guid foreign_guid = {1, 2, 3};
    lm_ggml_backend foreign = {};
    foreign.guid = &foreign_guid;
    EXPECT_FALSE(lm_ggml_backend_is_cpu(&foreign));
    EXPECT_FALSE(lm_ggml_backend_is_cpu(nullptr));
    LogCapture log;
    lm_ggml_backend_cpu_set_n_threads(&foreign, 2);
    EXPECT_EQ(log.errors(), 1);
    lm_ggml_backend_free(backend);
}

TEST(CpuDevice, ProcAddressesAndFeatures) {
    lm_ggml_backend_reg_t reg = lm_ggml_backend_cpu_reg();
    for (const char * name :
         {"lm_ggml_backend_set_n_threads", "lm_ggml_backend_set_abort_callback", "lm_ggml_backend_get_features",
          "lm_ggml_backend_dev_get_extra_bufts", "lm_ggml_threadpool_new", "lm_ggml_threadpool_free",
          "lm_ggml_backend_cpu_set_threadpool"}) {
        EXPECT_NE(lm_ggml_backend_reg_get_proc_address(reg, name), nullptr) << name;
    }
    EXPECT_EQ(lm_ggml_backend_reg_get_proc_address(reg, "lm_ggml_backend_no_such_thing"), nullptr);
    EXPECT_EQ((void *) lm_ggml_backend_reg_get_proc_address(reg, "lm_ggml_backend_set_n_threads"),
              (void *) lm_ggml_backend_cpu_set_n_threads);

    auto extra = (lm_ggml_backend_dev_get_extra_bufts_t) lm_ggml_backend_reg_get_proc_address(
        reg, "lm_ggml_backend_dev_get_extra_bufts");
    ASSERT_NE(extra, nullptr);
    // CPU_REPACK (repacked weights) where the kernel level repacks, else none
    lm_ggml_backend_buffer_type_t * bufts = extra(cpu_dev());
    if (bufts[0] != nullptr) {
        EXPECT_STREQ(lm_ggml_backend_buft_name(bufts[0]), "CPU_REPACK");
        EXPECT_EQ(bufts[1], nullptr) << "one extra buffer type";
    }

    auto get_features =
        (lm_ggml_backend_get_features_t) lm_ggml_backend_reg_get_proc_address(reg, "lm_ggml_backend_get_features");
    ASSERT_NE(get_features, nullptr);
    std::set<std::string> listed;
    for (lm_ggml_backend_feature * f = get_features(reg); f->name != nullptr; f++) {
        ASSERT_NE(f->value, nullptr);
        listed.insert(f->name);
    }
    EXPECT_EQ(listed.count("AVX2") == 1, lm_ggml_cpu_has_avx2() == 1);
    EXPECT_EQ(listed.count("AVX512") == 1, lm_ggml_cpu_has_avx512() == 1);
    EXPECT_EQ(listed.count("FMA") == 1, lm_ggml_cpu_has_fma() == 1);
    EXPECT_EQ(listed.count("NEON") == 1, lm_ggml_cpu_has_neon() == 1);
}

#if defined(__x86_64__)
TEST(CpuDevice, FeatureProbesMatchProcCpuinfo) {
    const CpuInfo info = read_cpuinfo();
    // containers and some hypervisors hide the flags line: nothing to compare with then
    if (info.flags.empty()) GTEST_SKIP() << "/proc/cpuinfo has no flags";
    auto has = [&](const char * f) { return info.flags.count(f) ? 1 : 0; };
    EXPECT_EQ(lm_ggml_cpu_has_sse3(), has("pni"));
    EXPECT_EQ(lm_ggml_cpu_has_ssse3(), has("ssse3"));
    EXPECT_EQ(lm_ggml_cpu_has_avx(), has("avx"));
    EXPECT_EQ(lm_ggml_cpu_has_avx2(), has("avx2"));
    EXPECT_EQ(lm_ggml_cpu_has_fma(), has("fma"));
    EXPECT_EQ(lm_ggml_cpu_has_f16c(), has("f16c"));
    EXPECT_EQ(lm_ggml_cpu_has_avx_vnni(), has("avx_vnni"));
    EXPECT_EQ(lm_ggml_cpu_has_avx512(), has("avx512f"));
    EXPECT_EQ(lm_ggml_cpu_has_avx512_vbmi(), has("avx512vbmi"));
    EXPECT_EQ(lm_ggml_cpu_has_avx512_vnni(), has("avx512_vnni"));
    EXPECT_EQ(lm_ggml_cpu_has_avx512_bf16(), has("avx512_bf16"));
    EXPECT_EQ(lm_ggml_cpu_has_amx_int8(), has("amx_int8") && has("amx_tile"));
    // ARM and other architectures' probes are honest zeros here.
    EXPECT_EQ(lm_ggml_cpu_has_neon(), 0);
    EXPECT_EQ(lm_ggml_cpu_has_arm_fma(), 0);
    EXPECT_EQ(lm_ggml_cpu_has_sve(), 0);
    EXPECT_EQ(lm_ggml_cpu_get_sve_cnt(), 0);
    EXPECT_EQ(lm_ggml_cpu_has_dotprod(), 0);
    EXPECT_EQ(lm_ggml_cpu_has_matmul_int8(), 0);
    EXPECT_EQ(lm_ggml_cpu_has_fp16_va(), 0);
    EXPECT_EQ(lm_ggml_cpu_has_riscv_v(), 0);
    EXPECT_EQ(lm_ggml_cpu_has_vsx(), 0);
    EXPECT_EQ(lm_ggml_cpu_has_wasm_simd(), 0);
    EXPECT_EQ(lm_ggml_cpu_has_llamafile(), 0);
}
#endif

TEST(CpuBuffer, BufferTypeAllocatesAlignedHostMemory) {
    lm_ggml_backend_buffer_type_t buft = lm_ggml_backend_cpu_buffer_type();
    ASSERT_NE(buft, nullptr);
    EXPECT_STREQ(lm_ggml_backend_buft_name(buft), "CPU");
    EXPECT_EQ(lm_ggml_backend_buft_get_alignment(buft), 64u);
    EXPECT_TRUE(lm_ggml_backend_buft_is_host(buft));
    EXPECT_EQ(lm_ggml_backend_buft_get_max_size(buft), SIZE_MAX);
    EXPECT_EQ(lm_ggml_backend_buft_get_device(buft), cpu_dev());
    EXPECT_EQ(lm_ggml_backend_dev_buffer_type(cpu_dev()), buft);
    EXPECT_TRUE(lm_ggml_backend_dev_supports_buft(cpu_dev(), buft));

    for (size_t size : {(size_t) 1, (size_t) 63, (size_t) 65, (size_t) 1000, (size_t) 4103}) {
        lm_ggml_backend_buffer_t buf = lm_ggml_backend_buft_alloc_buffer(buft, size);
        ASSERT_NE(buf, nullptr) << size;
        uint8_t * base = static_cast<uint8_t *>(lm_ggml_backend_buffer_get_base(buf));
        ASSERT_NE(base, nullptr);
        EXPECT_EQ((uintptr_t) base % 64, 0u) << size;
        EXPECT_EQ(lm_ggml_backend_buffer_get_size(buf), size);
        EXPECT_TRUE(lm_ggml_backend_buffer_is_host(buf));
        EXPECT_EQ(lm_ggml_backend_buffer_get_type(buf), buft);
        lm_ggml_backend_buffer_clear(buf, 0xAB);
        for (size_t i = 0; i < size; i++) {
            ASSERT_EQ(base[i], 0xAB) << "byte " << i << " of " << size;
        }
        lm_ggml_backend_buffer_free(buf);
    }
}

TEST(CpuBuffer, TensorAccessAndCopy) {
    GraphCtx g;
    lm_ggml_tensor * a = lm_ggml_new_tensor_1d(g.ctx, LM_GGML_TYPE_F32, 10);
    lm_ggml_tensor * b = lm_ggml_new_tensor_1d(g.ctx, LM_GGML_TYPE_F32, 10);
    lm_ggml_backend_buffer_t ba = lm_ggml_backend_buft_alloc_buffer(lm_ggml_backend_cpu_buffer_type(), 256);
    lm_ggml_backend_buffer_t bb = lm_ggml_backend_buft_alloc_buffer(lm_ggml_backend_cpu_buffer_type(), 256);
    ASSERT_NE(ba, nullptr);
    ASSERT_NE(bb, nullptr);
    lm_ggml_backend_tensor_alloc(ba, a, (char *) lm_ggml_backend_buffer_get_base(ba) + 64);
    lm_ggml_backend_tensor_alloc(bb, b, lm_ggml_backend_buffer_get_base(bb));

    const std::vector<float> v = ramp(10, 1.0f);
    set_f32(a, v);
    EXPECT_EQ(memcmp((char *) lm_ggml_backend_buffer_get_base(ba) + 64, v.data(), 40), 0) << "set writes in place";
    lm_ggml_backend_tensor_memset(a, 0, 8, 8); // elements 2 and 3
    std::vector<float> expect = v;
    expect[2] = expect[3] = 0.0f;
    EXPECT_EQ(get_f32(a), expect);
    float part[2];
    lm_ggml_backend_tensor_get(a, part, 16, sizeof(part)); // elements 4 and 5
    EXPECT_EQ(part[0], v[4]);
    EXPECT_EQ(part[1], v[5]);

    lm_ggml_backend_tensor_copy(a, b);
    EXPECT_EQ(get_f32(b), expect);
    lm_ggml_backend_buffer_free(ba);
    lm_ggml_backend_buffer_free(bb);
}

// A weights file mapped into memory: the buffer wraps the caller's bytes.
TEST(CpuBuffer, FromHostPtrIsZeroCopy) {
    alignas(64) static float mem[256];
    for (int i = 0; i < 256; i++) mem[i] = (float) i;
    lm_ggml_backend_dev_t dev = cpu_dev();
    lm_ggml_backend_buffer_t buf = lm_ggml_backend_dev_buffer_from_host_ptr(dev, mem, sizeof(mem), sizeof(mem));
    ASSERT_NE(buf, nullptr);
    EXPECT_EQ(lm_ggml_backend_buffer_get_base(buf), (void *) mem);
    EXPECT_EQ(lm_ggml_backend_buffer_get_size(buf), sizeof(mem));
    EXPECT_TRUE(lm_ggml_backend_buffer_is_host(buf));
    EXPECT_STREQ(lm_ggml_backend_buft_name(lm_ggml_backend_buffer_get_type(buf)), "CPU_Mapped");

    lm_ggml_backend_t backend = lm_ggml_backend_cpu_init();
    GraphCtx g;
    lm_ggml_tensor * w = lm_ggml_new_tensor_1d(g.ctx, LM_GGML_TYPE_F32, 16); // mem[16..32)
    lm_ggml_tensor * x = lm_ggml_new_tensor_1d(g.ctx, LM_GGML_TYPE_F32, 16); // mem[64..80)
    lm_ggml_tensor * y = lm_ggml_add(g.ctx, w, x);
    lm_ggml_cgraph * gf = lm_ggml_new_graph(g.ctx);
    lm_ggml_build_forward_expand(gf, y);
    lm_ggml_backend_tensor_alloc(buf, w, mem + 16);
    lm_ggml_backend_tensor_alloc(buf, x, mem + 64);
    lm_ggml_backend_buffer_t out = lm_ggml_backend_buft_alloc_buffer(lm_ggml_backend_cpu_buffer_type(), 64);
    lm_ggml_backend_tensor_alloc(out, y, lm_ggml_backend_buffer_get_base(out));

    mem[20] = 1000.0f; // changed behind the buffer's back: visible to the graph
    EXPECT_TRUE(lm_ggml_backend_supports_op(backend, y));
    ASSERT_EQ(lm_ggml_backend_graph_compute(backend, gf), LM_GGML_STATUS_SUCCESS);
    const std::vector<float> r = get_f32(y);
    for (int i = 0; i < 16; i++) {
        const float wi = i == 4 ? 1000.0f : (float) (16 + i);
        ASSERT_EQ(r[i], wi + (float) (64 + i)) << i;
    }
    set_f32(x, std::vector<float>(16, -1.0f)); // writes land in mem
    EXPECT_EQ(mem[64], -1.0f);
    EXPECT_EQ(mem[79], -1.0f);

    lm_ggml_backend_buffer_free(buf); // does not free mem
    lm_ggml_backend_buffer_free(out);
    lm_ggml_backend_free(backend);
    mem[0] = 42.0f; // still ours
    EXPECT_EQ(mem[0], 42.0f);

    lm_ggml_backend_buffer_t direct = lm_ggml_backend_cpu_buffer_from_ptr(mem, 128);
    ASSERT_NE(direct, nullptr);
    EXPECT_EQ(lm_ggml_backend_buffer_get_base(direct), (void *) mem);
    lm_ggml_backend_buffer_free(direct);

    LogCapture log;
    EXPECT_EQ(lm_ggml_backend_cpu_buffer_from_ptr(nullptr, 64), nullptr);
    EXPECT_EQ(lm_ggml_backend_cpu_buffer_from_ptr((char *) mem + 4, 64), nullptr) << "misaligned";
    EXPECT_EQ(log.errors(), 2);
}

// A device buffer type that is not host memory (as a GPU's would be).
const char * fake_name(lm_ggml_backend_buffer_type_t) { return "FAKE_DEVICE"; }
lm_ggml_backend_buffer_t fake_alloc(lm_ggml_backend_buffer_type_t, size_t) { return nullptr; }
size_t fake_alignment(lm_ggml_backend_buffer_type_t) { return 64; }
bool fake_is_host(lm_ggml_backend_buffer_type_t) { return false; }
void * fake_base(lm_ggml_backend_buffer_t buffer) { return buffer->context; }

TEST(CpuDevice, SupportsOnlyHostBuffers) {
    static lm_ggml_backend_buffer_type fake_buft = {
        .iface = {.get_name = fake_name,
                  .alloc_buffer = fake_alloc,
                  .get_alignment = fake_alignment,
                  .get_max_size = nullptr,
                  .get_alloc_size = nullptr,
                  .is_host = fake_is_host},
        .device = nullptr,
        .context = nullptr,
    };
    lm_ggml_backend_dev_t dev = cpu_dev();
    EXPECT_FALSE(lm_ggml_backend_dev_supports_buft(dev, &fake_buft));

    alignas(64) static char device_mem[256];
    lm_ggml_backend_buffer_i iface = {};
    iface.get_base = fake_base;
    lm_ggml_backend_buffer_t fake_buf = lm_ggml_backend_buffer_init(&fake_buft, iface, device_mem, sizeof(device_mem));
    ASSERT_NE(fake_buf, nullptr);

    lm_ggml_backend_t backend = lm_ggml_backend_cpu_init();
    GraphCtx g;
    lm_ggml_tensor * a = lm_ggml_new_tensor_1d(g.ctx, LM_GGML_TYPE_F32, 8);
    lm_ggml_tensor * b = lm_ggml_new_tensor_1d(g.ctx, LM_GGML_TYPE_F32, 8);
    lm_ggml_tensor * c = lm_ggml_add(g.ctx, a, b);
    lm_ggml_cgraph * gf = lm_ggml_new_graph(g.ctx);
    lm_ggml_build_forward_expand(gf, c);
    ASSERT_TRUE(g.alloc(backend));
    EXPECT_TRUE(lm_ggml_backend_dev_supports_op(dev, c));
    lm_ggml_backend_buffer_t real = a->buffer;
    a->buffer = fake_buf; // a now lives in "device" memory
    EXPECT_FALSE(lm_ggml_backend_dev_supports_op(dev, c));
    lm_ggml_tensor * v = lm_ggml_reshape_2d(g.ctx, a, 4, 2);
    EXPECT_TRUE(lm_ggml_backend_dev_supports_op(dev, v)) << "layout ops need no data access";
    {
        LogCapture log;
        EXPECT_EQ(lm_ggml_backend_graph_compute(backend, gf), LM_GGML_STATUS_FAILED) << "refused, not dereferenced";
        EXPECT_TRUE(log.contains("not in host memory")) << log.text();
    }
    a->buffer = real;
    EXPECT_EQ(lm_ggml_backend_graph_compute(backend, gf), LM_GGML_STATUS_SUCCESS);
    lm_ggml_backend_buffer_free(fake_buf);
    lm_ggml_backend_free(backend);
}

TEST(CpuTraits, ConversionsDotProductsAndPairings) {
    const lm_ggml_type_traits_cpu * f32 = lm_ggml_get_type_traits_cpu(LM_GGML_TYPE_F32);
    const lm_ggml_type_traits_cpu * f16 = lm_ggml_get_type_traits_cpu(LM_GGML_TYPE_F16);
    const lm_ggml_type_traits_cpu * bf16 = lm_ggml_get_type_traits_cpu(LM_GGML_TYPE_BF16);
    ASSERT_NE(f32, nullptr);
    ASSERT_NE(f16, nullptr);
    ASSERT_NE(bf16, nullptr);
    EXPECT_EQ(f32->vec_dot_type, LM_GGML_TYPE_F32);
    EXPECT_EQ(f16->vec_dot_type, LM_GGML_TYPE_F16);
    EXPECT_EQ(bf16->vec_dot_type, LM_GGML_TYPE_BF16);
    EXPECT_EQ(f32->nrows, 1);

    const float src[4] = {1.0f, -2.0f, 0.5f, 65504.0f};
    uint16_t h[4];
    ASSERT_NE(f16->from_float, nullptr);
    f16->from_float(src, h, 4);
    EXPECT_EQ(h[0], 0x3C00);
    EXPECT_EQ(h[1], 0xC000);
    EXPECT_EQ(h[2], 0x3800);
    EXPECT_EQ(h[3], 0x7BFF);
    uint16_t bh[4];
    ASSERT_NE(bf16->from_float, nullptr);
    bf16->from_float(src, bh, 4);
    EXPECT_EQ(bh[0], 0x3F80);
    EXPECT_EQ(bh[1], 0xC000);
    EXPECT_EQ(bh[2], 0x3F00);

    const int n = 37;
    std::vector<float> x = ramp(n, 3.0f), y = ramp(n, 4.0f);
    double ref = 0.0;
    for (int i = 0; i < n; i++) ref += (double) x[i] * y[i];
    float s = 0.0f;
    f32->vec_dot(n, &s, 0, x.data(), 0, y.data(), 0, 1);
    EXPECT_NEAR(s, ref, 1e-5);

    // F16 rows of exactly representable values: small integers and halves.
    std::vector<uint16_t> xh(n), yh(n);
    std::vector<float> xf(n), yf(n);
    for (int i = 0; i < n; i++) {
        xf[i] = (float) ((i % 7) - 3) * 0.5f;
        yf[i] = (float) ((i % 5) - 2);
    }
    f16->from_float(xf.data(), xh.data(), n);
    f16->from_float(yf.data(), yh.data(), n);
    double ref16 = 0.0;
    for (int i = 0; i < n; i++) ref16 += (double) xf[i] * yf[i];
    f16->vec_dot(n, &s, 0, xh.data(), 0, yh.data(), 0, 1);
    EXPECT_EQ(s, (float) ref16);
    bf16->from_float(xf.data(), xh.data(), n);
    bf16->from_float(yf.data(), yh.data(), n);
    bf16->vec_dot(n, &s, 0, xh.data(), 0, yh.data(), 0, 1);
    EXPECT_EQ(s, (float) ref16);

    EXPECT_EQ(lm_ggml_get_type_traits_cpu(LM_GGML_TYPE_Q4_0)->vec_dot_type, LM_GGML_TYPE_Q8_0);
    EXPECT_EQ(lm_ggml_get_type_traits_cpu(LM_GGML_TYPE_Q4_1)->vec_dot_type, LM_GGML_TYPE_Q8_1);
    EXPECT_EQ(lm_ggml_get_type_traits_cpu(LM_GGML_TYPE_Q5_0)->vec_dot_type, LM_GGML_TYPE_Q8_0);
    EXPECT_EQ(lm_ggml_get_type_traits_cpu(LM_GGML_TYPE_Q8_0)->vec_dot_type, LM_GGML_TYPE_Q8_0);
    EXPECT_EQ(lm_ggml_get_type_traits_cpu(LM_GGML_TYPE_Q4_K)->vec_dot_type, LM_GGML_TYPE_Q8_K);
    EXPECT_EQ(lm_ggml_get_type_traits_cpu(LM_GGML_TYPE_Q6_K)->vec_dot_type, LM_GGML_TYPE_Q8_K);
    EXPECT_NE(lm_ggml_get_type_traits_cpu(LM_GGML_TYPE_Q8_0)->from_float, nullptr) << "quantizes activations";

    LogCapture log;
    EXPECT_EQ(lm_ggml_get_type_traits_cpu(LM_GGML_TYPE_COUNT), nullptr);
    EXPECT_EQ(lm_ggml_get_type_traits_cpu((lm_ggml_type) -1), nullptr);
    EXPECT_EQ(log.errors(), 2);
}

} // namespace
