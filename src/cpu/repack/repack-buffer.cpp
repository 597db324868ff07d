// The CPU_REPACK buffer type (repack.h). Reads and writes go through the
// x8 permutation one unit (block b of 8 rows) at a time: a unit wholly
// inside a write is packed straight from the caller's bytes, a partly
// covered one is unpacked, patched and packed again.
#include "cpu/repack/repack.h"

#include "cpu/arch/kernels.h"
#include "cpu/arch/layouts.h"
#include "cpu/arch/x8.h"
#include "cpu/cpu-internal.h"

#include "core/ggml-impl.h"
#include "ggml-backend-impl.h"

#include <algorithm>
#include <cstring>

namespace {

namespace x8 = lmggml::cpu::arch::x8;
using lmggml::cpu::arch::layout::kX8Rows;

bool in_repack_buffer(const lm_ggml_tensor * t) {
    return t->buffer != nullptr && t->buffer->buft == lm_cpu_repack_buffer_type();
}

// Type and shape allow the x8 layout at this CPU's kernel level.
bool repackable(const lm_ggml_tensor * t, x8::Format * f) {
    return lmggml::cpu::arch::kernels().rowdot_x8[t->type] != nullptr && x8::format_of(t->type, f) &&
           t->ne[1] % kX8Rows == 0 && t->ne[0] % lm_ggml_blck_size(t->type) == 0 && lm_ggml_is_contiguous(t);
}

const lm_ggml_tensor * root_of(const lm_ggml_tensor * t) { return t->view_src != nullptr ? t->view_src : t; }

// Applies op to bytes [off, off + size) of repacked tensor t (in ggml's
// layout): op(blocks, pos, n) gets n bytes at blocks of an unpacked unit, which
// are bytes pos .. pos + n of the range; it returns true when it changed them.
// full(unit, b, pos) may handle unit b, which the range covers whole from
// byte pos of it (row 0's block); false: go the unpacked way.
template <class Op, class Full>
void for_units(const lm_ggml_tensor * t, const x8::Format & f, size_t off, size_t size, Op op, Full full) {
    const size_t row = t->nb[1];
    const size_t group = kX8Rows * row;
    const size_t ub = kX8Rows * f.block_bytes;
    const int64_t nb = t->ne[0] / lm_ggml_blck_size(t->type);
    const size_t end = off + size;
    auto * base = static_cast<uint8_t *>(t->data);
    for (size_t g = off / group; g * group < end; ++g) {
        for (int64_t b = 0; b < nb; ++b) {
            uint8_t * unit = base + g * group + (size_t) b * ub;
            const size_t first = g * group + (size_t) b * f.block_bytes; // row 0's block
            const size_t last = first + (kX8Rows - 1) * row + f.block_bytes;
            if (last <= off || first >= end) continue;
            if (first >= off && last <= end && full(unit, b, first - off)) continue;
            uint8_t blocks[kX8Rows * 64]; // the unit's 8 blocks in ggml's layout
            x8::unpack_unit(f, b, unit, blocks, f.block_bytes);
            bool changed = false;
            for (int r = 0; r < kX8Rows; ++r) {
                const size_t s = first + r * row, lo = std::max(s, off), hi = std::min(s + f.block_bytes, end);
                if (lo < hi) changed |= op(blocks + r * f.block_bytes + (lo - s), lo - off, hi - lo);
            }
            if (changed) x8::pack_unit(f, b, blocks, f.block_bytes, unit);
        }
    }
}

// Where an access at byte offset of tensor (maybe a view) lands: its root
// tensor, the offset there, and whether the root is stored repacked.
struct Target {
    const lm_ggml_tensor * t;
    size_t off;
    x8::Format f;
    bool repacked;
};

Target target_of(const lm_ggml_tensor * tensor, size_t offset) {
    Target r{root_of(tensor), 0, {}, false};
    r.off = (size_t) ((const char *) tensor->data - (const char *) r.t->data) + offset;
    r.repacked = repackable(r.t, &r.f);
    return r;
}

void repack_set_tensor(lm_ggml_backend_buffer_t buffer, lm_ggml_tensor * tensor, const void * data, size_t offset,
                       size_t size) {
    (void) buffer;
    const Target tg = target_of(tensor, offset);
    if (!tg.repacked) {
        std::memcpy((char *) tensor->data + offset, data, size);
        return;
    }
    const auto * src = static_cast<const uint8_t *>(data);
    for_units(
        tg.t, tg.f, tg.off, size,
        [&](uint8_t * blocks, size_t pos, size_t n) {
            std::memcpy(blocks, src + pos, n);
            return true;
        },
        [&](uint8_t * unit, int64_t b, size_t pos) {
            x8::pack_unit(tg.f, b, src + pos, tg.t->nb[1], unit);
            return true;
        });
}

void repack_get_tensor(lm_ggml_backend_buffer_t buffer, const lm_ggml_tensor * tensor, void * data, size_t offset,
                       size_t size) {
    (void) buffer;
    const Target tg = target_of(tensor, offset);
    if (!tg.repacked) {
        std::memcpy(data, (const char *) tensor->data + offset, size);
        return;
    }
    auto * dst = static_cast<uint8_t *>(data);
    for_units(
        tg.t, tg.f, tg.off, size,
        [&](uint8_t * blocks, size_t pos, size_t n) {
            std::memcpy(dst + pos, blocks, n);
            return false;
        },
        [&](uint8_t * unit, int64_t b, size_t pos) {
            x8::unpack_unit(tg.f, b, unit, dst + pos, tg.t->nb[1]);
            return true;
        });
}

void repack_memset_tensor(lm_ggml_backend_buffer_t buffer, lm_ggml_tensor * tensor, uint8_t value, size_t offset,
                          size_t size) {
    (void) buffer;
    const Target tg = target_of(tensor, offset);
    if (!tg.repacked) {
        std::memset((char *) tensor->data + offset, value, size);
        return;
    }
    for_units(
        tg.t, tg.f, tg.off, size,
        [&](uint8_t * blocks, size_t, size_t n) {
            std::memset(blocks, value, n);
            return true;
        },
        [&](uint8_t * unit, int64_t, size_t) { // a uniform unit reads the same in both layouts
            std::memset(unit, value, kX8Rows * tg.f.block_bytes);
            return true;
        });
}

void * repack_get_base(lm_ggml_backend_buffer_t buffer) { return buffer->context; }

void repack_free(lm_ggml_backend_buffer_t buffer) { lm_cpu_buffer_free(buffer->context, buffer->size); }

// A uniform byte pattern is the same in both layouts.
void repack_clear(lm_ggml_backend_buffer_t buffer, uint8_t value) { std::memset(buffer->context, value, buffer->size); }

constexpr lm_ggml_backend_buffer_i kRepackBufferIface = {
    .free_buffer = repack_free,
    .get_base = repack_get_base,
    .init_tensor = nullptr,
    .memset_tensor = repack_memset_tensor,
    .set_tensor = repack_set_tensor,
    .get_tensor = repack_get_tensor,
    .cpy_tensor = nullptr, // copies go through get/set, which translate the layout
    .clear = repack_clear,
    .reset = nullptr,
};

const char * repack_buft_name(lm_ggml_backend_buffer_type_t) { return "CPU_REPACK"; }

lm_ggml_backend_buffer_t repack_alloc(lm_ggml_backend_buffer_type_t buft, size_t size) {
    void * data = lm_cpu_buffer_alloc(size);
    if (data == nullptr) {
        LM_GGML_LOG_ERROR("lm_ggml_backend_buft_alloc_buffer: CPU_REPACK: cannot allocate %zu bytes\n", size);
        return nullptr;
    }
    lm_ggml_backend_buffer_t buffer = lm_ggml_backend_buffer_init(buft, kRepackBufferIface, data, size);
    if (buffer == nullptr) {
        lm_cpu_buffer_free(data, size);
    }
    return buffer;
}

size_t repack_alignment(lm_ggml_backend_buffer_type_t) { return LM_GGML_HOST_ALIGNMENT; }

// Repacked data is not in ggml's layout: not host memory (is_host NULL).
} // namespace

lm_ggml_backend_buffer_type_t lm_cpu_repack_buffer_type(void) {
    static lm_ggml_backend_buffer_type buft = {
        .iface =
            {
                .get_name = repack_buft_name,
                .alloc_buffer = repack_alloc,
                .get_alignment = repack_alignment,
                .get_max_size = nullptr,
                .get_alloc_size = nullptr,
                .is_host = nullptr,
            },
        .device = lm_cpu_device(),
        .context = nullptr,
    };
    return &buft;
}

bool lm_cpu_repack_available(void) {
    const lmggml::cpu::arch::KernelSet & ks = lmggml::cpu::arch::kernels();
    for (const auto * k : ks.rowdot_x8) {
        if (k != nullptr) return true;
    }
    return false;
}

bool lm_cpu_is_repacked(const lm_ggml_tensor * t) {
    x8::Format f;
    return t != nullptr && t->view_src == nullptr && in_repack_buffer(t) && repackable(t, &f);
}

bool lm_cpu_repack_op_ok(const lm_ggml_tensor * node) {
    if (lm_cpu_is_repacked(root_of(node))) {
        return false; // ops never write repacked tensors
    }
    for (int s = 0; s < LM_GGML_MAX_SRC; ++s) {
        const lm_ggml_tensor * src = node->src[s];
        if (src == nullptr || !lm_cpu_is_repacked(root_of(src))) continue;
        const bool whole = src->view_src == nullptr;
        const bool mul_mat =
            node->op == LM_GGML_OP_MUL_MAT && node->src[1] != nullptr && node->src[1]->type == LM_GGML_TYPE_F32;
        if (s != 0 || !whole || !(mul_mat || node->op == LM_GGML_OP_GET_ROWS)) return false;
    }
    return true;
}
