// train-digits: trains a classifier for the 8x8 handwritten digits with
// ggml-opt on the CPU, with ggml-opt's progress bar on stderr and one line
// per epoch on stdout (loss and accuracy on the training and held-out images).

#include "digits.h"

#include "ggml.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#ifndef TRAIN_DIGITS_DATA
#define TRAIN_DIGITS_DATA "digits.u8"
#endif

namespace {

void usage(FILE * f) {
    std::fprintf(f,
                 "usage: train-digits [options]\n"
                 "  -d, --data PATH      the digits file (default: %s)\n"
                 "  -m, --model NAME     mlp (default) or cnn\n"
                 "  -e, --epochs N       training epochs (default: 15 for mlp, 10 for cnn)\n"
                 "  -t, --threads N      CPU threads (default: 1, fastest for these small layers)\n"
                 "  -l, --lr X           AdamW learning rate (default: 0.003)\n"
                 "  -s, --seed N         seed of the initial weights (default: 1)\n"
                 "  -q, --quiet          no progress bar\n",
                 TRAIN_DIGITS_DATA);
}

// a positive integer, or -1
long positive(const char * s) {
    char * end = nullptr;
    errno = 0;
    const long v = std::strtol(s, &end, 10);
    return errno == 0 && end != s && *end == '\0' && v > 0 && v <= 1000000 ? v : -1;
}

} // namespace

int main(int argc, char ** argv) {
    std::string path = TRAIN_DIGITS_DATA;
    digits::Options opt;
    opt.progress = true;
    long epochs = 0;
    float lr = 0.0f;
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        const bool has_value = i + 1 < argc;
        if (a == "-h" || a == "--help") {
            usage(stdout);
            return 0;
        } else if (a == "-q" || a == "--quiet") {
            opt.progress = false;
        } else if ((a == "-d" || a == "--data") && has_value) {
            path = argv[++i];
        } else if ((a == "-l" || a == "--lr") && has_value) {
            char * end = nullptr;
            lr = std::strtof(argv[++i], &end);
            if (end == argv[i] || *end != '\0' || !(lr > 0.0f && lr < 1.0f)) {
                std::fprintf(stderr, "train-digits: --lr needs a number in (0, 1), not '%s'\n", argv[i]);
                return 1;
            }
        } else if ((a == "-m" || a == "--model") && has_value) {
            const std::string m = argv[++i];
            if (m != "mlp" && m != "cnn") {
                std::fprintf(stderr, "train-digits: unknown model '%s' (mlp or cnn)\n", m.c_str());
                return 1;
            }
            opt.arch = m == "cnn" ? digits::Arch::CNN : digits::Arch::MLP;
        } else if ((a == "-e" || a == "--epochs" || a == "-t" || a == "--threads" || a == "-s" || a == "--seed") &&
                   has_value) {
            const long v = positive(argv[++i]);
            if (v < 0) {
                std::fprintf(stderr, "train-digits: %s needs a positive number, not '%s'\n", a.c_str(), argv[i]);
                return 1;
            }
            if (a == "-e" || a == "--epochs")
                epochs = v;
            else if (a == "-t" || a == "--threads")
                opt.threads = (int) v;
            else
                opt.seed = (uint32_t) v;
        } else {
            std::fprintf(stderr, "train-digits: unknown or incomplete argument '%s' (--help lists them)\n", a.c_str());
            return 1;
        }
    }
    const digits::Options tuned = digits::default_options(opt.arch);
    opt.epochs = tuned.epochs;
    opt.lr = tuned.lr;
    if (epochs > 0) opt.epochs = (int) epochs;
    if (lr > 0.0f) opt.lr = lr;

    digits::Data all, train, heldout;
    const std::string err = digits::load(path, all);
    if (!err.empty()) {
        std::fprintf(stderr, "train-digits: %s\n", err.c_str());
        return 1;
    }
    digits::split(all, train, heldout);
    std::printf("%s: %lld training and %lld held-out images, %d epochs, %d thread%s\n",
                opt.arch == digits::Arch::CNN ? "cnn" : "mlp", (long long) train.size(), (long long) heldout.size(),
                opt.epochs, opt.threads, opt.threads == 1 ? "" : "s");
    std::fflush(stdout);

    lm_ggml_time_init();
    const int64_t t0 = lm_ggml_time_us();
    const std::string terr = digits::train(opt, train, heldout, [&](const digits::EpochStats & s) {
        std::printf(
            "epoch %d/%d: train loss %.4f, train accuracy %.2f %%, held-out loss %.4f, held-out accuracy %.2f %%\n",
            s.epoch, opt.epochs, s.train_loss, 100.0 * s.train_accuracy, s.heldout_loss, 100.0 * s.heldout_accuracy);
        std::fflush(stdout);
    });
    if (!terr.empty()) {
        std::fprintf(stderr, "train-digits: %s\n", terr.c_str());
        return 1;
    }
    std::printf("trained in %.2f s\n", (double) (lm_ggml_time_us() - t0) / 1e6);
    return 0;
}
