// ggml-opt's evaluation: results, forward / forward-backward passes on the
// scheduler, epochs, the progress bar and lm_ggml_opt_fit.

#include "opt-internal.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <new>
#include <unordered_map>

namespace {

// ---------------------------------------------------------------- graph copies
// The scheduler's allocator writes data pointers into the tensors it places;
// the three graphs share most tensors, so each is evaluated through a private
// copy of its tensors (static ones keep their memory, the rest start empty).
class GraphCopier {
public:
    explicit GraphCopier(lm_ggml_context * ctx) : ctx_(ctx) {}

    lm_ggml_tensor * map(lm_ggml_tensor * t) {
        if (!t) return nullptr;
        auto it = map_.find(t);
        if (it != map_.end()) return it->second;
        lm_ggml_tensor * c = lm_ggml_dup_tensor(ctx_, t);
        if (!c) {
            failed_ = true;
            return nullptr;
        }
        map_[t] = c;
        c->op = t->op;
        for (int i = 0; i < LM_GGML_MAX_DIMS; i++) c->nb[i] = t->nb[i];
        c->flags = t->flags;
        std::memcpy(c->op_params, t->op_params, sizeof(t->op_params));
        std::memcpy(c->name, t->name, sizeof(t->name));
        c->data = t->data;
        c->buffer = t->buffer;
        c->extra = t->extra;
        c->view_offs = t->view_offs;
        c->view_src = map(t->view_src);
        for (int i = 0; i < LM_GGML_MAX_SRC; i++) c->src[i] = map(t->src[i]);
        return c;
    }
    bool failed() const { return failed_; }

private:
    lm_ggml_context * ctx_;
    std::unordered_map<lm_ggml_tensor *, lm_ggml_tensor *> map_;
    bool failed_ = false;
};

lm_ggml_cgraph * copy_graph(lm_ggml_context * ctx, lm_ggml_cgraph * src) {
    lm_ggml_cgraph * dst = lm_ggml_new_graph_custom(ctx, (size_t) src->size, false);
    if (!dst) return nullptr;
    GraphCopier cp(ctx);
    // leafs first, then nodes: the copy has the same order
    for (int i = 0; i < src->n_leafs && !cp.failed(); i++) lm_ggml_build_forward_expand(dst, cp.map(src->leafs[i]));
    for (int i = 0; i < src->n_nodes && !cp.failed(); i++) lm_ggml_build_forward_expand(dst, cp.map(src->nodes[i]));
    if (cp.failed() || dst->n_nodes != src->n_nodes) return nullptr;
    return dst;
}

bool alloc_graph(lm_ggml_opt_context * o, lm_ggml_cgraph * g) {
    if (o->allocated_graph == g) return true;
    lm_ggml_backend_sched_reset(o->backend_sched);
    o->allocated_graph = nullptr;
    o->allocated_graph_copy = nullptr;
    lm_ggml_free(o->ctx_copy);
    const size_t n = (size_t) g->size;
    lm_ggml_init_params ip = {2 * n * lm_ggml_tensor_overhead() + lm_ggml_graph_overhead_custom(n, false), nullptr,
                              true};
    o->ctx_copy = lm_ggml_init(ip);
    if (!o->ctx_copy) return false;
    lm_ggml_cgraph * copy = copy_graph(o->ctx_copy, g);
    if (!copy) {
        LM_GGML_LOG_ERROR("lm_ggml_opt: out of memory copying a graph of %d nodes\n", g->n_nodes);
        return false;
    }
    if (!lm_ggml_backend_sched_alloc_graph(o->backend_sched, copy)) return false; // logged by the scheduler
    o->allocated_graph = g;
    o->allocated_graph_copy = copy;
    return true;
}

bool set_adamw_params(lm_ggml_opt_context * o) {
    const lm_ggml_opt_optimizer_params p = o->get_opt_pars(o->get_opt_pars_ud);
    const auto & a = p.adamw;
    if (!(a.alpha > 0.0f) || !(a.beta1 >= 0.0f && a.beta1 <= 1.0f) || !(a.beta2 >= 0.0f && a.beta2 <= 1.0f) ||
        !(a.eps >= 0.0f) || !(a.wd >= 0.0f && a.wd <= 1.0f)) {
        LM_GGML_LOG_ERROR("lm_ggml_opt: invalid AdamW parameters (alpha %g, beta1 %g, beta2 %g, eps %g, wd %g)\n",
                          (double) a.alpha, (double) a.beta1, (double) a.beta2, (double) a.eps, (double) a.wd);
        return false;
    }
    // bias corrections of the moments at this step
    const float v[7] = {a.alpha,
                        a.beta1,
                        a.beta2,
                        a.eps,
                        a.wd,
                        1.0f / (1.0f - std::pow(a.beta1, (float) o->iter)),
                        1.0f / (1.0f - std::pow(a.beta2, (float) o->iter))};
    lm_ggml_backend_tensor_set(o->adamw_params, v, 0, sizeof(v));
    return true;
}

void eval_graph(lm_ggml_opt_context * o, lm_ggml_cgraph * g, lm_ggml_opt_result * r) {
    static const char * fn = "lm_ggml_opt_eval";
    if (r && r->ndata > 0 && (r->loss_per_datapoint != o->loss_per_datapoint || r->opt_period != o->opt_period)) {
        LM_GGML_LOG_ERROR("%s: the result was started by a context with another loss or opt_period\n", fn);
        return;
    }
    if (r && r->ndata != o->outputs->ne[1] * (int64_t) r->loss.size()) {
        LM_GGML_LOG_ERROR("%s: the result holds batches of another size\n", fn);
        return;
    }
    if (g == o->gb_opt && !set_adamw_params(o)) return;
    if (!alloc_graph(o, g)) return;
    if (lm_ggml_backend_sched_graph_compute(o->backend_sched, o->allocated_graph_copy) != LM_GGML_STATUS_SUCCESS) {
        LM_GGML_LOG_ERROR("%s: the scheduler failed to compute the graph\n", fn);
        return;
    }
    if (g == o->gb_opt) o->iter++;
    if (!r) return;

    if (r->ndata == 0) {
        r->loss_per_datapoint = o->loss_per_datapoint;
        r->opt_period = o->opt_period;
    }
    const int64_t ndata = o->outputs->ne[1];
    r->ndata += ndata;
    float loss = 0.0f;
    lm_ggml_backend_tensor_get(o->loss, &loss, 0, sizeof(loss));
    r->loss.push_back(loss);
    const size_t npred = (size_t) lm_ggml_nelements(o->pred);
    const size_t at = r->pred.size();
    r->pred.resize(at + npred);
    lm_ggml_backend_tensor_get(o->pred, r->pred.data() + at, 0, npred * sizeof(int32_t));
    if (!o->ncorrect || r->ncorrect < 0) {
        r->ncorrect = -1;
        return;
    }
    int64_t ncorrect = 0;
    lm_ggml_backend_tensor_get(o->ncorrect, &ncorrect, 0, sizeof(ncorrect));
    r->ncorrect += ncorrect;
}

void print_hms(int64_t us, char * out, size_t n) {
    int64_t s = us / 1000000;
    const int64_t h = s / 3600;
    s -= h * 3600;
    const int64_t m = s / 60;
    s -= m * 60;
    std::snprintf(out, n, "%02" PRId64 ":%02" PRId64 ":%02" PRId64, h, m, s);
}

} // namespace

// ---------------------------------------------------------------- results

extern "C" lm_ggml_opt_result_t lm_ggml_opt_result_init(void) {
    auto * r = new (std::nothrow) lm_ggml_opt_result;
    if (!r) LM_GGML_LOG_ERROR("lm_ggml_opt_result_init: out of memory\n");
    return r;
}

extern "C" void lm_ggml_opt_result_free(lm_ggml_opt_result_t result) { delete result; }

extern "C" void lm_ggml_opt_result_reset(lm_ggml_opt_result_t result) {
    if (!result) {
        lm_ggml_null_arg("lm_ggml_opt_result_reset");
        return;
    }
    result->ndata = 0;
    result->loss.clear();
    result->pred.clear();
    result->ncorrect = 0;
}

extern "C" void lm_ggml_opt_result_ndata(lm_ggml_opt_result_t result, int64_t * ndata) {
    if (!result || !ndata) {
        lm_ggml_null_arg("lm_ggml_opt_result_ndata");
        return;
    }
    *ndata = result->ndata;
}

extern "C" void lm_ggml_opt_result_loss(lm_ggml_opt_result_t result, double * loss, double * unc) {
    if (!result || !loss) {
        lm_ggml_null_arg("lm_ggml_opt_result_loss");
        return;
    }
    const size_t nb = result->loss.size(); // physical batches
    if (nb == 0) {
        *loss = 0.0;
        if (unc) *unc = NAN;
        return;
    }
    double sum = 0.0, sum2 = 0.0;
    for (float l : result->loss) {
        // a per-datapoint loss was divided by opt_period on each batch
        const double x = result->loss_per_datapoint ? (double) l * (double) result->opt_period : (double) l;
        sum += x;
        sum2 += x * x;
    }
    const double mean = sum / (double) nb;
    *loss = result->loss_per_datapoint ? mean : sum;
    if (!unc) return;
    if (nb < 2) {
        *unc = NAN;
        return;
    }
    // standard error of the mean (of the sum) over batches
    const double var = sum2 / (double) nb - mean * mean;
    *unc = result->loss_per_datapoint ? std::sqrt(var / (double) (nb - 1))
                                      : std::sqrt(var * (double) nb / (double) (nb - 1));
}

extern "C" void lm_ggml_opt_result_pred(lm_ggml_opt_result_t result, int32_t * pred) {
    if (!result || !pred) {
        lm_ggml_null_arg("lm_ggml_opt_result_pred");
        return;
    }
    for (size_t i = 0; i < result->pred.size(); i++) pred[i] = result->pred[i];
}

extern "C" void lm_ggml_opt_result_accuracy(lm_ggml_opt_result_t result, double * accuracy, double * unc) {
    if (!result || !accuracy) {
        lm_ggml_null_arg("lm_ggml_opt_result_accuracy");
        return;
    }
    const bool known = result->ncorrect >= 0 && result->ndata > 0;
    *accuracy = known ? (double) result->ncorrect / (double) result->ndata : NAN;
    if (!unc) return;
    // binomial standard error
    *unc = known && result->ndata >= 2 ? std::sqrt(*accuracy * (1.0 - *accuracy) / (double) (result->ndata - 1)) : NAN;
}

// ---------------------------------------------------------------- computation

extern "C" void lm_ggml_opt_forward(lm_ggml_opt_context_t opt_ctx, lm_ggml_opt_result_t result) {
    if (!opt_ctx) {
        lm_ggml_null_arg("lm_ggml_opt_forward");
        return;
    }
    eval_graph(opt_ctx, opt_ctx->gf, result);
}

extern "C" void lm_ggml_opt_forward_backward(lm_ggml_opt_context_t opt_ctx, lm_ggml_opt_result_t result) {
    if (!opt_ctx) {
        lm_ggml_null_arg("lm_ggml_opt_forward_backward");
        return;
    }
    if (!opt_ctx->gb_grad) {
        LM_GGML_LOG_ERROR("lm_ggml_opt_forward_backward: the context was built for the forward pass only\n");
        return;
    }
    if (!opt_ctx->gb_opt) { // BUILD_TYPE_GRAD: gradients accumulate until lm_ggml_opt_reset
        eval_graph(opt_ctx, opt_ctx->gb_grad, result);
        return;
    }
    if (opt_ctx->opt_period == 1) {
        eval_graph(opt_ctx, opt_ctx->gb_opt, result);
        return;
    }
    // accumulate opt_period - 1 batches, step on the last, then clear the accumulators
    const int32_t next = (opt_ctx->opt_i + 1) % opt_ctx->opt_period;
    if (next == 0) {
        eval_graph(opt_ctx, opt_ctx->gb_opt, result);
        lm_ggml_opt_reset(opt_ctx, false);
    } else {
        eval_graph(opt_ctx, opt_ctx->gb_grad, result);
    }
    opt_ctx->opt_i = next;
}

extern "C" void lm_ggml_opt_epoch(lm_ggml_opt_context_t opt_ctx, lm_ggml_opt_dataset_t dataset,
                                  lm_ggml_opt_result_t result_train, lm_ggml_opt_result_t result_eval,
                                  int64_t idata_split, lm_ggml_opt_epoch_callback callback_train,
                                  lm_ggml_opt_epoch_callback callback_eval) {
    static const char * fn = "lm_ggml_opt_epoch";
    if (!opt_ctx || !dataset) {
        lm_ggml_null_arg(fn);
        return;
    }
    lm_ggml_tensor * inputs = opt_ctx->inputs;
    lm_ggml_tensor * labels = opt_ctx->labels;
    lm_ggml_tensor * data = dataset->data;
    if (data->ne[0] != inputs->ne[0]) {
        LM_GGML_LOG_ERROR("%s: datapoints have %lld values, the inputs %lld\n", fn, (long long) data->ne[0],
                          (long long) inputs->ne[0]);
        return;
    }
    const int64_t ndata = data->ne[1], nbatch = inputs->ne[1];
    if (ndata % nbatch != 0) {
        LM_GGML_LOG_ERROR("%s: %lld datapoints are not a whole number of batches of %lld\n", fn, (long long) ndata,
                          (long long) nbatch);
        return;
    }
    const int64_t nbatches = ndata / nbatch;
    if (idata_split < 0) idata_split = ndata;
    if (idata_split % nbatch != 0 || idata_split > ndata) {
        LM_GGML_LOG_ERROR("%s: idata_split %lld is not a batch boundary within the dataset\n", fn,
                          (long long) idata_split);
        return;
    }
    const int64_t ibatch_split = idata_split / nbatch;

    int64_t t0 = lm_ggml_time_us();
    int64_t ib = 0;
    for (; ib < ibatch_split; ib++) {
        lm_ggml_opt_dataset_get_batch(dataset, inputs, labels, ib);
        lm_ggml_opt_forward_backward(opt_ctx, result_train);
        if (callback_train) callback_train(true, opt_ctx, dataset, result_train, ib + 1, ibatch_split, t0);
    }
    t0 = lm_ggml_time_us();
    for (; ib < nbatches; ib++) {
        lm_ggml_opt_dataset_get_batch(dataset, inputs, labels, ib);
        lm_ggml_opt_forward(opt_ctx, result_eval);
        if (callback_eval) {
            callback_eval(false, opt_ctx, dataset, result_eval, ib + 1 - ibatch_split, nbatches - ibatch_split, t0);
        }
    }
}

extern "C" void lm_ggml_opt_epoch_callback_progress_bar(bool train, lm_ggml_opt_context_t opt_ctx,
                                                        lm_ggml_opt_dataset_t dataset, lm_ggml_opt_result_t result,
                                                        int64_t ibatch, int64_t ibatch_max, int64_t t_start_us) {
    (void) dataset;
    if (!opt_ctx || !result) {
        lm_ggml_null_arg("lm_ggml_opt_epoch_callback_progress_bar");
        return;
    }
    if (ibatch_max <= 0) return;
    std::fprintf(stderr, "%s[", train ? "train: " : "val:   ");
    constexpr int64_t kBar = 25;
    for (int64_t j = 0; j < kBar; j++) {
        const char c = ibatch_max * j / kBar < ibatch ? '=' : (ibatch_max * (j - 1) / kBar < ibatch ? '>' : ' ');
        std::fputc(c, stderr);
    }
    const int64_t bs = opt_ctx->inputs->ne[1];
    double loss = 0.0, loss_unc = NAN, acc = NAN, acc_unc = NAN;
    lm_ggml_opt_result_loss(result, &loss, &loss_unc);
    lm_ggml_opt_result_accuracy(result, &acc, &acc_unc);
    const int64_t t_us = lm_ggml_time_us() - t_start_us;
    const int64_t eta_us = ibatch > 0 ? t_us * (ibatch_max - ibatch) / ibatch : 0;
    char t[64], eta[64];
    print_hms(t_us, t, sizeof(t));
    print_hms(eta_us, eta, sizeof(eta));
    std::fprintf(stderr,
                 "| data=%06" PRId64 "/%06" PRId64 ", loss=%.6lf+-%.6lf, accuracy=%.2lf+-%.2lf%%, t=%s, ETA=%s]\r",
                 ibatch * bs, ibatch_max * bs, loss, loss_unc, 100.0 * acc, 100.0 * acc_unc, t, eta);
    if (ibatch == ibatch_max) std::fputc('\n', stderr);
    std::fflush(stderr);
}

extern "C" void lm_ggml_opt_fit(lm_ggml_backend_sched_t backend_sched, struct lm_ggml_context * ctx_compute,
                                struct lm_ggml_tensor * inputs, struct lm_ggml_tensor * outputs,
                                lm_ggml_opt_dataset_t dataset, enum lm_ggml_opt_loss_type loss_type,
                                lm_ggml_opt_get_optimizer_params get_opt_pars, int64_t nepoch, int64_t nbatch_logical,
                                float val_split, bool silent) {
    static const char * fn = "lm_ggml_opt_fit";
    if (!backend_sched || !ctx_compute || !inputs || !outputs || !dataset || !get_opt_pars) {
        lm_ggml_null_arg(fn);
        return;
    }
    lm_ggml_time_init();
    const int64_t t_start = lm_ggml_time_us();
    const int64_t ndata = dataset->data->ne[1];
    const int64_t nbatch = inputs->ne[1];
    if (nbatch_logical <= 0 || ndata % nbatch_logical != 0 || nbatch_logical % nbatch != 0) {
        LM_GGML_LOG_ERROR("%s: nbatch_logical %lld must divide the %lld datapoints and be a multiple of the "
                          "physical batch %lld\n",
                          fn, (long long) nbatch_logical, (long long) ndata, (long long) nbatch);
        return;
    }
    if (!(val_split >= 0.0f && val_split < 1.0f)) {
        LM_GGML_LOG_ERROR("%s: val_split %g is not in [0, 1)\n", fn, (double) val_split);
        return;
    }
    const int64_t opt_period = nbatch_logical / nbatch;
    const int64_t nbatches_logical = ndata / nbatch_logical;
    // train on whole logical batches; the rest is for validation
    const int64_t ibatch_split = (int64_t) ((1.0f - val_split) * (float) nbatches_logical) * opt_period;
    const int64_t idata_split = ibatch_split * nbatch;

    int64_t epoch = 1;
    lm_ggml_opt_params params = lm_ggml_opt_default_params(backend_sched, ctx_compute, inputs, outputs, loss_type);
    params.opt_period = (int32_t) opt_period;
    params.get_opt_pars = get_opt_pars;
    params.get_opt_pars_ud = &epoch;
    lm_ggml_opt_context_t opt_ctx = lm_ggml_opt_init(params);
    if (!opt_ctx) return;

    // shuffling matters only when a step sees less than all the data
    if (nbatch_logical < ndata) lm_ggml_opt_dataset_shuffle(opt_ctx, dataset, -1);

    lm_ggml_opt_result_t rt = lm_ggml_opt_result_init();
    lm_ggml_opt_result_t rv = lm_ggml_opt_result_init();
    lm_ggml_opt_epoch_callback cb = silent ? nullptr : lm_ggml_opt_epoch_callback_progress_bar;
    for (; rt && rv && epoch <= nepoch; epoch++) {
        if (nbatch_logical < idata_split) lm_ggml_opt_dataset_shuffle(opt_ctx, dataset, idata_split);
        lm_ggml_opt_result_reset(rt);
        lm_ggml_opt_result_reset(rv);
        if (!silent) std::fprintf(stderr, "%s: epoch %04" PRId64 "/%04" PRId64 ":\n", fn, epoch, nepoch);
        lm_ggml_opt_epoch(opt_ctx, dataset, rt, rv, idata_split, cb, cb);
        if (!silent) std::fprintf(stderr, "\n");
    }
    if (!silent) {
        char t[64];
        print_hms(lm_ggml_time_us() - t_start, t, sizeof(t));
        std::fprintf(stderr, "%s: training took %s\n", fn, t);
    }
    lm_ggml_opt_free(opt_ctx);
    lm_ggml_opt_result_free(rt);
    lm_ggml_opt_result_free(rv);
}
