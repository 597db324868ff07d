#pragma once
// Host-side tensors for references: values as doubles in ggml's logical order
// (index i0 fastest), plus the layout transforms views apply (permute,
// transpose, reshape, strided view), and byte encoding/decoding per type.
// None of it calls the library, so a reference cannot inherit its bugs.

#include "ggml.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace lmtest {

using Shape = std::array<int64_t, 4>;
using Strides = std::array<size_t, 4>; // bytes, like lm_ggml_tensor::nb

struct HTensor {
    Shape ne{1, 1, 1, 1};
    std::vector<double> v;
    // Optional, same size as v: 1 marks an element whose value ggml leaves
    // unspecified (compare skips it).
    std::vector<uint8_t> dont_care;

    HTensor() = default;
    explicit HTensor(Shape shape, double fill = 0.0);

    int64_t n() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
    int64_t index(int64_t i0, int64_t i1, int64_t i2, int64_t i3) const {
        return ((i3 * ne[2] + i2) * ne[1] + i1) * ne[0] + i0;
    }
    double & at(int64_t i0, int64_t i1 = 0, int64_t i2 = 0, int64_t i3 = 0) { return v[index(i0, i1, i2, i3)]; }
    double at(int64_t i0, int64_t i1 = 0, int64_t i2 = 0, int64_t i3 = 0) const { return v[index(i0, i1, i2, i3)]; }
};

// ggml semantics: result dim ax_k has the size of source dim k.
HTensor permute(const HTensor & a, int ax0, int ax1, int ax2, int ax3);
HTensor transpose(const HTensor & a);         // swaps dims 0 and 1
HTensor reshape(const HTensor & a, Shape ne); // same element order, new shape
// View into base's flat element order: element (i0..i3) is
// base.v[offset + i0*stride[0] + ... + i3*stride[3]] (strides/offset in elements).
HTensor strided_view(const HTensor & base, Shape ne, Shape stride, int64_t offset);

// ---- types ----
struct TypeLayout {
    int64_t block_elems; // 1 for plain types
    size_t block_bytes;  // type size
};
// Layout from the test's own table; false for types the tests do not handle.
bool type_layout(lm_ggml_type type, TypeLayout * out);
bool is_plain_type(lm_ggml_type type); // F32, F16, BF16, I8, I16, I32, I64
size_t contiguous_bytes(lm_ggml_type type, Shape ne);
// The value v takes once stored as `type` (round to nearest even; ints truncate).
double round_to_type(lm_ggml_type type, double v);
// Rounds every element to `type` in place.
void round_all(HTensor & t, lm_ggml_type type);

// Contiguous bytes of a plain-typed tensor holding t's values.
std::vector<uint8_t> encode_plain(lm_ggml_type type, const HTensor & t);
// Values of a tensor whose first element is at bytes[0], with byte strides nb.
// Quantized types need nb[0] == block bytes (rows made of whole blocks).
HTensor decode(lm_ggml_type type, Shape ne, Strides nb, const uint8_t * bytes);
// Bytes spanned by a tensor of that layout (last element's end), like lm_ggml_nbytes.
size_t span_bytes(lm_ggml_type type, Shape ne, Strides nb);

} // namespace lmtest
