/* A C program that uses an installed lmggml: builds y = a*b + a on the CPU
 * backend, checks the result, and lists the devices the installed plugins
 * add (the plugin folder is found from the library's own location).
 * Exit code 0 when every check holds. */
#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char ** argv) {
    const char * want_device = argc > 1 ? argv[1] : NULL; /* a device the plugins must add */
    struct lm_ggml_init_params ip = {8 * lm_ggml_tensor_overhead() + lm_ggml_graph_overhead(), NULL, true};
    struct lm_ggml_context * ctx = lm_ggml_init(ip);
    if (!ctx) {
        fprintf(stderr, "consumer: lm_ggml_init failed\n");
        return 1;
    }
    struct lm_ggml_tensor * a = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 4);
    struct lm_ggml_tensor * b = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 4);
    struct lm_ggml_tensor * y = lm_ggml_add(ctx, lm_ggml_mul(ctx, a, b), a);
    struct lm_ggml_cgraph * gf = lm_ggml_new_graph(ctx);
    lm_ggml_build_forward_expand(gf, y);

    lm_ggml_backend_t cpu = lm_ggml_backend_cpu_init();
    lm_ggml_backend_buffer_t buf = lm_ggml_backend_alloc_ctx_tensors(ctx, cpu);
    if (!cpu || !buf) {
        fprintf(stderr, "consumer: backend setup failed\n");
        return 1;
    }
    const float av[4] = {1, 2, 3, 4}, bv[4] = {0.5f, -1, 2, 10};
    lm_ggml_backend_tensor_set(a, av, 0, sizeof av);
    lm_ggml_backend_tensor_set(b, bv, 0, sizeof bv);
    lm_ggml_gallocr_t galloc = lm_ggml_gallocr_new(lm_ggml_backend_get_default_buffer_type(cpu));
    if (!lm_ggml_gallocr_alloc_graph(galloc, gf) || lm_ggml_backend_graph_compute(cpu, gf) != LM_GGML_STATUS_SUCCESS) {
        fprintf(stderr, "consumer: compute failed\n");
        return 1;
    }
    float yv[4];
    lm_ggml_backend_tensor_get(y, yv, 0, sizeof yv);
    for (int i = 0; i < 4; i++) {
        if (fabsf(yv[i] - (av[i] * bv[i] + av[i])) > 1e-6f) {
            fprintf(stderr, "consumer: y[%d] = %g, expected %g\n", i, yv[i], av[i] * bv[i] + av[i]);
            return 1;
        }
    }
    lm_ggml_gallocr_free(galloc);
    lm_ggml_backend_buffer_free(buf);
    lm_ggml_backend_free(cpu);
    lm_ggml_free(ctx);

    lm_ggml_backend_load_all();
    int found = want_device == NULL;
    for (size_t i = 0; i < lm_ggml_backend_dev_count(); i++) {
        const char * name = lm_ggml_backend_dev_name(lm_ggml_backend_dev_get(i));
        printf("device %zu: %s\n", i, name);
        if (want_device && strcmp(name, want_device) == 0) found = 1;
    }
    if (!found) {
        fprintf(stderr, "consumer: device %s not found\n", want_device);
        return 1;
    }
    printf("consumer (C): ok\n");
    return 0;
}
