#pragma once
// Test helpers: the two vocabularies under test and llama.cpp's reference
// fixtures (tests/data/tokenizer/*.txt, see scripts/peer/tokenizer-fixtures.cpp).

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lmllm/vocab.h"

namespace vt {

struct Case {
    std::string text;
    std::vector<lmllm::Token> ids[2][2]; // [add_special][parse_special]
    std::string detok_plain;             // detokenize(ids[0][0], special = false)
    std::string detok_special;           // detokenize(ids[1][1], special = true)
};

struct Fixture {
    std::map<std::string, std::vector<int64_t>> meta;
    std::vector<Case> cases;
    std::map<lmllm::Token, std::pair<std::string, std::string>> pieces; // id -> (plain, special)
    int32_t fnv_n = 0;
    uint64_t fnv[2] = {0, 0};
};

// Path of SmolLM2 (env LMGGML_MODEL, else ~/.cache/lmggml/...); empty when
// it is not there. `why` says where it looked.
std::string smollm2_path(std::string & why);
std::string data_path(const std::string & name); // tests/data/tokenizer/<name>

// Loads a vocabulary from a GGUF file; sets `error` on failure.
std::unique_ptr<lmllm::Vocab> load_vocab(const std::string & path, std::string & error);

// The two vocabularies under test, loaded once (nullptr + error on failure).
const lmllm::Vocab * smollm2(std::string & error);
const lmllm::Vocab * spm(std::string & error);

bool read_fixture(const std::string & path, Fixture & out, std::string & error);

std::string hex(const std::string & s);
std::string ids_str(const std::vector<lmllm::Token> & ids);

} // namespace vt

// Fails the test (not skips) when a vocabulary cannot be had.
#define VT_REQUIRE_VOCAB(var, getter)                                                                                  \
    std::string var##_error;                                                                                           \
    const lmllm::Vocab * var = vt::getter(var##_error);                                                                \
    ASSERT_NE(var, nullptr) << var##_error
