// Model::load: open the GGUF file, pick the architecture, read the
// hyper-parameters and vocabulary, create the weight tensors and place them
// on the CPU (zero-copy) or the requested device.

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <new>

#include "arch.h"
#include "lmllm/split.h"
#include "loader.h"
#include "model_hparams.h"
#include "model_impl.h"

namespace lmllm {

namespace {

const char * ftype_name(uint32_t ftype) {
    static const std::map<uint32_t, const char *> names = {
        {0, "F32"},     {1, "F16"},     {2, "Q4_0"},    {3, "Q4_1"},    {7, "Q8_0"},    {8, "Q5_0"},
        {9, "Q5_1"},    {10, "Q2_K"},   {11, "Q3_K_S"}, {12, "Q3_K_M"}, {13, "Q3_K_L"}, {14, "Q4_K_S"},
        {15, "Q4_K_M"}, {16, "Q5_K_S"}, {17, "Q5_K_M"}, {18, "Q6_K"},   {32, "BF16"},
    };
    auto it = names.find(ftype);
    return it == names.end() ? nullptr : it->second;
}

// general.file_type when known, else the type holding most weight elements.
std::string file_type_of(const GgufFile & f) {
    uint32_t ftype = 0;
    if (f.has("general.file_type") && f.get_u32("general.file_type", ftype, true).ok() && ftype_name(ftype)) {
        return ftype_name(ftype);
    }
    std::map<int, int64_t> by_type;
    for (int64_t i = 0; i < f.n_tensors(); i++) {
        const lm_ggml_tensor * t = f.tensor_meta(lm_gguf_get_tensor_name(f.gguf(), i));
        if (t != nullptr && t->ne[1] > 1) {
            by_type[t->type] += lm_ggml_nelements(t);
        }
    }
    int best = LM_GGML_TYPE_F32;
    for (auto [type, n] : by_type) {
        if (n > by_type[best]) {
            best = type;
        }
    }
    std::string name = lm_ggml_type_name(static_cast<lm_ggml_type>(best));
    for (char & c : name) {
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    return name;
}

// The default split, as llama.cpp's: by each device's free memory (the CPU:
// its total), evenly when no device reports any.
std::vector<float> split_by_memory(const std::vector<lm_ggml_backend_dev_t> & list) {
    std::vector<float> p;
    bool any = false;
    for (lm_ggml_backend_dev_t d : list) {
        size_t free = 0, total = 0;
        lm_ggml_backend_dev_memory(d, &free, &total);
        p.push_back(static_cast<float>(free));
        any |= free > 0;
    }
    if (!any) {
        p.assign(list.size(), 1.0f);
    }
    return p;
}

// Resolves ModelParams::devices and tensor_split into a device per layer:
// the first n_layer - n_gpu_layers layers on the CPU, the rest split over
// the devices listed; the output layer goes with the last layer.
Status resolve_devices(const ModelParams & params, Model::Impl & m) {
    m.cpu_dev = lm_ggml_backend_dev_by_type(LM_GGML_BACKEND_DEVICE_TYPE_CPU);
    if (m.cpu_dev == nullptr) {
        return Status::error("no CPU device is registered");
    }
    std::vector<lm_ggml_backend_dev_t> list;
    for (const std::string & name : params.devices) {
        lm_ggml_backend_dev_t d = lm_ggml_backend_dev_by_name(name.c_str());
        if (d == nullptr) {
            return Status::error("unknown device '" + name + "'");
        }
        if (lm_ggml_backend_dev_type(d) == LM_GGML_BACKEND_DEVICE_TYPE_CPU) {
            d = m.cpu_dev;
        }
        if (std::find(list.begin(), list.end(), d) != list.end()) {
            return Status::error("device '" + name + "' is listed twice");
        }
        list.push_back(d);
    }
    if (!params.tensor_split.empty() && params.tensor_split.size() != list.size()) {
        return Status::error("--tensor-split has " + std::to_string(params.tensor_split.size()) + " proportions for " +
                             std::to_string(list.size()) + " devices (one per device listed, in order)");
    }
    const uint32_t n_layer = m.hp.n_layer;
    const int64_t want = params.n_gpu_layers < 0 ? n_layer : params.n_gpu_layers;
    const uint32_t n_off = list.empty() ? 0 : static_cast<uint32_t>(std::min<int64_t>(want, n_layer));
    m.layer_dev.assign(n_layer, m.cpu_dev);
    m.output_dev = m.cpu_dev;
    if (n_off == 0) {
        return {};
    }
    auto counts = split_layers(n_off, params.tensor_split.empty() ? split_by_memory(list) : params.tensor_split);
    if (!counts.ok()) {
        return counts.status();
    }
    uint32_t il = n_layer - n_off;
    for (size_t i = 0; i < list.size(); i++) {
        for (uint32_t k = 0; k < counts.value()[i]; k++) {
            m.layer_dev[il++] = list[i];
        }
    }
    m.output_dev = m.layer_dev[n_layer - 1];
    for (lm_ggml_backend_dev_t d : list) { // the devices that hold layers, in list order
        if (d != m.cpu_dev && std::find(m.layer_dev.begin(), m.layer_dev.end(), d) != m.layer_dev.end()) {
            m.devs.push_back(d);
        }
    }
    return {};
}

Result<std::unique_ptr<Model::Impl>> load_impl(const std::string & path, const ModelParams & params) {
    auto file_r = GgufFile::open(path);
    if (!file_r.ok()) {
        return file_r.status();
    }
    const GgufFile & file = *file_r.value();

    std::string arch_name;
    if (Status s = file.get_str("general.architecture", arch_name, true); !s.ok()) {
        return s;
    }
    const ArchOps * arch = find_arch(arch_name);
    if (arch == nullptr) {
        return Status::error("unsupported architecture '" + arch_name + "'");
    }

    auto m = std::make_unique<Model::Impl>();
    m->arch = arch;
    if (Status s = load_hparams(file, *arch, m->hp); !s.ok()) {
        return s;
    }
    if (Status s = resolve_devices(params, *m); !s.ok()) {
        return s;
    }

    // A second copy of a tied embedding may go to the device: room for a few extra.
    const size_t n_slots = static_cast<size_t>(file.n_tensors()) + 4;
    lm_ggml_init_params ip = {n_slots * lm_ggml_tensor_overhead(), nullptr, /*no_alloc =*/true};
    m->ctx_cpu = lm_ggml_init(ip);
    if (m->ctx_cpu == nullptr) {
        return Status::error("cannot create the weight context");
    }
    m->ctx_devs.reserve(m->devs.size());
    for (size_t i = 0; i < m->devs.size(); i++) {
        lm_ggml_context * c = lm_ggml_init(ip);
        if (c == nullptr) {
            return Status::error("cannot create the weight context");
        }
        m->ctx_devs.push_back(c);
    }

    TensorLoader loader(file, *m);
    arch->create_tensors(loader, m->hp, m->w);
    if (!loader.status().ok()) {
        return loader.status();
    }

    auto vocab = Vocab::load(file.gguf());
    if (!vocab.ok()) {
        return Status::error("vocabulary of '" + path + "': " + vocab.status().message());
    }
    m->vocab = std::move(vocab.value());
    if (Status s = file.get_str("tokenizer.chat_template", m->chat_template, false); !s.ok()) {
        return s;
    }
    m->file_type = file_type_of(file);

    for (int64_t i = 0; i < file.n_tensors(); i++) {
        const lm_ggml_tensor * t = file.tensor_meta(lm_gguf_get_tensor_name(file.gguf(), i));
        if (t != nullptr) {
            m->n_params += static_cast<uint64_t>(lm_ggml_nelements(t));
            m->n_bytes += lm_ggml_nbytes(t);
        }
    }
    m->n_weight_tensors = static_cast<int32_t>(loader.sources().size());

    if (Status s = place_weights(file, *m, loader.sources(), params.use_mmap, params.repack, params.progress);
        !s.ok()) {
        return s;
    }
    return m;
}

} // namespace

Model::Impl::~Impl() {
    for (lm_ggml_backend_buffer_t b : buffers) {
        lm_ggml_backend_buffer_free(b);
    }
    if (ctx_cpu != nullptr) {
        lm_ggml_free(ctx_cpu);
    }
    for (lm_ggml_context * c : ctx_devs) {
        lm_ggml_free(c);
    }
    // mapping is released after the buffers that alias it (member order).
}

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::~Model() = default;

Result<std::unique_ptr<Model>> Model::load(const std::string & path, const ModelParams & params) {
    try {
        auto impl = load_impl(path, params);
        if (!impl.ok()) {
            return impl.status();
        }
        return std::unique_ptr<Model>(new Model(std::move(impl.value())));
    } catch (const std::bad_alloc &) {
        return Status::error("out of memory while loading '" + path + "'");
    } catch (const std::exception & e) {
        return Status::error("cannot load '" + path + "': " + e.what());
    }
}

const HParams & Model::hparams() const { return impl_->hp; }
const Vocab & Model::vocab() const { return *impl_->vocab; }
const std::string & Model::chat_template() const { return impl_->chat_template; }
uint64_t Model::n_params() const { return impl_->n_params; }
uint64_t Model::size_bytes() const { return impl_->n_bytes; }

std::string Model::placement() const {
    const Impl & m = *impl_;
    auto name = [&](lm_ggml_backend_dev_t d) { return std::string(lm_ggml_backend_dev_name(d)); };
    std::string s = "layers ";
    for (uint32_t il = 0; il < m.layer_dev.size();) {
        uint32_t end = il;
        while (end + 1 < m.layer_dev.size() && m.layer_dev[end + 1] == m.layer_dev[il]) {
            end++;
        }
        // appended piecewise: GCC 12 warns falsely (-Wrestrict) on chained concatenation
        if (il > 0) {
            s += ", ";
        }
        s += std::to_string(il);
        if (end > il) {
            s += '-';
            s += std::to_string(end);
        }
        s += ": ";
        s += name(m.layer_dev[il]);
        il = end + 1;
    }
    s += "; output: ";
    s += name(m.output_dev ? m.output_dev : m.cpu_dev);
    return s;
}

std::string Model::description() const {
    char size[32];
    const double n = static_cast<double>(impl_->n_params);
    if (n < 1e9) {
        std::snprintf(size, sizeof(size), "%.0fM", n / 1e6);
    } else {
        std::snprintf(size, sizeof(size), "%.1fB", n / 1e9);
    }
    return impl_->hp.arch_name + " " + size + " " + impl_->file_type;
}

} // namespace lmllm
