#include "unicode.h"

#include <algorithm>
#include <array>

namespace lmllm::uni {

Category category(uint32_t cpt) {
    if (cpt > 0x10FFFF) {
        return UNDEFINED;
    }
    const CategoryRange * begin = k_category_ranges;
    const CategoryRange * end = k_category_ranges + k_n_category_ranges;
    // last range whose first <= cpt (the table starts at 0, so one exists)
    const CategoryRange * it =
        std::upper_bound(begin, end, cpt, [](uint32_t c, const CategoryRange & r) { return c < r.first; });
    return (it - 1)->cat;
}

bool is_whitespace(uint32_t cpt) {
    switch (cpt) {
        case 0x0009:
        case 0x000A:
        case 0x000B:
        case 0x000C:
        case 0x000D:
        case 0x0020:
        case 0x0085:
        case 0x00A0:
        case 0x1680:
        case 0x2028:
        case 0x2029:
        case 0x202F:
        case 0x205F:
        case 0x3000: return true;
        default: return cpt >= 0x2000 && cpt <= 0x200A;
    }
}

size_t seq_len(uint8_t lead) {
    switch (lead >> 4) {
        case 0xC:
        case 0xD: return 2;
        case 0xE: return 3;
        case 0xF: return 4;
        default: return 1;
    }
}

static bool is_cont(uint8_t b) { return (b & 0xC0) == 0x80; }

uint32_t decode_one(std::string_view s, size_t & pos) {
    const auto at = [&](size_t i) { return static_cast<uint8_t>(s[pos + i]); };
    const uint8_t b0 = at(0);
    const size_t left = s.size() - pos;
    if (b0 < 0x80) {
        pos += 1;
        return b0;
    }
    size_t n = 0;
    uint32_t cpt = 0;
    if ((b0 & 0xE0) == 0xC0) {
        n = 2;
        cpt = b0 & 0x1F;
    } else if ((b0 & 0xF0) == 0xE0) {
        n = 3;
        cpt = b0 & 0x0F;
    } else if ((b0 & 0xF8) == 0xF0) {
        n = 4;
        cpt = b0 & 0x07;
    } else { // stray continuation byte or 0xF8..0xFF
        pos += 1;
        return REPLACEMENT;
    }
    if (left < n) {
        pos += 1;
        return REPLACEMENT;
    }
    for (size_t i = 1; i < n; ++i) {
        if (!is_cont(at(i))) {
            pos += 1;
            return REPLACEMENT;
        }
        cpt = (cpt << 6) | (at(i) & 0x3F);
    }
    if (cpt > 0x10FFFF) { // cannot be written back as UTF-8
        pos += 1;
        return REPLACEMENT;
    }
    pos += n;
    return cpt;
}

std::vector<uint32_t> decode(std::string_view s) {
    std::vector<uint32_t> out;
    out.reserve(s.size());
    size_t pos = 0;
    while (pos < s.size()) {
        out.push_back(decode_one(s, pos));
    }
    return out;
}

void append_utf8(std::string & out, uint32_t c) {
    if (c < 0x80) {
        out.push_back(static_cast<char>(c));
    } else if (c < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (c >> 6)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else if (c < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (c >> 12)));
        out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | ((c >> 18) & 0x07)));
        out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
}

std::string to_utf8(const std::vector<uint32_t> & cpts, size_t begin, size_t end) {
    std::string out;
    out.reserve(end - begin);
    for (size_t i = begin; i < end; ++i) {
        append_utf8(out, cpts[i]);
    }
    return out;
}

// GPT-2's alphabet: printable Latin-1 bytes stand for themselves, the other
// 68 bytes (controls, space, DEL, NBSP, soft hyphen...) take U+0100 onwards
// in byte order.
namespace {
struct ByteAlphabet {
    std::array<uint32_t, 256> cpt{};
    std::array<std::string, 256> utf8;
    ByteAlphabet() {
        uint32_t next = 0x100;
        for (int b = 0; b < 256; ++b) {
            const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
            cpt[b] = printable ? static_cast<uint32_t>(b) : next++;
            append_utf8(utf8[b], cpt[b]);
        }
    }
};
const ByteAlphabet & alphabet() {
    static const ByteAlphabet a;
    return a;
}
} // namespace

uint32_t byte_to_cpt(uint8_t b) { return alphabet().cpt[b]; }
const std::string & byte_to_utf8(uint8_t b) { return alphabet().utf8[b]; }

int cpt_to_byte(uint32_t cpt) {
    if (cpt < 0x100) {
        const uint8_t b = static_cast<uint8_t>(cpt);
        return alphabet().cpt[b] == cpt ? b : -1;
    }
    if (cpt < 0x100 + 68) {
        // the remapped bytes, in byte order
        uint32_t k = cpt - 0x100;
        for (int b = 0; b < 256; ++b) {
            if (alphabet().cpt[b] >= 0x100 && k-- == 0) {
                return b;
            }
        }
    }
    return -1;
}

// Strict UTF-8 (RFC 3629): how many bytes of a well-formed sequence start at
// s[pos] (0: the lead byte is invalid), and how many of them are present and
// well-formed (a maximal subpart, for U+FFFD replacement).
static void strict_seq(std::string_view s, size_t pos, size_t & need, size_t & have) {
    const uint8_t b0 = static_cast<uint8_t>(s[pos]);
    uint8_t lo = 0x80, hi = 0xBF; // allowed range of the second byte
    if (b0 < 0x80) {
        need = have = 1;
        return;
    }
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        need = 2;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
        need = 3;
        if (b0 == 0xE0) lo = 0xA0;
        if (b0 == 0xED) hi = 0x9F;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        need = 4;
        if (b0 == 0xF0) lo = 0x90;
        if (b0 == 0xF4) hi = 0x8F;
    } else {
        need = 0;
        have = 1;
        return;
    }
    have = 1;
    while (have < need && pos + have < s.size()) {
        const uint8_t b = static_cast<uint8_t>(s[pos + have]);
        const bool ok = have == 1 ? (b >= lo && b <= hi) : is_cont(b);
        if (!ok) {
            break;
        }
        ++have;
    }
}

size_t complete_prefix(std::string_view s) {
    size_t pos = 0;
    while (pos < s.size()) {
        size_t need = 0, have = 0;
        strict_seq(s, pos, need, have);
        if (need != 0 && have < need && pos + have == s.size()) {
            return pos; // a sequence still waiting for its last bytes
        }
        pos += (need != 0 && have == need) ? need : have;
    }
    return pos;
}

std::string sanitize(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    size_t pos = 0;
    while (pos < s.size()) {
        size_t need = 0, have = 0;
        strict_seq(s, pos, need, have);
        if (need != 0 && have == need) {
            out.append(s.substr(pos, need));
        } else {
            append_utf8(out, REPLACEMENT);
        }
        pos += have;
    }
    return out;
}

} // namespace lmllm::uni
