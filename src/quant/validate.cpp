// lm_ggml_validate_row_data: rejects rows whose floats, or whose block scales,
// are NaN or infinite (a corrupt file would otherwise poison every result).
#include "quants.h"
#include "../core/ggml-impl.h"

#include <cmath>
#include <cstring>

namespace {

constexpr const char * kFn = "lm_ggml_validate_row_data";

bool half_bad(uint16_t h) { return (h & 0x7c00u) == 0x7c00u; } // exponent all ones: Inf or NaN

bool report(const char * what, bool is_nan, size_t block) {
    LM_GGML_LOG_ERROR("%s: data: found %s %s at block %zu\n", kFn, is_nan ? "nan" : "inf", what, block);
    return false;
}

uint16_t load_u16(const uint8_t * p) { return (uint16_t) (p[0] | (p[1] << 8)); }

// Checks the fp16 fields at the given byte offsets of each block.
bool check_half_fields(const void * data, size_t nb, size_t block_bytes, const size_t * offsets, int n_offsets) {
    const auto * p = static_cast<const uint8_t *>(data);
    for (size_t i = 0; i < nb; ++i, p += block_bytes) {
        for (int o = 0; o < n_offsets; ++o) {
            const uint16_t h = load_u16(p + offsets[o]);
            if (half_bad(h)) return report("scale", (h & 0x03ffu) != 0, i);
        }
    }
    return true;
}

template <typename F> bool check_floats(const void * data, size_t n) {
    const auto * p = static_cast<const uint8_t *>(data);
    for (size_t i = 0; i < n; ++i) {
        F v;
        std::memcpy(&v, p + i * sizeof(F), sizeof(F)); // rows need not be aligned
        if (!std::isfinite(v)) return report("value", std::isnan(v), i);
    }
    return true;
}

bool check_f16(const void * data, size_t n) {
    const auto * p = static_cast<const uint8_t *>(data);
    for (size_t i = 0; i < n; ++i) {
        const uint16_t h = load_u16(p + 2 * i);
        if (half_bad(h)) return report("value", (h & 0x03ffu) != 0, i);
    }
    return true;
}

bool check_bf16(const void * data, size_t n) {
    const auto * p = static_cast<const uint8_t *>(data);
    size_t nans = 0, infs = 0;
    for (size_t i = 0; i < n; ++i) {
        const uint16_t v = load_u16(p + 2 * i) & 0x7fffu;
        nans += v > 0x7f80u;
        infs += v == 0x7f80u;
    }
    if (nans || infs) {
        LM_GGML_LOG_ERROR("%s: data: found %zu NaNs and %zu infinities in a row of %zu BF16 values\n", kFn, nans, infs,
                          n);
        return false;
    }
    return true;
}

// IQ1_M keeps its fp16 super-block scale in the top nibbles of four u16 words
// after qs[32] and qh[16].
bool check_iq1_m(const void * data, size_t nb, size_t block_bytes) {
    const auto * p = static_cast<const uint8_t *>(data);
    for (size_t i = 0; i < nb; ++i, p += block_bytes) {
        const uint8_t * sc = p + 48;
        uint16_t s[4];
        for (int k = 0; k < 4; ++k) s[k] = load_u16(sc + 2 * k);
        const uint16_t h =
            (uint16_t) ((s[0] >> 12) | ((s[1] >> 8) & 0x00f0) | ((s[2] >> 4) & 0x0f00) | (s[3] & 0xf000));
        if (half_bad(h)) return report("scale", (h & 0x03ffu) != 0, i);
    }
    return true;
}

} // namespace

// Returns true when data (nbytes of type `type`) holds no NaN/Inf value or
// block scale. Logs the first problem and returns false otherwise, and for an
// invalid type or a size that is not a whole number of blocks.
extern "C" bool lm_ggml_validate_row_data(enum lm_ggml_type type, const void * data, size_t nbytes) {
    if ((int) type < 0 || type >= LM_GGML_TYPE_COUNT || lm_ggml_blck_size(type) == 0) {
        LM_GGML_LOG_ERROR("%s: type: invalid type %d\n", kFn, (int) type);
        return false;
    }
    const size_t tsize = lm_ggml_type_size(type);
    if (nbytes % tsize != 0) {
        LM_GGML_LOG_ERROR("%s: nbytes: %zu is not a multiple of the %s block size %zu\n", kFn, nbytes,
                          lm_ggml_type_name(type), tsize);
        return false;
    }
    if (nbytes > 0 && !data) {
        LM_GGML_LOG_ERROR("%s: data: NULL pointer\n", kFn);
        return false;
    }
    const size_t nb = nbytes / tsize;

    // byte offsets of the fp16 scales inside each block
    static const size_t kAt0[] = {0};
    static const size_t kAt0_2[] = {0, 2};
    const size_t at_end[] = {tsize - 2};         // q3_K, q6_K, tq1_0, tq2_0: d is the last field
    const size_t q2k[] = {tsize - 4, tsize - 2}; // q2_K: d, dmin at the end

    switch (type) {
        case LM_GGML_TYPE_F32: return check_floats<float>(data, nb);
        case LM_GGML_TYPE_F64: return check_floats<double>(data, nb);
        case LM_GGML_TYPE_F16: return check_f16(data, nb);
        case LM_GGML_TYPE_BF16: return check_bf16(data, nb);
        case LM_GGML_TYPE_Q4_0:
        case LM_GGML_TYPE_Q5_0:
        case LM_GGML_TYPE_Q8_0:
        case LM_GGML_TYPE_IQ2_XXS:
        case LM_GGML_TYPE_IQ2_XS:
        case LM_GGML_TYPE_IQ2_S:
        case LM_GGML_TYPE_IQ3_XXS:
        case LM_GGML_TYPE_IQ3_S:
        case LM_GGML_TYPE_IQ1_S:
        case LM_GGML_TYPE_IQ4_NL:
        case LM_GGML_TYPE_IQ4_XS: return check_half_fields(data, nb, tsize, kAt0, 1);
        case LM_GGML_TYPE_Q4_1:
        case LM_GGML_TYPE_Q5_1:
        case LM_GGML_TYPE_Q8_1: // (d, s); ggml itself has no check for q8_1
        case LM_GGML_TYPE_Q4_K:
        case LM_GGML_TYPE_Q5_K: return check_half_fields(data, nb, tsize, kAt0_2, 2);
        case LM_GGML_TYPE_Q2_K: return check_half_fields(data, nb, tsize, q2k, 2);
        case LM_GGML_TYPE_Q3_K:
        case LM_GGML_TYPE_Q6_K:
        case LM_GGML_TYPE_TQ1_0:
        case LM_GGML_TYPE_TQ2_0: return check_half_fields(data, nb, tsize, at_end, 1);
        case LM_GGML_TYPE_IQ1_M: return check_iq1_m(data, nb, tsize);
        case LM_GGML_TYPE_Q8_K: {
            const auto * p = static_cast<const uint8_t *>(data);
            for (size_t i = 0; i < nb; ++i) {
                float d;
                std::memcpy(&d, p + i * tsize, sizeof(d));
                if (!std::isfinite(d)) return report("scale", std::isnan(d), i);
            }
            return true;
        }
        case LM_GGML_TYPE_I8:
        case LM_GGML_TYPE_I16:
        case LM_GGML_TYPE_I32:
        case LM_GGML_TYPE_I64: return true; // integers cannot be NaN
        default: LM_GGML_LOG_ERROR("%s: type: no validation for %s\n", kFn, lm_ggml_type_name(type)); return false;
    }
}
