// The fault-injection scenario (see scenario.h).
#include "scenario.h"

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "gguf.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace rel {

namespace {

constexpr float kEps = 1e-5f;
constexpr int32_t kTokens[kTok] = {5, 0, 7};
constexpr int kQ8Block = 32;
constexpr float kQ8Scale = 1.0f / 1024.0f; // 2^-10: exact in fp16; keeps x + y within +-3 (softmax stays smooth)

// Deterministic weight values; every one exact in its storage type.
float embd_value(int row, int col) { return (float) (((row * 7 + col * 3) % 17) - 8) / 8.0f; }
float norm_value(int col) { return 1.0f + (float) ((col % 5) - 2) / 16.0f; }
float up_value(int row, int col) { return (float) (((row * 5 + col * 11) % 65) - 32) / 64.0f; }
int down_quant(int row, int col) { return ((row * 13 + col * 29) % 255) - 127; } // in [-127, 127]

// fp16 bits of a float that fp16 represents exactly (normal range or 0).
uint16_t half_bits_exact(float v) {
    if (v == 0.0f) return 0;
    const uint16_t sign = v < 0 ? 0x8000 : 0;
    int e = 0;
    const float m = std::frexp(std::fabs(v), &e); // v = m * 2^e, m in [0.5, 1)
    const uint32_t mant = (uint32_t) std::lround((m * 2.0f - 1.0f) * 1024.0f);
    return (uint16_t) (sign | (uint16_t) ((e - 1 + 15) << 10) | mant);
}

struct Q8Block {
    uint16_t d;
    int8_t qs[kQ8Block];
};
static_assert(sizeof(Q8Block) == 34, "Q8_0 block layout");

// Large enough for the biggest tensor (ffn_up: 32 * 64 * 2 bytes).
alignas(64) unsigned char g_read_buf[8192];

} // namespace

const char * step_name(int step) {
    static const char * names[kStepCount] = {"ok",           "gguf_init", "backend_init", "alloc_weights",
                                             "read_weights", "graph_ctx", "graph_build",  "planner_new",
                                             "alloc_graph",  "compute"};
    return step >= 0 && step < kStepCount ? names[step] : "?";
}

bool write_model(const char * path) {
    lm_ggml_init_params ip = {4 * lm_ggml_tensor_overhead() + 16384, nullptr, false};
    lm_ggml_context * ctx = lm_ggml_init(ip);
    if (!ctx) return false;
    lm_ggml_tensor * embd = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, kEmbd, kVocab);
    lm_ggml_tensor * norm = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, kEmbd);
    lm_ggml_tensor * up = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F16, kEmbd, kFf);
    lm_ggml_tensor * down = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_Q8_0, kFf, kEmbd);
    if (!embd || !norm || !up || !down) {
        lm_ggml_free(ctx);
        return false;
    }
    lm_ggml_set_name(embd, "tok_embd");
    lm_ggml_set_name(norm, "norm");
    lm_ggml_set_name(up, "ffn_up");
    lm_ggml_set_name(down, "ffn_down");
    for (int r = 0; r < kVocab; ++r)
        for (int c = 0; c < kEmbd; ++c) ((float *) embd->data)[r * kEmbd + c] = embd_value(r, c);
    for (int c = 0; c < kEmbd; ++c) ((float *) norm->data)[c] = norm_value(c);
    for (int r = 0; r < kFf; ++r)
        for (int c = 0; c < kEmbd; ++c) ((uint16_t *) up->data)[r * kEmbd + c] = half_bits_exact(up_value(r, c));
    Q8Block * blocks = (Q8Block *) down->data;
    for (int r = 0; r < kEmbd; ++r) {
        for (int b = 0; b < kFf / kQ8Block; ++b) {
            Q8Block & blk = blocks[r * (kFf / kQ8Block) + b];
            blk.d = half_bits_exact(kQ8Scale);
            for (int i = 0; i < kQ8Block; ++i) blk.qs[i] = (int8_t) down_quant(r, b * kQ8Block + i);
        }
    }
    lm_gguf_context * g = lm_gguf_init_empty();
    bool ok = g != nullptr;
    if (ok) {
        lm_gguf_set_val_str(g, "general.architecture", "reliability-test");
        lm_gguf_add_tensor(g, embd);
        lm_gguf_add_tensor(g, norm);
        lm_gguf_add_tensor(g, up);
        lm_gguf_add_tensor(g, down);
        ok = lm_gguf_write_to_file(g, path, false);
        lm_gguf_free(g);
    }
    lm_ggml_free(ctx);
    return ok;
}

namespace {

// Everything the scenario creates, freed in reverse order whatever step failed.
struct Owned {
    lm_gguf_context * gguf = nullptr;
    lm_ggml_context * wctx = nullptr; // weight headers (no_alloc)
    lm_ggml_backend_t backend = nullptr;
    lm_ggml_backend_buffer_t wbuf = nullptr;
    lm_ggml_context * gctx = nullptr; // graph headers (no_alloc)
    lm_ggml_backend_sched_t sched = nullptr;
    lm_ggml_gallocr_t galloc = nullptr;
    ~Owned() {
        if (sched) lm_ggml_backend_sched_free(sched);
        if (galloc) lm_ggml_gallocr_free(galloc);
        if (gctx) lm_ggml_free(gctx);
        if (wbuf) lm_ggml_backend_buffer_free(wbuf);
        if (backend) lm_ggml_backend_free(backend);
        if (wctx) lm_ggml_free(wctx);
        if (gguf) lm_gguf_free(gguf);
    }
};

// Copies every tensor's bytes from the file into its backend tensor.
bool upload_weights(const char * path, Owned & o) {
    FILE * f = std::fopen(path, "rb");
    if (!f) return false;
    bool ok = true;
    const size_t data_offset = lm_gguf_get_data_offset(o.gguf);
    for (int64_t i = 0; ok && i < lm_gguf_get_n_tensors(o.gguf); ++i) {
        const char * name = lm_gguf_get_tensor_name(o.gguf, i);
        lm_ggml_tensor * t = lm_ggml_get_tensor(o.wctx, name);
        const size_t size = lm_gguf_get_tensor_size(o.gguf, i);
        ok = t != nullptr && size == lm_ggml_nbytes(t) && size <= sizeof(g_read_buf) &&
             std::fseek(f, (long) (data_offset + lm_gguf_get_tensor_offset(o.gguf, i)), SEEK_SET) == 0 &&
             std::fread(g_read_buf, 1, size, f) == size;
        if (ok) lm_ggml_backend_tensor_set(t, g_read_buf, 0, size);
    }
    std::fclose(f);
    return ok;
}

} // namespace

int run_scenario(const char * path, Planner planner, int n_threads, float * out) {
    Owned o;
    lm_gguf_init_params gp = {true, &o.wctx};
    o.gguf = lm_gguf_init_from_file(path, gp);
    if (!o.gguf || !o.wctx) return kStepGgufInit;

    o.backend = lm_ggml_backend_cpu_init();
    if (!o.backend) return kStepBackendInit;
    lm_ggml_backend_cpu_set_n_threads(o.backend, n_threads);

    o.wbuf = lm_ggml_backend_alloc_ctx_tensors(o.wctx, o.backend);
    if (!o.wbuf) return kStepAllocWeights;
    lm_ggml_backend_buffer_set_usage(o.wbuf, LM_GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    if (!upload_weights(path, o)) return kStepReadWeights;

    lm_ggml_init_params ip = {16 * lm_ggml_tensor_overhead() + lm_ggml_graph_overhead(), nullptr, true};
    o.gctx = lm_ggml_init(ip);
    if (!o.gctx) return kStepGraphCtx;

    lm_ggml_context * c = o.gctx;
    lm_ggml_tensor * tokens = lm_ggml_new_tensor_1d(c, LM_GGML_TYPE_I32, kTok);
    if (!tokens) return kStepGraphBuild;
    lm_ggml_set_input(tokens);
    lm_ggml_tensor * x = lm_ggml_get_rows(c, lm_ggml_get_tensor(o.wctx, "tok_embd"), tokens);
    lm_ggml_tensor * n = lm_ggml_mul(c, lm_ggml_rms_norm(c, x, kEps), lm_ggml_get_tensor(o.wctx, "norm"));
    lm_ggml_tensor * h = lm_ggml_silu(c, lm_ggml_mul_mat(c, lm_ggml_get_tensor(o.wctx, "ffn_up"), n));
    lm_ggml_tensor * y = lm_ggml_mul_mat(c, lm_ggml_get_tensor(o.wctx, "ffn_down"), h);
    lm_ggml_tensor * res = lm_ggml_soft_max(c, lm_ggml_add(c, x, y));
    lm_ggml_cgraph * graph = lm_ggml_new_graph(c);
    if (!res || !graph) return kStepGraphBuild;
    lm_ggml_set_output(res);
    lm_ggml_build_forward_expand(graph, res);

    if (planner == Planner::Sched) {
        o.sched = lm_ggml_backend_sched_new(&o.backend, nullptr, 1, 64, false);
        if (!o.sched) return kStepPlanner;
        if (!lm_ggml_backend_sched_alloc_graph(o.sched, graph)) return kStepAllocGraph;
    } else {
        o.galloc = lm_ggml_gallocr_new(lm_ggml_backend_get_default_buffer_type(o.backend));
        if (!o.galloc) return kStepPlanner;
        if (!lm_ggml_gallocr_alloc_graph(o.galloc, graph)) return kStepAllocGraph;
    }
    lm_ggml_backend_tensor_set(tokens, kTokens, 0, sizeof(kTokens));
    const lm_ggml_status st = planner == Planner::Sched ? lm_ggml_backend_sched_graph_compute(o.sched, graph)
                                                        : lm_ggml_backend_graph_compute(o.backend, graph);
    if (st != LM_GGML_STATUS_SUCCESS) return kStepCompute;
    lm_ggml_backend_tensor_get(res, out, 0, sizeof(float) * kOut);
    return kStepOk;
}

void reference_output(double * out) {
    for (int t = 0; t < kTok; ++t) {
        const int tok = kTokens[t];
        double x[kEmbd], n[kEmbd], h[kFf], r[kEmbd];
        double ss = 0;
        for (int c = 0; c < kEmbd; ++c) {
            x[c] = embd_value(tok, c);
            ss += x[c] * x[c];
        }
        const double inv = 1.0 / std::sqrt(ss / kEmbd + (double) kEps);
        for (int c = 0; c < kEmbd; ++c) n[c] = x[c] * inv * norm_value(c);
        for (int j = 0; j < kFf; ++j) {
            double acc = 0;
            for (int c = 0; c < kEmbd; ++c) acc += (double) up_value(j, c) * n[c];
            h[j] = acc / (1.0 + std::exp(-acc));
        }
        double mx = -1e300;
        for (int i = 0; i < kEmbd; ++i) {
            double acc = 0;
            for (int j = 0; j < kFf; ++j) acc += down_quant(i, j) * (double) kQ8Scale * h[j];
            r[i] = x[i] + acc;
            mx = std::fmax(mx, r[i]);
        }
        double sum = 0;
        for (int i = 0; i < kEmbd; ++i) sum += std::exp(r[i] - mx);
        for (int i = 0; i < kEmbd; ++i) out[t * kEmbd + i] = std::exp(r[i] - mx) / sum;
    }
}

double nmse(const float * actual, const double * expected, int n) {
    double num = 0, den = 0;
    for (int i = 0; i < n; ++i) {
        if (!std::isfinite(actual[i])) return INFINITY;
        const double d = actual[i] - expected[i];
        num += d * d;
        den += expected[i] * expected[i];
    }
    return den > 0 ? num / den : num;
}

} // namespace rel
