// Text -> token ids: special-token matching, then SentencePiece-style
// score-ordered merging (SPM) or rank-ordered byte-level BPE merging.

#include "vocab_impl.h"

#include <queue>
#include <string_view>

#include "unicode.h"

namespace lmllm {

namespace {

// A piece of the input: raw text [off, off + len) or an already-known token.
struct Fragment {
    Token id; // -1 for text
    size_t off, len;
};

// Cuts every text fragment at each occurrence of each special token, longest
// tokens first, so "<|im_start|>" wins over any shorter token inside it.
std::vector<Fragment> partition(const Vocab::Impl & v, const std::string & text, bool parse_special) {
    std::vector<Fragment> frags;
    if (text.empty()) {
        return frags;
    }
    frags.push_back({-1, 0, text.size()});
    const std::string_view all(text);
    for (Token id : v.special_by_length) {
        const auto & tok = v.tokens[id];
        if (!parse_special && (tok.attr & (ATTR_CONTROL | ATTR_UNKNOWN))) {
            continue; // user-defined tokens are matched even then
        }
        const std::string & needle = tok.text;
        std::vector<Fragment> next;
        next.reserve(frags.size());
        for (const Fragment & f : frags) {
            if (f.id >= 0) {
                next.push_back(f);
                continue;
            }
            const std::string_view hay = all.substr(0, f.off + f.len);
            size_t start = f.off;
            for (size_t at = hay.find(needle, start); at != std::string_view::npos; at = hay.find(needle, start)) {
                if (at > start) {
                    next.push_back({-1, start, at - start});
                }
                next.push_back({id, 0, 0});
                start = at + needle.size();
            }
            if (start < f.off + f.len) {
                next.push_back({-1, start, f.off + f.len - start});
            }
        }
        frags = std::move(next);
    }
    return frags;
}

// Doubly linked pieces of a string being merged.
struct Symbol {
    size_t start, len;
    int prev, next;
};

std::vector<Symbol> utf8_symbols(const std::string & s) {
    std::vector<Symbol> syms;
    size_t off = 0;
    while (off < s.size()) {
        const size_t n = std::min(uni::seq_len(static_cast<uint8_t>(s[off])), s.size() - off);
        const int idx = static_cast<int>(syms.size());
        syms.push_back({off, n, idx - 1, off + n == s.size() ? -1 : idx + 1});
        off += n;
    }
    return syms;
}

// A candidate merge of two neighbours; `size` tells a stale candidate (one
// of the two has changed since) from a live one.
struct Candidate {
    double key; // SPM: score (higher first); BPE: -rank (lower rank first)
    int left, right;
    size_t size;
};
struct CandidateOrder {
    bool operator()(const Candidate & a, const Candidate & b) const {
        return a.key < b.key || (a.key == b.key && a.left > b.left); // ties: leftmost first
    }
};
using CandidateQueue = std::priority_queue<Candidate, std::vector<Candidate>, CandidateOrder>;

// Repeatedly merges the best candidate; `score(l, r)` rates the pair or
// returns false when the two may not merge.
template <typename Score> void merge_all(std::vector<Symbol> & syms, Score score) {
    CandidateQueue queue;
    const auto offer = [&](int l, int r) {
        if (l < 0 || r < 0) return;
        double key = 0.0;
        if (score(syms[l], syms[r], key)) {
            queue.push({key, l, r, syms[l].len + syms[r].len});
        }
    };
    for (int i = 1; i < static_cast<int>(syms.size()); ++i) {
        offer(i - 1, i);
    }
    while (!queue.empty()) {
        const Candidate c = queue.top();
        queue.pop();
        Symbol & l = syms[c.left];
        Symbol & r = syms[c.right];
        if (l.len == 0 || r.len == 0 || l.len + r.len != c.size) {
            continue;
        }
        l.len += r.len;
        r.len = 0;
        l.next = r.next;
        if (r.next >= 0) {
            syms[r.next].prev = c.left;
        }
        offer(l.prev, c.left);
        offer(c.left, l.next);
    }
}

void tokenize_spm(const Vocab::Impl & v, std::string_view frag, bool space_before, std::vector<Token> & out) {
    // SentencePiece writes spaces as U+2581 "▁"
    std::string text;
    text.reserve(frag.size() + 3);
    if (space_before) {
        text += "\xe2\x96\x81";
    }
    for (char c : frag) {
        if (c == ' ') {
            text += "\xe2\x96\x81";
        } else {
            text += c;
        }
    }
    std::vector<Symbol> syms = utf8_symbols(text);
    merge_all(syms, [&](const Symbol & l, const Symbol & r, double & key) {
        const Token id = v.find(text.substr(l.start, l.len + r.len));
        if (id < 0) return false;
        key = v.tokens[id].score;
        return true;
    });
    for (int i = syms.empty() ? -1 : 0; i >= 0; i = syms[i].next) {
        const std::string piece = text.substr(syms[i].start, syms[i].len);
        const Token id = v.find(piece);
        if (id >= 0) {
            out.push_back(id);
            continue;
        }
        for (char c : piece) { // no token for it: spell it in bytes
            const Token b = v.byte_token(static_cast<uint8_t>(c));
            if (b >= 0) out.push_back(b);
        }
    }
}

void tokenize_bpe(const Vocab::Impl & v, std::string_view frag, std::vector<Token> & out) {
    for (const std::string & word : uni::split_words(frag, v.split_rules, true)) {
        if (v.ignore_merges) {
            if (const Token id = v.find(word); id >= 0) {
                out.push_back(id);
                continue;
            }
        }
        std::vector<Symbol> syms = utf8_symbols(word);
        merge_all(syms, [&](const Symbol & l, const Symbol & r, double & key) {
            auto it =
                v.merge_rank.find(Vocab::Impl::merge_key(word.substr(l.start, l.len), word.substr(r.start, r.len)));
            if (it == v.merge_rank.end()) return false;
            key = -static_cast<double>(it->second);
            return true;
        });
        for (int i = syms.empty() ? -1 : 0; i >= 0; i = syms[i].next) {
            const std::string piece = word.substr(syms[i].start, syms[i].len);
            const Token id = v.find(piece);
            if (id >= 0) {
                out.push_back(id);
                continue;
            }
            for (char c : piece) { // as llama.cpp: single raw bytes that happen to be tokens
                const Token b = v.find(std::string(1, c));
                if (b >= 0) out.push_back(b);
            }
        }
    }
}

} // namespace

Token Vocab::Impl::byte_token(uint8_t byte) const {
    if (type == VocabType::BPE) {
        return find(uni::byte_to_utf8(byte));
    }
    static const char hex[] = "0123456789ABCDEF";
    const char name[7] = {'<', '0', 'x', hex[byte >> 4], hex[byte & 15], '>', 0};
    Token id = find(name);
    if (id < 0) {
        id = find(std::string(1, static_cast<char>(byte)));
    }
    return id >= 0 ? id : unk; // llama.cpp gives up here; unk keeps going
}

std::vector<Token> Vocab::Impl::tokenize(const std::string & text, bool add_special, bool parse_special) const {
    std::vector<Token> out;
    const std::vector<Fragment> frags = partition(*this, text, parse_special);
    if (add_special && add_bos && valid(bos)) {
        out.push_back(bos);
    }
    bool after_special = true; // the start of the text counts as after a special token
    for (const Fragment & f : frags) {
        if (f.id >= 0) {
            out.push_back(f.id);
            after_special = true;
            continue;
        }
        const std::string_view piece(text.data() + f.off, f.len);
        if (type == VocabType::SPM) {
            tokenize_spm(*this, piece, add_space_prefix && after_special, out);
        } else {
            tokenize_bpe(*this, piece, out);
        }
        after_special = false;
    }
    if (add_special && add_eos && valid(eos)) {
        out.push_back(eos);
    }
    return out;
}

} // namespace lmllm
