#pragma once
// The default model, loaded once per test process, and greedy decoding.

#include <string>
#include <vector>

#include "lmllm/model.h"

namespace smollm2 {

// The loaded model, or null when the file is absent or fails to load.
const lmllm::Model * model();
// Why model() is null: what to set or fetch.
std::string missing_message();

// Greedy continuation: n tokens after prompt (argmax of the logits, ties to
// the lowest id), one decode call per generated token.
std::vector<lmllm::Token> greedy(const lmllm::Model & model, const std::vector<lmllm::Token> & prompt, int n,
                                 int n_threads = 2);

} // namespace smollm2
