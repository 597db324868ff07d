#pragma once
// The CPU matmul kernels by instruction set, chosen once.
//
// A KernelSet holds, per type, the function pointers the linear-algebra
// kernels (la_*.cpp) call. kernels() is built on first use from the detected
// CPU features (cpu-features.h): every level the CPU supports, from scalar up,
// fills in the entries it has, so a type without an AVX-512 kernel keeps its
// AVX2 or scalar one. LMGGML_CPU_ISA (read once) caps the level, for
// measurements and for tests of the lower levels: scalar|avx2|avx512|
// avx512_vnni|amx on x86, scalar|neon|dotprod|i8mm on ARM64. Levels form one
// chain per architecture above the shared scalar one; a cap from the other
// architecture's chain counts by its rank (avx2 ~ neon, avx512 ~ dotprod,
// avx512_vnni ~ i8mm; amx, AVX-512 VNNI with AMX-INT8 tiles, has no ARM peer).
//
// Three kinds of kernels:
//   vec_dot / from_float  ggml's row dot on the standard block formats
//                         (weight row x vec_dot_type row) and the activation
//                         converter; used by MUL_MAT_ID, FLASH_ATTN_EXT and
//                         every MUL_MAT the two below do not cover.
//   RowDot                matrix x vector for generation: the activation row
//                         is packed once into a layout that suits the weight
//                         format, then every weight row is dotted with it.
//   Gemm                  matrix x matrix for prompt processing: weight rows
//                         are repacked per panel into interleaved rows and a
//                         register-tiled microkernel multiplies each panel
//                         with all activation columns.
// Every optimized kernel has a scalar twin (the scalar set, or the *_ref
// functions in ref.h) that tests compare it with.

#include "ggml-cpu.h" // lm_ggml_vec_dot_t
#include "ggml.h"

#include <cstddef>
#include <cstdint>

namespace lmggml::cpu::arch {

enum class Isa : int { scalar = 0, avx2 = 1, avx512 = 2, avx512_vnni = 3, neon = 4, dotprod = 5, i8mm = 6, amx = 7 };
constexpr int kIsaCount = 8;

const char * isa_name(Isa isa);

// How far ahead of their loads the AVX2 RowDot and RowDotX8 kernels prefetch
// the weights (they stream from DRAM once per token); MUL_MAT prefetches the
// first this-many bytes of a thread's first run itself (la_mul_mat_fast.cpp).
constexpr size_t kWeightPrefetchBytes = 4096;

// dst[i] = dot(weight row i, act) for i < m. Weight rows (k values of the
// weight type) are ldw bytes apart; act was made by pack_act from k floats.
struct RowDot {
    size_t (*act_size)(int64_t k); // bytes of one packed activation row
    void (*pack_act)(const float * x, void * act, int64_t k);
    void (*dot_rows)(int64_t k, int64_t m, const void * w, size_t ldw, const void * act, float * dst);
};

// Matrix x vector on weights repacked 8 rows at a time (layouts.h,
// "RowDotX8"): dst[i] = dot(row i, act) for i < 8 * groups, the groups one
// after another from w; act was made by pack_act from k floats.
struct RowDotX8 {
    size_t (*act_size)(int64_t k);
    void (*pack_act)(const float * x, void * act, int64_t k);
    void (*dot_groups)(int64_t k, int64_t groups, const void * w, const void * act, float * dst);
};

// Gemm panel of m rows (whole groups, m <= the panel's rows) from the x8
// groups at groups, group_bytes apart: the bytes of x8::pack_panel.
using X8PanelPacker = void (*)(int64_t k, const void * groups, size_t group_bytes, int64_t m, void * panel);

// Panels of panel_rows weight rows (the last one may have fewer: m rows,
// the rest padded) times n packed activation rows:
//   dst[j * ldd + i] = dot(weight row i, activation row j), i < m, j < n.
// Activation rows are lda bytes apart (lda >= act_size(k)).
struct Gemm {
    int64_t panel_rows;
    size_t (*act_size)(int64_t k);
    void (*pack_act)(const float * x, void * act, int64_t k);
    size_t (*panel_size)(int64_t k);
    void (*pack_panel)(const void * w, size_t ldw, int64_t m, int64_t k, void * panel);
    void (*compute)(const void * panel, int64_t m, int64_t k, const void * act, size_t lda, int64_t n, float * dst,
                    size_t ldd);
    // On weights repacked to x8 (panels packed by x8::pack_panel): the fewest
    // activation columns for which MUL_MAT takes this Gemm rather than the
    // level's RowDotX8; 0 for the common threshold (la_mul_mat_fast.h).
    int64_t x8_min_cols = 0;
};

// Row-wise float math of the softmax and activation kernels.
struct VecMath {
    // y[i] = exp(x[i] - shift) for i < n; returns the sum of the y[i].
    // x may be -inf (gives 0); y may alias x.
    float (*exp_sum)(int64_t n, const float * x, float shift, float * y);
    // y[i] = x[i] / (1 + exp(-x[i])); y may alias x.
    void (*silu)(int64_t n, const float * x, float * y);
    // y[i] = GELU(x[i]), ggml's tanh approximation; y may alias x.
    void (*gelu)(int64_t n, const float * x, float * y);
    // Softmax input: y[i] = x[i] * scale + slope * mask[i] with the mask in
    // F32 (m32) or F16 (m16) or none (both NULL); returns max(y) (-inf for n == 0).
    float (*scale_mask_max)(int64_t n, const float * x, float scale, const float * m32, const uint16_t * m16,
                            float slope, float * y);
    // y[i] *= s
    void (*scale)(int64_t n, float * y, float s);
    // y[i] = x[i] widened from F16 (exact); y does not overlap x.
    void (*widen_f16)(int64_t n, const uint16_t * x, float * y);
};

// Attention over an F16 KV cache for g query rows that share one KV head
// (grouped-query attention: each K and V row is widened once for all g).
// Query rows are d floats, one after another from q; K and V rows are d F16
// values, ldk / ldv bytes apart; d % 8 == 0.
struct AttnF16 {
    // s[i * n + j] = dot(q row i, K row j) for i < g, j < n.
    void (*scores)(int64_t d, int64_t n, const void * k, size_t ldk, const float * q, int64_t g, float * s);
    // acc[i * d + c] += sum over j < n of p[i * n + j] * V row j [c], for i < g, c < d.
    void (*accumulate)(int64_t d, int64_t n, const void * v, size_t ldv, const float * p, int64_t g, float * acc);
    // Optional (NULL: call the two above per head): the same for nh KV heads
    // at once, head h's rows hs bytes after head h - 1's, its g query rows
    // at q + h*g*d, scores at s + h*g*n, p at p + h*g*n and acc at acc +
    // h*g*d; each head's results bit for bit the one-head kernel's. Where a
    // cache row holds every head (hs = d * 2), the kernel reads it in one
    // pass, key by key, instead of a head's slice of every row per pass: on
    // a cache that streams from DRAM the slices ran at half the speed.
    void (*scores_heads)(int64_t d, int64_t n, const void * k, size_t ldk, size_t hs, int64_t nh, const float * q,
                         int64_t g, float * s);
    void (*accumulate_heads)(int64_t d, int64_t n, const void * v, size_t ldv, size_t hs, int64_t nh, const float * p,
                             int64_t g, float * acc);
};

struct KernelSet {
    Isa isa;
    const char * name;
    VecMath math;
    AttnF16 attn_f16;
    // by weight type (F32, F16, BF16, Q*): dot with one vec_dot_type row, nrc == 1
    lm_ggml_vec_dot_t vec_dot[LM_GGML_TYPE_COUNT];
    // by vec_dot_type (F16, BF16, Q8_0, Q8_1, Q8_K): F32 activation row -> that type
    lm_ggml_from_float_t from_float[LM_GGML_TYPE_COUNT];
    // by weight type; NULL where this level (and the ones below) has none
    const RowDot * rowdot[LM_GGML_TYPE_COUNT];
    const Gemm * gemm[LM_GGML_TYPE_COUNT];
    // by weight type, for repacked weights; NULL: this level does not repack the type
    const RowDotX8 * rowdot_x8[LM_GGML_TYPE_COUNT];
    // by weight type: Gemm panels from x8 groups; NULL: MUL_MAT calls the
    // portable x8::pack_panel (the same bytes at every level)
    X8PanelPacker x8_pack_panel[LM_GGML_TYPE_COUNT];
};

// The set for this CPU (capped by LMGGML_CPU_ISA), built once, thread-safe.
const KernelSet & kernels();

// The set of one level, or NULL when this CPU (or this build) cannot run it.
// For tests and benchmarks; the library itself only uses kernels().
const KernelSet * kernels_for(Isa isa);

} // namespace lmggml::cpu::arch
