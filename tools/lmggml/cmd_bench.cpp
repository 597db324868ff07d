// lmggml bench: prompt-processing and generation speed, like llama-bench.
//   ppN: one decode of N tokens into an empty cache
//   tgN: N single-token decodes, starting from an empty cache
// Each test runs once as a warm-up, then -r times; the t/s column is the mean
// of the per-repetition rates with their sample standard deviation.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>

#include "bench_report.h"
#include "commands.h"
#include "common.h"

namespace cli {

namespace {

using lmllm::Status;
using lmllm::Token;

// Random tokens (fixed seed, so every run measures the same input), BOS first
// when the model expects one.
std::vector<Token> bench_tokens(const lmllm::Vocab & v, int32_t n_vocab, int32_t n) {
    std::mt19937 rng(1234);
    std::uniform_int_distribution<int32_t> dist(0, n_vocab - 1);
    std::vector<Token> t(static_cast<size_t>(n));
    for (Token & x : t) x = dist(rng);
    if (v.add_bos() && v.bos() >= 0 && n > 0) t[0] = v.bos();
    return t;
}

// Seconds for one repetition.
lmllm::Result<double> run_pp(lmllm::Context & ctx, const std::vector<Token> & tokens) {
    ctx.clear();
    const double t0 = now_seconds();
    if (Status s = ctx.decode(tokens); !s.ok()) return s;
    return now_seconds() - t0;
}

lmllm::Result<double> run_tg(lmllm::Context & ctx, const std::vector<Token> & tokens) {
    ctx.clear();
    const double t0 = now_seconds();
    for (Token t : tokens) {
        if (Status s = ctx.decode({t}); !s.ok()) return s;
    }
    return now_seconds() - t0;
}

} // namespace

int cmd_bench(int argc, char ** argv) {
    const std::string cmd = "bench";
    ModelOptions mo;
    std::vector<int32_t> n_prompt = {512}, n_gen = {128}, threads; // threads: default_threads()
    int32_t reps = 5;
    uint32_t n_batch = 2048;
    std::string output = "md";
    bool no_warmup = false;

    ArgParser p(cmd, "bench -m MODEL.gguf [-p 512] [-n 128] [-t 1,2] [-r REPS] [-o md|json|csv]",
                "Measures prompt processing (ppN: one decode of N tokens) and text generation\n"
                "(tgN: N single-token decodes) in tokens per second, mean ± stddev over the repetitions.");
    add_model_options(p, mo);
    p.option({"-p", "--n-prompt"}, &n_prompt, "N[,N...]", "prompt sizes, 0: none (default 512)");
    p.option({"-n", "--n-gen"}, &n_gen, "N[,N...]", "generation lengths, 0: none (default 128)");
    p.option({"-t", "--threads"}, &threads, "N[,N...]", "thread counts (default: the usable cores not busy with other work)");
    p.option({"-r", "--repetitions"}, &reps, "N", "repetitions of each test (default 5)");
    p.option({"-b", "--batch-size"}, &n_batch, "N", "max tokens per decode (default 2048)");
    p.option({"-o", "--output"}, &output, "FMT", "md, json or csv (default md)");
    p.flag({"--no-warmup"}, &no_warmup, "skip the warm-up run");
    ContextOptions co;
    add_flash_attn_option(p, co);

    bool help = false;
    if (Status s = p.parse(argc, argv, 2, help); !s.ok()) return fail(cmd, s.message() + " (see lmggml bench --help)");
    if (help) {
        std::fputs(p.help_text().c_str(), stdout);
        return 0;
    }
    setup_logging(mo.verbose);
    if (output != "md" && output != "json" && output != "csv") return fail(cmd, "unknown output format '" + output + "' (md, json or csv)");
    if (reps < 1) return fail(cmd, "-r must be >= 1");
    if (n_batch < 1) return fail(cmd, "-b must be >= 1");
    if (lmllm::Status s = check_model_context_options(mo, ContextOptions()); !s.ok()) return fail(cmd, s.message());
    auto negative = [](const std::vector<int32_t> & v) { return std::any_of(v.begin(), v.end(), [](int32_t x) { return x < 0; }); };
    if (negative(n_prompt) || negative(n_gen)) return fail(cmd, "-p and -n must be >= 0");
    if (std::any_of(threads.begin(), threads.end(), [](int32_t x) { return x < 1; })) return fail(cmd, "-t must be >= 1");
    if (threads.empty()) threads = {default_threads()};

    auto model = load_model(mo);
    if (!model.ok()) return fail(cmd, model.status().message());
    const lmllm::Model & m = *model.value();

    // one context big enough for every test
    const int32_t max_p = *std::max_element(n_prompt.begin(), n_prompt.end());
    const int32_t max_n = *std::max_element(n_gen.begin(), n_gen.end());
    co.n_ctx = uint32_t(std::max(1, std::max(max_p, max_n)));
    co.n_batch = std::min(n_batch, co.n_ctx);
    co.n_threads = threads[0];
    auto ctx_r = make_context(m, co);
    if (!ctx_r.ok()) return fail(cmd, ctx_r.status().message());
    lmllm::Context & ctx = *ctx_r.value();

    BenchResult base;
    base.model_filename = std::filesystem::path(mo.path).filename().string();
    base.model_type = m.description();
    base.model_size = m.size_bytes();
    base.model_n_params = m.n_params();
    base.backend = mo.device.empty() ? "CPU" : mo.device;
    base.n_batch = int32_t(co.n_batch);

    std::vector<BenchResult> results;
    for (int32_t nt : threads) {
        ctx.set_n_threads(nt);
        auto run_test = [&](int32_t pp, int32_t tg) -> Status {
            BenchResult r = base;
            r.n_threads = nt;
            r.n_prompt = pp;
            r.n_gen = tg;
            const std::vector<Token> tokens = bench_tokens(m.vocab(), ctx.n_vocab(), pp > 0 ? pp : tg);
            auto once = [&]() { return pp > 0 ? run_pp(ctx, tokens) : run_tg(ctx, tokens); };
            if (!no_warmup) {
                // llama-bench warms up with the prompt, or with one generated token
                auto w = pp > 0 ? run_pp(ctx, tokens) : run_tg(ctx, {tokens[0]});
                if (!w.ok()) return w.status();
            }
            for (int32_t i = 0; i < reps; i++) {
                auto t = once();
                if (!t.ok()) return t.status();
                r.samples_ns.push_back(t.value() * 1e9);
            }
            if (mo.verbose) std::fprintf(stderr, "bench: %s, %d threads done\n", r.test_name().c_str(), nt);
            results.push_back(std::move(r));
            return Status();
        };
        for (int32_t pp : n_prompt) {
            if (pp == 0) continue;
            if (Status s = run_test(pp, 0); !s.ok()) return fail(cmd, s.message());
        }
        for (int32_t tg : n_gen) {
            if (tg == 0) continue;
            if (Status s = run_test(0, tg); !s.ok()) return fail(cmd, s.message());
        }
    }

    if (output == "md") std::fputs(report_markdown(results, build_info()).c_str(), stdout);
    else if (output == "json") std::fputs(report_json(results, build_version(), build_commit()).c_str(), stdout);
    else std::fputs(report_csv(results, build_version(), build_commit()).c_str(), stdout);
    return 0;
}

} // namespace cli
