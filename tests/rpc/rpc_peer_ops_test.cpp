// The peer's ops that lmggml's ggml lacks (SET_ROWS, GLU), sent as llama.cpp's
// client sends them: well-formed nodes compute what a double loop written
// from ggml's documented semantics gives; row ids out of range (also for
// GET_ROWS, whose kernel would abort) and shapes the peer's constructor would
// refuse close the connection, and the server goes on serving.

#include "rpc_test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

namespace {

using namespace rpctest;
using rpc::WireTensor;

// the peer's enum values
constexpr uint32_t kF32 = 0, kF16 = 1, kI32 = 26, kI64 = 27;
constexpr uint32_t kOpGetRows = 40, kOpSetRows = 42, kOpFlashAttnExt = 74, kOpGlu = 100;
constexpr int32_t kReglu = 0, kSwiglu = 2, kSwigluOai = 3;

struct Fixture {
    LoopbackServer srv;
    Raw c{srv.port()};
    uint64_t buf = 0, base = 0;
    Fixture() {
        buf = c.alloc(4096);
        base = c.base(buf);
    }
    template <typename T> void set(const WireTensor & w, const std::vector<T> & v) {
        auto m = set_tensor_msg(w, 0, v.data(), v.size() * sizeof(T));
        ASSERT_TRUE(c.send_cmd(rpc::CMD_SET_TENSOR, m.data(), m.size()));
    }
    template <typename T> std::vector<T> get(const WireTensor & w, size_t n) {
        std::vector<T> out(n);
        rpc::GetTensorReq req = {w, 0, n * sizeof(T)};
        EXPECT_TRUE(c.call(rpc::CMD_GET_TENSOR, &req, sizeof(req), out.data(), n * sizeof(T)));
        return out;
    }
    bool compute(const std::vector<uint64_t> & nodes, const std::vector<WireTensor> & ts) {
        auto g = graph_msg(0, nodes, ts);
        return c.send_cmd(rpc::CMD_GRAPH_COMPUTE, g.data(), g.size()) && c.alive();
    }
};

// a packed 2-d wire tensor at byte `at` of the fixture's buffer
WireTensor tensor(const Fixture & f, uint64_t id, uint32_t type, uint32_t esz, uint64_t at, uint32_t ne0,
                  uint32_t ne1 = 1) {
    WireTensor w = f32_tensor(id, f.buf, f.base + at, ne0, ne1);
    w.type = type;
    w.nb[0] = esz;
    w.nb[1] = esz * ne0;
    w.nb[2] = w.nb[3] = esz * ne0 * ne1;
    return w;
}

void expect_refused(Fixture & f, const std::vector<uint64_t> & nodes, const std::vector<WireTensor> & ts) {
    EXPECT_FALSE(f.compute(nodes, ts)) << "the server kept a connection that sent a bad graph";
    Raw fresh(f.srv.port());
    EXPECT_TRUE(fresh.alive()) << "the server stopped serving after a bad graph";
}

// SET_ROWS of 3 F32 rows of 4 into a 6-row F16 table (id 1): rows 2, ids 3, node 4
struct SetRows {
    WireTensor table, rows, ids, node;
    explicit SetRows(const Fixture & f, uint32_t id_type = kI64) {
        table = tensor(f, 1, kF16, 2, 0, 4, 6);
        rows = tensor(f, 2, kF32, 4, 256, 4, 3);
        ids = tensor(f, 3, id_type, id_type == kI64 ? 8 : 4, 512, 3);
        node = table;
        node.id = 4;
        node.op = kOpSetRows;
        node.src[0] = 2;
        node.src[1] = 3;
        node.src[2] = 1;
        node.view_src = 1;
    }
    std::vector<WireTensor> all() const { return {table, rows, ids, node}; }
};

TEST(RpcPeerOps, SetRowsStoresEachRowAtItsId) {
    for (uint32_t id_type : {kI64, kI32}) {
        Fixture f;
        SetRows s(f, id_type);
        std::vector<lm_ggml_fp16_t> table(24);
        for (int i = 0; i < 24; i++) table[i] = lm_ggml_fp32_to_fp16(-1.0f - i);
        std::vector<float> rows(12);
        for (int i = 0; i < 12; i++) rows[i] = 0.25f * i;
        const int64_t ids[3] = {4, 0, 2};
        f.set(s.table, table);
        f.set(s.rows, rows);
        if (id_type == kI64) {
            f.set(s.ids, std::vector<int64_t>(ids, ids + 3));
        } else {
            f.set(s.ids, std::vector<int32_t>{4, 0, 2});
        }
        ASSERT_TRUE(f.compute({4}, s.all()));
        std::vector<double> want(24);
        for (int i = 0; i < 24; i++) want[i] = -1.0 - i;
        for (int r = 0; r < 3; r++)
            for (int k = 0; k < 4; k++) want[ids[r] * 4 + k] = 0.25 * (r * 4 + k);
        const auto got = f.get<lm_ggml_fp16_t>(s.table, 24);
        for (int i = 0; i < 24; i++) EXPECT_EQ(lm_ggml_fp16_to_fp32(got[i]), want[i]) << "element " << i;
    }
}

TEST(RpcPeerOps, SetRowsConvertsF16RowsIntoAnF32Table) {
    Fixture f;
    SetRows s(f, kI32);
    s.table = tensor(f, 1, kF32, 4, 0, 4, 6);
    s.rows = tensor(f, 2, kF16, 2, 256, 4, 3);
    s.node = s.table;
    s.node.id = 4;
    s.node.op = kOpSetRows;
    s.node.src[0] = 2;
    s.node.src[1] = 3;
    s.node.src[2] = 1;
    s.node.view_src = 1;
    f.set(s.table, std::vector<float>(24, -1.0f));
    std::vector<lm_ggml_fp16_t> rows(12);
    for (int i = 0; i < 12; i++) rows[i] = lm_ggml_fp32_to_fp16(0.5f * i - 2.0f);
    f.set(s.rows, rows);
    f.set(s.ids, std::vector<int32_t>{5, 3, 1});
    ASSERT_TRUE(f.compute({4}, s.all()));
    const int64_t ids[3] = {5, 3, 1};
    std::vector<double> want(24, -1.0);
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 4; k++) want[ids[r] * 4 + k] = 0.5 * (r * 4 + k) - 2.0;
    const auto got = f.get<float>(s.table, 24);
    for (int i = 0; i < 24; i++) EXPECT_EQ(got[i], want[i]) << "element " << i;
}

TEST(RpcPeerOps, SetRowsIdOutOfRangeIsRefused) {
    for (int64_t bad : std::vector<int64_t>{6, -1, (int64_t) 1 << 40}) {
        Fixture f;
        SetRows s(f);
        f.set(s.ids, std::vector<int64_t>{0, bad, 1});
        expect_refused(f, {4}, s.all());
    }
}

TEST(RpcPeerOps, SetRowsBadShapesAreRefused) {
    Fixture f0;
    SetRows good(f0);
    f0.set(good.ids, std::vector<int64_t>{0, 1, 2});
    ASSERT_TRUE(f0.compute({4}, good.all())) << "the well-formed graph below must pass";
    const std::vector<std::function<void(SetRows &)>> breaks = {
        [](SetRows & s) { s.ids.ne[0] = 2; }, // ids do not cover the rows
        [](SetRows & s) {
            s.rows.ne[0] = 2;
            s.rows.nb[1] = 8;
        }, // rows narrower than the table
        [](SetRows & s) {
            s.ids.type = kF32;
            s.ids.nb[0] = 4;
        },                                            // ids not integers
        [](SetRows & s) { s.rows.type = kI32; },      // rows neither F32 nor F16
        [](SetRows & s) { s.node.data += 8; },        // result not over the table
        [](SetRows & s) { s.node.view_src = 0; },     // result not a view of it
        [](SetRows & s) { s.node.ne[1] = 5; },        // result not the table's shape
        [](SetRows & s) { s.node.op_params[0] = 1; }, // op params it does not have
        [](SetRows & s) { s.node.src[2] = 0; },       // no table
        [](SetRows & s) { s.node.src[3] = 2; },       // a source too many
    };
    for (size_t i = 0; i < breaks.size(); i++) {
        SCOPED_TRACE(i);
        Fixture f;
        SetRows s(f);
        f.set(s.ids, std::vector<int64_t>{0, 1, 2});
        breaks[i](s);
        expect_refused(f, {4}, s.all());
    }
}

// GET_ROWS of 2 ids (I32, id 2) from a 3-row F32 table (id 1): node 3
std::vector<WireTensor> get_rows_graph(Fixture & f, std::vector<int32_t> ids) {
    WireTensor table = tensor(f, 1, kF32, 4, 0, 4, 3), idt = tensor(f, 2, kI32, 4, 256, 2),
               node = tensor(f, 3, kF32, 4, 512, 4, 2);
    node.op = kOpGetRows;
    node.src[0] = 1;
    node.src[1] = 2;
    std::vector<float> t(12);
    for (int i = 0; i < 12; i++) t[i] = (float) i;
    f.set(table, t);
    f.set(idt, ids);
    return {table, idt, node};
}

TEST(RpcPeerOps, GetRowsReadsEachId) {
    Fixture f;
    auto g = get_rows_graph(f, {2, 0});
    ASSERT_TRUE(f.compute({3}, g));
    const auto got = f.get<float>(g[2], 8);
    for (int k = 0; k < 4; k++) {
        EXPECT_EQ(got[k], 8 + k);
        EXPECT_EQ(got[4 + k], k);
    }
}

TEST(RpcPeerOps, GetRowsIdOutOfRangeIsRefused) {
    // lmggml's GET_ROWS kernel asserts on such an id: the guard must stop it
    for (int32_t bad : {3, -1, INT32_MAX}) {
        Fixture f;
        auto g = get_rows_graph(f, {1, bad});
        expect_refused(f, {3}, g);
    }
}

TEST(RpcPeerOps, GetRowsWritingOverItsIdsIsRefused) {
    // found by the fuzzer: the first row written over the ids changed the
    // second id after the guard had checked it, and the kernel aborted
    Fixture f;
    auto g = get_rows_graph(f, {1, 0});
    g[2].data = g[1].data;
    expect_refused(f, {3}, g);
}

double silu(double x) { return x / (1.0 + std::exp(-x)); }

TEST(RpcPeerOps, GluSplitAndFusedCompute) {
    Fixture f;
    // split SWIGLU: gate (id 1) and up (id 2), 8 x 2 each; node 3
    WireTensor gate = tensor(f, 1, kF32, 4, 0, 8, 2), up = tensor(f, 2, kF32, 4, 256, 8, 2),
               node = tensor(f, 3, kF32, 4, 512, 8, 2);
    node.op = kOpGlu;
    node.op_params[0] = kSwiglu;
    node.src[0] = 1;
    node.src[1] = 2;
    std::vector<float> gv(16), uv(16);
    for (int i = 0; i < 16; i++) {
        gv[i] = -4.0f + 0.5f * i;
        uv[i] = 1.0f + 0.125f * i;
    }
    f.set(gate, gv);
    f.set(up, uv);
    ASSERT_TRUE(f.compute({3}, {gate, up, node}));
    auto got = f.get<float>(node, 16);
    for (int i = 0; i < 16; i++) EXPECT_NEAR(got[i], silu(gv[i]) * uv[i], 1e-5 * (1 + std::fabs(got[i]))) << i;

    // fused REGLU, swapped: each 16-wide row of id 4 is [up | gate]; node 5
    WireTensor both = tensor(f, 4, kF32, 4, 1024, 16, 2), fused = tensor(f, 5, kF32, 4, 1536, 8, 2);
    fused.op = kOpGlu;
    fused.op_params[0] = kReglu;
    fused.op_params[1] = 1;
    fused.src[0] = 4;
    std::vector<float> bv(32);
    for (int i = 0; i < 32; i++) bv[i] = -3.0f + 0.25f * i;
    f.set(both, bv);
    ASSERT_TRUE(f.compute({5}, {both, fused}));
    got = f.get<float>(fused, 16);
    for (int r = 0; r < 2; r++)
        for (int k = 0; k < 8; k++) {
            const double u = bv[r * 16 + k], g = bv[r * 16 + 8 + k];
            EXPECT_EQ(got[r * 8 + k], (g > 0 ? g : 0.0) * u) << r << "," << k;
        }
}

TEST(RpcPeerOps, GluBadNodesAreRefused) {
    const std::vector<std::function<void(WireTensor &, WireTensor &, WireTensor &)>> breaks = {
        [](WireTensor &, WireTensor & u, WireTensor &) { u.ne[1] = 1; }, // up of another shape
        [](WireTensor &, WireTensor & u, WireTensor &) {
            u.type = kF16;
            u.nb[0] = 2;
            u.nb[1] = 16;
        },                                                                               // another type
        [](WireTensor &, WireTensor &, WireTensor & n) { n.op_params[0] = kSwigluOai; }, // alpha/limit variant
        [](WireTensor &, WireTensor &, WireTensor & n) { n.op_params[0] = 99; },         // no such GLU
        [](WireTensor &, WireTensor &, WireTensor & n) { n.op_params[1] = 2; },          // swapped is a bool
        [](WireTensor &, WireTensor &, WireTensor & n) { n.op_params[2] = 1; },          // params it does not have
        [](WireTensor &, WireTensor &, WireTensor & n) {
            n.ne[0] = 4;
            n.nb[1] = 16;
        },                                                                  // halved though split
        [](WireTensor &, WireTensor &, WireTensor & n) { n.view_src = 1; }, // result as a view
        [](WireTensor &, WireTensor &, WireTensor & n) { n.nb[1] = 64; },   // result not packed
        [](WireTensor & g, WireTensor &, WireTensor &) {
            g.nb[0] = 8;
            g.ne[0] = 4;
        }, // gate rows strided
    };
    for (size_t i = 0; i < breaks.size(); i++) {
        SCOPED_TRACE(i);
        Fixture f;
        WireTensor gate = tensor(f, 1, kF32, 4, 0, 8, 2), up = tensor(f, 2, kF32, 4, 256, 8, 2),
                   node = tensor(f, 3, kF32, 4, 512, 8, 2);
        node.op = kOpGlu;
        node.op_params[0] = kSwiglu;
        node.src[0] = 1;
        node.src[1] = 2;
        breaks[i](gate, up, node);
        expect_refused(f, {3}, {gate, up, node});
    }
    // fused with an odd row
    Fixture f;
    WireTensor both = tensor(f, 1, kF32, 4, 0, 7, 2), node = tensor(f, 2, kF32, 4, 512, 3, 2);
    node.op = kOpGlu;
    node.op_params[0] = kSwiglu;
    node.src[0] = 1;
    expect_refused(f, {2}, {both, node});
}

// FLASH_ATTN_EXT as newer ggml sends it: the F16 mask has one row per query
// (older ggml padded it to 64 rows). q (8 x 2 queries, id 1), F16 k and v
// (8 x 4 keys, ids 2, 3), mask (4 x n_mask, id 4), node 5 (8 x 1 head x 2).
std::vector<WireTensor> flash_graph(Fixture & f, uint32_t n_mask) {
    WireTensor q = tensor(f, 1, kF32, 4, 0, 8, 2), k = tensor(f, 2, kF16, 2, 128, 8, 4),
               v = tensor(f, 3, kF16, 2, 256, 8, 4), mask = tensor(f, 4, kF16, 2, 384, 4, n_mask),
               node = tensor(f, 5, kF32, 4, 512, 8, 1);
    // q as (D, n_q, heads): the 2 queries are dim 1
    node.ne[1] = 1;
    node.ne[2] = 2;
    node.nb[2] = 32;
    node.nb[3] = 64;
    node.op = kOpFlashAttnExt;
    const float scale = 0.5f;
    std::memcpy(&node.op_params[0], &scale, 4);
    for (int i = 0; i < 5; i++) node.src[i] = i < 4 ? i + 1 : 0;
    return {q, k, v, mask, node};
}

TEST(RpcPeerOps, FlashAttnTakesAnUnpaddedF16Mask) {
    Fixture f;
    auto g = flash_graph(f, 2);
    std::vector<float> q(16);
    std::vector<lm_ggml_fp16_t> k(32), v(32), m(8);
    for (int i = 0; i < 16; i++) q[i] = 0.25f * (i % 7) - 0.5f;
    for (int i = 0; i < 32; i++) {
        k[i] = lm_ggml_fp32_to_fp16(0.125f * (i % 5) - 0.25f);
        v[i] = lm_ggml_fp32_to_fp16(0.5f * (i % 3) + 0.25f * (i / 8));
    }
    const float mv[8] = {0, 0, -INFINITY, -INFINITY, 0, -1, 0, -INFINITY}; // query 0 sees keys 0-1, query 1 keys 0-2
    for (int i = 0; i < 8; i++) m[i] = lm_ggml_fp32_to_fp16(mv[i]);
    f.set(g[0], q);
    f.set(g[1], k);
    f.set(g[2], v);
    f.set(g[3], m);
    ASSERT_TRUE(f.compute({5}, g));
    const auto got = f.get<float>(g[4], 16);
    for (int iq = 0; iq < 2; iq++) {
        double w[4], sum = 0;
        for (int j = 0; j < 4; j++) {
            double dot = 0;
            for (int d = 0; d < 8; d++) dot += (double) q[iq * 8 + d] * lm_ggml_fp16_to_fp32(k[j * 8 + d]);
            w[j] = std::exp(0.5 * dot + mv[iq * 4 + j]);
            sum += w[j];
        }
        for (int d = 0; d < 8; d++) {
            double o = 0;
            for (int j = 0; j < 4; j++) o += w[j] / sum * lm_ggml_fp16_to_fp32(v[j * 8 + d]);
            EXPECT_NEAR(got[iq * 8 + d], o, 2e-3) << iq << "," << d; // F16 rounding inside the kernel
        }
    }
}

TEST(RpcPeerOps, FlashAttnMaskShorterThanTheQueriesIsRefused) {
    Fixture f;
    auto g = flash_graph(f, 1);
    expect_refused(f, {5}, g);
}

} // namespace
