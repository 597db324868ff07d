// lmggml bench: prompt-processing and generation speed, like llama-bench.
//   ppN: one decode of N tokens into an empty cache
//   tgN: N single-token decodes, starting from an empty cache
//   ppP+tgG (-pg P,G): the prompt's decode, then G single-token decodes,
//            timed together (t/s over P + G tokens)
//   "@ dD" (-d D): the cache first holds D tokens (decoded untimed)
// Each test runs once as a warm-up, then -r times; the t/s column is the mean
// of the per-repetition rates with their sample standard deviation. Progress
// (test, repetition) goes to stderr as it runs.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>

#include <unistd.h>

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

struct Test {
    int32_t pp = 0, tg = 0, depth = 0;
};

// Seconds for one repetition: the depth's tokens decoded untimed into an
// emptied cache, then the prompt in one decode, then tg single-token decodes.
lmllm::Result<double> run_once(lmllm::Context & ctx, const std::vector<Token> & depth,
                               const std::vector<Token> & prompt, const std::vector<Token> & gen) {
    ctx.clear();
    if (!depth.empty()) {
        if (Status s = ctx.decode(depth); !s.ok()) return s;
    }
    const double t0 = now_seconds();
    if (!prompt.empty()) {
        if (Status s = ctx.decode(prompt); !s.ok()) return s;
    }
    for (Token t : gen) {
        if (Status s = ctx.decode({t}); !s.ok()) return s;
    }
    return now_seconds() - t0;
}

// "P,G" of -pg
lmllm::Result<Test> parse_pg(const std::string & v) {
    const size_t comma = v.find(',');
    Test t;
    auto num = [](const std::string & x, int32_t & out) {
        if (x.empty() || x.size() > 9 || x.find_first_not_of("0123456789") != std::string::npos) return false;
        out = std::stoi(x);
        return true;
    };
    if (comma == std::string::npos || !num(v.substr(0, comma), t.pp) || !num(v.substr(comma + 1), t.tg) || t.pp < 1 ||
        t.tg < 1)
        return Status::error("invalid value '" + v + "' for -pg (expected PROMPT,GEN: two positive integers)");
    return t;
}

// One line per repetition; redrawn in place on a terminal.
void progress(bool tty, int idx, int n_tests, const std::string & name, int32_t nt, const std::string & what) {
    std::fprintf(stderr, "%sbench: test %d/%d: %s, %d threads: %s%s", tty ? "\r\033[K" : "", idx, n_tests, name.c_str(),
                 nt, what.c_str(), tty ? "" : "\n");
    std::fflush(stderr);
}

} // namespace

int cmd_bench(int argc, char ** argv) {
    const std::string cmd = "bench";
    ModelOptions mo;
    std::vector<int32_t> n_prompt = {512}, n_gen = {128}, threads, depths = {0}; // threads: default_threads()
    std::vector<std::string> pg_args;
    int32_t reps = 5;
    uint32_t n_batch = 2048;
    std::string output = "md";
    bool no_warmup = false;

    ArgParser p(cmd, "bench -m MODEL.gguf [-p 512] [-n 128] [-pg P,G] [-d 0] [-t 1,2] [-r REPS] [-o md|json|csv]",
                "Measures prompt processing (ppN: one decode of N tokens), text generation (tgN: N\n"
                "single-token decodes) and both in turn (ppP+tgG) in tokens per second, mean ± stddev over\n"
                "the repetitions, optionally after D tokens already in the cache (\"@ dD\"). Progress on stderr.");
    add_model_options(p, mo, /*short_device=*/false);
    p.option({"-p", "--n-prompt"}, &n_prompt, "N[,N...]", "prompt sizes, 0: none (default 512)");
    p.option({"-n", "--n-gen"}, &n_gen, "N[,N...]", "generation lengths, 0: none (default 128)");
    p.option({"-pg"}, &pg_args, "P,G", "a prompt of P tokens then G generated, timed together (repeatable)");
    p.option({"-d", "--n-depth"}, &depths, "N[,N...]", "tokens in the cache before each test (default 0)");
    p.option({"-t", "--threads"}, &threads, "N[,N...]",
             "thread counts (default: the usable cores not busy with other work)");
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
    if (output != "md" && output != "json" && output != "csv")
        return fail(cmd, "unknown output format '" + output + "' (md, json or csv)");
    if (reps < 1) return fail(cmd, "-r must be >= 1");
    if (n_batch < 1) return fail(cmd, "-b must be >= 1");
    if (lmllm::Status s = check_model_context_options(mo, ContextOptions()); !s.ok()) return fail(cmd, s.message());
    auto negative = [](const std::vector<int32_t> & v) {
        return std::any_of(v.begin(), v.end(), [](int32_t x) { return x < 0; });
    };
    if (negative(n_prompt) || negative(n_gen)) return fail(cmd, "-p and -n must be >= 0");
    if (negative(depths)) return fail(cmd, "-d must be >= 0");
    std::vector<Test> pg;
    for (const std::string & a : pg_args) {
        auto t = parse_pg(a);
        if (!t.ok()) return fail(cmd, t.status().message());
        pg.push_back(t.value());
    }
    if (std::any_of(threads.begin(), threads.end(), [](int32_t x) { return x < 1; }))
        return fail(cmd, "-t must be >= 1");
    if (threads.empty()) threads = {default_threads()};

    auto model = load_model(mo);
    if (!model.ok()) return fail(cmd, model.status().message());
    const lmllm::Model & m = *model.value();

    // the tests, in llama-bench's order, and one context big enough for each
    std::vector<Test> tests;
    for (int32_t d : depths) {
        for (int32_t pp : n_prompt)
            if (pp > 0) tests.push_back({pp, 0, d});
        for (int32_t tg : n_gen)
            if (tg > 0) tests.push_back({0, tg, d});
        for (const Test & t : pg) tests.push_back({t.pp, t.tg, d});
    }
    int64_t need = 1;
    for (const Test & t : tests) need = std::max<int64_t>(need, int64_t(t.depth) + t.pp + t.tg);
    if (need > int64_t(INT32_MAX))
        return fail(cmd, "the tests need a context of " + std::to_string(need) + " tokens: too large");
    co.n_ctx = uint32_t(need);
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
    base.backend = !mo.device.empty() ? mo.device : mo.rpc.empty() ? "CPU" : "RPC";
    base.n_batch = int32_t(co.n_batch);

    const bool tty = isatty(STDERR_FILENO) == 1;
    const int n_tests = int(tests.size() * threads.size());
    int idx = 0;
    std::vector<BenchResult> results;
    for (int32_t nt : threads) {
        ctx.set_n_threads(nt);
        for (const Test & t : tests) {
            BenchResult r = base;
            r.n_threads = nt;
            r.n_prompt = t.pp;
            r.n_gen = t.tg;
            r.n_depth = t.depth;
            const std::string name = r.test_name();
            idx++;
            // the depth's, the prompt's and the generation's tokens: one random stream
            const std::vector<Token> all = bench_tokens(m.vocab(), ctx.n_vocab(), t.depth + t.pp + t.tg);
            const std::vector<Token> depth(all.begin(), all.begin() + t.depth);
            const std::vector<Token> prompt(all.begin() + t.depth, all.begin() + t.depth + t.pp);
            const std::vector<Token> gen(all.begin() + t.depth + t.pp, all.end());
            if (!no_warmup) {
                // llama-bench warms up with the prompt, or with one generated token
                progress(tty, idx, n_tests, name, nt, "warm-up");
                auto w = t.pp > 0 ? run_once(ctx, depth, prompt, {}) : run_once(ctx, depth, {}, {gen[0]});
                if (!w.ok()) return fail(cmd, w.status().message());
            }
            for (int32_t i = 0; i < reps; i++) {
                progress(tty, idx, n_tests, name, nt,
                         "repetition " + std::to_string(i + 1) + "/" + std::to_string(reps));
                auto d = run_once(ctx, depth, prompt, gen);
                if (!d.ok()) return fail(cmd, d.status().message());
                r.samples_ns.push_back(d.value() * 1e9);
            }
            results.push_back(std::move(r));
        }
    }
    if (tty && n_tests > 0) std::fputs("\r\033[K", stderr);

    if (output == "md")
        std::fputs(report_markdown(results, build_info()).c_str(), stdout);
    else if (output == "json")
        std::fputs(report_json(results, build_version(), build_commit()).c_str(), stdout);
    else
        std::fputs(report_csv(results, build_version(), build_commit()).c_str(), stdout);
    return 0;
}

} // namespace cli
