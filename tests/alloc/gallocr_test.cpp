// Graph allocator: every tensor placed, no two simultaneously live tensors
// overlap, memory is reused, in-place happens, max buffer size is respected,
// and results computed through the allocator match a plain reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "ggml-alloc.h"
#include "ggml-backend-impl.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml.h"

namespace {

struct Ctx {
    lm_ggml_context * ctx;
    explicit Ctx(size_t n_tensors = 4096) {
        lm_ggml_init_params p = {lm_ggml_tensor_overhead() * n_tensors + lm_ggml_graph_overhead_custom(8192, false),
                                 nullptr, true};
        ctx = lm_ggml_init(p);
    }
    ~Ctx() { lm_ggml_free(ctx); }
};

// A transformer-shaped graph: n_layer blocks of norm, attention-like products
// and an MLP with residual adds. Returns the output node.
lm_ggml_tensor * transformer(lm_ggml_context * ctx, int n_layer, int n_embd, int n_tok, int n_ff) {
    lm_ggml_tensor * x = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, n_embd, n_tok);
    lm_ggml_set_name(x, "inp");
    lm_ggml_set_input(x);
    for (int l = 0; l < n_layer; l++) {
        lm_ggml_tensor * wq = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, n_embd, n_embd);
        lm_ggml_tensor * wk = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, n_embd, n_embd);
        lm_ggml_tensor * wo = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, n_embd, n_embd);
        lm_ggml_tensor * w1 = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, n_embd, n_ff);
        lm_ggml_tensor * w2 = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, n_ff, n_embd);
        lm_ggml_tensor * h = lm_ggml_rms_norm(ctx, x, 1e-5f);
        lm_ggml_tensor * q = lm_ggml_mul_mat(ctx, wq, h);                        // (n_tok, n_embd)
        lm_ggml_tensor * k = lm_ggml_mul_mat(ctx, wk, h);                        // (n_tok, n_embd)
        lm_ggml_tensor * kq = lm_ggml_soft_max(ctx, lm_ggml_mul_mat(ctx, k, q)); // (n_tok, n_tok)
        lm_ggml_tensor * v = lm_ggml_cont(ctx, lm_ggml_transpose(ctx, h));       // (n_embd, n_tok)
        lm_ggml_tensor * att = lm_ggml_mul_mat(ctx, v, kq);                      // (n_tok, n_embd)
        x = lm_ggml_add(ctx, x, lm_ggml_mul_mat(ctx, wo, att));
        lm_ggml_tensor * f = lm_ggml_silu(ctx, lm_ggml_mul_mat(ctx, w1, lm_ggml_rms_norm(ctx, x, 1e-5f)));
        x = lm_ggml_add(ctx, x, lm_ggml_mul_mat(ctx, w2, f));
    }
    lm_ggml_set_output(x);
    return x;
}

// leafs (tensors without an op) reachable from the graph's nodes, in first-use order
std::vector<lm_ggml_tensor *> graph_leafs(lm_ggml_cgraph * g) {
    std::vector<lm_ggml_tensor *> out;
    for (int i = 0; i < lm_ggml_graph_n_nodes(g); i++) {
        lm_ggml_tensor * n = lm_ggml_graph_node(g, i);
        for (int s = 0; s < LM_GGML_MAX_SRC; s++) {
            lm_ggml_tensor * t = n->src[s];
            if (t && t->op == LM_GGML_OP_NONE && std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
        }
    }
    return out;
}

struct Range {
    const char * base;
    size_t begin, end;
};

// Checks that tensors live at the same time never share bytes. Liveness: a
// tensor is live from the node that produces it (or the first node that reads
// it) to the last node that reads it; inputs and outputs live throughout.
void expect_no_live_overlap(lm_ggml_cgraph * g) {
    std::map<const lm_ggml_tensor *, std::pair<int, int>> live; // storage owner -> [first, last]
    auto owner = [](const lm_ggml_tensor * t) { return t->view_src ? t->view_src : t; };
    auto touch = [&](const lm_ggml_tensor * t, int i) {
        const lm_ggml_tensor * o = owner(t);
        auto it = live.find(o);
        if (it == live.end())
            live[o] = {i, i};
        else {
            it->second.first = std::min(it->second.first, i);
            it->second.second = std::max(it->second.second, i);
        }
    };
    const int n = lm_ggml_graph_n_nodes(g);
    for (int i = 0; i < n; i++) {
        lm_ggml_tensor * node = lm_ggml_graph_node(g, i);
        touch(node, i);
        for (int s = 0; s < LM_GGML_MAX_SRC; s++)
            if (node->src[s]) touch(node->src[s], i);
    }
    std::vector<std::pair<const lm_ggml_tensor *, std::pair<int, int>>> v(live.begin(), live.end());
    for (auto & e : v) {
        // inputs and all leafs are filled by the caller before compute: live from the start
        if ((e.first->flags & LM_GGML_TENSOR_FLAG_INPUT) || e.first->op == LM_GGML_OP_NONE) e.second.first = 0;
        if (e.first->flags & LM_GGML_TENSOR_FLAG_OUTPUT) e.second.second = n; // and outputs to the end
    }
    for (size_t a = 0; a < v.size(); a++) {
        ASSERT_NE(v[a].first->data, nullptr) << v[a].first->name;
        for (size_t b = a + 1; b < v.size(); b++) {
            const auto & A = v[a];
            const auto & B = v[b];
            // overlapping lifetimes, but a node may reuse a source dying at it (in place)
            const bool lifetimes_overlap = A.second.first < B.second.second && B.second.first < A.second.second;
            if (!lifetimes_overlap) continue;
            const char * a0 = (const char *) A.first->data;
            const char * a1 = a0 + lm_ggml_nbytes(A.first);
            const char * b0 = (const char *) B.first->data;
            const char * b1 = b0 + lm_ggml_nbytes(B.first);
            EXPECT_FALSE(a0 < b1 && b0 < a1)
                << A.first->name << " [" << A.second.first << "," << A.second.second << "] overlaps " << B.first->name
                << " [" << B.second.first << "," << B.second.second << "]";
        }
    }
}

TEST(Gallocr, TransformerGraphIsPlacedWithoutLiveOverlapAndWithReuse) {
    Ctx c;
    lm_ggml_tensor * out = transformer(c.ctx, 4, 64, 7, 96);
    lm_ggml_cgraph * g = lm_ggml_new_graph_custom(c.ctx, 8192, false);
    lm_ggml_build_forward_expand(g, out);
    // weights live in their own buffer, as in a real model
    lm_ggml_gallocr_t ga = lm_ggml_gallocr_new(lm_ggml_backend_cpu_buffer_type());
    ASSERT_NE(ga, nullptr);
    ASSERT_TRUE(lm_ggml_gallocr_alloc_graph(ga, g));
    expect_no_live_overlap(g);
    size_t naive = 0;
    for (int i = 0; i < lm_ggml_graph_n_nodes(g); i++) {
        lm_ggml_tensor * n = lm_ggml_graph_node(g, i);
        if (!n->view_src) naive += lm_ggml_nbytes(n);
    }
    for (lm_ggml_tensor * l : graph_leafs(g)) naive += lm_ggml_nbytes(l);
    const size_t planned = lm_ggml_gallocr_get_buffer_size(ga, 0);
    EXPECT_GT(planned, 0u);
    // weights dominate the leafs here; intermediate reuse must still cut the total
    EXPECT_LT(planned, naive * 0.9) << "planned " << planned << " naive " << naive;
    lm_ggml_gallocr_free(ga);
}

TEST(Gallocr, IntermediatesAreReusedAcrossLayers) {
    Ctx c;
    // weights pre-allocated in their own buffer: only activations are planned
    lm_ggml_tensor * out = transformer(c.ctx, 8, 32, 5, 64);
    lm_ggml_cgraph * g = lm_ggml_new_graph_custom(c.ctx, 8192, false);
    lm_ggml_build_forward_expand(g, out);
    std::vector<lm_ggml_tensor *> weights;
    for (lm_ggml_tensor * l : graph_leafs(g)) {
        if (!(l->flags & LM_GGML_TENSOR_FLAG_INPUT)) weights.push_back(l);
    }
    size_t wbytes = 0;
    for (auto * w : weights) wbytes += lm_ggml_nbytes(w) + 64;
    lm_ggml_backend_buffer_t wbuf = lm_ggml_backend_buft_alloc_buffer(lm_ggml_backend_cpu_buffer_type(), wbytes);
    lm_ggml_tallocr ta = lm_ggml_tallocr_new(wbuf);
    for (auto * w : weights) lm_ggml_tallocr_alloc(&ta, w);
    size_t naive = 0;
    for (int i = 0; i < lm_ggml_graph_n_nodes(g); i++) {
        lm_ggml_tensor * n = lm_ggml_graph_node(g, i);
        if (!n->view_src) naive += lm_ggml_nbytes(n);
    }
    lm_ggml_gallocr_t ga = lm_ggml_gallocr_new(lm_ggml_backend_cpu_buffer_type());
    ASSERT_TRUE(lm_ggml_gallocr_alloc_graph(ga, g));
    expect_no_live_overlap(g);
    const size_t planned = lm_ggml_gallocr_get_buffer_size(ga, 0);
    // 8 layers of activations fit in the space of little more than one layer
    EXPECT_LT(planned * 5, naive) << "planned " << planned << " naive " << naive;
    lm_ggml_gallocr_free(ga);
    lm_ggml_backend_buffer_free(wbuf);
}

TEST(Gallocr, InPlaceReusesADyingSource) {
    Ctx c;
    lm_ggml_tensor * a = lm_ggml_new_tensor_1d(c.ctx, LM_GGML_TYPE_F32, 256);
    lm_ggml_tensor * b = lm_ggml_new_tensor_1d(c.ctx, LM_GGML_TYPE_F32, 256);
    lm_ggml_set_input(a);
    lm_ggml_set_input(b);
    lm_ggml_tensor * s = lm_ggml_add(c.ctx, a, b);   // new memory (sources are inputs)
    lm_ggml_tensor * t = lm_ggml_scale(c.ctx, s, 2); // s dies here: t takes its memory
    lm_ggml_set_output(t);
    lm_ggml_cgraph * g = lm_ggml_new_graph(c.ctx);
    lm_ggml_build_forward_expand(g, t);
    lm_ggml_gallocr_t ga = lm_ggml_gallocr_new(lm_ggml_backend_cpu_buffer_type());
    ASSERT_TRUE(lm_ggml_gallocr_alloc_graph(ga, g));
    EXPECT_EQ(s->data, t->data);
    EXPECT_NE(a->data, s->data);
    EXPECT_NE(b->data, s->data);
    lm_ggml_gallocr_free(ga);
}

TEST(Gallocr, ComputesTheSameAsAReference) {
    Ctx c;
    lm_ggml_tensor * out = transformer(c.ctx, 2, 16, 3, 24);
    lm_ggml_cgraph * g = lm_ggml_new_graph_custom(c.ctx, 8192, false);
    lm_ggml_build_forward_expand(g, out);
    lm_ggml_gallocr_t ga = lm_ggml_gallocr_new(lm_ggml_backend_cpu_buffer_type());
    ASSERT_TRUE(lm_ggml_gallocr_alloc_graph(ga, g));
    // fill every leaf deterministically, compute with the allocator's placement...
    const std::vector<lm_ggml_tensor *> leafs = graph_leafs(g);
    std::vector<std::vector<float>> leaf_data;
    for (size_t i = 0; i < leafs.size(); i++) {
        std::vector<float> v((size_t) lm_ggml_nelements(leafs[i]));
        for (size_t k = 0; k < v.size(); k++) v[k] = std::sin(0.1f * (float) (k + 7 * i)) * 0.3f;
        lm_ggml_backend_tensor_set(leafs[i], v.data(), 0, lm_ggml_nbytes(leafs[i]));
        leaf_data.push_back(v);
    }
    lm_ggml_backend_t cpu = lm_ggml_backend_cpu_init();
    ASSERT_EQ(lm_ggml_backend_graph_compute(cpu, g), LM_GGML_STATUS_SUCCESS);
    std::vector<float> planned_out((size_t) lm_ggml_nelements(out));
    lm_ggml_backend_tensor_get(out, planned_out.data(), 0, lm_ggml_nbytes(out));
    // ...and again with every tensor in its own memory (no reuse at all)
    // forget the planned placement (views included) so every tensor gets its own memory
    for (lm_ggml_tensor * t = lm_ggml_get_first_tensor(c.ctx); t; t = lm_ggml_get_next_tensor(c.ctx, t)) {
        t->data = nullptr;
        t->buffer = nullptr;
    }
    lm_ggml_backend_buffer_t own = lm_ggml_backend_alloc_ctx_tensors(c.ctx, cpu);
    ASSERT_NE(own, nullptr);
    for (size_t i = 0; i < leafs.size(); i++)
        lm_ggml_backend_tensor_set(leafs[i], leaf_data[i].data(), 0, lm_ggml_nbytes(leafs[i]));
    ASSERT_EQ(lm_ggml_backend_graph_compute(cpu, g), LM_GGML_STATUS_SUCCESS);
    std::vector<float> own_out((size_t) lm_ggml_nelements(out));
    lm_ggml_backend_tensor_get(out, own_out.data(), 0, lm_ggml_nbytes(out));
    for (size_t k = 0; k < own_out.size(); k++) ASSERT_EQ(planned_out[k], own_out[k]) << k;
    lm_ggml_backend_buffer_free(own);
    lm_ggml_backend_free(cpu);
    lm_ggml_gallocr_free(ga);
}

// A host buffer type with a small max size, to prove tensors spread over buffers.
lm_ggml_backend_buffer_type_t small_max_buft() {
    static lm_ggml_backend_buffer_type buft = [] {
        lm_ggml_backend_buffer_type b = *lm_ggml_backend_cpu_buffer_type();
        b.iface.get_max_size = [](lm_ggml_backend_buffer_type_t) -> size_t { return 4096; };
        b.iface.get_name = [](lm_ggml_backend_buffer_type_t) { return "CPU_small"; };
        return b;
    }();
    return &buft;
}

TEST(Gallocr, MaxBufferSizeIsRespectedBySpreading) {
    Ctx c;
    lm_ggml_tensor * a = lm_ggml_new_tensor_1d(c.ctx, LM_GGML_TYPE_F32, 768); // 3 KiB each
    lm_ggml_set_input(a);
    lm_ggml_tensor * x = a;
    std::vector<lm_ggml_tensor *> outs;
    for (int i = 0; i < 4; i++) {
        x = lm_ggml_sqr(c.ctx, x);
        lm_ggml_set_output(x); // all stay live: 5 x 3 KiB > one 4 KiB buffer
        outs.push_back(x);
    }
    lm_ggml_cgraph * g = lm_ggml_new_graph(c.ctx);
    lm_ggml_build_forward_expand(g, x);
    lm_ggml_gallocr_t ga = lm_ggml_gallocr_new(small_max_buft());
    ASSERT_TRUE(lm_ggml_gallocr_alloc_graph(ga, g));
    EXPECT_GE(lm_ggml_gallocr_get_buffer_size(ga, 0), 5u * 3072);
    expect_no_live_overlap(g);
    // and it computes
    std::vector<float> in(768);
    for (int i = 0; i < 768; i++) in[i] = 1.0f + i * 1e-3f;
    lm_ggml_backend_tensor_set(a, in.data(), 0, sizeof(float) * 768);
    lm_ggml_backend_t cpu = lm_ggml_backend_cpu_init();
    ASSERT_EQ(lm_ggml_backend_graph_compute(cpu, g), LM_GGML_STATUS_SUCCESS);
    std::vector<float> got(768);
    lm_ggml_backend_tensor_get(x, got.data(), 0, sizeof(float) * 768);
    for (int i = 0; i < 768; i += 97)
        EXPECT_NEAR(got[i], std::pow((double) in[i], 16.0), 1e-3 * std::pow((double) in[i], 16.0));
    lm_ggml_backend_free(cpu);
    lm_ggml_gallocr_free(ga);
}

TEST(Gallocr, TensorLargerThanMaxSizeFailsCleanly) {
    Ctx c;
    lm_ggml_tensor * a = lm_ggml_new_tensor_1d(c.ctx, LM_GGML_TYPE_F32, 2048); // 8 KiB > 4 KiB
    lm_ggml_tensor * b = lm_ggml_sqr(c.ctx, a);
    lm_ggml_cgraph * g = lm_ggml_new_graph(c.ctx);
    lm_ggml_build_forward_expand(g, b);
    lm_ggml_gallocr_t ga = lm_ggml_gallocr_new(small_max_buft());
    EXPECT_FALSE(lm_ggml_gallocr_alloc_graph(ga, g));
    lm_ggml_gallocr_free(ga);
}

TEST(Gallocr, ReservedPlanIsReusedAndGrowsOnlyWhenNeeded) {
    lm_ggml_gallocr_t ga = lm_ggml_gallocr_new(lm_ggml_backend_cpu_buffer_type());
    auto build = [](lm_ggml_context * ctx, int n) {
        lm_ggml_tensor * a = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, n);
        lm_ggml_tensor * b = lm_ggml_sqr(ctx, lm_ggml_sqr(ctx, a));
        lm_ggml_cgraph * g = lm_ggml_new_graph(ctx);
        lm_ggml_build_forward_expand(g, b);
        return g;
    };
    Ctx c1, c2, c3;
    ASSERT_TRUE(lm_ggml_gallocr_reserve(ga, build(c1.ctx, 1024)));
    const size_t reserved = lm_ggml_gallocr_get_buffer_size(ga, 0);
    ASSERT_TRUE(lm_ggml_gallocr_alloc_graph(ga, build(c2.ctx, 512))); // smaller: re-planned within the reservation
    EXPECT_EQ(lm_ggml_gallocr_get_buffer_size(ga, 0), reserved);
    ASSERT_TRUE(lm_ggml_gallocr_alloc_graph(ga, build(c3.ctx, 4096))); // larger: grows
    EXPECT_GT(lm_ggml_gallocr_get_buffer_size(ga, 0), reserved);
    lm_ggml_gallocr_free(ga);
}

TEST(Gallocr, MultipleBuffersNeedReserveN) {
    Ctx c;
    lm_ggml_tensor * a = lm_ggml_new_tensor_1d(c.ctx, LM_GGML_TYPE_F32, 64);
    lm_ggml_tensor * b = lm_ggml_sqr(c.ctx, a);
    lm_ggml_tensor * d = lm_ggml_sqrt(c.ctx, b);
    lm_ggml_cgraph * g = lm_ggml_new_graph(c.ctx);
    lm_ggml_build_forward_expand(g, d);
    lm_ggml_backend_buffer_type_t bufts[2] = {lm_ggml_backend_cpu_buffer_type(), small_max_buft()};
    lm_ggml_gallocr_t ga = lm_ggml_gallocr_new_n(bufts, 2);
    EXPECT_FALSE(lm_ggml_gallocr_alloc_graph(ga, g)); // no plan yet
    const int node_ids[2] = {0, 1};
    const int leaf_ids[1] = {0};
    ASSERT_TRUE(lm_ggml_gallocr_reserve_n(ga, g, node_ids, leaf_ids));
    ASSERT_TRUE(lm_ggml_gallocr_alloc_graph(ga, g));
    EXPECT_EQ(lm_ggml_backend_buffer_get_type(d->buffer), small_max_buft());
    EXPECT_EQ(lm_ggml_backend_buffer_get_type(b->buffer), lm_ggml_backend_cpu_buffer_type());
    EXPECT_GT(lm_ggml_gallocr_get_buffer_size(ga, 1), 0u);
    lm_ggml_gallocr_free(ga);
}

TEST(Tallocr, PlacesTensorsInOrderAndRefusesOverflow) {
    Ctx c;
    lm_ggml_backend_buffer_t buf = lm_ggml_backend_buft_alloc_buffer(lm_ggml_backend_cpu_buffer_type(), 256);
    lm_ggml_tallocr ta = lm_ggml_tallocr_new(buf);
    lm_ggml_tensor * a = lm_ggml_new_tensor_1d(c.ctx, LM_GGML_TYPE_F32, 10); // 40 -> 64 aligned
    lm_ggml_tensor * b = lm_ggml_new_tensor_1d(c.ctx, LM_GGML_TYPE_F32, 10);
    lm_ggml_tensor * big = lm_ggml_new_tensor_1d(c.ctx, LM_GGML_TYPE_F32, 100);
    lm_ggml_tallocr_alloc(&ta, a);
    lm_ggml_tallocr_alloc(&ta, b);
    EXPECT_EQ((char *) b->data - (char *) a->data, 64);
    lm_ggml_tallocr_alloc(&ta, big); // does not fit: error, tensor left unallocated
    EXPECT_EQ(big->data, nullptr);
    lm_ggml_backend_buffer_free(buf);
}

TEST(AllocCtxTensors, SplitsOverBuffersOfLimitedSize) {
    Ctx c;
    std::vector<lm_ggml_tensor *> ts;
    for (int i = 0; i < 6; i++) ts.push_back(lm_ggml_new_tensor_1d(c.ctx, LM_GGML_TYPE_F32, 400)); // 1600 B each
    lm_ggml_tensor * view = lm_ggml_view_1d(c.ctx, ts[2], 10, 40);
    lm_ggml_backend_buffer_t buf = lm_ggml_backend_alloc_ctx_tensors_from_buft(c.ctx, small_max_buft());
    ASSERT_NE(buf, nullptr);
    EXPECT_TRUE(lm_ggml_backend_buffer_is_multi_buffer(buf));
    for (auto * t : ts) EXPECT_NE(t->data, nullptr);
    EXPECT_EQ((char *) view->data, (char *) ts[2]->data + 40);
    lm_ggml_backend_buffer_free(buf);
}

} // namespace
