// Neighbour maps of the I-quant grids, and ggml's exported entry points that
// build and free them (lm_iq2xs_init_impl & co.).
//
// A quantizer rounds a group of values to a vector of levels; most such
// vectors are not grid points, so for every vector off the grid the map keeps
// the grid points nearest to it (all points at the few smallest distances)
// and the quantizer picks the best of those under its weights.
#include "ggml-quants.h"

#include "q_iq.h"
#include "q_iq_grids.h"
#include "../core/ggml-impl.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

namespace lm_quant::iq {
namespace {

struct GridSpec {
    int dim, bits, size;
    int nwant;             // distinct distances whose points become neighbours
    const void * entries;  // uint64_t (dim 8) or uint32_t (dim 4)
    uint8_t magnitudes[8]; // byte -> level: the index of the byte in this list
    int nlev;
};

// As ggml: IQ2_S keeps only the nearest distance, IQ1 and IQ3_S three.
const GridSpec kSpecs[(int) Grid::count] = {
    {8, 2, 256, 2, iq2xxs_grid, {8, 25, 43}, 3},
    {8, 2, 512, 2, iq2xs_grid, {8, 25, 43}, 3},
    {8, 2, 1024, 1, iq2s_grid, {8, 25, 43}, 3},
    {8, 2, 2048, 3, iq1s_grid, {255, 0, 1}, 3}, // int8 -1, 0, 1
    {4, 3, 256, 2, iq3xxs_grid, {4, 12, 20, 28, 36, 44, 52, 62}, 8},
    {4, 3, 512, 3, iq3s_grid, {1, 3, 5, 7, 9, 11, 13, 15}, 8},
};

struct Built {
    GridMap map;
    std::vector<uint8_t> levels;
    std::vector<int32_t> index_of;
    std::vector<uint16_t> neighbours;
};

int level_of(const GridSpec & s, uint8_t byte) {
    for (int l = 0; l < s.nlev; ++l) {
        if (s.magnitudes[l] == byte) return l;
    }
    return -1; // not reached: the tables hold only these bytes
}

std::unique_ptr<Built> build(const GridSpec & s) {
    auto b = std::make_unique<Built>();
    b->levels.resize((size_t) s.size * s.dim);
    for (int p = 0; p < s.size; ++p) {
        const uint64_t e =
            s.dim == 8 ? static_cast<const uint64_t *>(s.entries)[p] : static_cast<const uint32_t *>(s.entries)[p];
        for (int j = 0; j < s.dim; ++j) b->levels[(size_t) p * s.dim + j] = (uint8_t) level_of(s, grid_byte(e, j));
    }
    const int nkeys = 1 << (s.bits * s.dim);
    b->index_of.assign(nkeys, 0);
    std::vector<bool> on_grid(nkeys, false);
    for (int p = 0; p < s.size; ++p) {
        int key = 0;
        for (int j = 0; j < s.dim; ++j) key |= b->levels[(size_t) p * s.dim + j] << (s.bits * j);
        b->index_of[key] = p;
        on_grid[key] = true;
    }
    // offset 0: an empty list, for keys with a level no quantizer produces
    b->neighbours.push_back(0);
    // squared distances in levels are small integers: bucket the points by
    // distance instead of sorting them (same order: distance, then index)
    const int max_d2 = s.dim * (s.nlev - 1) * (s.nlev - 1);
    std::vector<int> d2(s.size), count(max_d2 + 1);
    int lv[8];
    for (int key = 0; key < nkeys; ++key) {
        if (on_grid[key]) continue;
        bool valid = true;
        for (int j = 0; j < s.dim; ++j) {
            lv[j] = (key >> (s.bits * j)) & ((1 << s.bits) - 1);
            valid = valid && lv[j] < s.nlev;
        }
        if (!valid) {
            b->index_of[key] = -1;
            continue;
        }
        std::fill(count.begin(), count.end(), 0);
        for (int p = 0; p < s.size; ++p) {
            int d = 0;
            for (int j = 0; j < s.dim; ++j) {
                const int t = b->levels[(size_t) p * s.dim + j] - lv[j];
                d += t * t;
            }
            d2[p] = d;
            ++count[d];
        }
        const size_t at = b->neighbours.size();
        b->index_of[key] = -(int32_t) (at + 1);
        b->neighbours.push_back(0);
        int distinct = 0;
        for (int d = 0; d <= max_d2 && distinct < s.nwant; ++d) {
            if (!count[d]) continue;
            ++distinct;
            for (int p = 0; p < s.size; ++p) {
                if (d2[p] == d) b->neighbours.push_back((uint16_t) p);
            }
        }
        b->neighbours[at] = (uint16_t) (b->neighbours.size() - at - 1);
    }
    b->map = GridMap{s.dim, s.bits, s.size, b->levels.data(), b->index_of.data(), b->neighbours.data()};
    return b;
}

std::mutex g_mutex;
std::unique_ptr<Built> g_built[(int) Grid::count];

} // namespace

const GridMap * grid_map(Grid g) {
    const int i = (int) g;
    if (i < 0 || i >= (int) Grid::count) return nullptr;
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!g_built[i]) {
        try {
            g_built[i] = build(kSpecs[i]);
        } catch (const std::bad_alloc &) {
            LM_GGML_LOG_ERROR("lm_quant: out of memory building an I-quant neighbour map\n");
            return nullptr;
        }
    }
    return &g_built[i]->map;
}

void release(Grid g) {
    const int i = (int) g;
    if (i < 0 || i >= (int) Grid::count) return;
    std::lock_guard<std::mutex> lock(g_mutex);
    g_built[i].reset();
}

} // namespace lm_quant::iq

// ---------------------------------------------------------------- ggml-quants.h entry points
// ggml keys its 2-bit maps by type (IQ1_S and IQ1_M share one) and its 3-bit
// maps by grid size. Other arguments: one log line, nothing done.
namespace {

using lm_quant::iq::Grid;

bool iq2_grid_of(enum lm_ggml_type type, Grid * g) {
    switch (type) {
        case LM_GGML_TYPE_IQ2_XXS: *g = Grid::iq2xxs; return true;
        case LM_GGML_TYPE_IQ2_XS: *g = Grid::iq2xs; return true;
        case LM_GGML_TYPE_IQ2_S: *g = Grid::iq2s; return true;
        case LM_GGML_TYPE_IQ1_S:
        case LM_GGML_TYPE_IQ1_M: *g = Grid::iq1s; return true;
        default: return false;
    }
}

bool iq3_grid_of(int grid_size, Grid * g) {
    if (grid_size != 256 && grid_size != 512) return false;
    *g = grid_size == 256 ? Grid::iq3xxs : Grid::iq3s;
    return true;
}

} // namespace

extern "C" {

LM_GGML_API void lm_iq2xs_init_impl(enum lm_ggml_type type) {
    Grid g;
    if (!iq2_grid_of(type, &g)) {
        LM_GGML_LOG_ERROR("lm_iq2xs_init_impl: type: %d has no 2-bit I-quant grid\n", (int) type);
        return;
    }
    (void) lm_quant::iq::grid_map(g);
}

LM_GGML_API void lm_iq2xs_free_impl(enum lm_ggml_type type) {
    Grid g;
    if (!iq2_grid_of(type, &g)) {
        LM_GGML_LOG_ERROR("lm_iq2xs_free_impl: type: %d has no 2-bit I-quant grid\n", (int) type);
        return;
    }
    lm_quant::iq::release(g);
}

LM_GGML_API void lm_iq3xs_init_impl(int grid_size) {
    Grid g;
    if (!iq3_grid_of(grid_size, &g)) {
        LM_GGML_LOG_ERROR("lm_iq3xs_init_impl: grid_size: %d is not 256 or 512\n", grid_size);
        return;
    }
    (void) lm_quant::iq::grid_map(g);
}

LM_GGML_API void lm_iq3xs_free_impl(int grid_size) {
    Grid g;
    if (!iq3_grid_of(grid_size, &g)) {
        LM_GGML_LOG_ERROR("lm_iq3xs_free_impl: grid_size: %d is not 256 or 512\n", grid_size);
        return;
    }
    lm_quant::iq::release(g);
}

} // extern "C"
