// lmggml run: generate text from a prompt and stream it to stdout.
#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>

#include "chat_template.h"
#include "commands.h"
#include "common.h"
#include "generate.h"
#include "lmllm/chat.h"

namespace cli {

namespace {

// The prompt as the model should see it: wrapped in the chat template with --chat.
lmllm::Result<std::string> build_prompt(const lmllm::Model & m, const std::string & prompt, const std::string & system,
                                        bool chat, lmllm::ChatTemplate forced) {
    if (!chat) return prompt;
    const TemplateChoice choice = choose_chat_template(m, forced);
    std::fprintf(stderr, "chat template: %s (%s)\n", lmllm::chat_template_name(choice.tmpl), choice.source.c_str());
    std::vector<lmllm::ChatMessage> msgs;
    if (!system.empty()) msgs.push_back({"system", system});
    msgs.push_back({"user", prompt});
    return lmllm::apply_chat_template(choice.tmpl, msgs, true);
}

} // namespace

int cmd_run(int argc, char ** argv) {
    const std::string cmd = "run";
    ModelOptions mo;
    ContextOptions co;
    lmllm::SamplerParams sp;
    std::string prompt, prompt_file, system, tmpl_name;
    int32_t n_predict = 128;
    constexpr int32_t kUnset = std::numeric_limits<int32_t>::min();
    int32_t n_keep = kUnset; // not given: no context shift
    bool chat = false, no_summary = false, escape = false;
    GenerateOptions go;

    ArgParser p(cmd, "run -m MODEL.gguf -p PROMPT [options]",
                "Generates text that continues PROMPT (or answers it, with --chat) and streams it to stdout.\n"
                "A speed summary goes to stderr.");
    add_model_options(p, mo);
    p.option({"-p", "--prompt"}, &prompt, "TEXT", "the prompt");
    p.option({"-f", "--file"}, &prompt_file, "FILE", "read the prompt from a file");
    p.option({"-n", "--n-predict"}, &n_predict, "N", "tokens to generate, -1: until end of text (default 128)");
    p.flag({"--chat"}, &chat, "wrap the prompt in the model's chat template");
    p.option({"--system"}, &system, "TEXT", "with --chat: a system message");
    p.option({"--template", "--chat-template"}, &tmpl_name, "NAME",
             "with --chat: " + chat_template_names() + " (default: the model's)");
    p.option({"-r", "--reverse-prompt"}, &go.stop, "TEXT", "stop when the output ends with TEXT (repeatable)");
    p.flag({"--ignore-eos"}, &go.ignore_eos, "never end at an end-of-generation token (it is not sampled)");
    p.flag({"-e", "--escape"}, &escape,
           "process escapes (\\n, \\t, \\\\, \\\", \\xNN, ...) in the prompt, --system and -r");
    p.option({"--n-keep", "--keep"}, &n_keep, "N",
             "when the context fills, keep the first N prompt tokens (BOS aside), drop half of the rest and go on; "
             "-1: the whole prompt (default: stop when full)");
    p.flag({"--no-summary"}, &no_summary, "do not print the speed summary");
    add_context_options(p, co);
    add_sampling_options(p, sp);

    bool help = false;
    if (lmllm::Status s = p.parse(argc, argv, 2, help); !s.ok())
        return fail(cmd, s.message() + " (see lmggml run --help)");
    if (help) {
        std::fputs(p.help_text().c_str(), stdout);
        return 0;
    }
    setup_logging(mo.verbose);
    if (!prompt_file.empty()) {
        if (!prompt.empty()) return fail(cmd, "give either -p or -f, not both");
        auto text = read_text_file(prompt_file);
        if (!text.ok()) return fail(cmd, text.status().message());
        prompt = text.value();
    }
    if (prompt.empty()) return fail(cmd, "no prompt given (use -p TEXT or -f FILE)");
    if (n_predict < -1) return fail(cmd, "-n must be >= -1");
    if (n_keep != kUnset && n_keep < -1) return fail(cmd, "--n-keep must be >= -1");
    for (const std::string & r : go.stop)
        if (r.empty()) return fail(cmd, "-r needs a non-empty text");
    if (escape) {
        prompt = process_escapes(prompt);
        system = process_escapes(system);
        for (std::string & r : go.stop) r = process_escapes(r);
    }
    if (lmllm::Status s = check_sampling(sp); !s.ok()) return fail(cmd, s.message());
    if (lmllm::Status s = check_model_context_options(mo, co); !s.ok()) return fail(cmd, s.message());
    lmllm::ChatTemplate forced = lmllm::ChatTemplate::UNKNOWN;
    if (!tmpl_name.empty()) {
        if (!chat) return fail(cmd, "--template applies to --chat");
        auto t = parse_template_name(tmpl_name);
        if (!t.ok()) return fail(cmd, t.status().message());
        forced = t.value();
    }

    auto model = load_model(mo);
    if (!model.ok()) return fail(cmd, model.status().message());
    const lmllm::Model & m = *model.value();

    auto text = build_prompt(m, prompt, system, chat, forced);
    if (!text.ok()) return fail(cmd, text.status().message());
    // special tokens in the text (e.g. <|im_start|>) become control tokens
    const std::vector<lmllm::Token> tokens = m.vocab().tokenize(text.value(), true, true);
    if (tokens.empty()) return fail(cmd, "the prompt tokenizes to nothing");

    auto ctx = make_context(m, co);
    if (!ctx.ok()) return fail(cmd, ctx.status().message());
    if (tokens.size() >= ctx.value()->n_ctx())
        return fail(cmd, "the prompt is " + std::to_string(tokens.size()) + " tokens, longer than the context (" +
                             std::to_string(ctx.value()->n_ctx()) + "); raise -c");

    go.n_predict = n_predict;
    if (n_keep != kUnset) {
        // as llama.cpp: -1 or more than the prompt keeps the prompt; BOS is always kept
        const bool bos = m.vocab().add_bos() && !tokens.empty() && tokens[0] == m.vocab().bos();
        go.context_shift = true;
        const size_t keep = n_keep < 0 ? tokens.size() : size_t(n_keep) + (bos ? 1 : 0);
        go.n_keep = int32_t(std::min(keep, tokens.size()));
        if (uint32_t(go.n_keep) + 2 > ctx.value()->n_ctx())
            return fail(cmd, "--n-keep keeps " + std::to_string(go.n_keep) + " tokens: the context (" +
                                 std::to_string(ctx.value()->n_ctx()) +
                                 ") leaves nothing to drop; raise -c or lower --n-keep");
    }

    lmllm::Sampler sampler(sp);
    std::vector<lmllm::Token> history;
    std::string reply;
    GenerationStats stats;
    lmllm::Status s = generate(*ctx.value(), m.vocab(), sampler, tokens, go, history, stdout, reply, stats);
    std::fputc('\n', stdout);
    std::fflush(stdout);
    if (!s.ok()) return fail(cmd, s.message());
    if (stats.context_full)
        std::fprintf(stderr, "warning: the context is full (%u tokens); stopped\n", ctx.value()->n_ctx());
    if (stats.n_shift > 0)
        std::fprintf(stderr, "context shifts: %d (kept the first %d tokens each time)\n", stats.n_shift, go.n_keep);
    if (!no_summary)
        std::fprintf(stderr, "%s | time to first token: %.1f ms\n", speed_summary(stats).c_str(), stats.t_first * 1e3);
    return 0;
}

} // namespace cli
