#include "unicode_split.h"

#include "unicode.h"

#include <cstring>

namespace lmllm::uni {

namespace {

constexpr uint16_t WS = 0x100; // added to the category bits for \s

// A range of code points [begin, end) that later rules may cut further.
struct Span {
    size_t begin, end;
};

// Walks one span, cutting it into pieces; `flags(p)`/`at(p)` give 0 / NONE
// outside the span, which is how the rules see the span's edges.
class Cutter {
public:
    static constexpr uint32_t NONE = 0xFFFFFFFF;

    Cutter(const std::vector<uint32_t> & cpts, Span s, std::vector<Span> & out)
        : cpts_(cpts), s_(s), out_(out), prev_(s.begin) {}

    uint32_t at(size_t p) const { return p >= s_.begin && p < s_.end ? cpts_[p] : NONE; }
    uint16_t flags(size_t p) const {
        if (p < s_.begin || p >= s_.end) {
            return 0;
        }
        const uint32_t c = cpts_[p];
        return static_cast<uint16_t>(category(c) | (is_whitespace(c) ? WS : 0));
    }
    // Ends the current piece at `end` (nothing when empty).
    void cut(size_t end) {
        if (end > prev_) {
            out_.push_back({prev_, end});
        }
        prev_ = end;
    }
    Span span() const { return s_; }

private:
    const std::vector<uint32_t> & cpts_;
    Span s_;
    std::vector<Span> & out_;
    size_t prev_;
};

uint32_t ascii_lower(uint32_t c) { return (c >= 'A' && c <= 'Z') ? c + 32 : c; }

// Length of an English contraction ('s 't 're 've 'm 'll 'd) at p, else 0.
size_t contraction(const Cutter & k, size_t p, bool any_case) {
    if (k.at(p) != '\'') {
        return 0;
    }
    const auto low = [&](size_t q) { return any_case ? ascii_lower(k.at(q)) : k.at(q); };
    const uint32_t a = low(p + 1);
    if (a == 's' || a == 't' || a == 'm' || a == 'd') {
        return 2;
    }
    if (k.at(p + 2) == Cutter::NONE) {
        return 0;
    }
    const uint32_t b = low(p + 2);
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) {
        return 3;
    }
    return 0;
}

constexpr uint16_t L = LETTER, N = NUMBER;

// \s+(?!\S) | \s+ : a whitespace run leaves its last character to the next
// word unless the run reaches the end of the span.
bool cut_whitespace(Cutter & k, size_t & pos) {
    size_t n = 0;
    while (k.flags(pos + n) & WS) {
        ++n;
    }
    if (n > 1 && k.at(pos + n) != Cutter::NONE) {
        pos += n - 1;
    } else if (n > 0) {
        pos += n;
    } else {
        return false;
    }
    k.cut(pos);
    return true;
}

void split_gpt2(Cutter & k) {
    size_t pos = k.span().begin;
    while (pos < k.span().end) {
        if (size_t n = contraction(k, pos, false)) {
            pos += n;
            k.cut(pos);
            continue;
        }
        const bool space = k.at(pos) == ' ';
        const uint16_t f = space ? k.flags(pos + 1) : k.flags(pos);
        // ' ?\p{L}+', ' ?\p{N}+', ' ?[^\s\p{L}\p{N}]+'
        uint16_t want = 0;
        if (f & L) {
            want = L;
        } else if (f & N) {
            want = N;
        }
        if (want != 0) {
            pos += space;
            while (k.flags(pos) & want) {
                ++pos;
            }
            k.cut(pos);
            continue;
        }
        if (f != 0 && !(f & (WS | L | N))) {
            pos += space;
            for (uint16_t g = k.flags(pos); g != 0 && !(g & (WS | L | N)); g = k.flags(++pos)) {
            }
            k.cut(pos);
            continue;
        }
        if (!cut_whitespace(k, pos)) {
            k.cut(++pos);
        }
    }
}

// Llama 3 (digits in threes) and Qwen2 (single digits).
void split_llama3(Cutter & k, size_t max_digits) {
    size_t pos = k.span().begin;
    while (pos < k.span().end) {
        if (size_t n = contraction(k, pos, true)) {
            pos += n;
            k.cut(pos);
            continue;
        }
        const uint32_t c = k.at(pos);
        const uint16_t f = k.flags(pos);
        // [^\r\n\p{L}\p{N}]?\p{L}+
        if (c != '\r' && c != '\n' && !(f & N) && ((f & L) || (k.flags(pos + 1) & L))) {
            ++pos;
            while (k.flags(pos) & L) {
                ++pos;
            }
            k.cut(pos);
            continue;
        }
        // \p{N}{1,max}
        if (f & N) {
            size_t run = 0;
            while (k.flags(pos) & N) {
                ++pos;
                if (++run == max_digits) {
                    k.cut(pos);
                    run = 0;
                }
            }
            k.cut(pos);
            continue;
        }
        // ' ?[^\s\p{L}\p{N}]+[\r\n]*'
        const uint16_t f2 = c == ' ' ? k.flags(pos + 1) : f;
        if (f != 0 && !(f2 & (WS | L | N))) {
            pos += (c == ' ');
            for (uint16_t g = k.flags(pos); g != 0 && !(g & (WS | L | N)); g = k.flags(++pos)) {
            }
            while (k.at(pos) == '\r' || k.at(pos) == '\n') {
                ++pos;
            }
            k.cut(pos);
            continue;
        }
        // \s*[\r\n]+ : whitespace up to the last line break of the run
        size_t n = 0, after_break = 0;
        while (k.flags(pos + n) & WS) {
            if (k.at(pos + n) == '\r' || k.at(pos + n) == '\n') {
                after_break = pos + n + 1;
            }
            ++n;
        }
        if (after_break > 0) {
            pos = after_break;
            k.cut(pos);
            continue;
        }
        if (!cut_whitespace(k, pos)) {
            k.cut(++pos);
        }
    }
}

// Character classes of the rules that llama.cpp runs through std::regex on a
// text where each non-ASCII code point stands for its class (whitespace
// first): the same membership is computed here directly.
bool in_digit_class(uint32_t c) {
    if (c < 0x80) {
        return c >= '0' && c <= '9';
    }
    return !is_whitespace(c) && category(c) == NUMBER;
}

bool in_punct_class(uint32_t c) {
    if (c < 0x80) {
        return c != 0 && std::strchr("!\"#%&'()*,-./:;?@[\\]_{}$+<=>^~|", static_cast<int>(c)) != nullptr;
    }
    return !is_whitespace(c) && category(c) == PUNCTUATION;
}

// Matches become pieces, and so do the runs between them.
void split_class(Cutter & k, const std::vector<uint32_t> & cpts, bool (*member)(uint32_t), bool runs) {
    const Span s = k.span();
    size_t pos = s.begin;
    while (pos < s.end) {
        if (!member(cpts[pos])) {
            ++pos;
            continue;
        }
        k.cut(pos);
        ++pos;
        while (runs && pos < s.end && member(cpts[pos])) {
            ++pos;
        }
        k.cut(pos);
    }
    k.cut(s.end);
}

void split_ascii_digit_triples(Cutter & k, const std::vector<uint32_t> & cpts) {
    const Span s = k.span();
    const auto digit = [&](size_t p) { return p < s.end && cpts[p] >= '0' && cpts[p] <= '9'; };
    size_t pos = s.begin;
    while (pos < s.end) {
        if (digit(pos) && digit(pos + 1) && digit(pos + 2)) {
            k.cut(pos);
            pos += 3;
            k.cut(pos);
        } else {
            ++pos;
        }
    }
    k.cut(s.end);
}

} // namespace

bool split_rules_for(const std::string & pre, std::vector<SplitRule> & rules) {
    using R = SplitRule;
    const auto is = [&](std::initializer_list<const char *> names) {
        for (const char * n : names) {
            if (pre == n) {
                return true;
            }
        }
        return false;
    };
    if (pre.empty() || pre == "default") {
        rules = {R::PUNCT_RUNS, R::GPT2, R::DIGIT_RUNS, R::ASCII_DIGITS_3};
    } else if (is({"gpt2", "gpt-2", "phi-2", "roberta-bpe", "mpt", "olmo", "jais", "exaone4"})) {
        rules = {R::GPT2};
    } else if (is({"smollm", "starcoder", "refact", "command-r", "codeshell", "exaone", "minerva-7b"})) {
        rules = {R::DIGIT_EACH, R::GPT2};
    } else if (is({"llama3", "llama-v3", "llama-bpe", "falcon3", "dbrx", "smaug-bpe"})) {
        rules = {R::LLAMA3};
    } else if (is({"qwen2", "deepseek-r1-qwen", "megrez", "stablelm2"})) {
        rules = {R::QWEN2};
    } else {
        return false;
    }
    return true;
}

std::vector<std::string> split_words(std::string_view text, const std::vector<SplitRule> & rules, bool byte_encode) {
    const std::vector<uint32_t> cpts = decode(text);
    std::vector<Span> spans;
    if (!cpts.empty()) {
        spans.push_back({0, cpts.size()});
    }
    for (SplitRule rule : rules) {
        std::vector<Span> next;
        next.reserve(spans.size() * 2);
        for (const Span & s : spans) {
            Cutter k(cpts, s, next);
            switch (rule) {
                case SplitRule::GPT2: split_gpt2(k); break;
                case SplitRule::LLAMA3: split_llama3(k, 3); break;
                case SplitRule::QWEN2: split_llama3(k, 1); break;
                case SplitRule::DIGIT_EACH: split_class(k, cpts, in_digit_class, false); break;
                case SplitRule::DIGIT_RUNS: split_class(k, cpts, in_digit_class, true); break;
                case SplitRule::PUNCT_RUNS: split_class(k, cpts, in_punct_class, true); break;
                case SplitRule::ASCII_DIGITS_3: split_ascii_digit_triples(k, cpts); break;
            }
        }
        spans = std::move(next);
    }

    std::vector<std::string> words;
    words.reserve(spans.size());
    for (const Span & s : spans) {
        std::string w = to_utf8(cpts, s.begin, s.end);
        if (byte_encode) {
            std::string enc;
            enc.reserve(w.size() * 2);
            for (char ch : w) {
                enc += byte_to_utf8(static_cast<uint8_t>(ch));
            }
            w = std::move(enc);
        }
        words.push_back(std::move(w));
    }
    return words;
}

} // namespace lmllm::uni
