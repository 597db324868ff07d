// A C++ program that uses an installed lmggml: ggml-cpp.h's owning pointers,
// a matrix product on the CPU backend checked against a plain loop, and a
// GGUF file written and read back. Exit code 0 when every check holds.
#include "ggml-cpp.h"
#include "ggml-cpu.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char ** argv) {
    const std::string gguf_path = argc > 1 ? argv[1] : "consumer.gguf";
    lm_ggml_init_params ip = {16 * lm_ggml_tensor_overhead() + lm_ggml_graph_overhead(), nullptr, true};
    lm_ggml_context_ptr ctx(lm_ggml_init(ip));
    const int K = 5, M = 3, N = 2;
    lm_ggml_tensor * w = lm_ggml_new_tensor_2d(ctx.get(), LM_GGML_TYPE_F32, K, M);
    lm_ggml_tensor * x = lm_ggml_new_tensor_2d(ctx.get(), LM_GGML_TYPE_F32, K, N);
    lm_ggml_set_name(w, "w");
    lm_ggml_tensor * y = lm_ggml_mul_mat(ctx.get(), w, x);
    lm_ggml_cgraph * gf = lm_ggml_new_graph(ctx.get());
    lm_ggml_build_forward_expand(gf, y);

    lm_ggml_backend_ptr cpu(lm_ggml_backend_cpu_init());
    lm_ggml_backend_buffer_ptr buf(lm_ggml_backend_alloc_ctx_tensors(ctx.get(), cpu.get()));
    std::vector<float> wv(K * M), xv(K * N), yv(M * N);
    for (int i = 0; i < K * M; i++) wv[i] = 0.25f * (i % 7) - 0.5f;
    for (int i = 0; i < K * N; i++) xv[i] = 0.1f * i;
    lm_ggml_backend_tensor_set(w, wv.data(), 0, wv.size() * sizeof(float));
    lm_ggml_backend_tensor_set(x, xv.data(), 0, xv.size() * sizeof(float));
    lm_ggml_gallocr_ptr galloc(lm_ggml_gallocr_new(lm_ggml_backend_get_default_buffer_type(cpu.get())));
    if (!lm_ggml_gallocr_alloc_graph(galloc.get(), gf) ||
        lm_ggml_backend_graph_compute(cpu.get(), gf) != LM_GGML_STATUS_SUCCESS) {
        std::fprintf(stderr, "consumer: compute failed\n");
        return 1;
    }
    lm_ggml_backend_tensor_get(y, yv.data(), 0, yv.size() * sizeof(float));
    for (int n = 0; n < N; n++) {
        for (int m = 0; m < M; m++) {
            double ref = 0;
            for (int k = 0; k < K; k++) ref += double(wv[m * K + k]) * xv[n * K + k];
            if (std::fabs(yv[n * M + m] - ref) > 1e-5) {
                std::fprintf(stderr, "consumer: y[%d,%d] = %g, expected %g\n", m, n, yv[n * M + m], ref);
                return 1;
            }
        }
    }

    lm_gguf_context_ptr out(lm_gguf_init_empty());
    lm_gguf_set_val_str(out.get(), "general.name", "consumer");
    if (!lm_gguf_write_to_file(out.get(), gguf_path.c_str(), false)) {
        std::fprintf(stderr, "consumer: cannot write %s\n", gguf_path.c_str());
        return 1;
    }
    lm_gguf_init_params gp = {true, nullptr};
    lm_gguf_context_ptr in(lm_gguf_init_from_file(gguf_path.c_str(), gp));
    const int64_t key = in ? lm_gguf_find_key(in.get(), "general.name") : -1;
    if (key < 0 || std::string(lm_gguf_get_val_str(in.get(), key)) != "consumer") {
        std::fprintf(stderr, "consumer: GGUF round trip failed\n");
        return 1;
    }
    std::printf("consumer (C++): ok\n");
    return 0;
}
