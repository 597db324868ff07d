#pragma once
// Helpers for the CLI tests: run the built `lmggml` binary with arguments and
// optional stdin, capture exit code, stdout and stderr; tiny generated models
// to run it on; a small JSON reader for `bench -o json`.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tiny_model.h"

// Every CLI test starts with REQUIRE_CLI(). The sanitizer builds configure
// LMGGML_BUILD_TOOLS=OFF (they test the library, scripts/sanitize), so the
// program does not exist there and the CLI tests skip, saying why; the plain
// build that CI runs first (scripts/test) has the program and runs them all.
#ifdef LMGGML_CLI
#define REQUIRE_CLI() (void) 0
#else
#define REQUIRE_CLI() GTEST_SKIP() << "the lmggml program is not built (LMGGML_BUILD_TOOLS=OFF)"
#endif

namespace clitest {

struct RunResult {
    int rc = -1;
    std::string out, err;
};

// Runs `lmggml args...` (each argument shell-quoted), stdin from `input`.
RunResult run_cli(const std::vector<std::string> & args, const std::string & input = "");

// The default model (env LMGGML_MODEL, else $XDG_CACHE_HOME/lmggml/..., where
// XDG_CACHE_HOME defaults to ~/.cache); "" if absent.
std::string default_model();

// The tiny model the CLI tests run on (tests/common/tiny_model.h): llama
// architecture, random F32 weights, a 300-token SentencePiece vocabulary
// whose last ids are ChatML's <|im_start|> and <|im_end|>, a ChatML
// tokenizer.chat_template, a training context of 4096.
tiny::Spec tiny_spec();

// `spec` written once per process under the temporary directory as `name`
// (weights from seed 1); "" when writing fails.
std::string tiny_model(const std::string & name, const tiny::Spec & spec = tiny_spec());

// A fresh file under the test's temporary directory holding `content`.
std::string temp_file(const std::string & name, const std::string & content);

std::vector<std::string> lines(const std::string & s);

// Minimal JSON value: enough to read numbers, strings, arrays and objects.
struct Json {
    enum Kind { NUL, BOOL, NUMBER, STRING, ARRAY, OBJECT } kind = NUL;
    double number = 0;
    bool boolean = false;
    std::string str;
    std::vector<Json> items;
    std::map<std::string, Json> fields;
};

// Parses a whole document; false on any syntax error or trailing garbage.
bool parse_json(const std::string & text, Json & out);

} // namespace clitest
