// Memory mapping and weight placement: zero copy on the CPU (tensor data
// points into the mapping), upload on a device without host-pointer buffers
// (the refdev plugin) and on the CPU when the file's alignment is too small,
// progress reporting and cancellation, and errors as values.

#include "gguf/gguf-internal.h"
#include "gguf/gguf-loader.h"
#include "gguf_test_util.h"

#include "ggml-backend.h"

#include <vector>

using namespace gguf_test;
using lmggml::gguf::load_weights;
using lmggml::gguf::LoadedWeights;
using lmggml::gguf::MappedFile;

namespace {

lm_ggml_backend_dev_t cpu_device() {
    return lm_ggml_backend_dev_by_type(LM_GGML_BACKEND_DEVICE_TYPE_CPU);
}

lm_ggml_backend_dev_t refdev() {
    static bool loaded = false;
    if (!loaded) {
        LogCapture quiet; // a missing plugin directory is not this test's concern
        lm_ggml_backend_load_all_from_path(LMGGML_PLUGIN_DIR);
        loaded = true;
    }
    return lm_ggml_backend_dev_by_name("REFDEV0");
}

struct Opened {
    lm_gguf_context *                  g = nullptr;
    std::shared_ptr<const MappedFile> map;
    ~Opened() { lm_gguf_free(g); }
};

void open_file(const std::string & path, Opened & o) {
    lm_gguf_init_params p = { true, nullptr };
    o.g = lm_gguf_init_from_file(path.c_str(), p);
    ASSERT_NE(o.g, nullptr);
    auto m = MappedFile::open(path);
    ASSERT_TRUE(m.ok()) << m.error();
    o.map = m.take();
}

struct ProgressLog {
    std::vector<float> values;
    int cancel_at = -1; // call index that returns false
};

bool on_progress(float f, void * user) {
    auto * log = static_cast<ProgressLog *>(user);
    log->values.push_back(f);
    return (int) log->values.size() - 1 != log->cancel_at;
}

void expect_progress_ok(const ProgressLog & log) {
    ASSERT_FALSE(log.values.empty());
    for (size_t i = 1; i < log.values.size(); ++i) {
        EXPECT_GE(log.values[i], log.values[i - 1]);
    }
    EXPECT_FLOAT_EQ(log.values.back(), 1.0f);
}

// Reads a tensor's bytes through the backend API (works on any device).
std::vector<uint8_t> tensor_bytes(const lm_ggml_tensor * t) {
    std::vector<uint8_t> out(lm_ggml_nbytes(t));
    lm_ggml_backend_tensor_get(t, out.data(), 0, out.size());
    return out;
}

// A file whose alignment is 1: the second tensor starts at an odd offset.
// `big` adds a tensor larger than one upload chunk (16 MiB).
std::vector<uint8_t> odd_alignment_file(bool big, std::vector<std::vector<uint8_t>> & payloads) {
    lm_ggml_init_params ip = { 4 * lm_ggml_tensor_overhead(), nullptr, true };
    lm_ggml_context * ctx = lm_ggml_init(ip);
    lm_gguf_context * g = lm_gguf_init_empty();
    lm_gguf_set_val_u32(g, LM_GGUF_KEY_GENERAL_ALIGNMENT, 1);
    const int64_t sizes[] = {3, 5, big ? (int64_t) (17u << 20) / 2 : 7}; // F16 elements
    const char * names[] = {"a", "b", "c"};
    for (int i = 0; i < 3; ++i) {
        lm_ggml_tensor * t = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F16, sizes[i]);
        lm_ggml_set_name(t, names[i]);
        payloads.push_back(tensor_payload(names[i], (size_t) sizes[i] * 2));
        t->data = payloads.back().data();
        lm_gguf_add_tensor(g, t);
    }
    std::vector<uint8_t> bytes;
    EXPECT_TRUE(lmggml::gguf::write_to_buffer(*g, bytes));
    lm_gguf_free(g);
    lm_ggml_free(ctx);
    return bytes;
}

} // namespace

TEST(GgufMmap, OpenErrorsAreValues) {
    auto missing = MappedFile::open("/nonexistent/model.gguf");
    EXPECT_FALSE(missing.ok());
    EXPECT_NE(missing.error().find("/nonexistent/model.gguf"), std::string::npos);
    TempFile empty("empty");
    ASSERT_TRUE(write_file(empty.path(), {}));
    auto e = MappedFile::open(empty.path());
    EXPECT_FALSE(e.ok());
    EXPECT_NE(e.error().find("empty"), std::string::npos);
    EXPECT_FALSE(MappedFile::open("/tmp").ok());
}

TEST(GgufMmap, MapsTheWholeFile) {
    const Reference ref = build_reference();
    TempFile f("m");
    ASSERT_TRUE(write_file(f.path(), ref.bytes));
    auto m = MappedFile::open(f.path());
    ASSERT_TRUE(m.ok()) << m.error();
    ASSERT_EQ(m.value()->size(), ref.bytes.size());
    EXPECT_EQ(std::memcmp(m.value()->data(), ref.bytes.data(), ref.bytes.size()), 0);
    EXPECT_EQ((uintptr_t) m.value()->data() % 4096, 0u); // page aligned
}

TEST(GgufLoader, CpuIsZeroCopy) {
    lm_ggml_backend_dev_t cpu = cpu_device();
    ASSERT_NE(cpu, nullptr);
    const Reference ref = build_reference();
    TempFile f("cpu");
    ASSERT_TRUE(write_file(f.path(), ref.bytes));
    Opened o;
    open_file(f.path(), o);
    ProgressLog progress;
    auto r = load_weights(o.g, o.map, cpu, on_progress, &progress);
    ASSERT_TRUE(r.ok()) << r.error();
    LoadedWeights w = r.take();
    EXPECT_TRUE(w.zero_copy());
    ASSERT_NE(w.buffer(), nullptr);
    EXPECT_TRUE(lm_ggml_backend_buffer_is_host(w.buffer()));
    EXPECT_EQ(lm_ggml_backend_buffer_get_usage(w.buffer()), LM_GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    const uint8_t * base = o.map->data();
    for (int64_t i = 0; i < lm_gguf_get_n_tensors(o.g); ++i) {
        const char * name = lm_gguf_get_tensor_name(o.g, i);
        lm_ggml_tensor * t = w.tensor(name);
        ASSERT_NE(t, nullptr) << name;
        // the tensor's data IS the file's bytes, inside the mapping
        EXPECT_EQ((const uint8_t *) t->data, base + ref.at.at(std::string("data.") + name)) << name;
        EXPECT_EQ(t->buffer, w.buffer());
        const RefTensor rt = reference_tensors()[(size_t) i];
        EXPECT_EQ(tensor_bytes(t), tensor_payload(rt.name, rt.nbytes));
    }
    EXPECT_EQ(w.tensor("missing"), nullptr);
    expect_progress_ok(progress);
    EXPECT_EQ(progress.values.size(), 3u);

    // the weights keep the mapping alive after the caller lets it go
    const uint8_t * first = (const uint8_t *) w.tensor("tok_embd.weight")->data;
    o.map.reset();
    EXPECT_EQ(std::memcmp(first, tensor_payload("tok_embd.weight", 48).data(), 48), 0);
}

TEST(GgufLoader, CpuCopiesWhenTheFileIsNotAligned) {
    lm_ggml_backend_dev_t cpu = cpu_device();
    ASSERT_NE(cpu, nullptr);
    std::vector<std::vector<uint8_t>> payloads;
    const std::vector<uint8_t> bytes = odd_alignment_file(true, payloads);
    TempFile f("odd");
    ASSERT_TRUE(write_file(f.path(), bytes));
    Opened o;
    open_file(f.path(), o);
    EXPECT_EQ(lm_gguf_get_alignment(o.g), 1u);
    EXPECT_EQ(lm_gguf_get_tensor_offset(o.g, 1), 6u);
    ProgressLog progress;
    auto r = load_weights(o.g, o.map, cpu, on_progress, &progress);
    ASSERT_TRUE(r.ok()) << r.error();
    LoadedWeights w = r.take();
    EXPECT_FALSE(w.zero_copy());
    const char * names[] = {"a", "b", "c"};
    for (int i = 0; i < 3; ++i) {
        lm_ggml_tensor * t = w.tensor(names[i]);
        ASSERT_NE(t, nullptr);
        const uint8_t * d = (const uint8_t *) t->data;
        EXPECT_TRUE(d < o.map->data() || d >= o.map->data() + o.map->size()) << "copied, not mapped";
        EXPECT_EQ(tensor_bytes(t), payloads[(size_t) i]) << names[i];
    }
    expect_progress_ok(progress);
    EXPECT_GE(progress.values.size(), 4u); // the 17 MiB tensor goes up in two chunks
}

TEST(GgufLoader, CancelFromProgress) {
    std::vector<std::vector<uint8_t>> payloads;
    TempFile f("cancel");
    ASSERT_TRUE(write_file(f.path(), odd_alignment_file(false, payloads)));
    Opened o;
    open_file(f.path(), o);
    for (lm_ggml_backend_dev_t dev : {cpu_device(), refdev()}) {
        if (dev == nullptr) continue;
        ProgressLog progress;
        progress.cancel_at = 1;
        auto r = load_weights(o.g, o.map, dev, on_progress, &progress);
        EXPECT_FALSE(r.ok());
        EXPECT_EQ(r.error(), "cancelled");
        EXPECT_EQ(progress.values.size(), 2u); // nothing after the refusal
    }
    const Reference ref = build_reference();
    TempFile z("zc");
    ASSERT_TRUE(write_file(z.path(), ref.bytes));
    Opened oz;
    open_file(z.path(), oz);
    ProgressLog progress;
    progress.cancel_at = 0;
    auto r = load_weights(oz.g, oz.map, cpu_device(), on_progress, &progress);
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.error(), "cancelled");
}

TEST(GgufLoader, ErrorsAreValues) {
    const Reference ref = build_reference();
    TempFile f("ref"), small("small");
    ASSERT_TRUE(write_file(f.path(), ref.bytes));
    ASSERT_TRUE(write_file(small.path(), std::vector<uint8_t>(ref.bytes.begin(), ref.bytes.begin() + 700)));
    Opened o;
    open_file(f.path(), o);
    auto m = MappedFile::open(small.path());
    ASSERT_TRUE(m.ok());
    auto r = load_weights(o.g, m.take(), cpu_device());
    EXPECT_FALSE(r.ok());
    EXPECT_NE(r.error().find("outside"), std::string::npos) << r.error();
    EXPECT_FALSE(load_weights(nullptr, o.map, cpu_device()).ok());
    EXPECT_FALSE(load_weights(o.g, nullptr, cpu_device()).ok());
    EXPECT_FALSE(load_weights(o.g, o.map, nullptr).ok());
}

TEST(GgufLoader, RefdevUploads) {
    lm_ggml_backend_dev_t dev = refdev();
    if (dev == nullptr) {
        GTEST_SKIP() << "refdev plugin not built in " << LMGGML_PLUGIN_DIR;
    }
    const Reference ref = build_reference();
    TempFile f("refdev");
    ASSERT_TRUE(write_file(f.path(), ref.bytes));
    Opened o;
    open_file(f.path(), o);
    ProgressLog progress;
    auto r = load_weights(o.g, o.map, dev, on_progress, &progress);
    ASSERT_TRUE(r.ok()) << r.error();
    LoadedWeights w = r.take();
    EXPECT_FALSE(w.zero_copy());
    ASSERT_NE(w.buffer(), nullptr);
    EXPECT_FALSE(lm_ggml_backend_buffer_is_host(w.buffer()));
    EXPECT_EQ(lm_ggml_backend_buft_get_device(lm_ggml_backend_buffer_get_type(w.buffer())), dev);
    for (const RefTensor & rt : reference_tensors()) {
        lm_ggml_tensor * t = w.tensor(rt.name.c_str());
        ASSERT_NE(t, nullptr);
        EXPECT_EQ(t->buffer, w.buffer());
        EXPECT_EQ(tensor_bytes(t), tensor_payload(rt.name, rt.nbytes)) << rt.name;
    }
    expect_progress_ok(progress);
}
