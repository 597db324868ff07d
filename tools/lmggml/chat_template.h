#pragma once
// Which chat template `run --chat` and `chat` render: the one named by
// --template, else the model's tokenizer.chat_template when lmllm recognises
// it, else the architecture's own format. ChatML is never assumed silently.

#include <string>

#include "lmllm/chat.h"
#include "lmllm/model.h"
#include "lmllm/status.h"

namespace cli {

struct TemplateChoice {
    lmllm::ChatTemplate tmpl = lmllm::ChatTemplate::UNKNOWN;
    std::string source; // why this one, e.g. "from the model" or "gemma3's format: the model names none"
};

// "chatml, llama3, gemma, llama2"
std::string chat_template_names();

// A --template value: one of chat_template_names(); the error lists them.
lmllm::Result<lmllm::ChatTemplate> parse_template_name(const std::string & name);

// The template for `m`: `forced` when not UNKNOWN, else as described above.
// A model template that is present but not recognised gives a warning on stderr.
TemplateChoice choose_chat_template(const lmllm::Model & m, lmllm::ChatTemplate forced);

} // namespace cli
