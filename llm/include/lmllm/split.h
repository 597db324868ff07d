#pragma once
// Splitting a model's offloaded layers over several devices, as llama.cpp's
// --tensor-split does for layers: proportions, one per device in the order
// the devices are listed, give each device one contiguous range.

#include <cstdint>
#include <string>
#include <vector>

#include "lmllm/status.h"

namespace lmllm {

// "3,1" or "0.5,0.25,0.25" (-ts / --tensor-split): finite numbers >= 0, not
// all zero. Errors name the bad entry.
Result<std::vector<float>> parse_tensor_split(const std::string & text);

// Layers per device when n_layers layers (in order) are split by
// proportions over proportions.size() devices: layer j goes to the first
// device i whose running share reaches past j / n_layers (llama.cpp's rule),
// so the counts sum to n_layers, follow the proportions within one layer
// and a zero share gets none. Refuses negative, non-finite or all-zero
// proportions and an empty list.
Result<std::vector<uint32_t>> split_layers(uint32_t n_layers, const std::vector<float> & proportions);

} // namespace lmllm
