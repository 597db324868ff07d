#pragma once
// Where the tests write scratch files and find the default model.

#include <cstdlib>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

// A per-process scratch path under the test temp dir.
inline std::string lmtest_tmp_path(const std::string & name) {
    std::string dir = testing::TempDir() + "lmllm_model_" + std::to_string(::getpid());
    ::mkdir(dir.c_str(), 0700);
    return dir + "/" + name;
}

// LMGGML_MODEL, else ~/.cache/lmggml/SmolLM2-135M-Instruct.Q4_1.gguf; empty if neither exists.
inline std::string lmtest_default_model() {
    auto exists = [](const std::string & p) {
        struct stat st {};
        return !p.empty() && ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
    };
    if (const char * env = std::getenv("LMGGML_MODEL"); env != nullptr && exists(env)) {
        return env;
    }
    if (const char * home = std::getenv("HOME"); home != nullptr) {
        const std::string p = std::string(home) + "/.cache/lmggml/SmolLM2-135M-Instruct.Q4_1.gguf";
        if (exists(p)) {
            return p;
        }
    }
    return {};
}
