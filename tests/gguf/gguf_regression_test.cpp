// Replays the inputs in fuzz/regressions (each once made the fuzz target
// fail) through the file reader in every mode: the contract must hold (NULL
// and one error line, or success and none) and, under ASan/UBSan builds, no
// report. Also pins the behaviour that the first finding exposed.

#include "gguf_test_util.h"

#include <dirent.h>

#include <algorithm>

using namespace gguf_test;

TEST(GgufRegression, FuzzFindingsKeepTheContract) {
    std::vector<std::string> files;
    if (DIR * d = opendir(LMGGML_FUZZ_REGRESSIONS_DIR)) {
        while (dirent * e = readdir(d)) {
            if (e->d_name[0] != '.') files.push_back(std::string(LMGGML_FUZZ_REGRESSIONS_DIR) + "/" + e->d_name);
        }
        closedir(d);
    }
    std::sort(files.begin(), files.end());
    ASSERT_FALSE(files.empty()) << "no inputs in " << LMGGML_FUZZ_REGRESSIONS_DIR;
    for (const std::string & path : files) {
        int accepted = 0;
        for (int mode = 0; mode < 3; ++mode) {
            LogCapture log;
            lm_ggml_context * ctx = nullptr;
            lm_gguf_init_params p = {mode == 1, mode == 0 ? nullptr : &ctx};
            lm_gguf_context * g = lm_gguf_init_from_file(path.c_str(), p);
            EXPECT_EQ(log.errors(), g ? 0 : 1) << path << " mode " << mode << ": " << log.text();
            if (g && ctx) {
                for (lm_ggml_tensor * t = lm_ggml_get_first_tensor(ctx); t; t = lm_ggml_get_next_tensor(ctx, t)) {
                    (void) lm_ggml_nbytes(t);
                }
            }
            accepted += g != nullptr;
            lm_gguf_free(g);
            if (ctx) lm_ggml_free(ctx);
        }
        EXPECT_TRUE(accepted == 0 || accepted == 3) << path << ": modes disagree";
    }
}

TEST(GgufRegression, EmptyTensorMayNameAnyOffset) {
    // nothing is read for a zero-byte tensor, so its offset is not bounded by
    // the file; its data pointer must still stay inside the loaded blob
    Enc e;
    e.raw("GGUF", 4);
    e.u32(3);
    e.i64(2);
    e.i64(0);
    e.str("full");
    e.u32(1);
    e.i64(8);
    e.i32(0);
    e.u64(0);
    e.str("empty");
    e.u32(2);
    e.i64(0);
    e.i64(3);
    e.i32(0);
    e.u64(1ull << 62);
    e.pad(32);
    std::vector<uint8_t> data(32, 0x5a);
    e.raw(data.data(), data.size());
    TempFile f("empty");
    ASSERT_TRUE(write_file(f.path(), e.b));
    lm_ggml_context * ctx = nullptr;
    lm_gguf_init_params p = {false, &ctx};
    lm_gguf_context * g = lm_gguf_init_from_file(f.c_str(), p);
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(lm_gguf_get_tensor_offset(g, 1), 1ull << 62);
    EXPECT_EQ(lm_gguf_get_tensor_size(g, 1), 0u);
    const uint8_t * full = (const uint8_t *) lm_ggml_get_tensor(ctx, "full")->data;
    const uint8_t * empty = (const uint8_t *) lm_ggml_get_tensor(ctx, "empty")->data;
    EXPECT_GE(empty, full);
    EXPECT_LE(empty, full + 32);
    lm_gguf_free(g);
    lm_ggml_free(ctx);
}
