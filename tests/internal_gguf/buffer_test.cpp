// The in-memory entry point (used by the fuzzer) and the in-memory writer:
// same results as the file paths, and exact-size heap copies of every prefix
// so that AddressSanitizer would catch any read past the end.

#include "gguf/gguf-internal.h"
#include "gguf_test_util.h"

#include <memory>

using namespace gguf_test;

TEST(GgufBuffer, MatchesTheFileReader) {
    const Reference ref = build_reference();
    lm_ggml_context * ctx = nullptr;
    lm_gguf_init_params p = {false, &ctx};
    lm_gguf_context * g = lm_gguf_init_from_buffer(ref.bytes.data(), ref.bytes.size(), p);
    ASSERT_NE(g, nullptr);
    ASSERT_NE(ctx, nullptr);
    EXPECT_EQ(lm_gguf_get_n_kv(g), 20);
    EXPECT_EQ(lm_gguf_get_data_offset(g), ref.data_offset);
    for (const RefTensor & rt : reference_tensors()) {
        lm_ggml_tensor * t = lm_ggml_get_tensor(ctx, rt.name.c_str());
        ASSERT_NE(t, nullptr);
        EXPECT_EQ(std::memcmp(t->data, ref.bytes.data() + ref.at.at("data." + rt.name), rt.nbytes), 0);
    }
    // the context does not point into the caller's buffer
    for (lm_ggml_tensor * t = lm_ggml_get_first_tensor(ctx); t; t = lm_ggml_get_next_tensor(ctx, t)) {
        const uint8_t * d = static_cast<const uint8_t *>(t->data);
        EXPECT_TRUE(d < ref.bytes.data() || d >= ref.bytes.data() + ref.bytes.size());
    }
    lm_ggml_free(ctx);
    lm_gguf_free(g);
}

TEST(GgufBuffer, EveryPrefixInExactSizeAllocations) {
    const Reference ref = build_reference();
    const size_t data_end = ref.at.at("data_end");
    for (size_t n = 0; n <= ref.bytes.size(); ++n) {
        std::unique_ptr<uint8_t[]> copy(new uint8_t[n ? n : 1]);
        std::memcpy(copy.get(), ref.bytes.data(), n);
        for (bool no_alloc : {false, true}) {
            LogCapture log;
            lm_ggml_context * ctx = nullptr;
            lm_gguf_init_params p = {no_alloc, &ctx};
            lm_gguf_context * g = lm_gguf_init_from_buffer(copy.get(), n, p);
            EXPECT_EQ(g != nullptr, n >= data_end) << n;
            EXPECT_EQ(log.errors(), g ? 0 : 1) << n;
            lm_gguf_free(g);
            if (ctx) lm_ggml_free(ctx);
        }
    }
}

TEST(GgufBuffer, NullData) {
    LogCapture log;
    lm_gguf_init_params p = {true, nullptr};
    EXPECT_EQ(lm_gguf_init_from_buffer(nullptr, 16, p), nullptr);
    EXPECT_EQ(log.errors(), 1);
    log.clear();
    EXPECT_EQ(lm_gguf_init_from_buffer(nullptr, 0, p), nullptr); // an empty input has no magic
    EXPECT_EQ(log.errors(), 1);
}

TEST(GgufBuffer, WriteToBufferEqualsTheFile) {
    const Reference ref = build_reference();
    lm_ggml_context * ctx = nullptr;
    lm_gguf_init_params p = {false, &ctx};
    lm_gguf_context * g = lm_gguf_init_from_buffer(ref.bytes.data(), ref.bytes.size(), p);
    ASSERT_NE(g, nullptr);
    std::vector<uint8_t> out;
    ASSERT_TRUE(lmggml::gguf::write_to_buffer(*g, out));
    EXPECT_EQ(out, ref.bytes);
    lm_ggml_free(ctx);
    lm_gguf_free(g);
}
