// Token ids -> text: each token's bytes (SentencePiece "▁" as space, byte
// tokens, GPT-2 alphabet decoded back to bytes), whole-sequence detokenizing
// with llama.cpp's space clean-up, and the streaming Detokenizer.

#include "vocab_impl.h"

#include "unicode.h"

namespace lmllm {

namespace {

// "<0x0A>" -> 0x0A: the (up to) two characters after "<0x", read as hex
// for as long as they are hex digits.
char byte_of(const std::string & text) {
    int value = 0;
    for (size_t i = 3; i < text.size() && i < 5; ++i) {
        const char c = text[i];
        int d = -1;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        if (d < 0) break;
        value = value * 16 + d;
    }
    return static_cast<char>(value);
}

std::string replace_all(const std::string & s, const std::string & from, const std::string & to) {
    std::string out;
    out.reserve(s.size());
    size_t pos = 0;
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, pos)) {
        out.append(s, pos, at - pos);
        out += to;
        pos = at + from.size();
    }
    out.append(s, pos, std::string::npos);
    return out;
}

// GPT-2 alphabet back to bytes; a character outside the alphabet is kept
// visible the way llama.cpp shows it.
std::string decode_byte_level(const std::string & text) {
    static const char hex[] = "0123456789abcdef";
    std::string out;
    for (uint32_t cpt : uni::decode(text)) {
        const int b = uni::cpt_to_byte(cpt);
        if (b >= 0) {
            out.push_back(static_cast<char>(b));
            continue;
        }
        std::string utf8;
        uni::append_utf8(utf8, cpt);
        out += "[UNK_BYTE_0x";
        for (char c : utf8) {
            out.push_back(hex[static_cast<uint8_t>(c) >> 4]);
            out.push_back(hex[static_cast<uint8_t>(c) & 15]);
        }
        out += text + "]";
    }
    return out;
}

// clean_up_tokenization_spaces: " ?" " !" " ." " ," lose the space,
// " ' " loses both spaces, " 's" " 'm" " 're" " 've" lose the space.
std::string tidy_spaces(const std::string & in) {
    if (in.empty()) {
        return in;
    }
    std::string a{in[0]};
    for (size_t i = 1; i < in.size(); ++i) {
        const char x = in[i];
        if (in[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',')) {
            a.pop_back();
        }
        a.push_back(x);
    }
    std::string b{a[0]};
    for (size_t i = 1; i < a.size(); ++i) {
        const char x = a[i];
        if (x == '\'' && i + 1 < a.size() && a[i - 1] == ' ' && a[i + 1] == ' ') {
            b.pop_back();
            a[i + 1] = '\0'; // the space after is dropped, and not seen as a space again
            b.push_back(x);
            ++i;
            continue;
        }
        b.push_back(x);
    }
    std::string c{b[0]};
    for (size_t i = 1; i < b.size(); ++i) {
        const char x = b[i];
        if (b[i - 1] == ' ' && x == '\'' && i + 1 < b.size()) {
            const char x1 = b[i + 1];
            const char x2 = i + 2 < b.size() ? b[i + 2] : '\0';
            if (x1 == 's' || x1 == 'm' ||
                (i + 2 < b.size() && ((x1 == 'r' && x2 == 'e') || (x1 == 'v' && x2 == 'e')))) {
                c.pop_back();
            }
        }
        c.push_back(x);
    }
    return c;
}

} // namespace

std::string Vocab::Impl::make_piece(Token id) const {
    const TokenData & t = tokens[id];
    if (t.attr & (ATTR_UNKNOWN | ATTR_CONTROL | ATTR_USER_DEFINED)) {
        return t.text;
    }
    if (t.attr & ATTR_NORMAL) {
        return type == VocabType::SPM ? replace_all(t.text, "\xe2\x96\x81", " ") : decode_byte_level(t.text);
    }
    if (t.attr & ATTR_BYTE) {
        return std::string(1, byte_of(t.text));
    }
    return {}; // unused / undefined tokens have no text
}

std::string Vocab::Impl::detokenize(const std::vector<Token> & ids, bool special) const {
    std::string out;
    bool strip_space = add_space_prefix; // the space SentencePiece put before the text
    for (Token id : ids) {
        if (!valid(id)) {
            strip_space = false;
            continue;
        }
        const bool hidden = !special && (tokens[id].attr & (ATTR_CONTROL | ATTR_UNKNOWN));
        if (!hidden) {
            const std::string & piece = piece_cache[id];
            const size_t skip = (strip_space && !piece.empty() && piece[0] == ' ') ? 1 : 0;
            out.append(piece, skip); // from skip to the end
        }
        strip_space = false;
    }
    return clean_spaces ? tidy_spaces(out) : out;
}

std::string Detokenizer::push(Token id) {
    pending_ += vocab_.token_to_piece(id, special_);
    const size_t n = uni::complete_prefix(pending_);
    std::string out = uni::sanitize(std::string_view(pending_).substr(0, n));
    pending_.erase(0, n);
    return out;
}

std::string Detokenizer::flush() {
    std::string out = uni::sanitize(pending_);
    pending_.clear();
    return out;
}

} // namespace lmllm
