// lmggml chat: an interactive conversation in the model's chat template.
// The KV cache keeps the whole conversation; each turn feeds only the text
// the template adds after what the cache already holds. Ctrl-C stops a
// reply, a full context drops the oldest turns, a message too long for the
// context is refused: none of them ends the chat.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <sstream>

#include "chat_template.h"
#include "commands.h"
#include "common.h"
#include "console.h"
#include "generate.h"
#include "lmllm/chat.h"

namespace cli {

namespace {

struct Conversation {
    lmllm::ChatTemplate tmpl = lmllm::ChatTemplate::CHATML;
    size_t n_fixed = 0;  // the system message (kept by /reset)
    int32_t n_keep = -1; // --n-keep: prompt tokens kept when the context fills (-1: the system message)
    std::vector<lmllm::ChatMessage> messages;
    std::string cached; // the text whose tokens are in the KV cache (BOS aside)
};

// The conversation rendered with the assistant's turn opened.
lmllm::Result<std::string> render(const Conversation & c) {
    return lmllm::apply_chat_template(c.tmpl, c.messages, true);
}

// The tokens to decode next. When the template re-renders earlier turns
// differently from what the cache holds (e.g. it trims the reply), or the
// cache was cleared, the cache is emptied and the whole conversation is fed.
lmllm::Result<std::vector<lmllm::Token>> next_input(Conversation & c, lmllm::Context & ctx,
                                                    const lmllm::Vocab & vocab) {
    auto text = render(c);
    if (!text.ok()) return text.status();
    const std::string & full = text.value();
    bool first = c.cached.empty() || ctx.n_past() == 0;
    if (first || full.compare(0, c.cached.size(), c.cached) != 0) {
        ctx.clear();
        c.cached.clear();
        first = true;
    }
    std::vector<lmllm::Token> tokens = vocab.tokenize(full.substr(c.cached.size()), first, true);
    c.cached = full;
    return tokens;
}

size_t n_tokens(const Conversation & c, const lmllm::Vocab & vocab) {
    auto text = render(c);
    return text.ok() ? vocab.tokenize(text.value(), true, true).size() : 0;
}

// The leading messages a full context keeps: the system message, or with
// --n-keep N the longest run of whole turns (system message, then
// user + assistant pairs) whose tokens fit in N (0: none, even the system
// message may go). Dropping works by whole messages, so N is rounded down.
size_t fixed_messages(const Conversation & c, const lmllm::Vocab & vocab) {
    if (c.n_keep < 0) return c.n_fixed;
    size_t fixed = 0;
    // candidates: the system message alone, then each whole user + assistant turn after it
    for (size_t k = c.n_fixed > 0 ? c.n_fixed : 2; k < c.messages.size(); k += 2) {
        const std::vector<lmllm::ChatMessage> prefix(c.messages.begin(), c.messages.begin() + long(k));
        auto text = lmllm::apply_chat_template(c.tmpl, prefix, false);
        if (!text.ok() || vocab.tokenize(text.value(), true, true).size() > size_t(c.n_keep)) break;
        fixed = k;
    }
    return fixed;
}

// Drops the oldest turns (a user message with its reply; the kept leading
// messages and the last message stay) until the conversation and `extra` tokens (a
// reply in progress) take at most `target` tokens. Returns how many messages
// were dropped.
size_t drop_oldest(Conversation & c, const lmllm::Vocab & vocab, size_t extra, size_t target) {
    size_t dropped = 0;
    auto & msgs = c.messages;
    // when the turns --n-keep holds leave too little room, only the system message is kept
    for (const size_t fixed : {fixed_messages(c, vocab), std::min(c.n_fixed, fixed_messages(c, vocab))}) {
        while (msgs.size() > fixed + 1 && n_tokens(c, vocab) + extra > target) {
            msgs.erase(msgs.begin() + long(fixed));
            dropped++;
            if (msgs.size() > fixed + 1 && msgs[fixed].role == "assistant") {
                msgs.erase(msgs.begin() + long(fixed));
                dropped++;
            }
        }
    }
    return dropped;
}

void report_drop(size_t dropped, const Conversation & c, uint32_t n_ctx, bool verbose) {
    const bool system_kept = !c.messages.empty() && c.messages[0].role == "system";
    std::fprintf(stderr, "chat: the context (%u tokens) is full: dropped the %zu oldest messages%s, %zu kept\n", n_ctx,
                 dropped, system_kept ? " (the system message stays)" : "", c.messages.size());
    if (!verbose) return;
    std::string roles;
    for (const lmllm::ChatMessage & m : c.messages) roles += " " + m.role;
    std::fprintf(stderr, "chat: keeping%s\n", roles.c_str());
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
        if (key == "temp")
            next.temperature = float(v);
        else if (key == "top-k")
            next.top_k = int32_t(v);
        else if (key == "top-p")
            next.top_p = float(v);
        else if (key == "min-p")
            next.min_p = float(v);
        else if (key == "repeat-penalty")
            next.repeat_penalty = float(v);
        else if (key == "repeat-last-n" && v >= -1)
            next.repeat_last_n = int32_t(v);
        else if (key == "presence-penalty")
            next.presence_penalty = float(v);
        else if (key == "frequency-penalty")
            next.frequency_penalty = float(v);
        else if (key == "seed" && v >= 0)
            next.seed = uint64_t(v);
        else
            return lmllm::Status::error(
                "/set: unknown key or bad value '" + kv +
                "' (temp, top-k, top-p, min-p, repeat-penalty, repeat-last-n, presence-penalty, "
                "frequency-penalty, seed)");
    }
    if (lmllm::Status s = check_sampling(next); !s.ok()) return s;
    sp = next;
    return lmllm::Status();
}

struct Turn {
    std::string reply;
    std::vector<lmllm::Token> tokens; // the reply's tokens as generated
    std::string tail;                 // the end of the reply that conv.cached does not cover yet
    GenerationStats stats;            // summed over the reply's pieces
    bool last_undecoded = false;      // cut by -n: the last sampled token is not in the cache
};

void add_stats(GenerationStats & total, const GenerationStats & st) {
    total.n_prompt += st.n_prompt;
    total.t_prompt += st.t_prompt;
    total.n_gen += st.n_gen;
    total.t_gen += st.t_gen;
}

// Answers the last (user) message. When the context fills mid-reply, the
// oldest turns are dropped, the kept conversation and the reply's tokens so
// far are decoded again, and the reply goes on; if nothing can be dropped it
// is cut.
lmllm::Status answer(Conversation & conv, lmllm::Context & ctx, const lmllm::Vocab & vocab, lmllm::Sampler & sampler,
                     const GenerateOptions & opts, bool verbose, std::vector<lmllm::Token> & history, Turn & turn) {
    const uint32_t n_ctx = ctx.n_ctx();
    auto input = next_input(conv, ctx, vocab);
    if (!input.ok()) return input.status();
    if (ctx.n_past() + input.value().size() >= n_ctx) {
        if (const size_t dropped = drop_oldest(conv, vocab, 0, n_ctx / 2); dropped > 0)
            report_drop(dropped, conv, n_ctx, verbose);
        ctx.clear();
        input = next_input(conv, ctx, vocab);
        if (!input.ok()) return input.status();
    }
    GenerateOptions go = opts;
    int32_t & budget = go.n_predict;
    while (true) {
        if (verbose)
            std::fprintf(stderr, "chat: feeding %zu new tokens after %u cached\n", input.value().size(), ctx.n_past());
        std::string piece;
        GenerationStats st;
        if (lmllm::Status s = generate(ctx, vocab, sampler, input.value(), go, history, stdout, piece, st); !s.ok())
            return s;
        turn.reply += piece;
        turn.tail += piece;
        turn.tokens.insert(turn.tokens.end(), history.end() - st.n_gen, history.end());
        add_stats(turn.stats, st);
        turn.stats.hit_eog = st.hit_eog;
        turn.stats.interrupted = st.interrupted;
        turn.last_undecoded = !st.hit_eog && !st.context_full && !st.interrupted && st.n_gen > 0;
        if (!st.context_full) return lmllm::Status();
        if (budget >= 0) budget -= st.n_gen;
        const size_t dropped = drop_oldest(conv, vocab, turn.tokens.size(), n_ctx / 2);
        if (dropped > 0) {
            report_drop(dropped, conv, n_ctx, verbose);
            ctx.clear();
            input = next_input(conv, ctx, vocab);
            if (!input.ok()) return input.status();
            input.value().insert(input.value().end(), turn.tokens.begin(), turn.tokens.end());
            conv.cached += turn.reply;
            turn.tail.clear(); // the reply so far is now in conv.cached
        }
        if (dropped == 0 || input.value().size() >= n_ctx) {
            std::fprintf(stderr, "\nchat: the reply filled the context (%u tokens); it was cut\n", n_ctx);
            turn.stats.context_full = true;
            conv.cached.clear(); // the next turn decodes the conversation again
            return lmllm::Status();
        }
    }
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
    GenerateOptions go;
    bool escape = false;
    constexpr int32_t kUnset = std::numeric_limits<int32_t>::min();
    int32_t n_keep = kUnset;

    ArgParser p(cmd, "chat -m MODEL.gguf [options]",
                "Interactive chat in the model's chat template. Reads one message per line from stdin;\n"
                "/exit, the end of input (Ctrl-D) or Ctrl-C at the prompt ends the conversation, Ctrl-C\n"
                "during a reply stops it, /reset starts a new conversation, /set KEY=VALUE... changes\n"
                "sampling (temp, top-k, top-p, min-p, repeat-penalty, repeat-last-n, presence-penalty,\n"
                "frequency-penalty, seed).");
    add_model_options(p, mo);
    p.option({"--system"}, &system, "TEXT", "a system message opening the conversation");
    p.option({"--template", "--chat-template"}, &tmpl_name, "NAME", chat_template_names() + " (default: the model's)");
    p.option({"-n", "--n-predict"}, &n_predict, "N", "max tokens per reply, -1: until end of turn (default -1)");
    p.option({"-r", "--reverse-prompt"}, &go.stop, "TEXT", "end the reply when it ends with TEXT (repeatable)");
    p.flag({"--ignore-eos"}, &go.ignore_eos, "never end a reply at an end-of-generation token (it is not sampled)");
    p.flag({"-e", "--escape"}, &escape, "process escapes (\\n, \\t, \\xNN, ...) in --system, -r and each message");
    p.option({"--n-keep", "--keep"}, &n_keep, "N",
             "when the context fills, keep the leading whole turns that fit in N tokens (0: none, not even the "
             "system message; -1: the system message, the default)");
    add_context_options(p, co);
    add_sampling_options(p, sp);

    bool help = false;
    if (lmllm::Status s = p.parse(argc, argv, 2, help); !s.ok())
        return fail(cmd, s.message() + " (see lmggml chat --help)");
    if (help) {
        std::fputs(p.help_text().c_str(), stdout);
        return 0;
    }
    setup_logging(mo.verbose);
    if (n_predict < -1) return fail(cmd, "-n must be >= -1");
    if (n_keep != kUnset && n_keep < -1) return fail(cmd, "--n-keep must be >= -1");
    for (const std::string & r : go.stop)
        if (r.empty()) return fail(cmd, "-r needs a non-empty text");
    if (escape) {
        system = process_escapes(system);
        for (std::string & r : go.stop) r = process_escapes(r);
    }
    go.n_predict = n_predict;
    if (lmllm::Status s = check_sampling(sp); !s.ok()) return fail(cmd, s.message());
    if (lmllm::Status s = check_model_context_options(mo, co); !s.ok()) return fail(cmd, s.message());
    lmllm::ChatTemplate forced = lmllm::ChatTemplate::UNKNOWN;
    if (!tmpl_name.empty()) {
        auto t = parse_template_name(tmpl_name);
        if (!t.ok()) return fail(cmd, t.status().message());
        forced = t.value();
    }

    auto model = load_model(mo);
    if (!model.ok()) return fail(cmd, model.status().message());
    const lmllm::Model & m = *model.value();
    const TemplateChoice choice = choose_chat_template(m, forced);
    auto ctx_r = make_context(m, co);
    if (!ctx_r.ok()) return fail(cmd, ctx_r.status().message());
    lmllm::Context & ctx = *ctx_r.value();
    std::fprintf(stderr, "chat template: %s (%s), context: %u tokens. Type /exit or end input (Ctrl-D) to quit.\n",
                 lmllm::chat_template_name(choice.tmpl), choice.source.c_str(), ctx.n_ctx());

    Conversation conv;
    conv.tmpl = choice.tmpl;
    if (!system.empty()) conv.messages.push_back({"system", system});
    conv.n_fixed = conv.messages.size();
    conv.n_keep = n_keep == kUnset ? -1 : n_keep;

    auto sampler = std::make_unique<lmllm::Sampler>(sp);
    std::vector<lmllm::Token> history;
    const bool interactive = isatty(STDIN_FILENO) == 1;
    install_interrupt_handler();
    GenerationStats total;
    std::string line;
    while (true) {
        if (interactive) {
            std::fputs("> ", stdout);
            std::fflush(stdout);
        }
        const ReadResult rr = read_line(line);
        if (rr != ReadResult::LINE) {
            if (interactive) std::fputs("\n", stdout); // leave the prompt's line
            break;
        }
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (escape) line = process_escapes(line);
        if (line == "/exit") break;
        if (line.empty()) continue;
        if (line == "/reset") { // a new conversation: the system message stays
            conv.messages.resize(conv.n_fixed);
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

        // a message that cannot fit even alone (with the system message) is refused
        Conversation alone = conv;
        alone.messages.resize(conv.n_fixed);
        alone.messages.push_back({"user", line});
        if (const size_t n = n_tokens(alone, m.vocab()); n >= ctx.n_ctx()) {
            std::fprintf(stderr,
                         "lmggml chat: the message takes %zu tokens in the template, more than the context holds "
                         "(%u); it was not sent\n",
                         n, ctx.n_ctx());
            continue;
        }

        conv.messages.push_back({"user", line});
        Turn turn;
        lmllm::Status s = answer(conv, ctx, m.vocab(), *sampler, go, mo.verbose, history, turn);
        std::fputs("\n", stdout);
        std::fflush(stdout);
        clear_interrupt(); // a Ctrl-C that stopped this reply is spent
        if (!s.ok()) return fail(cmd, s.message());
        // a reply cut by -n: its last token still belongs in the cache (when
        // the cache is full, the next turn decodes the conversation again)
        bool in_cache = !turn.stats.context_full;
        if (turn.last_undecoded && ctx.n_past() < ctx.n_ctx()) {
            if (lmllm::Status d = ctx.decode({history.back()}); !d.ok()) return fail(cmd, d.message());
        } else if (turn.last_undecoded) {
            in_cache = false;
        }
        if (in_cache)
            conv.cached += turn.tail;
        else
            conv.cached.clear();
        conv.messages.push_back({"assistant", turn.reply});
        add_stats(total, turn.stats);
    }
    std::fprintf(stderr, "%s\n", speed_summary(total).c_str());
    return 0;
}

} // namespace cli
