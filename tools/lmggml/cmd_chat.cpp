// lmggml chat: an interactive conversation in the model's chat template.
// The KV cache keeps the whole conversation; each turn feeds only the text
// the template adds after what the cache already holds.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <sstream>

#include "commands.h"
#include "common.h"
#include "generate.h"
#include "lmllm/chat.h"

namespace cli {

namespace {

struct Conversation {
    lmllm::ChatTemplate tmpl = lmllm::ChatTemplate::CHATML;
    std::vector<lmllm::ChatMessage> messages;
    std::string cached; // the text whose tokens are in the KV cache (BOS aside)
};

// The tokens to decode for the next turn. When the template re-renders
// earlier turns differently from what the cache holds (e.g. it trims the
// reply), the cache is cleared and the whole conversation is fed again.
lmllm::Result<std::vector<lmllm::Token>> next_input(Conversation & c, lmllm::Context & ctx, const lmllm::Vocab & vocab) {
    auto text = lmllm::apply_chat_template(c.tmpl, c.messages, true);
    if (!text.ok()) return text.status();
    const std::string & full = text.value();
    bool first = c.cached.empty() && ctx.n_past() == 0;
    if (!first && full.compare(0, c.cached.size(), c.cached) != 0) {
        ctx.clear();
        c.cached.clear();
        first = true;
    }
    std::vector<lmllm::Token> tokens = vocab.tokenize(full.substr(c.cached.size()), first, true);
    c.cached = full;
    return tokens;
}

// "/set temp=0.7 top-k=20 ..." changes sampling parameters between turns.
lmllm::Status apply_set(const std::string & line, lmllm::SamplerParams & sp) {
    lmllm::SamplerParams next = sp;
    std::istringstream in(line.substr(4));
    std::string kv;
    while (in >> kv) {
        const size_t eq = kv.find('=');
        if (eq == std::string::npos) return lmllm::Status::error("/set expects key=value, got '" + kv + "'");
        const std::string key = kv.substr(0, eq), val = kv.substr(eq + 1);
        char * end = nullptr;
        const double v = std::strtod(val.c_str(), &end);
        if (val.empty() || *end != '\0') return lmllm::Status::error("/set " + key + ": '" + val + "' is not a number");
        if (key == "temp") next.temperature = float(v);
        else if (key == "top-k") next.top_k = int32_t(v);
        else if (key == "top-p") next.top_p = float(v);
        else if (key == "min-p") next.min_p = float(v);
        else if (key == "repeat-penalty") next.repeat_penalty = float(v);
        else if (key == "repeat-last-n" && v >= 0) next.repeat_last_n = int32_t(v);
        else if (key == "seed" && v >= 0) next.seed = uint64_t(v);
        else return lmllm::Status::error("/set: unknown key or bad value '" + kv +
                                         "' (temp, top-k, top-p, min-p, repeat-penalty, repeat-last-n, seed)");
    }
    if (lmllm::Status s = check_sampling(next); !s.ok()) return s;
    sp = next;
    return lmllm::Status();
}

} // namespace

int cmd_chat(int argc, char ** argv) {
    const std::string cmd = "chat";
    ModelOptions mo;
    ContextOptions co;
    lmllm::SamplerParams sp;
    std::string system;
    int32_t n_predict = -1;
    std::string tmpl_name;

    ArgParser p(cmd, "chat -m MODEL.gguf [options]",
                "Interactive chat in the model's chat template. Reads one message per line from stdin;\n"
                "/exit or the end of input (Ctrl-D) ends the conversation, /reset starts a new one,\n"
                "/set KEY=VALUE... changes sampling (temp, top-k, top-p, min-p, repeat-penalty,\n"
                "repeat-last-n, seed).");
    add_model_options(p, mo);
    p.option({"--system"}, &system, "TEXT", "a system message opening the conversation");
    p.option({"--template"}, &tmpl_name, "NAME", "chatml | llama3 | gemma | llama2 (default: the model's)");
    p.option({"-n", "--n-predict"}, &n_predict, "N", "max tokens per reply, -1: until end of turn (default -1)");
    add_context_options(p, co);
    add_sampling_options(p, sp);

    bool help = false;
    if (lmllm::Status s = p.parse(argc, argv, 2, help); !s.ok()) return fail(cmd, s.message() + " (see lmggml chat --help)");
    if (help) {
        std::fputs(p.help_text().c_str(), stdout);
        return 0;
    }
    setup_logging(mo.verbose);
    if (n_predict < -1) return fail(cmd, "-n must be >= -1");
    if (lmllm::Status s = check_sampling(sp); !s.ok()) return fail(cmd, s.message());
    if (lmllm::Status s = check_model_context_options(mo, co); !s.ok()) return fail(cmd, s.message());

    Conversation conv;
    if (!tmpl_name.empty()) {
        conv.tmpl = lmllm::detect_chat_template(tmpl_name);
        if (conv.tmpl == lmllm::ChatTemplate::UNKNOWN) return fail(cmd, "unknown template '" + tmpl_name + "'");
    }

    auto model = load_model(mo);
    if (!model.ok()) return fail(cmd, model.status().message());
    const lmllm::Model & m = *model.value();
    if (tmpl_name.empty()) {
        conv.tmpl = lmllm::detect_chat_template(m.chat_template());
        if (conv.tmpl == lmllm::ChatTemplate::UNKNOWN) {
            std::fprintf(stderr, "warning: %s; using chatml\n",
                         m.chat_template().empty() ? "the model has no chat template" : "unrecognised chat template");
            conv.tmpl = lmllm::ChatTemplate::CHATML;
        }
    }
    auto ctx_r = make_context(m, co);
    if (!ctx_r.ok()) return fail(cmd, ctx_r.status().message());
    lmllm::Context & ctx = *ctx_r.value();
    std::fprintf(stderr, "chat template: %s, context: %u tokens. Type /exit or end input (Ctrl-D) to quit.\n",
                 lmllm::chat_template_name(conv.tmpl), ctx.n_ctx());
    if (!system.empty()) conv.messages.push_back({"system", system});

    auto sampler = std::make_unique<lmllm::Sampler>(sp);
    std::vector<lmllm::Token> history;
    const bool interactive = isatty(STDIN_FILENO) == 1;
    GenerationStats total;
    std::string line;
    while (true) {
        if (interactive) {
            std::fputs("> ", stdout);
            std::fflush(stdout);
        }
        if (!std::getline(std::cin, line)) break;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line == "/exit") break;
        if (line.empty()) continue;
        if (line == "/reset") { // a new conversation: the system message stays
            conv.messages.resize(system.empty() ? 0 : 1);
            conv.cached.clear();
            ctx.clear();
            history.clear();
            continue;
        }
        if (line.rfind("/set", 0) == 0 && (line.size() == 4 || line[4] == ' ')) {
            if (lmllm::Status s = apply_set(line, sp); !s.ok()) {
                std::fprintf(stderr, "lmggml chat: %s\n", s.message().c_str()); // the chat goes on
                continue;
            }
            sampler = std::make_unique<lmllm::Sampler>(sp);
            continue;
        }

        conv.messages.push_back({"user", line});
        auto input = next_input(conv, ctx, m.vocab());
        if (!input.ok()) return fail(cmd, input.status().message());
        if (mo.verbose)
            std::fprintf(stderr, "chat: feeding %zu new tokens after %u cached\n", input.value().size(), ctx.n_past());
        if (ctx.n_past() + input.value().size() >= ctx.n_ctx())
            return fail(cmd, "the conversation no longer fits in the context (" + std::to_string(ctx.n_ctx()) +
                                 " tokens); start again with a larger -c");

        std::string reply;
        GenerationStats st;
        lmllm::Status s = generate(ctx, m.vocab(), *sampler, input.value(), n_predict, history, stdout, reply, st);
        std::fputs("\n", stdout);
        std::fflush(stdout);
        if (!s.ok()) return fail(cmd, s.message());
        // a reply cut by -n: its last token still belongs in the cache
        if (!st.hit_eog && !st.context_full && st.n_gen > 0) {
            if (lmllm::Status d = ctx.decode({history.back()}); !d.ok()) return fail(cmd, d.message());
        }
        conv.cached += reply;
        conv.messages.push_back({"assistant", reply});
        total.n_prompt += st.n_prompt;
        total.t_prompt += st.t_prompt;
        total.n_gen += st.n_gen;
        total.t_gen += st.t_gen;
        if (st.context_full) return fail(cmd, "the context is full (" + std::to_string(ctx.n_ctx()) + " tokens)");
    }
    std::fprintf(stderr, "%s\n", speed_summary(total).c_str());
    return 0;
}

} // namespace cli
