// Vocabulary loading from GGUF metadata (tokenizer.ggml.*) and accessors.
// Defaults and special-token detection follow llama.cpp, so a model file
// means the same thing to both.

#include "vocab_impl.h"

#include <algorithm>
#include <initializer_list>
#include <new>

#include "gguf.h"

namespace lmllm {

namespace {

bool is_int_type(lm_gguf_type t) {
    switch (t) {
        case LM_GGUF_TYPE_UINT8:
        case LM_GGUF_TYPE_INT8:
        case LM_GGUF_TYPE_UINT16:
        case LM_GGUF_TYPE_INT16:
        case LM_GGUF_TYPE_UINT32:
        case LM_GGUF_TYPE_INT32:
        case LM_GGUF_TYPE_UINT64:
        case LM_GGUF_TYPE_INT64: return true;
        default: return false;
    }
}

int64_t int_value(const lm_gguf_context * g, int64_t k) {
    switch (lm_gguf_get_kv_type(g, k)) {
        case LM_GGUF_TYPE_UINT8: return lm_gguf_get_val_u8(g, k);
        case LM_GGUF_TYPE_INT8: return lm_gguf_get_val_i8(g, k);
        case LM_GGUF_TYPE_UINT16: return lm_gguf_get_val_u16(g, k);
        case LM_GGUF_TYPE_INT16: return lm_gguf_get_val_i16(g, k);
        case LM_GGUF_TYPE_UINT32: return lm_gguf_get_val_u32(g, k);
        case LM_GGUF_TYPE_INT32: return lm_gguf_get_val_i32(g, k);
        case LM_GGUF_TYPE_UINT64: return static_cast<int64_t>(std::min<uint64_t>(lm_gguf_get_val_u64(g, k), INT64_MAX));
        case LM_GGUF_TYPE_INT64: return lm_gguf_get_val_i64(g, k);
        default: return -1;
    }
}

// Reads an optional key; an existing key of the wrong type is an error.
struct Meta {
    const lm_gguf_context * g;
    std::string error;

    int64_t key(const char * name) const { return lm_gguf_find_key(g, name); }

    bool get_str(const char * name, std::string & out) {
        const int64_t k = key(name);
        if (k < 0) return false;
        if (lm_gguf_get_kv_type(g, k) != LM_GGUF_TYPE_STRING) return fail(name, "is not a string");
        out = lm_gguf_get_val_str(g, k);
        return true;
    }
    bool get_bool(const char * name, bool & out) {
        const int64_t k = key(name);
        if (k < 0) return false;
        if (lm_gguf_get_kv_type(g, k) != LM_GGUF_TYPE_BOOL) return fail(name, "is not a bool");
        out = lm_gguf_get_val_bool(g, k);
        return true;
    }
    bool get_int(const char * name, int64_t & out) {
        const int64_t k = key(name);
        if (k < 0) return false;
        if (!is_int_type(lm_gguf_get_kv_type(g, k))) return fail(name, "is not an integer");
        out = int_value(g, k);
        return true;
    }
    // An array of `want` elements; returns its key id or -1 when absent.
    int64_t get_array(const char * name, std::initializer_list<lm_gguf_type> want) {
        const int64_t k = key(name);
        if (k < 0) return -1;
        if (lm_gguf_get_kv_type(g, k) != LM_GGUF_TYPE_ARRAY ||
            std::find(want.begin(), want.end(), lm_gguf_get_arr_type(g, k)) == want.end()) {
            fail(name, "has the wrong type");
            return -1;
        }
        return k;
    }
    bool fail(const char * name, const char * what) {
        if (error.empty()) error = std::string("vocab: ") + name + " " + what;
        return false;
    }
};

// Names llama.cpp recognises for end-of-turn and other generation-ending
// tokens when the file does not say (first match in this order wins).
// One name is one literal split after each hex escape, not a missing comma.
// NOLINTBEGIN(bugprone-suspicious-missing-comma)
const char * const k_eot_names[] = {
    "<|eot_id|>",
    "<|im_end|>",
    "<|end|>",
    "<end_of_turn>",
    "<|endoftext|>",
    "<|end_of_text|>",
    "<EOT>",
    "_<EOT>",
    "[EOT]",
    "<\xef\xbd\x9c"
    "end\xe2\x96\x81"
    "of\xe2\x96\x81"
    "sentence\xef\xbd\x9c>",
    "<end_of_utterance>",
};
const char * const k_eog_names[] = {
    "<|eot_id|>",
    "<|im_end|>",
    "<|end|>",
    "<|return|>",
    "<|call|>",
    "<|flush|>",
    "<|calls|>",
    "<end_of_turn>",
    "<|endoftext|>",
    "</s>",
    "<|eom_id|>",
    "<EOT>",
    "_<EOT>",
    "[EOT]",
    "[EOS]",
    "<|end_of_text|>",
    "<end_of_utterance>",
    "<eos>",
    "<turn|>",
    "<|tool_response>",
    "<\xef\xbd\x9c"
    "end\xe2\x96\x81"
    "of\xe2\x96\x81"
    "sentence\xef\xbd\x9c>",
    "[e~[",
};
// NOLINTEND(bugprone-suspicious-missing-comma)
// fill-in-the-middle tokens: prefix/suffix/middle become control tokens,
// pad/repo/file-separator also end generation
const char * const k_fim_pre_names[] = {"<|fim_prefix|>",    "<fim-prefix>",    "<fim_prefix>", "<PRE>",
                                        "\xe2\x96\x81<PRE>", "<|code_prefix|>", "<|prefix|>"};
const char * const k_fim_suf_names[] = {"<|fim_suffix|>",    "<fim-suffix>",    "<fim_suffix>", "<SUF>",
                                        "\xe2\x96\x81<SUF>", "<|code_suffix|>", "<|suffix|>"};
const char * const k_fim_mid_names[] = {"<|fim_middle|>",    "<fim-middle>",    "<fim_middle>", "<MID>",
                                        "\xe2\x96\x81<MID>", "<|code_middle|>", "<|middle|>"};
const char * const k_fim_pad_names[] = {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"};
const char * const k_fim_rep_names[] = {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"};
const char * const k_fim_sep_names[] = {"<|file_sep|>"};

uint32_t attr_from_type(int32_t t) {
    switch (t) {
        case TOKEN_NORMAL: return ATTR_NORMAL;
        case TOKEN_UNKNOWN: return ATTR_UNKNOWN;
        case TOKEN_CONTROL: return ATTR_CONTROL;
        case TOKEN_USER_DEFINED: return ATTR_USER_DEFINED;
        case TOKEN_UNUSED: return ATTR_UNUSED;
        case TOKEN_BYTE: return ATTR_BYTE;
        default: return ATTR_UNDEFINED;
    }
}

// BPE settings that depend on the pre-tokenizer name.
void bpe_pre_settings(Vocab::Impl & v) {
    const std::string & p = v.pre;
    v.clean_spaces = true;
    for (const char * n : {"smollm", "command-r", "qwen2", "deepseek-r1-qwen"}) {
        if (p == n) v.clean_spaces = false;
    }
    for (const char * n : {"llama3", "llama-v3", "llama-bpe", "falcon3"}) {
        if (p == n) {
            v.ignore_merges = true;
            v.add_bos = true;
        }
    }
}

Status load_tokens(Meta & m, Vocab::Impl & v) {
    const int64_t kt = m.get_array("tokenizer.ggml.tokens", {LM_GGUF_TYPE_STRING});
    if (kt < 0) {
        return Status::error(m.error.empty() ? "vocab: tokenizer.ggml.tokens is missing" : m.error);
    }
    const size_t n = lm_gguf_get_arr_n(m.g, kt);
    if (n == 0 || n > static_cast<size_t>(INT32_MAX)) {
        return Status::error("vocab: tokenizer.ggml.tokens has " + std::to_string(n) + " entries");
    }
    const int64_t ks = m.get_array("tokenizer.ggml.scores", {LM_GGUF_TYPE_FLOAT32, LM_GGUF_TYPE_INT32});
    const int64_t ky = m.get_array("tokenizer.ggml.token_type", {LM_GGUF_TYPE_INT32});
    if (!m.error.empty()) {
        return Status::error(m.error);
    }
    if (ks >= 0 && lm_gguf_get_arr_n(m.g, ks) < n) {
        return Status::error("vocab: tokenizer.ggml.scores has fewer entries than tokenizer.ggml.tokens");
    }
    if (ky >= 0 && lm_gguf_get_arr_n(m.g, ky) < n) {
        return Status::error("vocab: tokenizer.ggml.token_type has fewer entries than tokenizer.ggml.tokens");
    }
    const bool int_scores = ks >= 0 && lm_gguf_get_arr_type(m.g, ks) == LM_GGUF_TYPE_INT32;
    const void * scores = ks >= 0 ? lm_gguf_get_arr_data(m.g, ks) : nullptr;
    const int32_t * types = ky >= 0 ? static_cast<const int32_t *>(lm_gguf_get_arr_data(m.g, ky)) : nullptr;

    v.tokens.resize(n);
    v.text_to_id.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        auto & t = v.tokens[i];
        const char * s = lm_gguf_get_arr_str(m.g, kt, i);
        t.text = s ? s : "";
        if (t.text.empty()) {
            t.text = "[EMPTY_" + std::to_string(i) + "]";
        }
        v.text_to_id[t.text] = static_cast<Token>(i); // a repeated text maps to its last id
        if (scores) {
            t.score = int_scores ? static_cast<float>(static_cast<const int32_t *>(scores)[i])
                                 : static_cast<const float *>(scores)[i];
        }
        t.attr = types ? attr_from_type(types[i]) : ATTR_NORMAL;
    }
    return Status();
}

Status load_merges(Meta & m, Vocab::Impl & v) {
    const int64_t k = m.get_array("tokenizer.ggml.merges", {LM_GGUF_TYPE_STRING});
    if (k < 0) {
        return Status::error(m.error.empty() ? "vocab: tokenizer.ggml.merges is missing (needed by a gpt2 tokenizer)"
                                             : m.error);
    }
    const size_t n = lm_gguf_get_arr_n(m.g, k);
    v.merge_rank.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        const char * s = lm_gguf_get_arr_str(m.g, k, i);
        const std::string line = s ? s : "";
        // "left right"; the first space after position 0 separates them
        const size_t sp = line.find(' ', 1);
        std::string left, right;
        if (sp != std::string::npos) {
            left = line.substr(0, sp);
            right = line.substr(sp + 1);
        }
        v.merge_rank.emplace(Vocab::Impl::merge_key(left, right), static_cast<int32_t>(std::min<size_t>(i, INT32_MAX)));
    }
    return Status();
}

void read_special_id(Meta & m, const Vocab::Impl & v, const char * key, Token & id) {
    if (!v.valid(id)) {
        id = -1; // a default outside this vocabulary
    }
    int64_t val = -1;
    if (m.get_int(key, val) && val >= 0 && val < static_cast<int64_t>(v.tokens.size())) {
        id = static_cast<Token>(val);
    }
}

// The first token found by name (in list order), made a control token.
template <size_t N> Token detect(Vocab::Impl & v, const char * const (&names)[N]) {
    for (const char * n : names) {
        const Token id = v.find(n);
        if (id >= 0) {
            v.tokens[id].attr |= ATTR_CONTROL;
            return id;
        }
    }
    return -1;
}

void finish_specials(Meta & m, Vocab::Impl & v) {
    Token fim_pre = -1, fim_suf = -1, fim_mid = -1, fim_pad = -1, fim_rep = -1, fim_sep = -1;
    read_special_id(m, v, "tokenizer.ggml.bos_token_id", v.bos);
    read_special_id(m, v, "tokenizer.ggml.eos_token_id", v.eos);
    read_special_id(m, v, "tokenizer.ggml.eot_token_id", v.eot);
    read_special_id(m, v, "tokenizer.ggml.eom_token_id", v.eom);
    read_special_id(m, v, "tokenizer.ggml.unknown_token_id", v.unk);
    read_special_id(m, v, "tokenizer.ggml.padding_token_id", v.pad);
    read_special_id(m, v, "tokenizer.ggml.fim_pre_token_id", fim_pre);
    read_special_id(m, v, "tokenizer.ggml.fim_suf_token_id", fim_suf);
    read_special_id(m, v, "tokenizer.ggml.fim_mid_token_id", fim_mid);
    read_special_id(m, v, "tokenizer.ggml.fim_pad_token_id", fim_pad);
    read_special_id(m, v, "tokenizer.ggml.fim_rep_token_id", fim_rep);
    read_special_id(m, v, "tokenizer.ggml.fim_sep_token_id", fim_sep);

    bool b = false;
    if (m.get_bool("tokenizer.ggml.add_bos_token", b)) v.add_bos = b;
    if (m.get_bool("tokenizer.ggml.add_eos_token", b)) v.add_eos = b;

    // tokens the file did not name are found by their text
    if (v.eot < 0) v.eot = detect(v, k_eot_names);
    if (v.eom < 0) {
        const char * const eom[] = {"<|eom_id|>"};
        v.eom = detect(v, eom);
    }
    if (fim_pre < 0) fim_pre = detect(v, k_fim_pre_names);
    if (fim_suf < 0) fim_suf = detect(v, k_fim_suf_names);
    if (fim_mid < 0) fim_mid = detect(v, k_fim_mid_names);
    if (fim_pad < 0) fim_pad = detect(v, k_fim_pad_names);
    if (fim_rep < 0) fim_rep = detect(v, k_fim_rep_names);
    if (fim_sep < 0) fim_sep = detect(v, k_fim_sep_names);

    // control tokens named "unused" are placeholders
    for (auto & t : v.tokens) {
        if ((t.attr & ATTR_CONTROL) && t.text.find("unused") != std::string::npos) {
            t.attr |= ATTR_UNUSED;
        }
    }

    for (Token id : {fim_pad, fim_rep, fim_sep, v.eos, v.eot, v.eom}) {
        if (id >= 0) v.eog.insert(id);
    }
    for (const char * n : k_eog_names) { // every one of these ends generation
        const Token id = v.find(n);
        if (id >= 0) {
            v.tokens[id].attr |= ATTR_CONTROL;
            v.eog.insert(id);
        }
    }

    for (size_t i = 0; i < v.tokens.size(); ++i) {
        if (v.tokens[i].attr & (ATTR_CONTROL | ATTR_USER_DEFINED | ATTR_UNKNOWN)) {
            v.special_by_length.push_back(static_cast<Token>(i));
        }
    }
    std::stable_sort(v.special_by_length.begin(), v.special_by_length.end(),
                     [&](Token a, Token b) { return v.tokens[a].text.size() > v.tokens[b].text.size(); });
}

Result<std::unique_ptr<Vocab::Impl>> load_impl(const lm_gguf_context * gguf) {
    auto v = std::make_unique<Vocab::Impl>();
    Meta m{gguf, {}};
    std::string model;
    if (!m.get_str("tokenizer.ggml.model", model)) {
        return Status::error(m.error.empty() ? "vocab: tokenizer.ggml.model is missing" : m.error);
    }
    m.get_str("tokenizer.ggml.pre", v->pre);
    if (model == "llama") {
        v->type = VocabType::SPM;
        v->bos = 1;
        v->eos = 2;
        v->unk = 0;
        v->add_space_prefix = true;
        v->add_bos = true;
    } else if (model == "gpt2") {
        v->type = VocabType::BPE;
        v->bos = 11;
        v->eos = 11;
        v->unk = -1;
        if (!uni::split_rules_for(v->pre, v->split_rules)) {
            return Status::error("vocab: tokenizer.ggml.pre '" + v->pre + "' is not a supported pre-tokenizer");
        }
        bpe_pre_settings(*v);
    } else {
        return Status::error("vocab: tokenizer.ggml.model '" + model + "' is not supported (llama or gpt2)");
    }
    bool b = false;
    if (m.get_bool("tokenizer.ggml.add_space_prefix", b)) v->add_space_prefix = b;

    if (Status s = load_tokens(m, *v); !s.ok()) return s;
    if (v->type == VocabType::BPE) {
        if (Status s = load_merges(m, *v); !s.ok()) return s;
    }
    finish_specials(m, *v);
    if (!m.error.empty()) {
        return Status::error(m.error);
    }
    v->piece_cache.resize(v->tokens.size());
    for (size_t i = 0; i < v->tokens.size(); ++i) {
        v->piece_cache[i] = v->make_piece(static_cast<Token>(i));
    }
    return v;
}

} // namespace

Result<std::unique_ptr<Vocab>> Vocab::load(const lm_gguf_context * gguf) {
    if (gguf == nullptr) {
        return Status::error("vocab: no GGUF context");
    }
    try {
        auto impl = load_impl(gguf);
        if (!impl.ok()) {
            return impl.status();
        }
        return std::unique_ptr<Vocab>(new Vocab(std::move(impl.value())));
    } catch (const std::bad_alloc &) {
        return Status::error("vocab: out of memory while reading the vocabulary");
    }
}

Vocab::Vocab(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Vocab::~Vocab() = default;

VocabType Vocab::type() const { return impl_->type; }
const std::string & Vocab::pre_tokenizer() const { return impl_->pre; }
int32_t Vocab::n_tokens() const { return static_cast<int32_t>(impl_->tokens.size()); }

std::vector<Token> Vocab::tokenize(const std::string & text, bool add_special, bool parse_special) const {
    return impl_->tokenize(text, add_special, parse_special);
}

std::string Vocab::token_to_piece(Token id, bool special) const {
    if (!impl_->valid(id)) {
        return {};
    }
    if (!special && (impl_->tokens[id].attr & (ATTR_CONTROL | ATTR_UNKNOWN))) {
        return {};
    }
    return impl_->piece_cache[id];
}

std::string Vocab::detokenize(const std::vector<Token> & ids, bool special) const {
    return impl_->detokenize(ids, special);
}

const std::string & Vocab::token_text(Token id) const {
    static const std::string none;
    return impl_->valid(id) ? impl_->tokens[id].text : none;
}

Token Vocab::token_id(const std::string & text) const { return impl_->find(text); }

Token Vocab::bos() const { return impl_->bos; }
Token Vocab::eos() const { return impl_->eos; }
Token Vocab::eot() const { return impl_->eot; }
Token Vocab::unk() const { return impl_->unk; }
bool Vocab::add_bos() const { return impl_->add_bos; }
bool Vocab::add_eos() const { return impl_->add_eos; }
bool Vocab::is_eog(Token id) const { return impl_->eog.count(id) > 0; }
bool Vocab::is_control(Token id) const { return impl_->valid(id) && (impl_->tokens[id].attr & ATTR_CONTROL); }

} // namespace lmllm
