// Choosing the chat template (see chat_template.h).
#include "chat_template.h"

#include <cstdio>

namespace cli {

namespace {

constexpr lmllm::ChatTemplate kRendered[] = {lmllm::ChatTemplate::CHATML, lmllm::ChatTemplate::LLAMA3,
                                             lmllm::ChatTemplate::GEMMA, lmllm::ChatTemplate::LLAMA2};

bool has_token(const lmllm::Vocab & v, const char * text) { return v.token_id(text) >= 0; }

// The format the architecture was released with. Llama-architecture models
// differ by family: the vocabulary tells them apart (Llama 3's header tokens,
// ChatML's <|im_start|> as in SmolLM2); a SentencePiece Llama without such
// tokens is Llama 2 / Mistral style [INST].
lmllm::ChatTemplate architecture_template(const lmllm::Model & m) {
    const std::string & arch = m.hparams().arch_name;
    const lmllm::Vocab & v = m.vocab();
    if (arch.rfind("gemma", 0) == 0) return lmllm::ChatTemplate::GEMMA;
    if (arch.rfind("qwen", 0) == 0) return lmllm::ChatTemplate::CHATML;
    if (has_token(v, "<|start_header_id|>") && has_token(v, "<|end_header_id|>")) return lmllm::ChatTemplate::LLAMA3;
    if (has_token(v, "<|im_start|>")) return lmllm::ChatTemplate::CHATML;
    if (has_token(v, "<start_of_turn>")) return lmllm::ChatTemplate::GEMMA;
    if (arch == "llama" && v.type() == lmllm::VocabType::SPM) return lmllm::ChatTemplate::LLAMA2;
    return lmllm::ChatTemplate::UNKNOWN;
}

} // namespace

std::string chat_template_names() {
    std::string out;
    for (lmllm::ChatTemplate t : kRendered) out += std::string(out.empty() ? "" : ", ") + lmllm::chat_template_name(t);
    return out;
}

lmllm::Result<lmllm::ChatTemplate> parse_template_name(const std::string & name) {
    for (lmllm::ChatTemplate t : kRendered) {
        if (name == lmllm::chat_template_name(t)) return t;
    }
    return lmllm::Status::error("unknown chat template '" + name + "' (valid: " + chat_template_names() + ")");
}

TemplateChoice choose_chat_template(const lmllm::Model & m, lmllm::ChatTemplate forced) {
    if (forced != lmllm::ChatTemplate::UNKNOWN) return {forced, "--template"};
    const std::string & text = m.chat_template();
    if (!text.empty()) {
        const lmllm::ChatTemplate t = lmllm::detect_chat_template(text);
        if (t != lmllm::ChatTemplate::UNKNOWN) return {t, "the model's tokenizer.chat_template"};
    }
    const std::string & arch = m.hparams().arch_name;
    const lmllm::ChatTemplate own = architecture_template(m);
    if (text.empty() && own != lmllm::ChatTemplate::UNKNOWN)
        return {own, arch + "'s format: the model has no tokenizer.chat_template"};
    // the model's template cannot be rendered, or nothing is known: say so
    const lmllm::ChatTemplate t = own != lmllm::ChatTemplate::UNKNOWN ? own : lmllm::ChatTemplate::CHATML;
    const std::string why = text.empty() ? "the model has no chat template and none is known for " + arch
                                         : "the model's chat template is not one lmggml renders";
    std::fprintf(stderr, "warning: %s; using %s (choose with --template: %s)\n", why.c_str(),
                 lmllm::chat_template_name(t), chat_template_names().c_str());
    return {t, own != lmllm::ChatTemplate::UNKNOWN ? arch + "'s format" : "a guess"};
}

} // namespace cli
