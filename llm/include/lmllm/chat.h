#pragma once
// Chat templates recognised from the model's tokenizer.chat_template metadata:
// ChatML (SmolLM2, Qwen2), Llama 3, Gemma, Llama 2.

#include <string>
#include <vector>

#include "lmllm/status.h"

namespace lmllm {

struct ChatMessage {
    std::string role; // "system", "user", "assistant"
    std::string content;
};

enum class ChatTemplate { CHATML, LLAMA3, GEMMA, LLAMA2, UNKNOWN };

// Classifies a Jinja template string (or a name such as "chatml") by its markers.
ChatTemplate detect_chat_template(const std::string & tmpl);
const char * chat_template_name(ChatTemplate t);

// Formats the conversation; add_assistant appends the opening of the
// assistant's turn so generation continues as the assistant.
Result<std::string> apply_chat_template(ChatTemplate t, const std::vector<ChatMessage> & messages, bool add_assistant);

} // namespace lmllm
