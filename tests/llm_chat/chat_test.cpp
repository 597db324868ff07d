// Chat templates: detection from real templates' markers and rendering against
// strings written out by hand from the templates' Jinja source.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lmllm/chat.h"

using lmllm::apply_chat_template;
using lmllm::ChatMessage;
using lmllm::ChatTemplate;
using lmllm::detect_chat_template;

namespace {

// Excerpts of the templates the models ship in tokenizer.chat_template.
const char * kSmolLM2 =
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}"
    "{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";
const char * kLlama3 =
    "{% set loop_messages = messages %}{% for message in loop_messages %}"
    "{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + "
    "'<|eot_id|>' %}"
    "{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}";
const char * kGemma =
    "{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'assistant') %}{% set role = 'model' %}"
    "{% else %}{% set role = message['role'] %}{% endif %}{{ '<start_of_turn>' + role + '\n' + message['content'] | "
    "trim + '<end_of_turn>\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\n'}}{% endif %}";
const char * kLlama2 =
    "{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = "
    "messages[0]['content'] %}"
    "{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif %}{% for message in "
    "loop_messages %}"
    "{% if loop.index0 == 0 and system_message != false %}{% set content = '<<SYS>>\\n' + system_message + "
    "'\\n<</SYS>>\\n\\n' + message['content'] %}"
    "{% else %}{% set content = message['content'] %}{% endif %}{% if message['role'] == 'user' %}"
    "{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}{% elif message['role'] == 'assistant' %}"
    "{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %}";

const std::vector<ChatMessage> kConversation = {
    {"system", "You are terse."},
    {"user", "Hello!"},
    {"assistant", " Hi there. "},
    {"user", "What is 2+2?"},
};

std::string render(ChatTemplate t, const std::vector<ChatMessage> & m, bool add_assistant) {
    auto r = apply_chat_template(t, m, add_assistant);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? r.value() : std::string();
}

} // namespace

TEST(ChatTemplate, DetectsRealTemplates) {
    EXPECT_EQ(detect_chat_template(kSmolLM2), ChatTemplate::CHATML);
    EXPECT_EQ(detect_chat_template(kLlama3), ChatTemplate::LLAMA3);
    EXPECT_EQ(detect_chat_template(kGemma), ChatTemplate::GEMMA);
    EXPECT_EQ(detect_chat_template(kLlama2), ChatTemplate::LLAMA2);
}

TEST(ChatTemplate, DetectsNames) {
    EXPECT_EQ(detect_chat_template("chatml"), ChatTemplate::CHATML);
    EXPECT_EQ(detect_chat_template("llama3"), ChatTemplate::LLAMA3);
    EXPECT_EQ(detect_chat_template("gemma"), ChatTemplate::GEMMA);
    EXPECT_EQ(detect_chat_template("llama2"), ChatTemplate::LLAMA2);
    EXPECT_STREQ(lmllm::chat_template_name(ChatTemplate::CHATML), "chatml");
    EXPECT_STREQ(lmllm::chat_template_name(ChatTemplate::LLAMA3), "llama3");
    EXPECT_STREQ(lmllm::chat_template_name(ChatTemplate::GEMMA), "gemma");
    EXPECT_STREQ(lmllm::chat_template_name(ChatTemplate::LLAMA2), "llama2");
}

TEST(ChatTemplate, UnknownTemplates) {
    EXPECT_EQ(detect_chat_template(""), ChatTemplate::UNKNOWN);
    EXPECT_EQ(detect_chat_template("{{ messages[0]['content'] }}"), ChatTemplate::UNKNOWN);
    EXPECT_EQ(detect_chat_template("<|user|>\n{{ content }}<|endoftext|>"), ChatTemplate::UNKNOWN); // zephyr
    EXPECT_EQ(detect_chat_template("<|im_start|>{{role}}<|im_sep|>"), ChatTemplate::UNKNOWN);       // phi-4
    // Llama 3 needs both header markers
    EXPECT_EQ(detect_chat_template("<|start_header_id|>"), ChatTemplate::UNKNOWN);
    EXPECT_FALSE(apply_chat_template(ChatTemplate::UNKNOWN, kConversation, true).ok());
}

TEST(ChatTemplate, ChatML) {
    EXPECT_EQ(render(ChatTemplate::CHATML, kConversation, true), "<|im_start|>system\nYou are terse.<|im_end|>\n"
                                                                 "<|im_start|>user\nHello!<|im_end|>\n"
                                                                 "<|im_start|>assistant\n Hi there. <|im_end|>\n"
                                                                 "<|im_start|>user\nWhat is 2+2?<|im_end|>\n"
                                                                 "<|im_start|>assistant\n");
    EXPECT_EQ(render(ChatTemplate::CHATML, {{"user", "x"}}, false), "<|im_start|>user\nx<|im_end|>\n");
}

TEST(ChatTemplate, Llama3TrimsContent) {
    EXPECT_EQ(render(ChatTemplate::LLAMA3, kConversation, true),
              "<|start_header_id|>system<|end_header_id|>\n\nYou are terse.<|eot_id|>"
              "<|start_header_id|>user<|end_header_id|>\n\nHello!<|eot_id|>"
              "<|start_header_id|>assistant<|end_header_id|>\n\nHi there.<|eot_id|>"
              "<|start_header_id|>user<|end_header_id|>\n\nWhat is 2+2?<|eot_id|>"
              "<|start_header_id|>assistant<|end_header_id|>\n\n");
    EXPECT_EQ(render(ChatTemplate::LLAMA3, {{"user", "\n x \t"}}, false),
              "<|start_header_id|>user<|end_header_id|>\n\nx<|eot_id|>");
}

TEST(ChatTemplate, GemmaMergesSystemIntoUserAndRenamesAssistant) {
    EXPECT_EQ(render(ChatTemplate::GEMMA, kConversation, true),
              "<start_of_turn>user\nYou are terse.\n\nHello!<end_of_turn>\n"
              "<start_of_turn>model\nHi there.<end_of_turn>\n"
              "<start_of_turn>user\nWhat is 2+2?<end_of_turn>\n"
              "<start_of_turn>model\n");
    EXPECT_EQ(render(ChatTemplate::GEMMA, {{"user", "hi"}}, false), "<start_of_turn>user\nhi<end_of_turn>\n");
}

TEST(ChatTemplate, Llama2WithSystemBlockStripsMessages) {
    // add_assistant changes nothing: the assistant's turn follows [/INST] directly
    const std::string want = "[INST] <<SYS>>\nYou are terse.\n<</SYS>>\n\nHello! [/INST]Hi there.</s>"
                             "[INST] What is 2+2? [/INST]";
    EXPECT_EQ(render(ChatTemplate::LLAMA2, kConversation, true), want);
    EXPECT_EQ(render(ChatTemplate::LLAMA2, kConversation, false), want);
    EXPECT_EQ(render(ChatTemplate::LLAMA2, {{"user", " a\n"}, {"assistant", "b "}}, false), "[INST] a [/INST]b</s>");
}

TEST(ChatTemplate, IncrementalRenderingIsAPrefix) {
    // lmggml chat feeds only the new part of the conversation to the KV cache:
    // rendering without the assistant opening must be a prefix of the next turn.
    for (ChatTemplate t : {ChatTemplate::CHATML, ChatTemplate::LLAMA3, ChatTemplate::GEMMA, ChatTemplate::LLAMA2}) {
        std::vector<ChatMessage> m = {{"user", "one"}};
        const std::string first = render(t, m, true);
        m.push_back({"assistant", "two"});
        const std::string closed = render(t, m, false);
        EXPECT_EQ(closed.compare(0, first.size(), first), 0) << lmllm::chat_template_name(t);
        m.push_back({"user", "three"});
        const std::string next = render(t, m, true);
        EXPECT_EQ(next.compare(0, closed.size(), closed), 0) << lmllm::chat_template_name(t);
    }
}

TEST(ChatTemplate, RejectsUnknownRoles) {
    auto r = apply_chat_template(ChatTemplate::CHATML, {{"tool", "x"}}, true);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("tool"), std::string::npos);
}
