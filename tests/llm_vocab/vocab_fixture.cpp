#include "vocab_fixture.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "gguf.h"

namespace vt {

std::string smollm2_path(std::string & why) {
    if (const char * env = std::getenv("LMGGML_MODEL"); env && *env) {
        if (std::ifstream(env).good()) return env;
        why = std::string("LMGGML_MODEL=") + env + " does not exist";
        return {};
    }
    const char * home = std::getenv("HOME");
    const std::string p = std::string(home ? home : "") + "/.cache/lmggml/SmolLM2-135M-Instruct.Q4_1.gguf";
    if (std::ifstream(p).good()) return p;
    why = "SmolLM2 model not found at " + p + " (run scripts/fetch-model, or set LMGGML_MODEL to its path)";
    return {};
}

std::string data_path(const std::string & name) { return std::string(LMGGML_TEST_DATA_DIR) + "/tokenizer/" + name; }

std::unique_ptr<lmllm::Vocab> load_vocab(const std::string & path, std::string & error) {
    lm_gguf_init_params params = {true, nullptr};
    lm_gguf_context * g = lm_gguf_init_from_file(path.c_str(), params);
    if (!g) {
        error = "cannot read GGUF " + path;
        return nullptr;
    }
    auto r = lmllm::Vocab::load(g);
    lm_gguf_free(g);
    if (!r.ok()) {
        error = path + ": " + r.status().message();
        return nullptr;
    }
    return std::move(r.value());
}

namespace {
struct Loaded {
    std::unique_ptr<lmllm::Vocab> vocab;
    std::string error;
};
Loaded load_smollm2() {
    Loaded l;
    const std::string p = smollm2_path(l.error);
    if (!p.empty()) l.vocab = load_vocab(p, l.error);
    return l;
}
} // namespace

const lmllm::Vocab * smollm2(std::string & error) {
    static const Loaded l = load_smollm2();
    error = l.error;
    return l.vocab.get();
}

const lmllm::Vocab * spm(std::string & error) {
    static const Loaded l = [] {
        Loaded x;
        x.vocab = load_vocab(data_path("mistral-v3-spm.vocab.gguf"), x.error);
        return x;
    }();
    error = l.error;
    return l.vocab.get();
}

namespace {

std::string unhex(const std::string & h) {
    if (h == "-") return {};
    std::string out;
    for (size_t i = 0; i + 1 < h.size(); i += 2) {
        out += static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16));
    }
    return out;
}

std::vector<lmllm::Token> parse_ids(const std::string & s) {
    std::vector<lmllm::Token> ids;
    if (s == "-") return ids;
    std::istringstream in(s);
    int64_t v;
    while (in >> v) ids.push_back(static_cast<lmllm::Token>(v));
    return ids;
}

std::vector<std::string> split_tabs(const std::string & line) {
    std::vector<std::string> f;
    size_t pos = 0;
    for (size_t t = line.find('\t'); t != std::string::npos; t = line.find('\t', pos)) {
        f.push_back(line.substr(pos, t - pos));
        pos = t + 1;
    }
    f.push_back(line.substr(pos));
    return f;
}

} // namespace

bool read_fixture(const std::string & path, Fixture & out, std::string & error) {
    std::ifstream in(path);
    if (!in) {
        error = "cannot open fixture " + path;
        return false;
    }
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("meta ", 0) == 0) {
            std::istringstream ls(line.substr(5));
            std::string key;
            ls >> key;
            auto & vals = out.meta[key];
            int64_t v;
            while (ls >> v) vals.push_back(v);
        } else if (line.rfind("case\t", 0) == 0) {
            const auto f = split_tabs(line);
            if (f.size() != 8) {
                error = "bad case line in " + path;
                return false;
            }
            Case c;
            c.text = unhex(f[1]);
            c.ids[0][0] = parse_ids(f[2]);
            c.ids[0][1] = parse_ids(f[3]);
            c.ids[1][0] = parse_ids(f[4]);
            c.ids[1][1] = parse_ids(f[5]);
            c.detok_plain = unhex(f[6]);
            c.detok_special = unhex(f[7]);
            out.cases.push_back(std::move(c));
        } else if (line.rfind("piece\t", 0) == 0) {
            const auto f = split_tabs(line);
            if (f.size() != 4) {
                error = "bad piece line in " + path;
                return false;
            }
            out.pieces[std::stoi(f[1])] = {unhex(f[2]), unhex(f[3])};
        } else if (line.rfind("pieces_fnv\t", 0) == 0) {
            const auto f = split_tabs(line);
            if (f.size() != 4) {
                error = "bad pieces_fnv line in " + path;
                return false;
            }
            out.fnv_n = std::stoi(f[1]);
            out.fnv[0] = std::stoull(f[2], nullptr, 16);
            out.fnv[1] = std::stoull(f[3], nullptr, 16);
        }
    }
    if (out.cases.empty()) {
        error = "no cases in fixture " + path;
        return false;
    }
    return true;
}

std::string hex(const std::string & s) {
    static const char d[] = "0123456789abcdef";
    std::string out;
    for (unsigned char c : s) {
        out += d[c >> 4];
        out += d[c & 15];
    }
    return out;
}

std::string ids_str(const std::vector<lmllm::Token> & ids) {
    std::string out;
    for (size_t i = 0; i < ids.size(); ++i) {
        if (i) out += ' ';
        out += std::to_string(ids[i]);
    }
    return "[" + out + "]";
}

} // namespace vt
