// ggml-opt's optimization context: builds the forward graph with its loss,
// the backward graph (gradients) and the optimizer graph (AdamW steps), and
// places the static tensors those graphs need.
//
// Placement (where ggml 1.4.1 puts every static tensor on the scheduler's
// first backend): a parameter's gradient accumulator and AdamW moments go to
// the parameter's own buffer type, so the in-place AdamW step reads and
// writes them where it runs; labels, loss, predictions and match count go to
// the first backend (in priority order) that runs every op of the loss, so a
// device lacking, say, CROSS_ENTROPY_LOSS leaves the loss to the CPU instead
// of failing.

#include "opt-internal.h"

#include "ggml-alloc.h"
#include "ggml-cpu.h"

#include <map>
#include <new>

namespace {

constexpr const char * kInit = "lm_ggml_opt_init";

lm_ggml_backend_buffer_type_t buft_of(const lm_ggml_tensor * t) {
    lm_ggml_backend_buffer_t b = t->buffer ? t->buffer : (t->view_src ? t->view_src->buffer : nullptr);
    return b ? lm_ggml_backend_buffer_get_type(b) : nullptr;
}

bool has_memory(const lm_ggml_tensor * t) {
    return t->buffer || t->data || (t->view_src && (t->view_src->buffer || t->view_src->data));
}

// Allocates each static tensor in one buffer per buffer type.
bool place_static(lm_ggml_opt_context * o, const std::map<lm_ggml_tensor *, lm_ggml_backend_buffer_type_t> & where,
                  lm_ggml_backend_buffer_type_t fallback) {
    std::map<lm_ggml_backend_buffer_type_t, std::vector<lm_ggml_tensor *>> groups;
    for (lm_ggml_tensor * t = lm_ggml_get_first_tensor(o->ctx_static); t;
         t = lm_ggml_get_next_tensor(o->ctx_static, t)) {
        if (t->data || t->view_src) continue;
        auto it = where.find(t);
        groups[it == where.end() ? fallback : it->second].push_back(t);
    }
    for (auto & [buft, ts] : groups) {
        const size_t align = lm_ggml_backend_buft_get_alignment(buft);
        size_t size = align;
        for (lm_ggml_tensor * t : ts) size += LM_GGML_PAD(lm_ggml_backend_buft_get_alloc_size(buft, t), align);
        lm_ggml_backend_buffer_t buf = lm_ggml_backend_buft_alloc_buffer(buft, size);
        if (!buf) {
            LM_GGML_LOG_ERROR("%s: out of memory for %zu bytes of %s\n", kInit, size, lm_ggml_backend_buft_name(buft));
            return false;
        }
        o->bufs.push_back(buf);
        lm_ggml_tallocr ta = lm_ggml_tallocr_new(buf);
        for (lm_ggml_tensor * t : ts) {
            lm_ggml_tallocr_alloc(&ta, t);
            if (!t->data) return false; // logged by the allocator
        }
    }
    if (!o->adamw_params) return true; // no optimizer: ctx_host is empty
    lm_ggml_backend_buffer_t host =
        lm_ggml_backend_alloc_ctx_tensors_from_buft(o->ctx_host, lm_ggml_backend_cpu_buffer_type());
    if (!host) return false;
    o->bufs.push_back(host);
    return true;
}

// The first backend of the scheduler that runs every op of `ops`.
lm_ggml_backend_buffer_type_t loss_buft(lm_ggml_backend_sched_t sched, const std::vector<lm_ggml_tensor *> & ops) {
    const int n = lm_ggml_backend_sched_get_n_backends(sched);
    for (int b = 0; b < n; b++) {
        lm_ggml_backend_t be = lm_ggml_backend_sched_get_backend(sched, b);
        bool all = true;
        for (const lm_ggml_tensor * t : ops) all = all && lm_ggml_backend_supports_op(be, t);
        if (all) return lm_ggml_backend_get_default_buffer_type(be);
    }
    return nullptr;
}

// Builds loss (and labels, pred, ncorrect) on top of outputs in ctx_static.
bool build_loss(lm_ggml_opt_context * o, lm_ggml_opt_loss_type type, std::vector<lm_ggml_tensor *> & ops) {
    lm_ggml_context * cs = o->ctx_static;
    lm_ggml_tensor * out = o->outputs;
    auto named = [&](lm_ggml_tensor * t, const char * name) {
        if (t) {
            lm_ggml_set_name(t, name);
            ops.push_back(t);
        }
        return t;
    };
    // a per-datapoint loss is divided by opt_period so that the accumulated
    // gradient is that of the mean over the logical batch
    const float per_step = 1.0f / (float) o->opt_period;
    lm_ggml_tensor * loss = nullptr;
    switch (type) {
        case LM_GGML_OPT_LOSS_TYPE_MEAN:
            loss = named(lm_ggml_sum(cs, out), "loss_sum");
            loss = named(lm_ggml_scale(cs, loss, per_step / (float) lm_ggml_nelements(out)), "loss_mean");
            o->loss_per_datapoint = true;
            break;
        case LM_GGML_OPT_LOSS_TYPE_SUM:
            loss = named(lm_ggml_sum(cs, out), "loss_sum");
            o->loss_per_datapoint = false;
            break;
        case LM_GGML_OPT_LOSS_TYPE_CROSS_ENTROPY:
            o->labels = lm_ggml_dup_tensor(cs, out);
            if (!o->labels) return false;
            lm_ggml_set_input(o->labels);
            lm_ggml_set_name(o->labels, "labels");
            loss = named(lm_ggml_cross_entropy_loss(cs, out, o->labels), "loss_cross_entropy");
            if (o->opt_period > 1) loss = named(lm_ggml_scale(cs, loss, per_step), "loss_cross_entropy_scaled");
            o->loss_per_datapoint = true;
            break;
        case LM_GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR:
            o->labels = lm_ggml_dup_tensor(cs, out);
            if (!o->labels) return false;
            lm_ggml_set_input(o->labels);
            lm_ggml_set_name(o->labels, "labels");
            loss = named(lm_ggml_sub(cs, out, o->labels), "loss_error");
            loss = named(lm_ggml_sqr(cs, loss), "loss_squared_error");
            loss = named(lm_ggml_sum(cs, loss), "loss_sum_squared_error");
            loss = named(lm_ggml_scale(cs, loss, per_step / (float) lm_ggml_nelements(out)), "loss_mean_squared_error");
            o->loss_per_datapoint = true;
            break;
        default: LM_GGML_LOG_ERROR("%s: unknown loss type %d\n", kInit, (int) type); return false;
    }
    if (!loss) return false;
    o->loss = loss;
    lm_ggml_set_output(loss);
    lm_ggml_set_loss(loss);
    lm_ggml_build_forward_expand(o->gf, loss);

    o->pred = named(lm_ggml_argmax(cs, out), "pred");
    if (!o->pred) return false;
    lm_ggml_set_output(o->pred);
    lm_ggml_build_forward_expand(o->gf, o->pred);
    if (o->labels) {
        lm_ggml_tensor * truth = named(lm_ggml_argmax(cs, o->labels), "labels_argmax");
        o->ncorrect = named(lm_ggml_count_equal(cs, o->pred, truth), "ncorrect");
        if (!o->ncorrect) return false;
        lm_ggml_set_output(o->ncorrect);
        lm_ggml_build_forward_expand(o->gf, o->ncorrect);
    }
    return true;
}

// The step updates the parameter in place, so it must run on a backend that
// can use the parameter's memory.
bool step_runs_in_place(lm_ggml_backend_sched_t sched, const lm_ggml_tensor * p, const lm_ggml_tensor * step) {
    lm_ggml_backend_buffer_type_t buft = buft_of(p);
    const int n = lm_ggml_backend_sched_get_n_backends(sched);
    for (int b = 0; b < n; b++) {
        lm_ggml_backend_t be = lm_ggml_backend_sched_get_backend(sched, b);
        if ((!buft || lm_ggml_backend_supports_buft(be, buft)) && lm_ggml_backend_supports_op(be, step)) return true;
    }
    return false;
}

lm_ggml_context * new_meta_ctx(size_t n_tensors) {
    lm_ggml_init_params ip = {n_tensors * lm_ggml_tensor_overhead(), nullptr, true};
    return lm_ggml_init(ip);
}

} // namespace

extern "C" struct lm_ggml_opt_optimizer_params lm_ggml_opt_get_default_optimizer_params(void * userdata) {
    (void) userdata;
    lm_ggml_opt_optimizer_params p;
    p.adamw.alpha = 0.001f;
    p.adamw.beta1 = 0.9f;
    p.adamw.beta2 = 0.999f;
    p.adamw.eps = 1e-8f;
    p.adamw.wd = 0.0f;
    return p;
}

extern "C" struct lm_ggml_opt_params lm_ggml_opt_default_params(lm_ggml_backend_sched_t backend_sched,
                                                                struct lm_ggml_context * ctx_compute,
                                                                struct lm_ggml_tensor * inputs,
                                                                struct lm_ggml_tensor * outputs,
                                                                enum lm_ggml_opt_loss_type loss_type) {
    lm_ggml_opt_params p;
    p.backend_sched = backend_sched;
    p.ctx_compute = ctx_compute;
    p.inputs = inputs;
    p.outputs = outputs;
    p.loss_type = loss_type;
    p.build_type = LM_GGML_OPT_BUILD_TYPE_OPT;
    p.opt_period = 1;
    p.get_opt_pars = lm_ggml_opt_get_default_optimizer_params;
    p.get_opt_pars_ud = nullptr;
    return p;
}

extern "C" lm_ggml_opt_context_t lm_ggml_opt_init(struct lm_ggml_opt_params params) {
    if (!params.backend_sched || !params.ctx_compute || !params.inputs || !params.outputs) {
        lm_ggml_null_arg(kInit);
        return nullptr;
    }
    if (!has_memory(params.inputs)) {
        LM_GGML_LOG_ERROR("%s: the inputs must be allocated statically\n", kInit);
        return nullptr;
    }
    if (params.opt_period < 1) {
        LM_GGML_LOG_ERROR("%s: opt_period must be at least 1 (is %d)\n", kInit, params.opt_period);
        return nullptr;
    }
    if (params.build_type < LM_GGML_OPT_BUILD_TYPE_FORWARD || params.build_type > LM_GGML_OPT_BUILD_TYPE_OPT) {
        LM_GGML_LOG_ERROR("%s: unknown build type %d\n", kInit, (int) params.build_type);
        return nullptr;
    }
    if (params.build_type == LM_GGML_OPT_BUILD_TYPE_OPT && !params.get_opt_pars) {
        LM_GGML_LOG_ERROR("%s: get_opt_pars is NULL\n", kInit);
        return nullptr;
    }
    auto * o = new (std::nothrow) lm_ggml_opt_context;
    if (!o) {
        LM_GGML_LOG_ERROR("%s: out of memory\n", kInit);
        return nullptr;
    }
    o->backend_sched = params.backend_sched;
    o->ctx_compute = params.ctx_compute;
    o->inputs = params.inputs;
    o->outputs = params.outputs;
    o->opt_period = params.opt_period;
    o->get_opt_pars = params.get_opt_pars;
    o->get_opt_pars_ud = params.get_opt_pars_ud;
    const bool accumulate = params.build_type == LM_GGML_OPT_BUILD_TYPE_GRAD ||
                            (params.build_type == LM_GGML_OPT_BUILD_TYPE_OPT && o->opt_period > 1);
    auto fail = [o]() -> lm_ggml_opt_context_t {
        lm_ggml_opt_free(o);
        return nullptr;
    };

    lm_ggml_set_input(o->inputs);
    lm_ggml_set_output(o->outputs);
    o->gf = lm_ggml_new_graph_custom(o->ctx_compute, LM_GGML_DEFAULT_GRAPH_SIZE, true);
    if (!o->gf) return fail();
    lm_ggml_build_forward_expand(o->gf, o->outputs);

    std::vector<lm_ggml_tensor *> params_list;
    for (int i = 0; i < o->gf->n_nodes; i++) {
        lm_ggml_tensor * n = o->gf->nodes[i];
        if (!(n->flags & LM_GGML_TENSOR_FLAG_PARAM)) continue;
        if (!has_memory(n)) {
            LM_GGML_LOG_ERROR("%s: parameter '%s' has no memory (allocate the parameters before lm_ggml_opt_init)\n",
                              kInit, n->name);
            return fail();
        }
        params_list.push_back(n);
    }
    // per parameter: accumulator and two moments; plus labels, up to 5 loss
    // tensors, pred, labels argmax, ncorrect, the loss accumulator
    o->ctx_static = new_meta_ctx(3 * params_list.size() + 12);
    o->ctx_host = new_meta_ctx(1);
    if (!o->ctx_static || !o->ctx_host) return fail();

    std::vector<lm_ggml_tensor *> loss_ops;
    if (!build_loss(o, params.loss_type, loss_ops)) return fail();

    std::map<lm_ggml_tensor *, lm_ggml_backend_buffer_type_t> where;
    lm_ggml_backend_buffer_type_t lbuft = loss_buft(o->backend_sched, loss_ops);
    if (!lbuft) {
        LM_GGML_LOG_ERROR("%s: no backend of the scheduler runs every op of the loss\n", kInit);
        return fail();
    }

    if (params.build_type != LM_GGML_OPT_BUILD_TYPE_FORWARD) {
        o->gb_grad = lm_ggml_graph_dup(o->ctx_compute, o->gf);
        if (!o->gb_grad) return fail();
        const int n_before = o->gb_grad->n_nodes;
        lm_ggml_build_backward_expand(o->ctx_static, o->ctx_compute, o->gb_grad, accumulate);
        if (o->gb_grad->n_nodes == n_before) return fail(); // logged by the backward pass
        for (lm_ggml_tensor * p : params_list) {
            if (lm_ggml_tensor * a = lm_ggml_graph_get_grad_acc(o->gb_grad, p)) where[a] = buft_of(p);
        }
    }
    if (params.build_type == LM_GGML_OPT_BUILD_TYPE_OPT) {
        o->gb_opt = lm_ggml_graph_dup(o->ctx_compute, o->gb_grad);
        if (!o->gb_opt) return fail();
        o->adamw_params = lm_ggml_new_tensor_1d(o->ctx_host, LM_GGML_TYPE_F32, 7);
        if (!o->adamw_params) return fail();
        lm_ggml_set_input(o->adamw_params);
        lm_ggml_set_name(o->adamw_params, "adamw_params");
        // in reverse order, as ggml, so the last layer's step comes first
        for (int i = (int) params_list.size() - 1; i >= 0; i--) {
            lm_ggml_tensor * p = params_list[(size_t) i];
            lm_ggml_tensor * g = lm_ggml_graph_get_grad(o->gb_opt, p);
            if (!g) {
                LM_GGML_LOG_ERROR("%s: parameter '%s' does not influence the loss\n", kInit, p->name);
                return fail();
            }
            lm_ggml_tensor * m = lm_ggml_dup_tensor(o->ctx_static, p);
            lm_ggml_tensor * v = lm_ggml_dup_tensor(o->ctx_static, p);
            if (!m || !v) return fail();
            lm_ggml_format_name(m, "adamw m for %s", p->name);
            lm_ggml_format_name(v, "adamw v for %s", p->name);
            where[m] = where[v] = buft_of(p);
            lm_ggml_tensor * step = lm_ggml_opt_step_adamw(o->ctx_compute, p, g, m, v, o->adamw_params);
            if (!step) return fail();
            if (!step_runs_in_place(o->backend_sched, p, step)) {
                LM_GGML_LOG_ERROR("%s: parameter '%s' is in %s, and no backend of the scheduler that uses that "
                                  "memory runs OPT_STEP_ADAMW\n",
                                  kInit, p->name,
                                  buft_of(p) ? lm_ggml_backend_buft_name(buft_of(p)) : "context memory");
                return fail();
            }
            lm_ggml_build_forward_expand(o->gb_opt, step);
        }
    }
    for (auto & [t, buft] : where) {
        if (!buft) buft = lbuft; // a parameter in plain context memory: its moments go with the loss
    }
    if (!place_static(o, where, lbuft)) return fail();
    if (o->gb_opt)
        lm_ggml_graph_reset(o->gb_opt);
    else if (o->gb_grad)
        lm_ggml_graph_reset(o->gb_grad);
    return o;
}

extern "C" void lm_ggml_opt_free(lm_ggml_opt_context_t opt_ctx) {
    if (!opt_ctx) return;
    if (opt_ctx->ctx_copy) lm_ggml_backend_sched_reset(opt_ctx->backend_sched); // it may point into ctx_copy
    for (lm_ggml_backend_buffer_t b : opt_ctx->bufs) lm_ggml_backend_buffer_free(b);
    lm_ggml_free(opt_ctx->ctx_static);
    lm_ggml_free(opt_ctx->ctx_host);
    lm_ggml_free(opt_ctx->ctx_copy);
    delete opt_ctx;
}

extern "C" void lm_ggml_opt_reset(lm_ggml_opt_context_t opt_ctx, bool optimizer) {
    if (!opt_ctx) {
        lm_ggml_null_arg("lm_ggml_opt_reset");
        return;
    }
    if (optimizer) {
        if (!opt_ctx->gb_opt) {
            LM_GGML_LOG_ERROR("lm_ggml_opt_reset: the context has no optimizer (build type)\n");
            return;
        }
        lm_ggml_graph_reset(opt_ctx->gb_opt);
        opt_ctx->iter = 1;
    } else if (opt_ctx->gb_grad) {
        lm_ggml_graph_reset(opt_ctx->gb_grad);
    }
}

#define LMOPT_GETTER(name, field)                                                                                      \
    extern "C" struct lm_ggml_tensor * name(lm_ggml_opt_context_t opt_ctx) {                                           \
        if (!opt_ctx) {                                                                                                \
            lm_ggml_null_arg(#name);                                                                                   \
            return nullptr;                                                                                            \
        }                                                                                                              \
        return opt_ctx->field;                                                                                         \
    }
LMOPT_GETTER(lm_ggml_opt_inputs, inputs)
LMOPT_GETTER(lm_ggml_opt_outputs, outputs)
LMOPT_GETTER(lm_ggml_opt_labels, labels)
LMOPT_GETTER(lm_ggml_opt_loss, loss)
LMOPT_GETTER(lm_ggml_opt_pred, pred)
LMOPT_GETTER(lm_ggml_opt_ncorrect, ncorrect)
#undef LMOPT_GETTER

extern "C" struct lm_ggml_tensor * lm_ggml_opt_grad_acc(lm_ggml_opt_context_t opt_ctx, struct lm_ggml_tensor * node) {
    if (!opt_ctx || !node) {
        lm_ggml_null_arg("lm_ggml_opt_grad_acc");
        return nullptr;
    }
    lm_ggml_cgraph * g = opt_ctx->gb_opt ? opt_ctx->gb_opt : opt_ctx->gb_grad;
    return g ? lm_ggml_graph_get_grad_acc(g, node) : nullptr;
}
