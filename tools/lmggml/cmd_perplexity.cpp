// lmggml perplexity: the perplexity of a model over a text, computed the way
// llama.cpp's llama-perplexity does: the tokenized text is cut into chunks of
// n_ctx tokens, each chunk is decoded from an empty cache (its first token
// replaced by BOS when the model adds one), and only the second half of each
// chunk is scored, so every scored token has at least n_ctx/2 tokens of context.
// --kl-divergence-base FILE saves the scored positions' log-probabilities
// (kld.h); with --kl-divergence, another model (e.g. a quantization) is run
// over the same tokens and compared with them, as llama-perplexity does.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "commands.h"
#include "common.h"
#include "generate.h"
#include "kld.h"

namespace cli {

namespace {

// -log softmax(logits)[tok], in double.
double token_nll(const float * logits, int32_t n_vocab, lmllm::Token tok) {
    float max_l = logits[0];
    for (int32_t i = 1; i < n_vocab; i++) max_l = std::max(max_l, logits[i]);
    double sum = 0.0;
    for (int32_t i = 0; i < n_vocab; i++) sum += std::exp(double(logits[i]) - double(max_l));
    return std::log(sum) + double(max_l) - double(logits[tok]);
}

} // namespace

int cmd_perplexity(int argc, char ** argv) {
    const std::string cmd = "perplexity";
    ModelOptions mo;
    ContextOptions co;
    co.n_ctx = 512;
    co.n_batch = 2048;
    std::string file;
    int32_t max_chunks = -1;
    std::string kld_path;
    bool kld_compare = false;

    ArgParser p(cmd, "perplexity -m MODEL.gguf -f TEXT [-c 512] [-b N] [--chunks N]",
                "Prints the perplexity of the model over a text file: chunks of -c tokens, the second half of\n"
                "each scored (as llama.cpp's llama-perplexity). Prints the running estimate after each chunk.");
    add_model_options(p, mo);
    p.option({"-f", "--file"}, &file, "FILE", "the text to score");
    p.option({"--chunks"}, &max_chunks, "N", "score at most N chunks, -1: all (default -1)");
    p.option({"--kl-divergence-base"}, &kld_path, "FILE",
             "save the scored log-probabilities to FILE (the base model), or with --kl-divergence read them");
    p.flag({"--kl-divergence"}, &kld_compare,
           "compare with --kl-divergence-base FILE over its tokens (no -f): KL divergence, same top token, PPL ratio");
    add_context_options(p, co);

    bool help = false;
    if (lmllm::Status s = p.parse(argc, argv, 2, help); !s.ok())
        return fail(cmd, s.message() + " (see lmggml perplexity --help)");
    if (help) {
        std::fputs(p.help_text().c_str(), stdout);
        return 0;
    }
    setup_logging(mo.verbose);
    if (kld_compare && kld_path.empty())
        return fail(cmd, "--kl-divergence needs --kl-divergence-base FILE (the saved base logits)");
    if (kld_compare && !file.empty())
        return fail(cmd, "--kl-divergence scores the tokens saved in the base file: give no -f");
    if (!kld_compare && file.empty()) return fail(cmd, "no text given (use -f FILE)");
    // the base file fixes the tokens and the context
    KldHeader kh;
    std::unique_ptr<KldFile> kf;
    if (kld_compare) {
        auto r = KldFile::open(kld_path, kh);
        if (!r.ok()) return fail(cmd, r.status().message());
        kf = std::move(r.value());
        co.n_ctx = kh.n_ctx;
    }
    if (co.n_ctx < 4) return fail(cmd, "-c must be at least 4");
    if (lmllm::Status s = check_model_context_options(mo, co); !s.ok()) return fail(cmd, s.message());
    std::string text;
    if (!kld_compare) {
        auto t = read_text_file(file);
        if (!t.ok()) return fail(cmd, t.status().message());
        text = std::move(t.value());
    }

    auto model = load_model(mo);
    if (!model.ok()) return fail(cmd, model.status().message());
    const lmllm::Model & m = *model.value();
    const lmllm::Vocab & vocab = m.vocab();

    const std::vector<lmllm::Token> tokens = kld_compare ? kh.tokens : vocab.tokenize(text, true, false);
    const int32_t n_ctx = int32_t(co.n_ctx);
    if (!kld_compare && tokens.size() < size_t(2) * size_t(n_ctx))
        return fail(cmd, "the text is " + std::to_string(tokens.size()) + " tokens; a context of " +
                             std::to_string(n_ctx) + " needs at least " + std::to_string(2 * n_ctx) +
                             " (use a longer text or a smaller -c)");
    int32_t n_chunk = int32_t(tokens.size() / size_t(n_ctx));
    if (max_chunks >= 0) n_chunk = std::min(n_chunk, max_chunks);
    if (n_chunk < 1) return fail(cmd, "--chunks must be at least 1");

    co.n_batch = std::min(co.n_batch, co.n_ctx);
    auto ctx_r = make_context(m, co, /*all_logits=*/true);
    if (!ctx_r.ok()) return fail(cmd, ctx_r.status().message());
    lmllm::Context & ctx = *ctx_r.value();
    const int32_t n_vocab = ctx.n_vocab();
    const bool add_bos = vocab.add_bos() && vocab.bos() >= 0;
    if (kld_compare && kh.n_vocab != uint32_t(n_vocab))
        return fail(cmd, "'" + kld_path + "' holds logits over " + std::to_string(kh.n_vocab) +
                             " tokens; this model's vocabulary has " + std::to_string(n_vocab));
    if (kld_compare) {
        for (lmllm::Token t : tokens)
            if (t < 0 || t >= n_vocab)
                return fail(cmd, "'" + kld_path + "' holds token " + std::to_string(t) + ", outside the vocabulary");
    } else if (!kld_path.empty()) {
        kh.n_ctx = uint32_t(n_ctx);
        kh.n_vocab = uint32_t(n_vocab);
        kh.n_chunk = uint32_t(n_chunk);
        kh.tokens.assign(tokens.begin(), tokens.begin() + ptrdiff_t(size_t(n_chunk) * size_t(n_ctx)));
        auto r = KldFile::create(kld_path, kh);
        if (!r.ok()) return fail(cmd, r.status().message());
        kf = std::move(r.value());
    }
    KldStats kstats;
    std::vector<double> base_lp;
    std::fprintf(stderr, "perplexity: %zu tokens, %d chunks of %d, batch %u\n", tokens.size(), n_chunk, n_ctx,
                 co.n_batch);

    const int32_t first = n_ctx / 2;
    double nll = 0.0, nll2 = 0.0;
    int64_t count = 0;
    for (int32_t c = 0; c < n_chunk; c++) {
        const size_t start = size_t(c) * size_t(n_ctx);
        std::vector<lmllm::Token> chunk(tokens.begin() + ptrdiff_t(start), tokens.begin() + ptrdiff_t(start) + n_ctx);
        if (add_bos) chunk[0] = vocab.bos();
        const double t0 = now_seconds();
        ctx.clear();
        if (lmllm::Status s = ctx.decode(chunk); !s.ok()) return fail(cmd, s.message());
        if (c == 0) {
            const double t = now_seconds() - t0;
            std::fprintf(stderr, "perplexity: %.2f seconds per pass - ETA %.2f minutes\n", t, t * n_chunk / 60.0);
        }
        // logits of position j predict the original token at j + 1
        for (int32_t j = first; j < n_ctx - 1; j++) {
            if (lmllm::Status s = check_logits(ctx.logits(j), n_vocab); !s.ok()) {
                std::printf("\n");
                return fail(cmd, s.message());
            }
            const double v = token_nll(ctx.logits(j), n_vocab, tokens[start + size_t(j) + 1]);
            if (kf && kld_compare) {
                if (lmllm::Status s = kf->read_row(base_lp); !s.ok()) return fail(cmd, s.message());
                kstats.add(base_lp, ctx.logits(j), uint32_t(n_vocab), tokens[start + size_t(j) + 1]);
            } else if (kf) {
                if (lmllm::Status s = kf->write_row(ctx.logits(j)); !s.ok()) return fail(cmd, s.message());
            }
            nll += v;
            nll2 += v * v;
            count++;
        }
        if (kld_compare)
            std::printf("[%d]%.4f (KLD %.6f),", c + 1, std::exp(nll / double(count)), kstats.mean_kld());
        else
            std::printf("[%d]%.4f,", c + 1, std::exp(nll / double(count)));
        std::fflush(stdout);
    }
    std::printf("\n");

    const double mean_nll = nll / double(count);
    const double ppl = std::exp(mean_nll);
    const double var = nll2 / double(count) - mean_nll * mean_nll;
    if (var > 0.0 && count > 1)
        std::printf("Final estimate: PPL = %.4f +/- %.5f\n", ppl, std::sqrt(var / double(count - 1)) * ppl);
    else
        std::printf("Final estimate: PPL = %.4f\n", ppl);
    if (kld_compare) {
        std::printf("\n%s", kstats.report().c_str());
    } else if (kf) {
        if (lmllm::Status s = kf->close(); !s.ok()) return fail(cmd, s.message());
        std::fprintf(stderr, "perplexity: saved the log-probabilities of %lld positions to '%s'\n", (long long) count,
                     kld_path.c_str());
    }
    return 0;
}

} // namespace cli
