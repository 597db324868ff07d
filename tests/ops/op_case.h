#pragma once
// The op conformance table: each OpCase builds a small graph through the
// public API and says what the result must be, computed by a plain
// double-precision reference written here from ggml's documented semantics.
// The harness (harness.cpp) runs every case on every registered device.

#include "ggml.h"
#include "lmtest_rng.h"
#include "lmtest_tensor.h"

#include <functional>
#include <string>
#include <vector>

namespace opstest {

using lmtest::HTensor;
using lmtest::Shape;

enum class Cmp {
    Nmse,  // NMSE against the reference (rounded to the result type)
    Exact, // bit-for-bit values: data movement, integer results
};

// Default limits (SPEC §4 where it names one).
constexpr double kNmseF32 = 1e-7;     // F32 ops
constexpr double kNmseLowPrec = 5e-4; // products with F16/BF16/quantized operands (MUL_MAT, FLASH_ATTN_EXT)
constexpr double kNmseRope = 1e-4;    // ROPE
// FLASH_ATTN_EXT with F16 K/V (SPEC names no limit): ggml's CPU rounds q to F16
// and accumulates V in F16, which costs an estimated NMSE of ~1e-6 on these
// sizes; 5e-5 leaves that a wide margin but still catches e.g. a 3% error in
// the ALiBi slopes of a few heads (5e-4, the MUL_MAT limit, does not).
constexpr double kNmseFlashAttn = 5e-5;
// F16/BF16 results: the reference is rounded to the result type first, so
// only elements where float and double intermediates round to neighbouring
// half-precision values differ, by one ulp (2^-11 resp. 2^-8 relative).
// These floors allow a few such elements per case and nothing more.
constexpr double kNmseF16Out = 1e-6;
constexpr double kNmseBF16Out = 1e-5;

// One leaf (input) tensor with the exact values the device receives.
struct Leaf {
    lm_ggml_tensor * t;
    HTensor host;               // values after rounding/quantization to t's type
    std::vector<uint8_t> bytes; // contiguous bytes uploaded with tensor_set
};

// Creates inputs with deterministic data while a case builds its graph.
class Builder {
public:
    Builder(lm_ggml_context * ctx, uint64_t seed) : ctx(ctx), rng_(seed) {}

    lm_ggml_context * const ctx;

    // values uniform in [lo, hi), rounded to `type` (F32, F16, BF16)
    lm_ggml_tensor * uniform(lm_ggml_type type, Shape ne, double lo = -1.0, double hi = 1.0);
    // given values in logical order (ints for I32/I16/I8 ids, or special floats)
    lm_ggml_tensor * values(lm_ggml_type type, Shape ne, const std::vector<double> & v);
    // random valid blocks of a quantized type (ne[0] a multiple of the block size)
    lm_ggml_tensor * quantized(lm_ggml_type type, Shape ne);

    lmtest::Rng & rng() { return rng_; }
    const std::vector<Leaf> & leaves() const { return leaves_; }

private:
    lm_ggml_tensor * add_leaf(lm_ggml_type type, Shape ne, HTensor host, std::vector<uint8_t> bytes);

    lmtest::Rng rng_;
    std::vector<Leaf> leaves_;
};

// Inputs as the reference sees them: leaves in creation order.
using Inputs = std::vector<HTensor>;

struct OpCase {
    std::string name;         // unique; letters, digits, '_'
    int tier = 1;             // SPEC §2 tier
    bool cpu_required = true; // the CPU backend must support it (tier 1, computed by ggml's CPU)
    Cmp cmp = Cmp::Nmse;
    double max_nmse = kNmseF32;
    std::function<lm_ggml_tensor *(Builder &)> build; // returns the result tensor
    std::function<HTensor(const Inputs &)> ref;       // expected result, logical order
};

using CaseList = std::vector<OpCase>;

// ---- the tables, one function per op family (cases_*.cpp) ----
void add_binary_cases(CaseList & t1, CaseList & t2);
void add_unary_cases(CaseList & t1, CaseList & t2);
void add_reduce_cases(CaseList & t1, CaseList & t2);
void add_layout_cases(CaseList & t1, CaseList & t2);
void add_matmul_cases(CaseList & t1, CaseList & t2);
void add_norm_cases(CaseList & t1, CaseList & t2);
void add_rope_cases(CaseList & t1, CaseList & t2);
void add_attention_cases(CaseList & t1, CaseList & t2);
void add_tier2_cases(CaseList & t1, CaseList & t2);
void add_graph_cases(CaseList & t1, CaseList & t2);     // multi-op graphs
void add_conv_cases(CaseList & t1, CaseList & t2);      // conv families, pad_reflect, win, rel_pos, diag, count_equal
void add_sequence_cases(CaseList & t1, CaseList & t2);  // ssm_conv, ssm_scan, rwkv_wkv6, gated_linear_attn
void add_custom_cases(CaseList & t1, CaseList & t2);    // map_* / map_custom* ops
void add_backward_cases(CaseList & t1, CaseList & t2);  // *_back ops, cross entropy, adamw
void add_quant_iq4_cases(CaseList & t1, CaseList & t2); // MUL_MAT / GET_ROWS with iq4_nl, iq4_xs, tq1_0, tq2_0 weights
void add_quant_iq_cases(CaseList & t1,
                        CaseList & t2); // MUL_MAT / GET_ROWS with the grid I-quants (iq2_*, iq3_*, iq1_*)

const CaseList & tier1_cases();
const CaseList & tier2_cases();

// ---- small helpers shared by the tables ----
inline Shape sh(int64_t a, int64_t b = 1, int64_t c = 1, int64_t d = 1) { return Shape{a, b, c, d}; }
std::string shape_str(Shape ne);       // "7x5x3x2"
const char * type_str(lm_ggml_type t); // "f32", "f16", ... (test-local spelling)
// An HTensor of the given shape with f(i0, i1, i2, i3) at every element.
HTensor generate(Shape ne, const std::function<double(int64_t, int64_t, int64_t, int64_t)> & f);
// Element-wise map of one tensor.
HTensor map1(const HTensor & a, const std::function<double(double)> & f);

} // namespace opstest
