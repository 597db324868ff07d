// Chat templates. We do not run Jinja: a model's template is classified by the
// markers it contains (the same heuristics llama.cpp uses) and rendered by a
// hand-written formatter that produces what the Jinja template would for
// plain system/user/assistant messages.
#include "lmllm/chat.h"

#include <cctype>

namespace lmllm {

namespace {

bool contains(const std::string & s, const char * needle) { return s.find(needle) != std::string::npos; }

std::string trim(const std::string & s) {
    size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) b++;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) e--;
    return s.substr(b, e - b);
}

// <|im_start|>role\ncontent<|im_end|>\n  (SmolLM2, Qwen2)
std::string format_chatml(const std::vector<ChatMessage> & msgs, bool add_assistant) {
    std::string out;
    for (const ChatMessage & m : msgs) out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
    if (add_assistant) out += "<|im_start|>assistant\n";
    return out;
}

// Llama 3 trims every message; the BOS token comes from the tokenizer, not from here.
std::string format_llama3(const std::vector<ChatMessage> & msgs, bool add_assistant) {
    std::string out;
    for (const ChatMessage & m : msgs)
        out += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + trim(m.content) + "<|eot_id|>";
    if (add_assistant) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
    return out;
}

// Gemma has no system role: the system text is put in front of the next user turn.
std::string format_gemma(const std::vector<ChatMessage> & msgs, bool add_assistant) {
    std::string out, system;
    for (const ChatMessage & m : msgs) {
        if (m.role == "system") {
            system = trim(m.content);
            continue;
        }
        const std::string role = m.role == "assistant" ? "model" : m.role;
        out += "<start_of_turn>" + role + "\n";
        if (!system.empty() && role != "model") {
            out += system + "\n\n";
            system.clear();
        }
        out += trim(m.content) + "<end_of_turn>\n";
    }
    if (add_assistant) out += "<start_of_turn>model\n";
    return out;
}

// Llama 2 chat: [INST] <<SYS>>\nsys\n<</SYS>>\n\nuser [/INST]assistant</s>[INST] ...
// Messages are stripped, as the official template does (llama.cpp's
// "llama2-sys-strip" rendering). The opening <s> is the tokenizer's BOS, and
// there is no "assistant opening": after [/INST] the model simply continues.
std::string format_llama2(const std::vector<ChatMessage> & msgs) {
    std::string out = "[INST] ";
    bool in_turn = true;
    for (const ChatMessage & m : msgs) {
        const std::string content = trim(m.content);
        if (!in_turn) {
            out += "[INST] ";
            in_turn = true;
        }
        if (m.role == "system") {
            out += "<<SYS>>\n" + content + "\n<</SYS>>\n\n";
        } else if (m.role == "user") {
            out += content + " [/INST]";
        } else {
            out += content + "</s>";
            in_turn = false;
        }
    }
    return out;
}

} // namespace

ChatTemplate detect_chat_template(const std::string & tmpl) {
    // a template name
    if (tmpl == "chatml") return ChatTemplate::CHATML;
    if (tmpl == "llama3") return ChatTemplate::LLAMA3;
    if (tmpl == "gemma") return ChatTemplate::GEMMA;
    if (tmpl == "llama2") return ChatTemplate::LLAMA2;
    // Jinja text, checked in llama.cpp's order (a template may mention several markers)
    if (contains(tmpl, "<|im_start|>")) {
        // Phi-4 uses <|im_sep|> instead of a newline: a different format we do not render
        return contains(tmpl, "<|im_sep|>") ? ChatTemplate::UNKNOWN : ChatTemplate::CHATML;
    }
    if (contains(tmpl, "[INST]")) {
        // Mistral's v3/v7 templates use [INST] without spaces or system blocks we render
        if (contains(tmpl, "[SYSTEM_PROMPT]") || contains(tmpl, "[AVAILABLE_TOOLS]")) return ChatTemplate::UNKNOWN;
        return ChatTemplate::LLAMA2;
    }
    if (contains(tmpl, "<start_of_turn>")) return ChatTemplate::GEMMA;
    if (contains(tmpl, "<|start_header_id|>") && contains(tmpl, "<|end_header_id|>")) return ChatTemplate::LLAMA3;
    return ChatTemplate::UNKNOWN;
}

const char * chat_template_name(ChatTemplate t) {
    switch (t) {
        case ChatTemplate::CHATML: return "chatml";
        case ChatTemplate::LLAMA3: return "llama3";
        case ChatTemplate::GEMMA: return "gemma";
        case ChatTemplate::LLAMA2: return "llama2";
        case ChatTemplate::UNKNOWN: break;
    }
    return "unknown";
}

Result<std::string> apply_chat_template(ChatTemplate t, const std::vector<ChatMessage> & messages, bool add_assistant) {
    for (const ChatMessage & m : messages) {
        if (m.role != "system" && m.role != "user" && m.role != "assistant")
            return Status::error("apply_chat_template: unknown role '" + m.role + "' (system, user or assistant)");
    }
    switch (t) {
        case ChatTemplate::CHATML: return format_chatml(messages, add_assistant);
        case ChatTemplate::LLAMA3: return format_llama3(messages, add_assistant);
        case ChatTemplate::GEMMA: return format_gemma(messages, add_assistant);
        case ChatTemplate::LLAMA2: return format_llama2(messages);
        case ChatTemplate::UNKNOWN: break;
    }
    return Status::error("apply_chat_template: unsupported chat template");
}

} // namespace lmllm
