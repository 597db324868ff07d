// Helpers for the CLI tests (see cli_util.h).
#include "cli_util.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace clitest {

namespace {

std::string quote(const std::string & s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

// One directory per test process, removed when it exits.
struct TempDir {
    std::string path;
    TempDir() {
        char tmpl[] = "/tmp/lmggml_cli_test.XXXXXX";
        if (const char * d = mkdtemp(tmpl)) path = d;
    }
    ~TempDir() {
        std::error_code ec;
        if (!path.empty()) std::filesystem::remove_all(path, ec);
    }
};

const std::string & tmp_dir() {
    static TempDir dir;
    return dir.path;
}

std::string slurp(const std::string & path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

struct Parser {
    const std::string & s;
    size_t i = 0;

    void ws() {
        while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) i++;
    }
    bool lit(const char * w) {
        const std::string t = w;
        if (s.compare(i, t.size(), t) != 0) return false;
        i += t.size();
        return true;
    }
    bool string(std::string & out) {
        if (i >= s.size() || s[i] != '"') return false;
        i++;
        while (i < s.size() && s[i] != '"') {
            if (s[i] == '\\') {
                if (++i >= s.size()) return false;
                const char e = s[i];
                if (e == 'n')
                    out += '\n';
                else if (e == 't')
                    out += '\t';
                else if (e == 'u') {
                    out += '?';
                    i += 4;
                } else
                    out += e;
                i++;
            } else {
                out += s[i++];
            }
        }
        if (i >= s.size()) return false;
        i++;
        return true;
    }
    bool value(Json & v) {
        ws();
        if (i >= s.size()) return false;
        const char c = s[i];
        if (c == '{') {
            v.kind = Json::OBJECT;
            i++;
            ws();
            if (i < s.size() && s[i] == '}') {
                i++;
                return true;
            }
            while (true) {
                ws();
                std::string key;
                if (!string(key)) return false;
                ws();
                if (i >= s.size() || s[i++] != ':') return false;
                if (!value(v.fields[key])) return false;
                ws();
                if (i < s.size() && s[i] == ',') {
                    i++;
                    continue;
                }
                if (i < s.size() && s[i] == '}') {
                    i++;
                    return true;
                }
                return false;
            }
        }
        if (c == '[') {
            v.kind = Json::ARRAY;
            i++;
            ws();
            if (i < s.size() && s[i] == ']') {
                i++;
                return true;
            }
            while (true) {
                v.items.emplace_back();
                if (!value(v.items.back())) return false;
                ws();
                if (i < s.size() && s[i] == ',') {
                    i++;
                    continue;
                }
                if (i < s.size() && s[i] == ']') {
                    i++;
                    return true;
                }
                return false;
            }
        }
        if (c == '"') {
            v.kind = Json::STRING;
            return string(v.str);
        }
        if (lit("true")) {
            v.kind = Json::BOOL;
            v.boolean = true;
            return true;
        }
        if (lit("false")) {
            v.kind = Json::BOOL;
            return true;
        }
        if (lit("null")) {
            v.kind = Json::NUL;
            return true;
        }
        char * end = nullptr;
        v.number = std::strtod(s.c_str() + i, &end);
        if (end == s.c_str() + i) return false;
        v.kind = Json::NUMBER;
        i = size_t(end - s.c_str());
        return true;
    }
};

} // namespace

RunResult run_cli(const std::vector<std::string> & args, const std::string & input) {
    RunResult r;
#ifdef LMGGML_CLI
    static int counter = 0;
    const std::string base = tmp_dir() + "/run" + std::to_string(counter++);
    std::ofstream(base + ".in", std::ios::binary) << input;
    std::string cmd = quote(LMGGML_CLI);
    for (const std::string & a : args) {
        cmd += ' ';
        cmd += quote(a);
    }
    cmd += " < " + quote(base + ".in") + " > " + quote(base + ".out") + " 2> " + quote(base + ".err");
    const int st = std::system(cmd.c_str());
    r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r.out = slurp(base + ".out");
    r.err = slurp(base + ".err");
#else
    (void) args;
    (void) input;
#endif
    return r;
}

std::string default_model() {
    std::string path;
    if (const char * env = std::getenv("LMGGML_MODEL"); env && *env)
        path = env;
    else if (const char * xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
        path = std::string(xdg) + "/lmggml/SmolLM2-135M-Instruct.Q4_1.gguf";
    else if (const char * home = std::getenv("HOME"))
        path = std::string(home) + "/.cache/lmggml/SmolLM2-135M-Instruct.Q4_1.gguf";
    return !path.empty() && access(path.c_str(), R_OK) == 0 ? path : std::string();
}

tiny::Spec tiny_spec() {
    tiny::Spec s = tiny::llama_spec();
    s.n_ctx_train = 4096;
    s.special_tokens = {"<|im_start|>", "<|im_end|>"};
    s.chat_template =
        "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + "
        "'<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
    return s;
}

std::string tiny_model(const std::string & name, const tiny::Spec & spec) {
    static std::map<std::string, std::string> written;
    if (auto it = written.find(name); it != written.end()) return it->second;
    const std::string path = tmp_dir() + "/" + name;
    if (!tiny::write_gguf(spec, tiny::make_weights(spec, 1), path)) return "";
    return written[name] = path;
}

std::string temp_file(const std::string & name, const std::string & content) {
    const std::string path = tmp_dir() + "/" + name;
    std::ofstream(path, std::ios::binary) << content;
    return path;
}

std::vector<std::string> lines(const std::string & s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string l;
    while (std::getline(ss, l)) out.push_back(l);
    return out;
}

bool parse_json(const std::string & text, Json & out) {
    Parser p{text};
    if (!p.value(out)) return false;
    p.ws();
    return p.i == text.size();
}

} // namespace clitest
