// Hash set of tensor pointers (see ggml-impl.h).
#include "ggml-impl.h"

#include <algorithm>
#include <cstdlib>
#include <iterator>

extern "C" size_t lm_ggml_bitset_size(size_t n) { return (n + 31) >> 5; }

// Primes roughly doubling, so a set sized for n tensors stays under half full.
extern "C" size_t lm_ggml_hash_size(size_t min_sz) {
    static const size_t primes[] = {
        2,       3,       5,        11,       17,       37,        67,        131,       257,        521,       1031,
        2053,    4099,    8209,     16411,    32771,    65537,     131101,    262147,    524309,     1048583,   2097169,
        4194319, 8388617, 16777259, 33554467, 67108879, 134217757, 268435459, 536870923, 1073741827, 2147483659};
    const size_t * it = std::lower_bound(std::begin(primes), std::end(primes), min_sz);
    if (it == std::end(primes)) return min_sz | 1; // beyond the table: any odd size works
    return *it;
}

extern "C" struct lm_ggml_hash_set lm_ggml_hash_set_new(size_t size) {
    struct lm_ggml_hash_set hs;
    hs.size = lm_ggml_hash_size(size);
    hs.keys = static_cast<lm_ggml_tensor **>(std::malloc(sizeof(lm_ggml_tensor *) * hs.size));
    hs.used = static_cast<uint32_t *>(std::calloc(lm_ggml_bitset_size(hs.size), sizeof(uint32_t)));
    if (!hs.keys || !hs.used) {
        std::free(hs.keys);
        std::free(hs.used);
        hs.keys = nullptr;
        hs.used = nullptr;
        hs.size = 0;
        LM_GGML_LOG_ERROR("lm_ggml_hash_set_new: out of memory for %zu slots\n", size);
    }
    return hs;
}

extern "C" void lm_ggml_hash_set_free(struct lm_ggml_hash_set * hs) {
    if (!hs) {
        lm_ggml_null_arg("lm_ggml_hash_set_free");
        return;
    }
    std::free(hs->used);
    std::free(hs->keys);
    hs->used = nullptr;
    hs->keys = nullptr;
    hs->size = 0;
}

extern "C" void lm_ggml_hash_set_reset(struct lm_ggml_hash_set * hs) {
    if (!hs) {
        lm_ggml_null_arg("lm_ggml_hash_set_reset");
        return;
    }
    if (hs->used) std::memset(hs->used, 0, sizeof(uint32_t) * lm_ggml_bitset_size(hs->size));
}
