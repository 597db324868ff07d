// lmggml tokenize: the tokens a model's vocabulary makes of a text, printed
// as llama.cpp's llama-tokenize prints them ("    ID -> 'piece'" per line,
// or a Python-style list of ids with --ids).
#include <cstdio>
#include <string>

#include "commands.h"
#include "common.h"
#include "generate.h"

namespace cli {

int cmd_tokenize(int argc, char ** argv) {
    const std::string cmd = "tokenize";
    ModelOptions mo;
    std::string prompt, file;
    bool ids = false, no_bos = false, no_parse_special = false, show_count = false, escape = false;

    ArgParser p(cmd, "tokenize -m MODEL.gguf -p TEXT [--ids] [--no-bos]",
                "Prints the tokens of TEXT in the model's vocabulary, one \"ID -> 'piece'\" per line\n"
                "(as llama-tokenize), or only their ids with --ids.");
    p.option({"-m", "--model"}, &mo.path, "FILE", "model file (GGUF)");
    p.option({"-p", "--prompt"}, &prompt, "TEXT", "the text");
    p.option({"-f", "--file"}, &file, "FILE", "read the text from a file");
    p.flag({"--ids"}, &ids, "print only the ids, as a list: [1, 2, 3]");
    p.flag({"--no-bos"}, &no_bos, "do not add the BOS (or EOS) token the model's metadata asks for");
    p.flag({"--no-parse-special"}, &no_parse_special, "tokenize special-token text (e.g. <|im_start|>) as plain text");
    p.flag({"-e", "--escape"}, &escape, "process escapes (\\n, \\t, \\xNN, ...) in the text");
    p.flag({"--show-count"}, &show_count, "print the number of tokens at the end");
    p.flag({"-v", "--verbose"}, &mo.verbose, "print the library's log messages");

    bool help = false;
    if (lmllm::Status s = p.parse(argc, argv, 2, help); !s.ok())
        return fail(cmd, s.message() + " (see lmggml tokenize --help)");
    if (help) {
        std::fputs(p.help_text().c_str(), stdout);
        return 0;
    }
    setup_logging(mo.verbose);
    if (!file.empty()) {
        if (!prompt.empty()) return fail(cmd, "give either -p or -f, not both");
        auto text = read_text_file(file);
        if (!text.ok()) return fail(cmd, text.status().message());
        prompt = text.value();
    } else if (prompt.empty()) {
        bool given = false;
        for (int i = 2; i < argc; i++)
            given |= std::string(argv[i]) == "-p" || std::string(argv[i]).rfind("--prompt", 0) == 0;
        if (!given) return fail(cmd, "no text given (use -p TEXT or -f FILE)");
    }
    if (escape) prompt = process_escapes(prompt);

    mo.no_repack = true; // only the vocabulary is used: keep the weights mapped
    auto model = load_model(mo);
    if (!model.ok()) return fail(cmd, model.status().message());
    const lmllm::Vocab & vocab = model.value()->vocab();

    const std::vector<lmllm::Token> tokens = vocab.tokenize(prompt, !no_bos, !no_parse_special);
    if (ids) {
        std::string out = "[";
        for (size_t i = 0; i < tokens.size(); i++) out += (i ? ", " : "") + std::to_string(tokens[i]);
        std::printf("%s]\n", out.c_str());
    } else {
        for (lmllm::Token t : tokens) {
            const std::string piece = vocab.token_to_piece(t, true);
            std::printf("%6d -> '", t);
            std::fwrite(piece.data(), 1, piece.size(), stdout);
            std::printf("'\n");
        }
    }
    if (show_count) std::printf("Total number of tokens: %zu\n", tokens.size());
    return 0;
}

} // namespace cli
