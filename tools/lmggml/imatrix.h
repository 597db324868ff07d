#pragma once
// Importance matrices for `lmggml quantize --imatrix`: llama.cpp's
// imatrix.dat (the format its llama-imatrix writes by default before the
// GGUF one): int32 n_entries, then per entry int32 name length, the name,
// int32 ncall, int32 nval, nval float32 (sums over ncall calls); an optional
// trailer (last call, dataset name) follows and is ignored.

#include <map>
#include <string>
#include <vector>

#include "lmllm/status.h"

namespace cli {

// Tensor name -> per-column importance (the stored sums divided by ncall, as
// llama-quantize does). Errors name the file and what is wrong.
lmllm::Result<std::map<std::string, std::vector<float>>> read_imatrix(const std::string & path);

} // namespace cli
