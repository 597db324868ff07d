// Placing weights: the CPU gets zero-copy tensors pointing into the file
// mapping; with repack on, its matrices are copied instead: into its
// CPU_REPACK buffer type (the layout of its matrix kernels) where it takes
// them, else into a CPU buffer (as are tensors the file does not align to
// 32 bytes). Each other device gets a buffer of its own type and an upload.

#include <algorithm>
#include <memory>
#include <vector>

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "loader.h"
#include "mmap.h"

namespace lmllm {

namespace {

std::string mib(size_t bytes) { return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB"; }

// Calls progress after each placed tensor; false from the callback cancels.
class Progress {
public:
    Progress(const std::function<bool(float)> & cb, uint64_t total) : cb_(cb), total_(std::max<uint64_t>(total, 1)) {}
    bool advance(uint64_t bytes) {
        done_ += bytes;
        return !cb_ || cb_(static_cast<float>(static_cast<double>(done_) / static_cast<double>(total_)));
    }

private:
    const std::function<bool(float)> & cb_;
    uint64_t total_;
    uint64_t done_ = 0;
};

Status cancelled() { return Status::error("model loading cancelled"); }

// What the kernels assume of a weight's address (ggml's tensor alignment,
// GGUF's default): a file with a smaller general.alignment has its
// misaligned tensors copied, not mapped.
constexpr uint64_t kWeightAlign = 32;

// CPU tensors alias the mapping: no copy, no extra memory.
Status place_cpu_mapped(Model::Impl & m, const std::vector<const TensorSource *> & srcs, Progress & progress) {
    size_t max_tensor = 0;
    for (const TensorSource * s : srcs) {
        max_tensor = std::max(max_tensor, lm_ggml_nbytes(s->tensor));
    }
    const MappedFile & map = *m.mapping;
    m.buffers.reserve(m.buffers.size() + 1); // the push_back below must not throw while buf is held
    lm_ggml_backend_buffer_t buf =
        lm_ggml_backend_dev_buffer_from_host_ptr(m.cpu_dev, map.mutable_data(), map.size(), max_tensor);
    if (buf == nullptr) {
        buf = lm_ggml_backend_cpu_buffer_from_ptr(map.mutable_data(), map.size());
    }
    if (buf == nullptr) {
        return Status::error("cannot wrap the model mapping in a CPU buffer");
    }
    lm_ggml_backend_buffer_set_usage(buf, LM_GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    m.buffers.push_back(buf);
    for (const TensorSource * s : srcs) {
        lm_ggml_backend_tensor_alloc(buf, s->tensor, const_cast<uint8_t *>(map.data()) + s->file_offset);
        if (!progress.advance(lm_ggml_nbytes(s->tensor))) {
            return cancelled();
        }
    }
    return {};
}

// Fills placed tensors from the mapping (when present; the mapped pages of
// a copy are then released) or by reading the file.
Status fill_tensors(Model::Impl & m, lm_ggml_backend_buffer_t buf, const std::vector<const TensorSource *> & srcs,
                    const FileReader * reader, Progress & progress) {
    const bool host = lm_ggml_backend_buffer_is_host(buf);
    std::vector<uint8_t> staging;
    for (const TensorSource * s : srcs) {
        const size_t n = lm_ggml_nbytes(s->tensor);
        if (m.mapping) {
            lm_ggml_backend_tensor_set(s->tensor, m.mapping->data() + s->file_offset, 0, n);
            m.mapping->release(s->file_offset, n);
        } else if (host) {
            if (Status st = reader->read_at(s->file_offset, s->tensor->data, n); !st.ok()) {
                return st;
            }
        } else {
            staging.resize(n);
            if (Status st = reader->read_at(s->file_offset, staging.data(), n); !st.ok()) {
                return st;
            }
            lm_ggml_backend_tensor_set(s->tensor, staging.data(), 0, n);
        }
        if (!progress.advance(n)) {
            return cancelled();
        }
    }
    return {};
}

// One buffer of buft holding exactly srcs' tensors.
lm_ggml_backend_buffer_t alloc_tensors(lm_ggml_backend_buffer_type_t buft,
                                       const std::vector<const TensorSource *> & srcs) {
    const size_t align = lm_ggml_backend_buft_get_alignment(buft);
    size_t total = 0;
    for (const TensorSource * s : srcs) {
        total += (lm_ggml_backend_buft_get_alloc_size(buft, s->tensor) + align - 1) / align * align;
    }
    lm_ggml_backend_buffer_t buf = lm_ggml_backend_buft_alloc_buffer(buft, total);
    if (buf == nullptr) {
        return nullptr;
    }
    lm_ggml_tallocr talloc = lm_ggml_tallocr_new(buf);
    for (const TensorSource * s : srcs) {
        lm_ggml_tallocr_alloc(&talloc, s->tensor);
    }
    return buf;
}

// Allocates srcs' tensors in one buffer of buft (all tensors of ctx when
// ctx is given) and fills them.
Status place_copied(Model::Impl & m, lm_ggml_context * ctx, lm_ggml_backend_buffer_type_t buft, const char * where,
                    const std::vector<const TensorSource *> & srcs, const FileReader * reader, Progress & progress) {
    m.buffers.reserve(m.buffers.size() + 1); // the push_back below must not throw while buf is held
    lm_ggml_backend_buffer_t buf =
        ctx != nullptr ? lm_ggml_backend_alloc_ctx_tensors_from_buft(ctx, buft) : alloc_tensors(buft, srcs);
    if (buf == nullptr) {
        size_t total = 0;
        for (const TensorSource * s : srcs) {
            total += lm_ggml_nbytes(s->tensor);
        }
        return Status::error(std::string("cannot allocate ") + mib(total) + " of weights on " + where);
    }
    lm_ggml_backend_buffer_set_usage(buf, LM_GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    m.buffers.push_back(buf);
    return fill_tensors(m, buf, srcs, reader, progress);
}

// The CPU device's buffer type for repacked weights (CPU_REPACK), or NULL.
lm_ggml_backend_buffer_type_t cpu_repack_buft(lm_ggml_backend_dev_t cpu) {
    lm_ggml_backend_reg_t reg = lm_ggml_backend_dev_backend_reg(cpu);
    auto get = reg ? (lm_ggml_backend_dev_get_extra_bufts_t) lm_ggml_backend_reg_get_proc_address(
                         reg, "lm_ggml_backend_dev_get_extra_bufts")
                   : nullptr;
    for (lm_ggml_backend_buffer_type_t * p = get ? get(cpu) : nullptr; p != nullptr && *p != nullptr; ++p) {
        if (std::string(lm_ggml_backend_buft_name(*p)) == "CPU_REPACK") {
            return *p;
        }
    }
    return nullptr;
}

// Whether the CPU computes the runner's uses of weight w (MUL_MAT with F32
// activations, GET_ROWS for embeddings) with w in probe's buffer type, as
// llama.cpp asks: ops on stand-in tensors whose weight sits in probe.
bool cpu_reads_from(lm_ggml_backend_dev_t cpu, lm_ggml_backend_buffer_t probe, const lm_ggml_tensor * w) {
    lm_ggml_init_params ip = {8 * lm_ggml_tensor_overhead(), nullptr, /*no_alloc =*/true};
    lm_ggml_context * ctx = lm_ggml_init(ip);
    if (ctx == nullptr) {
        return false;
    }
    lm_ggml_tensor * a = lm_ggml_new_tensor(ctx, w->type, LM_GGML_MAX_DIMS, w->ne);
    a->buffer = probe;
    bool ok = lm_ggml_backend_dev_supports_op(
        cpu, lm_ggml_mul_mat(ctx, a, lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, w->ne[0], 1)));
    if (ok && w->ne[2] == 1 && w->ne[3] == 1) {
        ok = lm_ggml_backend_dev_supports_op(cpu,
                                             lm_ggml_get_rows(ctx, a, lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_I32, 1)));
    }
    lm_ggml_free(ctx);
    return ok;
}

} // namespace

Status place_weights(const GgufFile & file, Model::Impl & m, const std::vector<TensorSource> & sources, bool use_mmap,
                     bool repack, const std::function<bool(float)> & progress_cb) {
    // CPU weights: repacked (CPU_REPACK takes them), copied (other matrices
    // when repacking: a CPU buffer on huge pages streams faster than the
    // mapping, +6-8 % generation), or mapped / read as they are.
    std::vector<const TensorSource *> cpu, cpu_repacked, cpu_copied;
    std::vector<std::vector<const TensorSource *>> dev(m.devs.size()); // per device of m.devs
    uint64_t total = 0;
    lm_ggml_backend_buffer_type_t repack_buft = repack ? cpu_repack_buft(m.cpu_dev) : nullptr;
    // freed however this function ends (the vectors below may throw)
    const std::unique_ptr<lm_ggml_backend_buffer, void (*)(lm_ggml_backend_buffer_t)> probe(
        repack_buft ? lm_ggml_backend_buft_alloc_buffer(repack_buft, 0) : nullptr, lm_ggml_backend_buffer_free);
    for (const TensorSource & s : sources) {
        if (!m.on_cpu(s.dev)) {
            const size_t i = static_cast<size_t>(std::find(m.devs.begin(), m.devs.end(), s.dev) - m.devs.begin());
            if (i == m.devs.size()) {
                return Status::error(std::string("internal: a weight on an unlisted device ") +
                                     lm_ggml_backend_dev_name(s.dev));
            }
            dev[i].push_back(&s);
        } else if (probe != nullptr && cpu_reads_from(m.cpu_dev, probe.get(), s.tensor)) {
            cpu_repacked.push_back(&s);
        } else if (use_mmap && ((repack && s.tensor->ne[1] > 1) || s.file_offset % kWeightAlign != 0)) {
            cpu_copied.push_back(&s);
        } else {
            cpu.push_back(&s);
        }
        total += lm_ggml_nbytes(s.tensor);
    }

    std::unique_ptr<FileReader> reader;
    if (use_mmap) {
        auto map = MappedFile::map(file.path());
        if (!map.ok()) {
            return map.status();
        }
        m.mapping = std::move(map.value());
        // the offsets were checked against the size read with the metadata
        if (m.mapping->size() != file.file_size()) {
            return Status::error("'" + file.path() + "' changed size while the model was loading");
        }
    } else {
        auto r = FileReader::open(file.path());
        if (!r.ok()) {
            return r.status();
        }
        reader = std::move(r.value());
    }

    Progress progress(progress_cb, total);
    if (!cpu_repacked.empty()) {
        Status st = place_copied(m, nullptr, repack_buft, "CPU (repacked)", cpu_repacked, reader.get(), progress);
        if (!st.ok()) {
            return st;
        }
    }
    if (!cpu_copied.empty()) {
        Status st = place_copied(m, nullptr, lm_ggml_backend_dev_buffer_type(m.cpu_dev), "CPU", cpu_copied,
                                 reader.get(), progress);
        if (!st.ok()) {
            return st;
        }
    }
    if (!cpu.empty()) {
        Status st = use_mmap ? place_cpu_mapped(m, cpu, progress)
                             : place_copied(m, nullptr, lm_ggml_backend_dev_buffer_type(m.cpu_dev), "CPU", cpu,
                                            reader.get(), progress);
        if (!st.ok()) {
            return st;
        }
    }
    for (size_t i = 0; i < m.devs.size(); i++) {
        if (dev[i].empty()) {
            continue;
        }
        Status st = place_copied(m, m.ctx_devs[i], lm_ggml_backend_dev_buffer_type(m.devs[i]),
                                 lm_ggml_backend_dev_name(m.devs[i]), dev[i], reader.get(), progress);
        if (!st.ok()) {
            return st;
        }
    }
    if (progress_cb && !progress_cb(1.0f)) {
        return cancelled();
    }
    return {};
}

} // namespace lmllm
