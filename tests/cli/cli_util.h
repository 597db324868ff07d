#pragma once
// Helpers for the CLI tests: run the built `lmggml` binary with arguments and
// optional stdin, capture exit code, stdout and stderr; a small JSON reader
// for `bench -o json`.

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace clitest {

struct RunResult {
    int rc = -1;
    std::string out, err;
};

// Runs `lmggml args...` (each argument shell-quoted), stdin from `input`.
RunResult run_cli(const std::vector<std::string> & args, const std::string & input = "");

// The default model (env LMGGML_MODEL, else ~/.cache/lmggml/...); "" if absent.
std::string default_model();

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
