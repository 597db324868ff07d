#pragma once

#include "lmllm/model.h"
#include "loader.h"

namespace lmllm {

struct ArchOps;

// Reads the common hyper-parameters, then the architecture's own, and
// checks them (head counts divide, rope dims fit the head, ...).
Status load_hparams(const GgufFile & file, const ArchOps & arch, HParams & hp);

} // namespace lmllm
