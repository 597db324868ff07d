// `lmggml quantize` (types, fallbacks, the importance-matrix rule), `bench`'s
// -pg, -d and progress, and `perplexity --kl-divergence` against statistics
// computed here through the runner library, all on tiny generated models.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "cli_util.h"
#include "ggml.h"
#include "gguf.h"
#include "lmllm/context.h"
#include "lmllm/model.h"

using clitest::run_cli;

namespace {

// Every matrix row 256 wide, so the 256-blocks of the K- and I-quants apply
// without a fallback.
tiny::Spec wide_spec() {
    tiny::Spec s = clitest::tiny_spec();
    s.n_embd = 256;
    s.n_head = 4;
    s.n_head_kv = 2;
    s.head_dim = 64;
    s.n_rot = 64;
    s.n_ff = 256;
    return s;
}

const char * kText =
    "The sea is the connected body of salty water that covers over 70 percent of the Earth's surface. "
    "It moderates the climate, provides food and oxygen, and supports a vast variety of life. Ships have "
    "crossed the sea for thousands of years, carrying people and goods between distant lands.\n";

struct GgufFile {
    lm_gguf_context * g = nullptr;
    lm_ggml_context * meta = nullptr;
    explicit GgufFile(const std::string & path) { g = lm_gguf_init_from_file(path.c_str(), {false, &meta}); }
    ~GgufFile() {
        if (g) lm_gguf_free(g);
        if (meta) lm_ggml_free(meta);
    }
    lm_ggml_tensor * tensor(const std::string & name) const { return lm_ggml_get_tensor(meta, name.c_str()); }
};

// The tensor's values as floats (dequantized by the type's decoder).
std::vector<float> values(const lm_ggml_tensor * t) {
    std::vector<float> out(static_cast<size_t>(lm_ggml_nelements(t)));
    if (t->type == LM_GGML_TYPE_F32)
        std::memcpy(out.data(), t->data, out.size() * sizeof(float));
    else
        lm_ggml_get_type_traits(t->type)->to_float(t->data, out.data(), int64_t(out.size()));
    return out;
}

double rel_rmse(const std::vector<float> & got, const std::vector<float> & want) {
    double e = 0, n = 0;
    for (size_t i = 0; i < want.size(); i++) {
        e += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
        n += double(want[i]) * want[i];
    }
    return std::sqrt(e / n);
}

// A fresh (empty) file in the test's directory, for the program to overwrite.
std::string out_path(const std::string & name) { return clitest::temp_file(name, ""); }

double number_after(const std::string & s, const std::string & re) {
    std::smatch m;
    return std::regex_search(s, m, std::regex(re)) ? std::stod(m[1]) : NAN;
}

// llama.cpp's imatrix.dat: n_entries, then name, ncall, nval, values
void write_imatrix(const std::string & path, const std::vector<std::pair<std::string, int>> & entries) {
    std::ofstream f(path, std::ios::binary);
    auto i32 = [&](int32_t v) { f.write(reinterpret_cast<const char *>(&v), 4); };
    i32(int32_t(entries.size()));
    for (const auto & [name, n] : entries) {
        i32(int32_t(name.size()));
        f.write(name.data(), std::streamsize(name.size()));
        i32(10); // ncall: the stored sums are 10 x the importance
        i32(n);
        for (int i = 0; i < n; i++) {
            const float v = 10.0f * (1.0f + float(i % 7));
            f.write(reinterpret_cast<const char *>(&v), 4);
        }
    }
}

} // namespace

TEST(CliQuantize, QuantizedModelsHoldTheTypeDecodeCloseAndRun) {
    REQUIRE_CLI();
    const tiny::Spec spec = wide_spec();
    const std::string src = clitest::tiny_model("wide.gguf", spec);
    ASSERT_FALSE(src.empty());
    const tiny::Weights w = tiny::make_weights(spec, 1);
    const struct {
        const char * name;
        lm_ggml_type type;
        double tol;
    } cases[] = {
        {"Q8_0", LM_GGML_TYPE_Q8_0, 0.01},
        {"q4_k", LM_GGML_TYPE_Q4_K, 0.12},
        {"IQ4_XS", LM_GGML_TYPE_IQ4_XS, 0.12},
    };
    for (const auto & c : cases) {
        SCOPED_TRACE(c.name);
        const std::string dst = out_path(std::string("wide-") + c.name + ".gguf");
        auto q = run_cli({"quantize", src, dst, c.name, "-t", "2"});
        ASSERT_EQ(q.rc, 0) << q.err;
        GgufFile f(dst);
        ASSERT_NE(f.g, nullptr);
        // metadata copied, file type set
        EXPECT_GE(lm_gguf_find_key(f.g, "tokenizer.ggml.tokens"), 0);
        EXPECT_GE(lm_gguf_find_key(f.g, "general.file_type"), 0);
        int n_quant = 0;
        for (const auto & [name, want] : w.data) {
            const lm_ggml_tensor * t = f.tensor(name);
            ASSERT_NE(t, nullptr) << name;
            if (w.shape.at(name).size() < 2) {
                EXPECT_EQ(t->type, LM_GGML_TYPE_F32) << name; // norms stay F32
                EXPECT_EQ(values(t), want) << name;
                continue;
            }
            EXPECT_EQ(t->type, c.type) << name;
            n_quant++;
            EXPECT_LT(rel_rmse(values(t), want), c.tol) << name;
        }
        EXPECT_GE(n_quant, 2 * spec.n_layer * 7 / 2);
        auto r = run_cli({"run", "-m", dst, "-p", "hello", "-n", "8", "--temp", "0"});
        EXPECT_EQ(r.rc, 0) << r.err;
        EXPECT_FALSE(r.out.empty());
    }
}

TEST(CliQuantize, NarrowRowsTakeTheFallbackType) {
    REQUIRE_CLI();
    const std::string src = clitest::tiny_model("tiny.gguf"); // rows of 64 and 96
    const std::string dst = out_path("narrow-q4k.gguf");
    auto q = run_cli({"quantize", src, dst, "Q4_K"});
    ASSERT_EQ(q.rc, 0) << q.err;
    EXPECT_NE(q.out.find("took a fallback type"), std::string::npos) << q.out;
    GgufFile f(dst);
    ASSERT_NE(f.g, nullptr);
    EXPECT_EQ(f.tensor("blk.0.attn_q.weight")->type, LM_GGML_TYPE_Q5_0); // llama.cpp's fallback for Q4_K
    EXPECT_EQ(run_cli({"run", "-m", dst, "-p", "hi", "-n", "4"}).rc, 0);
}

TEST(CliQuantize, RefusalsAreOneClearError) {
    REQUIRE_CLI();
    const std::string src = clitest::tiny_model("wide.gguf", wide_spec());
    for (const char * t : {"IQ2_XXS", "IQ2_XS", "IQ1_S", "IQ1_M", "IQ2_S"}) {
        auto r = run_cli({"quantize", src, out_path("refused.gguf"), t});
        EXPECT_EQ(r.rc, 1) << t;
        EXPECT_NE(r.err.find("needs an importance matrix (--imatrix FILE"), std::string::npos) << r.err;
    }
    auto unknown = run_cli({"quantize", src, out_path("x.gguf"), "Q4_K_M"});
    EXPECT_EQ(unknown.rc, 1);
    EXPECT_NE(unknown.err.find("unknown type 'Q4_K_M'"), std::string::npos) << unknown.err;
    EXPECT_NE(unknown.err.find("IQ4_XS"), std::string::npos) << unknown.err;
    EXPECT_EQ(run_cli({"quantize", src, out_path("x.gguf")}).rc, 1);
    auto missing = run_cli({"quantize", "/nonexistent.gguf", out_path("x.gguf"), "Q8_0"});
    EXPECT_EQ(missing.rc, 1);
    EXPECT_NE(missing.err.find("/nonexistent.gguf"), std::string::npos) << missing.err;

    // an already quantized model needs --allow-requantize
    const std::string q8 = out_path("req-q8.gguf");
    ASSERT_EQ(run_cli({"quantize", src, q8, "Q8_0"}).rc, 0);
    const std::string q4 = out_path("req-q4.gguf");
    auto req = run_cli({"quantize", q8, q4, "Q4_0"});
    EXPECT_EQ(req.rc, 1);
    EXPECT_NE(req.err.find("--allow-requantize"), std::string::npos) << req.err;
    auto ok = run_cli({"quantize", q8, q4, "Q4_0", "--allow-requantize"});
    ASSERT_EQ(ok.rc, 0) << ok.err;
    GgufFile f(q4);
    ASSERT_NE(f.g, nullptr);
    EXPECT_EQ(f.tensor("blk.1.ffn_up.weight")->type, LM_GGML_TYPE_Q4_0);
}

TEST(CliQuantize, AnImatrixFileEnablesTheLowBitTypes) {
    REQUIRE_CLI();
    const tiny::Spec spec = wide_spec();
    const std::string src = clitest::tiny_model("wide.gguf", spec);
    const tiny::Weights w = tiny::make_weights(spec, 1);
    std::vector<std::pair<std::string, int>> entries;
    for (const auto & [name, shape] : w.shape)
        if (shape.size() >= 2) entries.push_back({name, int(shape[0])});
    const std::string im = out_path("imatrix.dat");
    write_imatrix(im, entries);
    const std::string dst = out_path("wide-iq2xxs.gguf");
    auto q = run_cli({"quantize", src, dst, "IQ2_XXS", "--imatrix", im});
    ASSERT_EQ(q.rc, 0) << q.err;
    GgufFile f(dst);
    ASSERT_NE(f.g, nullptr);
    EXPECT_EQ(f.tensor("blk.0.ffn_down.weight")->type, LM_GGML_TYPE_IQ2_XXS);
    EXPECT_LT(rel_rmse(values(f.tensor("blk.0.ffn_down.weight")), w["blk.0.ffn_down.weight"]), 0.6);
    EXPECT_EQ(run_cli({"run", "-m", dst, "-p", "hi", "-n", "4"}).rc, 0);
    // an entry missing for a tensor that needs one is named
    entries.erase(entries.begin());
    write_imatrix(im, entries);
    auto miss = run_cli({"quantize", src, out_path("x.gguf"), "IQ2_XXS", "--imatrix", im});
    EXPECT_EQ(miss.rc, 1);
    EXPECT_NE(miss.err.find("has no entry for"), std::string::npos) << miss.err;
    auto bad = run_cli({"quantize", src, out_path("x.gguf"), "Q4_K", "--imatrix", clitest::temp_file("bad.dat", "xx")});
    EXPECT_EQ(bad.rc, 1);
    EXPECT_NE(bad.err.find("not an imatrix.dat file"), std::string::npos) << bad.err;
}

TEST(CliBench, PromptGenerationDepthAndProgress) {
    REQUIRE_CLI();
    const std::string model = clitest::tiny_model("tiny.gguf");
    auto r = run_cli(
        {"bench", "-m", model, "-p", "8", "-n", "4", "-pg", "8,4", "-d", "0,16", "-r", "2", "-t", "1", "-o", "json"});
    ASSERT_EQ(r.rc, 0) << r.err;
    clitest::Json j;
    ASSERT_TRUE(clitest::parse_json(r.out, j)) << r.out;
    ASSERT_EQ(j.kind, clitest::Json::ARRAY);
    std::set<std::string> names;
    for (const clitest::Json & t : j.items) {
        const std::string name = t.fields.at("test").str;
        names.insert(name);
        const int depth = int(t.fields.at("n_depth").number);
        EXPECT_EQ(depth, name.find("@ d16") != std::string::npos ? 16 : 0) << name;
        EXPECT_GT(t.fields.at("avg_ts").number, 0.0) << name;
        if (name.rfind("pp8+tg4", 0) == 0) {
            EXPECT_EQ(t.fields.at("n_prompt").number, 8);
            EXPECT_EQ(t.fields.at("n_gen").number, 4);
            // t/s over the 12 tokens of each repetition
            for (size_t i = 0; i < 2; i++)
                EXPECT_NEAR(t.fields.at("samples_ts").items[i].number, 12e9 / t.fields.at("samples_ns").items[i].number,
                            1e-3 * t.fields.at("samples_ts").items[i].number);
        }
    }
    EXPECT_EQ(names, (std::set<std::string>{"pp8", "tg4", "pp8+tg4", "pp8 @ d16", "tg4 @ d16", "pp8+tg4 @ d16"}))
        << r.out;
    // progress: every test and repetition, in order
    EXPECT_NE(r.err.find("bench: test 1/6: pp8, 1 threads: warm-up"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("bench: test 6/6: pp8+tg4 @ d16, 1 threads: repetition 2/2"), std::string::npos) << r.err;
    EXPECT_LT(r.err.find("test 3/6: pp8+tg4, 1 threads: repetition 1/2"),
              r.err.find("test 3/6: pp8+tg4, 1 threads: repetition 2/2"));
    // the markdown table names them the same way
    auto md = run_cli({"bench", "-m", model, "-p", "0", "-n", "0", "-pg", "4,2", "-d", "8", "-r", "1"});
    ASSERT_EQ(md.rc, 0) << md.err;
    EXPECT_TRUE(std::regex_search(md.out, std::regex("\\| +pp4\\+tg2 @ d8 \\| +[0-9.]+ ± [0-9.]+ \\|"))) << md.out;
    // -d is the depth here: the device is -dev / --device
    auto bad = run_cli({"bench", "-m", model, "-pg", "4"});
    EXPECT_EQ(bad.rc, 1);
    EXPECT_NE(bad.err.find("invalid value '4' for -pg"), std::string::npos) << bad.err;
    auto dev = run_cli({"bench", "-m", model, "-dev", "NoSuchDevice", "-r", "1"});
    EXPECT_EQ(dev.rc, 1);
    EXPECT_NE(dev.err.find("unknown device 'NoSuchDevice'"), std::string::npos) << dev.err;
}

TEST(CliPerplexity, KlDivergenceAgainstSavedBaseLogits) {
    REQUIRE_CLI();
    constexpr int n_ctx = 32;
    // the random model's logits are nearly flat: a scaled output matrix
    // sharpens them, so that Q4_K's rounding shows in the divergence
    tiny::Spec spec = wide_spec();
    spec.tied = false;
    tiny::Weights w = tiny::make_weights(spec, 1);
    ASSERT_TRUE(w.has("output.weight"));
    for (float & v : w.data["output.weight"]) v *= 8.0f;
    const std::string base = out_path("kld-base.gguf");
    ASSERT_TRUE(tiny::write_gguf(spec, w, base));
    const std::string q8 = out_path("kld-q4k.gguf");
    ASSERT_EQ(run_cli({"quantize", base, q8, "Q4_K"}).rc, 0);
    const std::string text = clitest::temp_file("kld.txt", kText);
    const std::string logits = out_path("base.kld");

    auto save =
        run_cli({"perplexity", "-m", base, "-f", text, "-c", std::to_string(n_ctx), "--kl-divergence-base", logits});
    ASSERT_EQ(save.rc, 0) << save.err;
    const double ppl_base = number_after(save.out, "Final estimate: PPL = ([0-9.]+)");

    // the base against itself: nothing differs (but the file's 16-bit rounding)
    auto self = run_cli({"perplexity", "-m", base, "--kl-divergence-base", logits, "--kl-divergence"});
    ASSERT_EQ(self.rc, 0) << self.err;
    EXPECT_LT(number_after(self.out, "Mean    KLD: +([-0-9.]+)"), 1e-4) << self.out;
    EXPECT_NEAR(number_after(self.out, "Same top p: +([0-9.]+)"), 100.0, 1e-9) << self.out;
    EXPECT_NEAR(number_after(self.out, "Mean PPL\\(Q\\)/PPL\\(base\\) +: +([0-9.]+)"), 1.0, 1e-3) << self.out;
    EXPECT_NEAR(number_after(self.out, "Mean PPL\\(base\\) +: +([0-9.]+)"), ppl_base, 1e-3 * ppl_base) << self.out;

    // the quantized model: statistics recomputed here through the library, in double
    double kld = 0, nll_q = 0, nll_b = 0;
    int count = 0, same = 0;
    {
        auto mb = lmllm::Model::load(base, {});
        auto mq = lmllm::Model::load(q8, {});
        ASSERT_TRUE(mb.ok() && mq.ok());
        lmllm::ContextParams cp;
        cp.n_ctx = n_ctx;
        cp.n_batch = n_ctx;
        cp.all_logits = true;
        auto cb = lmllm::Context::create(*mb.value(), cp);
        auto cq = lmllm::Context::create(*mq.value(), cp);
        ASSERT_TRUE(cb.ok() && cq.ok());
        const lmllm::Vocab & vocab = mb.value()->vocab();
        const std::vector<lmllm::Token> tokens = vocab.tokenize(kText, true, false);
        const int n_chunk = int(tokens.size()) / n_ctx;
        ASSERT_GE(n_chunk, 2);
        const int n_vocab = cb.value()->n_vocab();
        auto log_softmax = [&](const float * l) {
            std::vector<double> out(static_cast<size_t>(n_vocab));
            double mx = l[0], sum = 0;
            for (int v = 1; v < n_vocab; v++) mx = std::max(mx, double(l[v]));
            for (int v = 0; v < n_vocab; v++) sum += std::exp(double(l[v]) - mx);
            for (int v = 0; v < n_vocab; v++) out[size_t(v)] = double(l[v]) - mx - std::log(sum);
            return out;
        };
        for (int c = 0; c < n_chunk; c++) {
            std::vector<lmllm::Token> chunk(tokens.begin() + c * n_ctx, tokens.begin() + (c + 1) * n_ctx);
            if (vocab.add_bos()) chunk[0] = vocab.bos();
            cb.value()->clear();
            cq.value()->clear();
            ASSERT_TRUE(cb.value()->decode(chunk).ok() && cq.value()->decode(chunk).ok());
            for (int j = n_ctx / 2; j < n_ctx - 1; j++) {
                const auto pb = log_softmax(cb.value()->logits(j)), pq = log_softmax(cq.value()->logits(j));
                size_t tb = 0, tq = 0;
                for (size_t v = 0; v < pb.size(); v++) {
                    kld += std::exp(pb[v]) * (pb[v] - pq[v]);
                    if (pb[v] > pb[tb]) tb = v;
                    if (pq[v] > pq[tq]) tq = v;
                }
                const size_t next = size_t(tokens[size_t(c * n_ctx + j + 1)]);
                nll_q -= pq[next];
                nll_b -= pb[next];
                same += tb == tq;
                count++;
            }
        }
    }
    kld /= count;
    auto cmp = run_cli({"perplexity", "-m", q8, "--kl-divergence-base", logits, "--kl-divergence"});
    ASSERT_EQ(cmp.rc, 0) << cmp.err;
    const double got_kld = number_after(cmp.out, "Mean    KLD: +([-0-9.]+)");
    EXPECT_GT(kld, 1e-5); // Q4_K does change the model
    EXPECT_NEAR(got_kld, kld, 2e-4 + 0.05 * kld) << cmp.out;
    EXPECT_NEAR(number_after(cmp.out, "Same top p: +([0-9.]+)"), 100.0 * same / count, 1e-2) << cmp.out;
    const double ratio = std::exp((nll_q - nll_b) / count);
    EXPECT_NEAR(number_after(cmp.out, "Mean PPL\\(Q\\)/PPL\\(base\\) +: +([0-9.]+)"), ratio, 1e-3 * ratio) << cmp.out;
    EXPECT_NEAR(number_after(cmp.out, "Mean PPL\\(Q\\) +: +([0-9.]+)"), std::exp(nll_q / count),
                1e-3 * std::exp(nll_q / count));

    // errors: no base file, a file of another kind, -f with --kl-divergence
    auto nofile = run_cli({"perplexity", "-m", q8, "--kl-divergence"});
    EXPECT_EQ(nofile.rc, 1);
    EXPECT_NE(nofile.err.find("--kl-divergence needs --kl-divergence-base FILE"), std::string::npos) << nofile.err;
    auto wrong = run_cli({"perplexity", "-m", q8, "--kl-divergence-base", text, "--kl-divergence"});
    EXPECT_EQ(wrong.rc, 1);
    EXPECT_NE(wrong.err.find("is not a logits file"), std::string::npos) << wrong.err;
    auto withf = run_cli({"perplexity", "-m", q8, "-f", text, "--kl-divergence-base", logits, "--kl-divergence"});
    EXPECT_EQ(withf.rc, 1);
    EXPECT_NE(withf.err.find("give no -f"), std::string::npos) << withf.err;
}

TEST(CliQuantize, EveryTypeWithoutAnImatrixLoadsAndRuns) {
    REQUIRE_CLI();
    const std::string src = clitest::tiny_model("wide.gguf", wide_spec());
    for (const char * name : {"F32", "F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K", "Q3_K", "Q5_K", "Q6_K",
                              "IQ3_XXS", "IQ3_S", "IQ4_NL", "TQ1_0", "TQ2_0"}) {
        SCOPED_TRACE(name);
        const std::string dst = out_path(std::string("every-") + name + ".gguf");
        auto q = run_cli({"quantize", src, dst, name});
        ASSERT_EQ(q.rc, 0) << q.err;
        {
            GgufFile f(dst);
            ASSERT_NE(f.g, nullptr);
            std::string want = name;
            for (char & c : want) c = char(std::tolower(static_cast<unsigned char>(c)));
            std::string got = lm_ggml_type_name(f.tensor("blk.0.attn_v.weight")->type);
            for (char & c : got) c = char(std::tolower(static_cast<unsigned char>(c)));
            EXPECT_EQ(got, want);
        }
        auto r = run_cli({"run", "-m", dst, "-p", "hello", "-n", "4", "--temp", "0"});
        EXPECT_EQ(r.rc, 0) << r.err;
        std::remove(dst.c_str());
    }
}
