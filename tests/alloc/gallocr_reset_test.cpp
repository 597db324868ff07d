// lm_ggml_gallocr_alloc_graph resets its compute buffers before placing a
// graph's tensors, as ggml 1.4.1 does: a backend whose buffers keep per-tensor
// state (freed in the buffer's reset slot, rebuilt by init_tensor) relies on it.
#include <gtest/gtest.h>

#include "ggml-alloc.h"
#include "ggml-backend-impl.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml.h"

namespace {

int g_resets = 0;
int g_inits = 0;

// CPU memory, with a reset slot and an init_tensor slot that count their calls
lm_ggml_backend_buffer_t counting_alloc(lm_ggml_backend_buffer_type_t buft, size_t size) {
    lm_ggml_backend_buffer_t b = lm_ggml_backend_cpu_buffer_type()->iface.alloc_buffer(buft, size);
    if (b) {
        b->iface.reset = [](lm_ggml_backend_buffer_t) { g_resets++; };
        b->iface.init_tensor = [](lm_ggml_backend_buffer_t, lm_ggml_tensor *) { g_inits++; };
    }
    return b;
}

lm_ggml_backend_buffer_type_t counting_buft() {
    static lm_ggml_backend_buffer_type buft = [] {
        lm_ggml_backend_buffer_type t = *lm_ggml_backend_cpu_buffer_type();
        t.iface.alloc_buffer = counting_alloc;
        t.iface.get_name = [](lm_ggml_backend_buffer_type_t) { return "CPU_counting"; };
        return t;
    }();
    return &buft;
}

TEST(GallocrReset, EveryAllocGraphResetsTheBufferBeforePlacing) {
    lm_ggml_context * ctx = lm_ggml_init({lm_ggml_tensor_overhead() * 16 + lm_ggml_graph_overhead(), nullptr, true});
    ASSERT_NE(ctx, nullptr);
    lm_ggml_tensor * a = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 64);
    lm_ggml_set_input(a);
    lm_ggml_tensor * b = lm_ggml_sqr(ctx, lm_ggml_sqr(ctx, a));
    lm_ggml_cgraph * g = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(g, b);

    lm_ggml_gallocr_t ga = lm_ggml_gallocr_new(counting_buft());
    ASSERT_NE(ga, nullptr);
    g_resets = g_inits = 0;
    ASSERT_TRUE(lm_ggml_gallocr_alloc_graph(ga, g));
    EXPECT_EQ(g_resets, 1); // one compute buffer
    EXPECT_EQ(g_inits, 3);  // a, and the two products
    // the same graph again (a fresh copy of its tensors' placement): reset first, then init
    for (int i = 0; i < lm_ggml_graph_n_nodes(g); i++) {
        lm_ggml_graph_node(g, i)->data = nullptr;
        lm_ggml_graph_node(g, i)->buffer = nullptr;
    }
    a->data = nullptr;
    a->buffer = nullptr;
    ASSERT_TRUE(lm_ggml_gallocr_alloc_graph(ga, g));
    EXPECT_EQ(g_resets, 2);
    EXPECT_EQ(g_inits, 6);
    lm_ggml_gallocr_free(ga);
    lm_ggml_free(ctx);
}

} // namespace
