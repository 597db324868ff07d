// Reference tokenizer fixtures from llama.cpp (the independent
// implementation), written as plain text for tests/llm_vocab.
// Built and run by scripts/peer/make-tokenizer-fixtures against a llama.cpp
// build outside this tree; uses only llama.h's public API. Not built by CI.
//
// usage: tokenizer-fixtures MODEL.gguf CASES.hex HEADER_TEXT > OUT.txt
// CASES.hex: one input per line, hex-encoded (any bytes, empty line = "").
//
// Output lines (fields separated by one tab; byte strings hex-encoded,
// token lists as space-separated ids, "-" for an empty list/string):
//   # ...                                   comments (header, readable input)
//   meta KEY VALUE...                       bos, eos, eot, add_bos, n_tokens, eog ids, control ids
//   case HEX IDS00 IDS01 IDS10 IDS11 DET0 DET1
//        IDSab: tokenize(add_special=a, parse_special=b)
//        DET0:  detokenize(IDS00, remove_special=false, unparse_special=false)
//        DET1:  detokenize(IDS11, remove_special=false, unparse_special=true)
//   piece ID HEX0 HEX1                      token_to_piece(special=false / true) for sampled ids
//   pieces_fnv N FNV0 FNV1                  FNV-1a 64 over every id's pieces

#include "llama.h"

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

static std::string hex(const std::string & s) {
    static const char digits[] = "0123456789abcdef";
    if (s.empty()) return "-";
    std::string out;
    for (unsigned char c : s) {
        out += digits[c >> 4];
        out += digits[c & 15];
    }
    return out;
}

static std::string unhex(const std::string & h) {
    std::string out;
    for (size_t i = 0; i + 1 < h.size(); i += 2) {
        out += static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16));
    }
    return out;
}

static std::vector<llama_token> tokenize(const llama_vocab * v, const std::string & s, bool add, bool parse) {
    std::vector<llama_token> ids(s.size() + 16);
    int n = llama_tokenize(v, s.data(), (int32_t) s.size(), ids.data(), (int32_t) ids.size(), add, parse);
    if (n < 0) {
        ids.resize(-n);
        n = llama_tokenize(v, s.data(), (int32_t) s.size(), ids.data(), (int32_t) ids.size(), add, parse);
    }
    ids.resize(n);
    return ids;
}

static std::string detokenize(const llama_vocab * v, const std::vector<llama_token> & ids, bool special) {
    std::string out(ids.size() * 8 + 16, '\0');
    int n = llama_detokenize(v, ids.data(), (int32_t) ids.size(), out.data(), (int32_t) out.size(), false, special);
    if (n < 0) {
        out.resize(-n);
        n = llama_detokenize(v, ids.data(), (int32_t) ids.size(), out.data(), (int32_t) out.size(), false, special);
    }
    out.resize(n);
    return out;
}

static std::string piece(const llama_vocab * v, llama_token id, bool special) {
    std::string out(64, '\0');
    int n = llama_token_to_piece(v, id, out.data(), (int32_t) out.size(), 0, special);
    if (n < 0) {
        out.resize(-n);
        n = llama_token_to_piece(v, id, out.data(), (int32_t) out.size(), 0, special);
    }
    out.resize(n);
    return out;
}

static std::string ids_str(const std::vector<llama_token> & ids) {
    if (ids.empty()) return "-";
    std::string out;
    for (size_t i = 0; i < ids.size(); ++i) {
        if (i) out += " ";
        out += std::to_string(ids[i]);
    }
    return out;
}

// readable form of an input for the comment line
static std::string escaped(const std::string & s) {
    std::string out;
    for (unsigned char c : s) {
        if (c == '\n')
            out += "\\n";
        else if (c == '\t')
            out += "\\t";
        else if (c == '\r')
            out += "\\r";
        else if (c < 0x20 || c == 0x7f) {
            char b[8];
            snprintf(b, sizeof b, "\\x%02x", c);
            out += b;
        } else
            out += (char) c;
    }
    return out;
}

static void quiet(ggml_log_level, const char *, void *) {}

int main(int argc, char ** argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s MODEL.gguf CASES.hex HEADER\n", argv[0]);
        return 2;
    }
    llama_log_set(quiet, nullptr);
    llama_backend_init();
    llama_model_params mp = llama_model_default_params();
    mp.vocab_only = true;
    llama_model * model = llama_model_load_from_file(argv[1], mp);
    if (!model) {
        fprintf(stderr, "cannot load %s\n", argv[1]);
        return 1;
    }
    const llama_vocab * v = llama_model_get_vocab(model);
    const int n_vocab = llama_vocab_n_tokens(v);

    printf("%s", argv[3]);
    printf("meta bos %d\nmeta eos %d\nmeta eot %d\nmeta add_bos %d\nmeta n_tokens %d\n", llama_vocab_bos(v),
           llama_vocab_eos(v), llama_vocab_eot(v), (int) llama_vocab_get_add_bos(v), n_vocab);
    std::string eog, control;
    for (llama_token id = 0; id < n_vocab; ++id) {
        if (llama_vocab_is_eog(v, id)) eog += " " + std::to_string(id);
        if (llama_vocab_is_control(v, id)) control += " " + std::to_string(id);
    }
    printf("meta eog%s\nmeta control%s\n", eog.c_str(), control.c_str());

    std::ifstream in(argv[2]);
    std::string line;
    while (std::getline(in, line)) {
        const std::string s = unhex(line);
        const auto i00 = tokenize(v, s, false, false);
        const auto i01 = tokenize(v, s, false, true);
        const auto i10 = tokenize(v, s, true, false);
        const auto i11 = tokenize(v, s, true, true);
        printf("# %s\n", escaped(s).c_str());
        printf("case\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", hex(s).c_str(), ids_str(i00).c_str(), ids_str(i01).c_str(),
               ids_str(i10).c_str(), ids_str(i11).c_str(), hex(detokenize(v, i00, false)).c_str(),
               hex(detokenize(v, i11, true)).c_str());
    }

    uint64_t fnv[2] = {1469598103934665603ull, 1469598103934665603ull};
    for (llama_token id = 0; id < n_vocab; ++id) {
        for (int sp = 0; sp < 2; ++sp) {
            const std::string p = piece(v, id, sp == 1);
            // length first, so pieces cannot run into each other
            const std::string rec = std::to_string(p.size()) + ":" + p;
            for (unsigned char c : rec) {
                fnv[sp] = (fnv[sp] ^ c) * 1099511628211ull;
            }
        }
        const bool sampled = id < 300 || id % 211 == 0 || id >= n_vocab - 40 || llama_vocab_is_control(v, id);
        if (sampled) {
            printf("piece\t%d\t%s\t%s\n", id, hex(piece(v, id, false)).c_str(), hex(piece(v, id, true)).c_str());
        }
    }
    printf("pieces_fnv\t%d\t%016llx\t%016llx\n", n_vocab, (unsigned long long) fnv[0], (unsigned long long) fnv[1]);

    llama_model_free(model);
    llama_backend_free();
    return 0;
}
