#pragma once
// Helpers for the graph-construction tests: a context fixture and checks of
// a result tensor's type, shape, strides, op, sources and op_params against
// values worked out by hand in each test.

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "ggml.h"

namespace ops_test {

using Ne = std::array<int64_t, 4>;

inline int32_t fbits(float f) {
    int32_t w;
    std::memcpy(&w, &f, sizeof(w));
    return w;
}

inline float param_f32(const lm_ggml_tensor * t, int i) {
    float f;
    std::memcpy(&f, &t->op_params[i], sizeof(f));
    return f;
}

inline Ne ne_of(const lm_ggml_tensor * t) { return {t->ne[0], t->ne[1], t->ne[2], t->ne[3]}; }

// Packed strides for (type, ne), written out independently of the library.
inline std::array<size_t, 4> packed_nb(size_t type_size, int64_t blck, const Ne & ne) {
    std::array<size_t, 4> nb{};
    nb[0] = type_size;
    nb[1] = type_size * (size_t) (ne[0] / blck);
    nb[2] = nb[1] * (size_t) ne[1];
    nb[3] = nb[2] * (size_t) ne[2];
    return nb;
}

inline std::array<size_t, 4> nb_of(const lm_ggml_tensor * t) { return {t->nb[0], t->nb[1], t->nb[2], t->nb[3]}; }

// op, type, ne and sources (the rest of src[] must be NULL)
inline void expect_node(const lm_ggml_tensor * t, lm_ggml_op op, lm_ggml_type type, const Ne & ne,
                        std::vector<const lm_ggml_tensor *> srcs) {
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->op, op) << "op is " << lm_ggml_op_name(t->op);
    EXPECT_EQ(t->type, type);
    EXPECT_EQ(ne_of(t), ne);
    for (size_t i = 0; i < LM_GGML_MAX_SRC; ++i) {
        const lm_ggml_tensor * want = i < srcs.size() ? srcs[i] : nullptr;
        EXPECT_EQ(t->src[i], want) << "src[" << i << "]";
    }
}

// op_params words 0..n-1 equal `words`, every later word is 0
inline void expect_params(const lm_ggml_tensor * t, std::vector<int32_t> words) {
    ASSERT_NE(t, nullptr);
    const size_t n_words = LM_GGML_MAX_OP_PARAMS / sizeof(int32_t);
    ASSERT_LE(words.size(), n_words);
    for (size_t i = 0; i < n_words; ++i) {
        const int32_t want = i < words.size() ? words[i] : 0;
        EXPECT_EQ(t->op_params[i], want) << "op_params[" << i << "]";
    }
}

// A fresh tensor owning packed data (not a view).
inline void expect_fresh(const lm_ggml_tensor * t) {
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->view_src, nullptr);
    EXPECT_EQ(nb_of(t), packed_nb(lm_ggml_type_size(t->type), lm_ggml_blck_size(t->type), ne_of(t)));
}

// r aliases a's memory exactly: same base, offset, data, shape and strides.
inline void expect_inplace_view_of(const lm_ggml_tensor * r, const lm_ggml_tensor * a) {
    ASSERT_NE(r, nullptr);
    const lm_ggml_tensor * base = a->view_src ? a->view_src : a;
    EXPECT_NE(r, a);
    EXPECT_EQ(r->view_src, base);
    EXPECT_EQ(r->view_offs, a->view_src ? a->view_offs : 0);
    EXPECT_EQ(r->data, a->data);
    EXPECT_EQ(ne_of(r), ne_of(a));
    EXPECT_EQ(nb_of(r), nb_of(a));
}

class OpsTest : public ::testing::Test {
protected:
    lm_ggml_context * ctx = nullptr;

    void SetUp() override {
        lm_ggml_init_params p = {16 * 1024 * 1024, nullptr, false};
        ctx = lm_ggml_init(p);
        ASSERT_NE(ctx, nullptr);
    }
    void TearDown() override { lm_ggml_free(ctx); }

    lm_ggml_tensor * t4(lm_ggml_type type, int64_t ne0, int64_t ne1 = 1, int64_t ne2 = 1, int64_t ne3 = 1,
                        const char * name = nullptr) {
        lm_ggml_tensor * t = lm_ggml_new_tensor_4d(ctx, type, ne0, ne1, ne2, ne3);
        EXPECT_NE(t, nullptr);
        if (t && name) lm_ggml_set_name(t, name);
        return t;
    }
    lm_ggml_tensor * f32(int64_t ne0, int64_t ne1 = 1, int64_t ne2 = 1, int64_t ne3 = 1, const char * name = nullptr) {
        return t4(LM_GGML_TYPE_F32, ne0, ne1, ne2, ne3, name);
    }
};

// Collects log lines so tests can see the one-line error reports.
struct LogCapture {
    std::vector<std::string> lines;
    LogCapture() { lm_ggml_log_set(&LogCapture::cb, this); }
    ~LogCapture() { lm_ggml_log_set(nullptr, nullptr); }
    static void cb(lm_ggml_log_level level, const char * text, void * ud) {
        if (level == LM_GGML_LOG_LEVEL_ERROR) static_cast<LogCapture *>(ud)->lines.emplace_back(text);
    }
    bool any_contains(const std::string & s) const {
        for (const auto & l : lines)
            if (l.find(s) != std::string::npos) return true;
        return false;
    }
};

} // namespace ops_test
