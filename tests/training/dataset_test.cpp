// ggml-opt datasets: layout, get_batch order, shuffle semantics (a
// permutation of whole shards, only within the first idata datapoints), and
// bad arguments giving one error line.

#include "backend_test_utils.h"
#include "opt_util.h"

#include <algorithm>
#include <set>

using namespace opttest;

namespace {

// datapoint i holds the values 100 i + j, its label -(i + 1) (one value)
lm_ggml_opt_dataset_t numbered(int64_t ne, int64_t ndata, int64_t shard) {
    lm_ggml_opt_dataset_t d = lm_ggml_opt_dataset_init(ne, 1, ndata, shard);
    if (!d) return nullptr;
    float * x = static_cast<float *>(lm_ggml_opt_dataset_data(d)->data);
    float * y = static_cast<float *>(lm_ggml_opt_dataset_labels(d)->data);
    for (int64_t i = 0; i < ndata; i++) {
        for (int64_t j = 0; j < ne; j++) x[i * ne + j] = (float) (100 * i + j);
        y[i] = (float) -(i + 1);
    }
    return d;
}

// a tiny optimization context, only for its random generator
struct TinyOpt {
    Backends be{false};
    Net net;
    lm_ggml_opt_context_t opt = nullptr;
    TinyOpt() {
        build_linear(net, 2, 4);
        net.allocate(1);
        lm_ggml_opt_params p = lm_ggml_opt_default_params(be.sched, net.ctx_compute, net.inputs, net.outputs,
                                                          LM_GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR);
        opt = lm_ggml_opt_init(p);
    }
    ~TinyOpt() { lm_ggml_opt_free(opt); }
};

struct Batch {
    lm_ggml_context * ctx;
    lm_ggml_tensor *x, *y;
    Batch(int64_t ne, int64_t n) {
        lm_ggml_init_params ip = {1 << 16, nullptr, false};
        ctx = lm_ggml_init(ip);
        x = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, ne, n);
        y = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 1, n);
    }
    ~Batch() { lm_ggml_free(ctx); }
    // datapoint index of each row, checking that data and label agree
    std::vector<int64_t> rows() const {
        std::vector<int64_t> r;
        const float * xd = static_cast<const float *>(x->data);
        const float * yd = static_cast<const float *>(y->data);
        for (int64_t i = 0; i < x->ne[1]; i++) {
            const int64_t k = (int64_t) xd[i * x->ne[0]] / 100;
            for (int64_t j = 0; j < x->ne[0]; j++) EXPECT_EQ(xd[i * x->ne[0] + j], (float) (100 * k + j));
            EXPECT_EQ(yd[i], (float) -(k + 1));
            r.push_back(k);
        }
        return r;
    }
};

} // namespace

TEST(Dataset, LayoutAndUnshuffledBatches) {
    lm_ggml_opt_dataset_t d = numbered(3, 12, 2);
    ASSERT_NE(d, nullptr);
    lm_ggml_tensor * data = lm_ggml_opt_dataset_data(d);
    EXPECT_EQ(data->type, LM_GGML_TYPE_F32);
    EXPECT_EQ(data->ne[0], 3);
    EXPECT_EQ(data->ne[1], 12);
    EXPECT_EQ(lm_ggml_opt_dataset_labels(d)->ne[0], 1);
    Batch b(3, 4);
    for (int64_t ib = 0; ib < 3; ib++) {
        lm_ggml_opt_dataset_get_batch(d, b.x, b.y, ib);
        EXPECT_EQ(b.rows(), (std::vector<int64_t>{4 * ib, 4 * ib + 1, 4 * ib + 2, 4 * ib + 3}));
    }
    lm_ggml_opt_dataset_free(d);

    lm_ggml_opt_dataset_t nol = lm_ggml_opt_dataset_init(3, 0, 5, 1);
    ASSERT_NE(nol, nullptr);
    EXPECT_EQ(lm_ggml_opt_dataset_labels(nol), nullptr);
    lm_ggml_opt_dataset_free(nol);
}

TEST(Dataset, ShuffleMovesWholeShardsWithinTheFirstIdata) {
    TinyOpt t;
    ASSERT_NE(t.opt, nullptr);
    lm_ggml_opt_dataset_t d = numbered(2, 24, 3); // 8 shards of 3
    ASSERT_NE(d, nullptr);
    Batch all(2, 24);

    lm_ggml_opt_dataset_shuffle(t.opt, d, 12); // the first 4 shards only
    lm_ggml_opt_dataset_get_batch(d, all.x, all.y, 0);
    std::vector<int64_t> r = all.rows();
    for (int64_t i = 12; i < 24; i++) EXPECT_EQ(r[(size_t) i], i); // untouched tail
    std::vector<int64_t> head(r.begin(), r.begin() + 12);
    for (size_t s = 0; s < 4; s++) { // each shard stays whole and in order
        EXPECT_EQ(head[3 * s] % 3, 0);
        EXPECT_EQ(head[3 * s + 1], head[3 * s] + 1);
        EXPECT_EQ(head[3 * s + 2], head[3 * s] + 2);
    }
    std::sort(head.begin(), head.end());
    for (int64_t i = 0; i < 12; i++) EXPECT_EQ(head[(size_t) i], i);

    // the full shuffle: a permutation of shards, and (8! orders) not the identity
    // in at least one of a few tries
    bool moved = false;
    for (int k = 0; k < 4 && !moved; k++) {
        lm_ggml_opt_dataset_shuffle(t.opt, d, -1);
        lm_ggml_opt_dataset_get_batch(d, all.x, all.y, 0);
        r = all.rows();
        std::set<int64_t> seen(r.begin(), r.end());
        EXPECT_EQ(seen.size(), 24u);
        for (int64_t i = 0; i < 24; i++) moved = moved || r[(size_t) i] != i;
        for (size_t s = 0; s < 8; s++) EXPECT_EQ(r[3 * s + 2], r[3 * s] + 2);
    }
    EXPECT_TRUE(moved);

    // batches of a shuffled dataset partition it
    Batch b(2, 6);
    std::set<int64_t> seen;
    for (int64_t ib = 0; ib < 4; ib++) {
        lm_ggml_opt_dataset_get_batch(d, b.x, b.y, ib);
        for (int64_t k : b.rows()) seen.insert(k);
    }
    EXPECT_EQ(seen.size(), 24u);
    lm_ggml_opt_dataset_free(d);
}

TEST(Dataset, BadArgumentsLogOneError) {
    {
        lmtest::BackendLogCapture log;
        EXPECT_EQ(lm_ggml_opt_dataset_init(0, 1, 10, 1), nullptr);
        EXPECT_EQ(lm_ggml_opt_dataset_init(2, 1, 10, 0), nullptr);
        EXPECT_EQ(log.errors(), 2u);
    }
    TinyOpt t;
    lm_ggml_opt_dataset_t d = numbered(2, 8, 2);
    ASSERT_NE(d, nullptr);
    Batch odd(2, 3); // not a whole number of shards
    Batch ok(2, 4);
    auto one_error = [](auto && f) {
        lmtest::BackendLogCapture log;
        f();
        EXPECT_EQ(log.errors(), 1u) << log.text();
    };
    one_error([&] { lm_ggml_opt_dataset_get_batch(d, odd.x, odd.y, 0); });
    one_error([&] { lm_ggml_opt_dataset_get_batch(d, ok.x, nullptr, 0); }); // labels missing
    one_error([&] { lm_ggml_opt_dataset_get_batch(d, ok.x, ok.y, 2); });    // beyond the data
    one_error([&] { lm_ggml_opt_dataset_shuffle(t.opt, d, 3); });           // not a shard boundary
    one_error([&] { lm_ggml_opt_dataset_shuffle(t.opt, d, 10); });          // beyond the data
    lm_ggml_opt_dataset_free(d);
}
