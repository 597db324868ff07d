// The chat as people use it, on tiny generated models: the template chosen
// for a model (its own, else its architecture's, never ChatML by default),
// --template on run and chat, and a chat that survives Ctrl-C, a full
// context and an over-long message (driven in a pseudo-terminal).
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "cli_pty.h"
#include "cli_util.h"
#include "lmllm/chat.h"
#include "lmllm/model.h"

using clitest::lines;
using clitest::run_cli;

namespace {

// Tokens of the conversation [system?, user] rendered in `t` with the
// assistant's turn opened, as the model's vocabulary tokenizes it.
size_t rendered_tokens(const std::string & model, lmllm::ChatTemplate t, const std::string & user,
                       const std::string & system = "") {
    auto m = lmllm::Model::load(model, {});
    EXPECT_TRUE(m.ok()) << m.status().message();
    if (!m.ok()) return 0;
    std::vector<lmllm::ChatMessage> msgs;
    if (!system.empty()) msgs.push_back({"system", system});
    msgs.push_back({"user", user});
    auto text = lmllm::apply_chat_template(t, msgs, true);
    EXPECT_TRUE(text.ok());
    return text.ok() ? m.value()->vocab().tokenize(text.value(), true, true).size() : 0;
}

int int_after(const std::string & s, const std::string & re) {
    std::smatch m;
    return std::regex_search(s, m, std::regex(re)) ? std::stoi(m[1]) : -1;
}

// "chat: feeding N new tokens after M cached" lines of `chat -v`
std::vector<std::pair<int, int>> fed(const std::string & err) {
    std::vector<std::pair<int, int>> out;
    const std::regex re("chat: feeding ([0-9]+) new tokens after ([0-9]+) cached");
    for (std::sregex_iterator it(err.begin(), err.end(), re), end; it != end; ++it)
        out.emplace_back(std::stoi((*it)[1]), std::stoi((*it)[2]));
    return out;
}

struct ArchCase {
    const char * name;
    tiny::Spec (*base)();
    std::vector<std::string> specials;
    lmllm::ChatTemplate want;
    const char * arch;
};

tiny::Spec spec_of(const ArchCase & c) {
    tiny::Spec s = c.base();
    s.n_ctx_train = 4096;
    s.special_tokens = c.specials;
    return s;
}

const std::vector<ArchCase> & arch_cases() {
    static const std::vector<ArchCase> cases = {
        {"gemma3", tiny::gemma3_spec, {"<start_of_turn>", "<end_of_turn>"}, lmllm::ChatTemplate::GEMMA, "gemma3"},
        {"qwen2", tiny::qwen2_spec, {"<|im_start|>", "<|im_end|>"}, lmllm::ChatTemplate::CHATML, "qwen2"},
        {"llama3",
         tiny::llama_spec,
         {"<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"},
         lmllm::ChatTemplate::LLAMA3,
         "llama"},
        {"smollm", tiny::llama_spec, {"<|im_start|>", "<|im_end|>"}, lmllm::ChatTemplate::CHATML, "llama"},
        {"llama2", tiny::llama_spec, {}, lmllm::ChatTemplate::LLAMA2, "llama"},
    };
    return cases;
}

} // namespace

TEST(CliChatTemplate, AModelWithoutATemplateGetsItsArchitecturesFormat) {
    REQUIRE_CLI();
    const std::string prompt = "What is the sea?";
    for (const ArchCase & c : arch_cases()) {
        SCOPED_TRACE(c.name);
        const std::string model = clitest::tiny_model(std::string("notmpl_") + c.name + ".gguf", spec_of(c));
        ASSERT_FALSE(model.empty());
        const size_t want = rendered_tokens(model, c.want, prompt);
        // the test can tell the formats apart: ChatML would give another prompt
        if (c.want != lmllm::ChatTemplate::CHATML) {
            ASSERT_NE(want, rendered_tokens(model, lmllm::ChatTemplate::CHATML, prompt));
        }
        const std::string line = std::string("chat template: ") + lmllm::chat_template_name(c.want) + " (" + c.arch +
                                 "'s format: the model has no tokenizer.chat_template)";

        auto r = run_cli({"run", "-m", model, "--chat", "-p", prompt, "-n", "2", "--temp", "0"});
        ASSERT_EQ(r.rc, 0) << r.err;
        EXPECT_NE(r.err.find(line + "\n"), std::string::npos) << r.err;
        EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
        EXPECT_EQ(int_after(r.err, "prompt: ([0-9]+) tokens"), int(want)) << r.err;

        auto ch = run_cli({"chat", "-m", model, "-n", "2", "--temp", "0", "-v"}, prompt + "\n");
        ASSERT_EQ(ch.rc, 0) << ch.err;
        EXPECT_NE(ch.err.find(line + ", context:"), std::string::npos) << ch.err;
        const auto turns = fed(ch.err);
        ASSERT_EQ(turns.size(), 1u) << ch.err;
        EXPECT_EQ(turns[0].first, int(want));
    }
}

TEST(CliChatTemplate, TheModelsOwnTemplateComesFirst) {
    REQUIRE_CLI();
    // a llama model whose file names Gemma's format
    tiny::Spec s = clitest::tiny_spec();
    s.special_tokens = {"<start_of_turn>", "<end_of_turn>"};
    s.chat_template = "{{ bos_token }}{% for message in messages %}<start_of_turn>{{ message['role'] }}\n"
                      "{{ message['content'] | trim }}<end_of_turn>\n{% endfor %}<start_of_turn>model\n";
    const std::string model = clitest::tiny_model("own_gemma.gguf", s);
    auto r = run_cli({"run", "-m", model, "--chat", "-p", "Hello there", "-n", "1", "--temp", "0"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.err.find("chat template: gemma (the model's tokenizer.chat_template)\n"), std::string::npos) << r.err;
    EXPECT_EQ(int_after(r.err, "prompt: ([0-9]+) tokens"),
              int(rendered_tokens(model, lmllm::ChatTemplate::GEMMA, "Hello there")));

    // a template lmggml does not render: a warning, and the architecture's format
    tiny::Spec g = spec_of(arch_cases()[0]);
    g.chat_template = "{{ something_else }}";
    const std::string odd = clitest::tiny_model("odd_gemma3.gguf", g);
    auto w = run_cli({"run", "-m", odd, "--chat", "-p", "Hello there", "-n", "1", "--temp", "0"});
    ASSERT_EQ(w.rc, 0) << w.err;
    EXPECT_NE(w.err.find("warning: the model's chat template is not one lmggml renders; using gemma "
                         "(choose with --template: chatml, llama3, gemma, llama2)"),
              std::string::npos)
        << w.err;
    EXPECT_NE(w.err.find("chat template: gemma (gemma3's format)\n"), std::string::npos) << w.err;
}

TEST(CliChatTemplate, TemplateOptionOnRunAndChat) {
    REQUIRE_CLI();
    const std::string model = clitest::tiny_model("tiny.gguf");
    const std::string prompt = "Tell me a story";
    const int want = int(rendered_tokens(model, lmllm::ChatTemplate::LLAMA2, prompt, "Be kind."));
    ASSERT_NE(want, int(rendered_tokens(model, lmllm::ChatTemplate::CHATML, prompt, "Be kind.")));

    auto r = run_cli(
        {"run", "-m", model, "--chat", "--system", "Be kind.", "-p", prompt, "--template", "llama2", "-n", "1"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.err.find("chat template: llama2 (--template)\n"), std::string::npos) << r.err;
    EXPECT_EQ(int_after(r.err, "prompt: ([0-9]+) tokens"), want) << r.err;

    auto ch = run_cli({"chat", "-m", model, "--system", "Be kind.", "--chat-template", "llama2", "-n", "1", "-v"},
                      prompt + "\n");
    ASSERT_EQ(ch.rc, 0) << ch.err;
    ASSERT_EQ(fed(ch.err).size(), 1u) << ch.err;
    EXPECT_EQ(fed(ch.err)[0].first, want);

    // a bad name is one error line that lists the valid ones, before the model is read
    for (const char * cmd : {"run", "chat"}) {
        std::vector<std::string> args = {cmd, "-m", "/nonexistent.gguf", "--template", "vicuna"};
        if (std::string(cmd) == "run") args.insert(args.end(), {"--chat", "-p", "hi"});
        auto bad = run_cli(args);
        EXPECT_EQ(bad.rc, 1);
        ASSERT_EQ(lines(bad.err).size(), 1u) << bad.err;
        EXPECT_NE(bad.err.find("error: unknown chat template 'vicuna' (valid: chatml, llama3, gemma, llama2)"),
                  std::string::npos)
            << bad.err;
    }
    auto no_chat = run_cli({"run", "-m", model, "-p", "hi", "--template", "chatml"});
    EXPECT_EQ(no_chat.rc, 1);
    EXPECT_NE(no_chat.err.find("--template applies to --chat"), std::string::npos) << no_chat.err;
}

TEST(CliChatConsole, CtrlCStopsTheReplyAndCtrlCAtThePromptQuits) {
    REQUIRE_CLI();
    const std::string model = clitest::tiny_model("tiny.gguf");
    clitest::PtySession s;
    // no -n: the random model never ends its reply by itself before the context (8192) is full
    ASSERT_TRUE(s.start({"chat", "-m", model, "--temp", "0", "-c", "8192", "-v"}));
    ASSERT_TRUE(s.wait_for("> ", 0, 30)) << s.output();
    for (const char * msg : {"Hello there", "And again"}) {
        SCOPED_TRACE(msg);
        const size_t at = s.size();
        s.type(std::string(msg) + "\n");
        ASSERT_TRUE(s.wait_for(std::string(msg) + "\r\n", at, 10)) << s.output(); // the echo
        const size_t reply = s.output().find(std::string(msg) + "\r\n", at) + std::string(msg).size() + 2;
        ASSERT_TRUE(s.wait_for_bytes(300, reply, 30)) << s.output();              // the reply streams...
        ASSERT_EQ(s.output().find("> ", reply), std::string::npos) << s.output(); // ...and is not over
        const size_t stop = s.size();
        s.type("\x03");
        ASSERT_TRUE(s.wait_for("\r\n> ", stop, 30)) << s.output().substr(stop);
    }
    // the second turn fed only its own tokens: the stopped reply stayed in the cache
    const auto turns = fed(s.output());
    ASSERT_EQ(turns.size(), 2u) << s.output();
    EXPECT_GT(turns[1].second, turns[0].first + 20);
    const size_t quit = s.size();
    s.type("\x03");
    EXPECT_EQ(s.wait_exit(30), 0) << s.output();
    EXPECT_NE(s.output().find("prompt: ", quit), std::string::npos) << s.output().substr(quit); // the summary
}

TEST(CliChatConsole, CtrlDAtThePromptQuits) {
    REQUIRE_CLI();
    clitest::PtySession s;
    ASSERT_TRUE(s.start({"chat", "-m", clitest::tiny_model("tiny.gguf"), "--temp", "0", "-n", "4"}));
    ASSERT_TRUE(s.wait_for("> ", 0, 30)) << s.output();
    const size_t at = s.size();
    s.type("Hi\n");
    ASSERT_TRUE(s.wait_for("Hi\r\n", at, 10)) << s.output();
    ASSERT_TRUE(s.wait_for("\r\n> ", s.output().find("Hi\r\n", at), 30)) << s.output();
    s.type("\x04");
    EXPECT_EQ(s.wait_exit(30), 0) << s.output();
    EXPECT_NE(s.output().find("generation: 4 tokens"), std::string::npos) << s.output();
}

TEST(CliChatConsole, AFullContextDropsTheOldestTurnsKeepingTheSystemMessage) {
    REQUIRE_CLI();
    const std::string model = clitest::tiny_model("tiny.gguf");
    std::string input;
    const int n_msgs = 8;
    for (int i = 0; i < n_msgs; i++) input += "message number " + std::to_string(i) + "\n";
    auto r = run_cli({"chat", "-m", model, "--temp", "0", "-n", "40", "-c", "160", "--system", "Answer briefly.", "-v"},
                     input);
    ASSERT_EQ(r.rc, 0) << r.err;
    // every message is answered with its 40 tokens, none is cut
    EXPECT_NE(r.err.find("generation: " + std::to_string(40 * n_msgs) + " tokens"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("error"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("was cut"), std::string::npos) << r.err;
    // turns were dropped, the system message first in what was kept
    const std::regex drop("chat: the context \\(160 tokens\\) is full: dropped the ([0-9]+) oldest messages "
                          "\\(the system message stays\\), ([0-9]+) kept\\nchat: keeping system user");
    EXPECT_GE(std::distance(std::sregex_iterator(r.err.begin(), r.err.end(), drop), std::sregex_iterator()), 2)
        << r.err;
    // and decoded again from an empty cache, never past the context
    int refeeds = 0;
    for (const auto & [n, cached] : fed(r.err)) {
        refeeds += cached == 0;
        EXPECT_LT(n + cached, 160);
    }
    EXPECT_GE(refeeds, 3) << r.err; // the first turn and each drop
}

TEST(CliChatConsole, AReplyThatFillsTheContextGoesOnAfterTheOldestTurnsAreDropped) {
    REQUIRE_CLI();
    const std::string model = clitest::tiny_model("tiny.gguf");
    // the second message fits after the first turn (about 95 tokens), its reply (60)
    // does not: it fills the context mid-reply, the first turn is dropped, the reply goes on
    auto r = run_cli({"chat", "-m", model, "--temp", "0", "-n", "60", "-c", "160", "-v"}, "first\nsecond\nthird\n");
    ASSERT_EQ(r.rc, 0) << r.err;
    const auto turns = fed(r.err);
    ASSERT_GE(turns.size(), 4u) << r.err;
    EXPECT_EQ(turns[2].second, 0); // the kept turn and the partial reply, decoded again
    EXPECT_NE(r.err.find("dropped the 2 oldest messages, 1 kept"), std::string::npos) << r.err;
    // the second reply went on to its 60 tokens: 120 generated by the end of the second turn
    EXPECT_EQ(r.err.find("was cut"), std::string::npos) << r.err;
    // the cache holds what was decoded again and the rest of the reply: the third
    // turn feeds only its own text, after all of that
    EXPECT_GT(turns[3].second, turns[2].first);
    EXPECT_LT(turns[3].first, turns[2].first);
    EXPECT_NE(r.err.find("generation: 180 tokens"), std::string::npos) << r.err;
    // a reply longer than the whole context is cut, and the chat goes on
    auto cut = run_cli({"chat", "-m", model, "--temp", "0", "-c", "64"}, "first\nsecond\n");
    EXPECT_EQ(cut.rc, 0) << cut.err;
    const std::regex cut_re("the reply filled the context \\(64 tokens\\); it was cut");
    EXPECT_EQ(std::distance(std::sregex_iterator(cut.err.begin(), cut.err.end(), cut_re), std::sregex_iterator()), 2)
        << cut.err;
}

TEST(CliChatConsole, AMessageTooLongForTheContextIsRefusedAndTheChatGoesOn) {
    REQUIRE_CLI();
    const std::string model = clitest::tiny_model("tiny.gguf");
    const std::string too_long(300, 'x');
    auto r = run_cli({"chat", "-m", model, "--temp", "0", "-n", "4", "-c", "64", "-v"}, too_long + "\nshort\n");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(std::regex_search(r.err, std::regex("lmggml chat: the message takes [0-9]+ tokens in the template, "
                                                    "more than the context holds \\(64\\); it was not sent\n")))
        << r.err;
    const auto turns = fed(r.err);
    ASSERT_EQ(turns.size(), 1u) << r.err; // only "short" was fed
    EXPECT_EQ(turns[0].second, 0);
    EXPECT_NE(r.err.find("generation: 4 tokens"), std::string::npos) << r.err;
}
