// Placing weights: the CPU gets zero-copy tensors pointing into the file
// mapping; another device gets a buffer of its own type and an upload.

#include <algorithm>
#include <vector>

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "loader.h"
#include "mmap.h"

namespace lmllm {

namespace {

std::string mib(size_t bytes) {
    return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB";
}

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

// CPU tensors alias the mapping: no copy, no extra memory.
Status place_cpu_mapped(Model::Impl & m, const std::vector<const TensorSource *> & srcs, Progress & progress) {
    size_t max_tensor = 0;
    for (const TensorSource * s : srcs) {
        max_tensor = std::max(max_tensor, lm_ggml_nbytes(s->tensor));
    }
    const MappedFile & map = *m.mapping;
    m.buffers.reserve(m.buffers.size() + 1); // the push_back below must not throw while buf is held
    lm_ggml_backend_buffer_t buf = lm_ggml_backend_dev_buffer_from_host_ptr(m.cpu_dev, map.mutable_data(), map.size(), max_tensor);
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

// Allocates all tensors of ctx in one buffer of buft and fills them from the
// mapping (when present) or by reading the file.
Status place_copied(Model::Impl & m, lm_ggml_context * ctx, lm_ggml_backend_buffer_type_t buft, const char * where,
                    const std::vector<const TensorSource *> & srcs, const FileReader * reader, Progress & progress) {
    m.buffers.reserve(m.buffers.size() + 1); // the push_back below must not throw while buf is held
    lm_ggml_backend_buffer_t buf = lm_ggml_backend_alloc_ctx_tensors_from_buft(ctx, buft);
    if (buf == nullptr) {
        size_t total = 0;
        for (const TensorSource * s : srcs) {
            total += lm_ggml_nbytes(s->tensor);
        }
        return Status::error(std::string("cannot allocate ") + mib(total) + " of weights on " + where);
    }
    lm_ggml_backend_buffer_set_usage(buf, LM_GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    m.buffers.push_back(buf);
    const bool host = lm_ggml_backend_buffer_is_host(buf);
    std::vector<uint8_t> staging;
    for (const TensorSource * s : srcs) {
        const size_t n = lm_ggml_nbytes(s->tensor);
        if (m.mapping) {
            lm_ggml_backend_tensor_set(s->tensor, m.mapping->data() + s->file_offset, 0, n);
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

} // namespace

Status place_weights(const GgufFile & file, Model::Impl & m, const std::vector<TensorSource> & sources, bool use_mmap,
                     const std::function<bool(float)> & progress_cb) {
    std::vector<const TensorSource *> cpu, dev;
    uint64_t total = 0;
    for (const TensorSource & s : sources) {
        (s.where == Placement::CPU ? cpu : dev).push_back(&s);
        total += lm_ggml_nbytes(s.tensor);
    }

    std::unique_ptr<FileReader> reader;
    if (use_mmap) {
        auto map = MappedFile::map(file.path());
        if (!map.ok()) {
            return map.status();
        }
        m.mapping = std::move(map.value());
    } else {
        auto r = FileReader::open(file.path());
        if (!r.ok()) {
            return r.status();
        }
        reader = std::move(r.value());
    }

    Progress progress(progress_cb, total);
    if (!cpu.empty()) {
        Status st = use_mmap ? place_cpu_mapped(m, cpu, progress)
                             : place_copied(m, m.ctx_cpu, lm_ggml_backend_dev_buffer_type(m.cpu_dev), "CPU", cpu,
                                            reader.get(), progress);
        if (!st.ok()) {
            return st;
        }
    }
    if (!dev.empty()) {
        Status st = place_copied(m, m.ctx_dev, lm_ggml_backend_dev_buffer_type(m.dev), lm_ggml_backend_dev_name(m.dev), dev,
                                 reader.get(), progress);
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
