#include "digits.h"

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-opt.h"
#include "ggml.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <utility>

namespace digits {

namespace {

constexpr int kRecord = kPixels + 1;

// ---------------------------------------------------------------- data

lm_ggml_opt_dataset_t make_dataset(const Data & d, int64_t n) {
    lm_ggml_opt_dataset_t ds = lm_ggml_opt_dataset_init(kPixels, kClasses, n, 1);
    if (!ds) return nullptr;
    float * x = static_cast<float *>(lm_ggml_opt_dataset_data(ds)->data);
    float * y = static_cast<float *>(lm_ggml_opt_dataset_labels(ds)->data);
    std::memset(y, 0, sizeof(float) * (size_t) (n * kClasses));
    for (int64_t i = 0; i < n; i++) {
        // n > d.size() pads with copies of the first images (whole batches)
        const int64_t j = i % d.size();
        std::memcpy(x + i * kPixels, d.x.data() + j * kPixels, sizeof(float) * kPixels);
        y[i * kClasses + d.y[(size_t) j]] = 1.0f; // one-hot
    }
    return ds;
}

// ---------------------------------------------------------------- models

struct Params {
    std::vector<lm_ggml_tensor *> all;
    lm_ggml_tensor *w1 = nullptr, *b1 = nullptr, *w2 = nullptr, *b2 = nullptr;
};

constexpr int kHidden = 128, kChannels = 16;

lm_ggml_tensor * param(lm_ggml_context * ctx, Params & p, int64_t n0, int64_t n1, int64_t n2, int64_t n3,
                       const char * name) {
    lm_ggml_tensor * t = lm_ggml_new_tensor_4d(ctx, LM_GGML_TYPE_F32, n0, n1, n2, n3);
    lm_ggml_set_name(t, name);
    lm_ggml_set_param(ctx, t);
    p.all.push_back(t);
    return t;
}

// w1 is the first layer's weight (dense or conv kernel), w2 the last dense
void declare(lm_ggml_context * ctx, Arch arch, Params & p) {
    if (arch == Arch::MLP) {
        p.w1 = param(ctx, p, kPixels, kHidden, 1, 1, "w1");
        p.b1 = param(ctx, p, kHidden, 1, 1, 1, "b1");
        p.w2 = param(ctx, p, kHidden, kClasses, 1, 1, "w2");
    } else {
        p.w1 = param(ctx, p, 3, 3, 1, kChannels, "conv_k"); // [KW, KH, Cin, Cout]
        p.b1 = param(ctx, p, 1, 1, kChannels, 1, "conv_b");
        p.w2 = param(ctx, p, 4 * 4 * kChannels, kClasses, 1, 1, "w2");
    }
    p.b2 = param(ctx, p, kClasses, 1, 1, 1, "b2");
}

// logits [kClasses, batch] of inputs [kPixels, batch]
lm_ggml_tensor * forward(lm_ggml_context * c, Arch arch, const Params & p, lm_ggml_tensor * in) {
    const int64_t batch = in->ne[1];
    lm_ggml_tensor * feat;
    if (arch == Arch::MLP) {
        feat = lm_ggml_relu(c, lm_ggml_add(c, lm_ggml_mul_mat(c, p.w1, in), p.b1));
    } else {
        lm_ggml_tensor * img = lm_ggml_reshape_4d(c, in, 8, 8, 1, batch);
        lm_ggml_tensor * conv = lm_ggml_conv_2d(c, p.w1, img, 1, 1, 1, 1, 1, 1); // [8, 8, C, B]
        lm_ggml_tensor * act = lm_ggml_relu(c, lm_ggml_add(c, conv, p.b1));
        lm_ggml_tensor * pool = lm_ggml_pool_2d(c, act, LM_GGML_OP_POOL_MAX, 2, 2, 2, 2, 0, 0); // [4, 4, C, B]
        feat = lm_ggml_reshape_2d(c, pool, 4 * 4 * kChannels, batch);
    }
    return lm_ggml_add(c, lm_ggml_mul_mat(c, p.w2, feat), p.b2);
}

// He initialization for the layers followed by relu, 1/fan_in for the
// output layer, zero biases; fan_in is the first dims' product
void init_weights(const Params & p, uint32_t seed) {
    std::mt19937 rng(seed);
    for (lm_ggml_tensor * t : p.all) {
        std::vector<float> v((size_t) lm_ggml_nelements(t), 0.0f);
        if (t == p.w1 || t == p.w2) {
            const int64_t fan_out = t->ne[3] > 1 ? t->ne[3] : t->ne[1]; // conv kernel: Cout; dense: rows
            const double fan_in = (double) lm_ggml_nelements(t) / (double) fan_out;
            std::normal_distribution<float> nd(0.0f, (float) std::sqrt((t == p.w1 ? 2.0 : 1.0) / fan_in));
            for (float & x : v) x = nd(rng);
        }
        lm_ggml_backend_tensor_set(t, v.data(), 0, v.size() * sizeof(float));
    }
}

lm_ggml_opt_optimizer_params adamw_pars(void * ud) {
    lm_ggml_opt_optimizer_params p = lm_ggml_opt_get_default_optimizer_params(nullptr);
    p.adamw.alpha = *static_cast<const float *>(ud);
    return p;
}

// ---------------------------------------------------------------- owners

struct Deleter {
    void operator()(lm_ggml_context * c) const { lm_ggml_free(c); }
    void operator()(lm_ggml_backend * b) const { lm_ggml_backend_free(b); }
    void operator()(lm_ggml_backend_sched * s) const { lm_ggml_backend_sched_free(s); }
    void operator()(lm_ggml_backend_buffer * b) const { lm_ggml_backend_buffer_free(b); }
    void operator()(lm_ggml_opt_context * o) const { lm_ggml_opt_free(o); }
    void operator()(lm_ggml_opt_dataset * d) const { lm_ggml_opt_dataset_free(d); }
    void operator()(lm_ggml_opt_result * r) const { lm_ggml_opt_result_free(r); }
};
template <typename T> using Own = std::unique_ptr<T, Deleter>;

lm_ggml_context * compute_context() {
    lm_ggml_init_params p = {LM_GGML_DEFAULT_GRAPH_SIZE * lm_ggml_tensor_overhead() +
                                 3 * lm_ggml_graph_overhead_custom(LM_GGML_DEFAULT_GRAPH_SIZE, true),
                             nullptr, true};
    return lm_ggml_init(p);
}

} // namespace

std::string load(const std::string & path, Data & out) {
    std::unique_ptr<FILE, int (*)(FILE *)> f(std::fopen(path.c_str(), "rb"), std::fclose);
    if (!f) return "cannot open " + path + ": " + std::strerror(errno);
    std::vector<unsigned char> raw((size_t) (kImages * kRecord) + 1);
    const size_t n = std::fread(raw.data(), 1, raw.size(), f.get());
    if (std::ferror(f.get())) return "cannot read " + path + ": " + std::strerror(errno);
    if (n != (size_t) (kImages * kRecord)) {
        return path + ": " + std::to_string(n) + (n == raw.size() ? "+" : "") + " bytes, expected " +
               std::to_string(kImages * kRecord) + " (" + std::to_string(kImages) + " records of " +
               std::to_string(kRecord) + " bytes)";
    }
    Data d; // out is left alone on failure
    d.x.resize((size_t) (kImages * kPixels));
    d.y.resize((size_t) kImages);
    for (int64_t i = 0; i < kImages; i++) {
        const unsigned char * r = raw.data() + i * kRecord;
        for (int j = 0; j < kPixels; j++) {
            if (r[j] > 16) return path + ": record " + std::to_string(i) + " has a pixel above 16";
            d.x[(size_t) (i * kPixels + j)] = (float) r[j] / 16.0f;
        }
        if (r[kPixels] > 9) return path + ": record " + std::to_string(i) + " has label " + std::to_string(r[kPixels]);
        d.y[(size_t) i] = r[kPixels];
    }
    out = std::move(d);
    return "";
}

Options default_options(Arch arch) {
    Options o;
    o.arch = arch;
    o.epochs = arch == Arch::CNN ? 10 : 15;
    return o;
}

void split(const Data & all, Data & train, Data & heldout) {
    train = Data();
    heldout = Data();
    int64_t seen[kClasses] = {}; // per digit, so that every digit is held out alike
    for (int64_t i = 0; i < all.size(); i++) {
        Data & d = seen[all.y[(size_t) i]]++ % 5 == 4 ? heldout : train;
        d.x.insert(d.x.end(), all.x.begin() + i * kPixels, all.x.begin() + (i + 1) * kPixels);
        d.y.push_back(all.y[(size_t) i]);
    }
}

std::string train(const Options & opt, const Data & train, const Data & heldout,
                  const std::function<void(const EpochStats &)> & on_epoch, std::vector<int32_t> * heldout_pred) {
    if (train.size() == 0 || heldout.size() == 0 || opt.batch < 1 || opt.epochs < 0 || opt.threads < 1) {
        return "nothing to train on, or a bad batch size, epoch or thread count";
    }
    const int64_t batch = opt.batch;
    const int64_t ntrain = (train.size() + batch - 1) / batch * batch; // whole batches
    const int64_t nheld = heldout.size();

    Own<lm_ggml_backend> cpu(lm_ggml_backend_cpu_init());
    if (!cpu) return "no CPU backend";
    lm_ggml_backend_cpu_set_n_threads(cpu.get(), opt.threads);
    // one scheduler per optimization context: each context remembers which of
    // its graphs the scheduler last allocated, so they must not share one
    lm_ggml_backend_t list[1] = {cpu.get()};
    Own<lm_ggml_backend_sched> sched_train(
        lm_ggml_backend_sched_new(list, nullptr, 1, LM_GGML_DEFAULT_GRAPH_SIZE, false));
    Own<lm_ggml_backend_sched> sched_eval(
        lm_ggml_backend_sched_new(list, nullptr, 1, LM_GGML_DEFAULT_GRAPH_SIZE, false));

    // parameters and both input tensors in CPU memory; the graphs for the
    // training batch and the held-out batch in their own compute contexts
    lm_ggml_init_params ps = {16 * lm_ggml_tensor_overhead(), nullptr, true};
    Own<lm_ggml_context> ctx_static(lm_ggml_init(ps));
    Own<lm_ggml_context> ctx_train(compute_context()), ctx_eval(compute_context());
    if (!sched_train || !sched_eval || !ctx_static || !ctx_train || !ctx_eval) return "out of memory";
    Params p;
    declare(ctx_static.get(), opt.arch, p);
    lm_ggml_tensor * in_train = lm_ggml_new_tensor_2d(ctx_static.get(), LM_GGML_TYPE_F32, kPixels, batch);
    lm_ggml_tensor * in_eval = lm_ggml_new_tensor_2d(ctx_static.get(), LM_GGML_TYPE_F32, kPixels, nheld);
    Own<lm_ggml_backend_buffer> buf(lm_ggml_backend_alloc_ctx_tensors(ctx_static.get(), cpu.get()));
    if (!buf) return "out of memory for the parameters";
    init_weights(p, opt.seed);

    float lr = opt.lr;
    lm_ggml_opt_params pt = lm_ggml_opt_default_params(sched_train.get(), ctx_train.get(), in_train,
                                                       forward(ctx_train.get(), opt.arch, p, in_train),
                                                       LM_GGML_OPT_LOSS_TYPE_CROSS_ENTROPY);
    pt.get_opt_pars = adamw_pars;
    pt.get_opt_pars_ud = &lr;
    lm_ggml_opt_params pe =
        lm_ggml_opt_default_params(sched_eval.get(), ctx_eval.get(), in_eval,
                                   forward(ctx_eval.get(), opt.arch, p, in_eval), LM_GGML_OPT_LOSS_TYPE_CROSS_ENTROPY);
    pe.build_type = LM_GGML_OPT_BUILD_TYPE_FORWARD;
    Own<lm_ggml_opt_context> otrain(lm_ggml_opt_init(pt)), oeval(lm_ggml_opt_init(pe));
    Own<lm_ggml_opt_dataset> dtrain(make_dataset(train, ntrain)), dheld(make_dataset(heldout, nheld));
    Own<lm_ggml_opt_result> rtrain(lm_ggml_opt_result_init()), rheld(lm_ggml_opt_result_init());
    if (!otrain || !oeval) return "ggml-opt could not build the model's graphs (see the log above)";
    if (!dtrain || !dheld || !rtrain || !rheld) return "out of memory for the datasets";

    lm_ggml_opt_epoch_callback bar = opt.progress ? lm_ggml_opt_epoch_callback_progress_bar : nullptr;
    for (int e = 1; e <= opt.epochs; e++) {
        lm_ggml_opt_dataset_shuffle(otrain.get(), dtrain.get(), -1);
        lm_ggml_opt_result_reset(rtrain.get());
        lm_ggml_opt_result_reset(rheld.get());
        lm_ggml_opt_epoch(otrain.get(), dtrain.get(), rtrain.get(), nullptr, -1, bar, nullptr);
        lm_ggml_opt_epoch(oeval.get(), dheld.get(), nullptr, rheld.get(), 0, nullptr, bar);
        int64_t nt = 0, nh = 0;
        lm_ggml_opt_result_ndata(rtrain.get(), &nt);
        lm_ggml_opt_result_ndata(rheld.get(), &nh);
        if (nt != ntrain || nh != nheld)
            return "an evaluation failed in epoch " + std::to_string(e) + " (see the log above)";
        EpochStats s;
        s.epoch = e;
        lm_ggml_opt_result_loss(rtrain.get(), &s.train_loss, nullptr);
        lm_ggml_opt_result_accuracy(rtrain.get(), &s.train_accuracy, nullptr);
        lm_ggml_opt_result_loss(rheld.get(), &s.heldout_loss, nullptr);
        lm_ggml_opt_result_accuracy(rheld.get(), &s.heldout_accuracy, nullptr);
        if (on_epoch) on_epoch(s);
    }
    if (heldout_pred) {
        heldout_pred->assign((size_t) nheld, -1);
        if (opt.epochs > 0) lm_ggml_opt_result_pred(rheld.get(), heldout_pred->data());
    }
    return "";
}

} // namespace digits
