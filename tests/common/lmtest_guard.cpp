#include "lmtest_guard.h"

#include <algorithm>
#include <cstdio>

namespace lmtest {
namespace {

size_t align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }
size_t align_down(size_t x, size_t a) { return x / a * a; }

struct Region {
    size_t begin;
    size_t end;
    std::string where;
};

} // namespace

std::unique_ptr<GuardedBuffer> GuardedBuffer::place(lm_ggml_context * ctx, lm_ggml_backend_buffer_type_t buft,
                                                    std::string * err) {
    std::unique_ptr<GuardedBuffer> gb(new GuardedBuffer());
    const size_t align = std::max<size_t>(1, lm_ggml_backend_buft_get_alignment(buft));

    std::vector<lm_ggml_tensor *> owners;
    std::vector<lm_ggml_tensor *> views;
    for (lm_ggml_tensor * t = lm_ggml_get_first_tensor(ctx); t != nullptr; t = lm_ggml_get_next_tensor(ctx, t)) {
        if (t->data != nullptr || t->buffer != nullptr) {
            continue; // already placed
        }
        (t->view_src ? views : owners).push_back(t);
    }

    // layout: [guard][t0][guard][t1]...[guard], every tensor aligned,
    // every guard at least kMinGuardBytes and starting right where the
    // previous tensor's allocation ends
    std::vector<size_t> starts;
    std::vector<Region> regions;
    size_t pos = 0;
    std::string prev = "buffer start";
    for (lm_ggml_tensor * t : owners) {
        const size_t start = align_up(pos + kMinGuardBytes, align);
        regions.push_back({pos, start, "before '" + std::string(t->name) + "' (after " + prev + ")"});
        starts.push_back(start);
        pos = start + lm_ggml_backend_buft_get_alloc_size(buft, t);
        prev = "'" + std::string(t->name) + "'";
    }
    const size_t tail_end = align_up(pos + kMinGuardBytes, align);
    regions.push_back({pos, tail_end, "after " + prev + " (buffer end)"});

    // I8 tensors covering the guard regions from an aligned start; their
    // allocation may be padded by the buffer type, so size the buffer for them
    lm_ggml_init_params ip = {};
    ip.mem_size = lm_ggml_tensor_overhead() * (regions.size() + 1);
    ip.no_alloc = true;
    gb->guard_ctx_ = lm_ggml_init(ip);
    if (gb->guard_ctx_ == nullptr) {
        *err = "lm_ggml_init for the guard context failed";
        return nullptr;
    }
    size_t total = tail_end;
    std::vector<size_t> cover_begin;
    for (size_t g = 0; g < regions.size(); ++g) {
        const Region & r = regions[g];
        cover_begin.push_back(align_down(r.begin, align));
        lm_ggml_tensor * cover =
            lm_ggml_new_tensor_1d(gb->guard_ctx_, LM_GGML_TYPE_I8, static_cast<int64_t>(r.end - cover_begin[g]));
        if (cover == nullptr) {
            *err = "could not create a guard tensor";
            return nullptr;
        }
        lm_ggml_format_name(cover, "guard%zu", g);
        total = std::max(total, cover_begin[g] + lm_ggml_backend_buft_get_alloc_size(buft, cover));
        Guard guard{cover, r.begin - cover_begin[g], r.end - r.begin, r.where, {}};
        guard.pattern.resize(guard.size);
        for (size_t j = 0; j < guard.size; ++j) {
            guard.pattern[j] = static_cast<uint8_t>(0xA5u + 31u * g + 7u * j);
        }
        gb->guards_.push_back(std::move(guard));
    }

    gb->buf_ = lm_ggml_backend_buft_alloc_buffer(buft, total);
    if (gb->buf_ == nullptr) {
        *err = "lm_ggml_backend_buft_alloc_buffer(" + std::to_string(total) + " bytes) returned NULL";
        return nullptr;
    }
    char * base = static_cast<char *>(lm_ggml_backend_buffer_get_base(gb->buf_));
    for (size_t i = 0; i < owners.size(); ++i) {
        lm_ggml_backend_tensor_alloc(gb->buf_, owners[i], base + starts[i]);
        if (owners[i]->buffer != gb->buf_ || owners[i]->data != base + starts[i]) {
            *err = "lm_ggml_backend_tensor_alloc did not place '" + std::string(owners[i]->name) + "'";
            return nullptr;
        }
    }
    for (lm_ggml_tensor * t : views) {
        lm_ggml_backend_view_init(t);
        if (t->buffer == nullptr || t->data == nullptr) {
            *err = "lm_ggml_backend_view_init did not initialise view '" + std::string(t->name) + "'";
            return nullptr;
        }
    }
    for (size_t g = 0; g < gb->guards_.size(); ++g) {
        lm_ggml_tensor * cover = gb->guards_[g].cover;
        lm_ggml_backend_tensor_alloc(gb->buf_, cover, base + cover_begin[g]);
        if (cover->buffer != gb->buf_) {
            *err = "lm_ggml_backend_tensor_alloc did not place guard tensor " + std::to_string(g);
            return nullptr;
        }
    }
    gb->write_guards();
    return gb;
}

GuardedBuffer::~GuardedBuffer() {
    if (buf_ != nullptr) {
        lm_ggml_backend_buffer_free(buf_);
    }
    if (guard_ctx_ != nullptr) {
        lm_ggml_free(guard_ctx_);
    }
}

void GuardedBuffer::write_guards() {
    for (const Guard & g : guards_) {
        lm_ggml_backend_tensor_set(g.cover, g.pattern.data(), g.offset, g.size);
    }
}

std::vector<std::string> GuardedBuffer::damaged_guards() const {
    std::vector<std::string> out;
    for (const Guard & g : guards_) {
        std::vector<uint8_t> now(g.size);
        lm_ggml_backend_tensor_get(g.cover, now.data(), g.offset, g.size);
        size_t changed = 0;
        size_t first = 0;
        for (size_t j = 0; j < g.size; ++j) {
            if (now[j] != g.pattern[j]) {
                if (changed == 0) {
                    first = j;
                }
                ++changed;
            }
        }
        if (changed != 0) {
            char line[512];
            std::snprintf(line, sizeof(line), "guard %s: %zu of %zu bytes changed, first at +%zu", g.where.c_str(),
                          changed, g.size, first);
            out.emplace_back(line);
        }
    }
    return out;
}

void fill_tensor_bytes(lm_ggml_tensor * t, uint8_t value) {
    const size_t n = lm_ggml_nbytes(t);
    std::vector<uint8_t> bytes(n, value);
    lm_ggml_backend_tensor_set(t, bytes.data(), 0, n);
}

} // namespace lmtest
