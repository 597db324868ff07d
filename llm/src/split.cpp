// Layer split arithmetic (lmllm/split.h).

#include "lmllm/split.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace lmllm {

Result<std::vector<float>> parse_tensor_split(const std::string & text) {
    std::vector<float> out;
    size_t start = 0;
    while (true) {
        const size_t comma = text.find(',', start);
        const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        const char * s = item.c_str();
        char * end = nullptr;
        errno = 0;
        const float v = item.empty() ? 0.0f : std::strtof(s, &end);
        if (item.empty() || end == s || *end != '\0' || errno == ERANGE || !std::isfinite(v)) {
            return Status::error("--tensor-split: '" + item + "' is not a number (expected proportions like 3,1)");
        }
        if (v < 0.0f) {
            return Status::error("--tensor-split: '" + item + "' is negative (proportions must be >= 0)");
        }
        out.push_back(v);
        if (comma == std::string::npos) {
            break;
        }
        start = comma + 1;
    }
    bool any = false;
    for (float v : out) {
        any |= v > 0.0f;
    }
    if (!any) {
        return Status::error("--tensor-split: every proportion is zero (at least one device must take layers)");
    }
    return out;
}

Result<std::vector<uint32_t>> split_layers(uint32_t n_layers, const std::vector<float> & proportions) {
    if (proportions.empty()) {
        return Status::error("tensor split: no devices to split the layers over");
    }
    double total = 0.0;
    for (float p : proportions) {
        if (!std::isfinite(p) || p < 0.0f) {
            return Status::error("tensor split: proportions must be finite and >= 0");
        }
        total += p;
    }
    if (total <= 0.0) {
        return Status::error("tensor split: every proportion is zero");
    }
    // j / n < prefix_i / total, compared as j * total < n * prefix_i (no division)
    std::vector<uint32_t> counts(proportions.size(), 0);
    size_t dev = 0;
    double prefix = proportions[0];
    for (uint32_t j = 0; j < n_layers; j++) {
        while (dev + 1 < proportions.size() && !(double(j) * total < double(n_layers) * prefix)) {
            prefix += proportions[++dev];
        }
        counts[dev]++;
    }
    return counts;
}

} // namespace lmllm
