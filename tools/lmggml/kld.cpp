// The KL-divergence file and statistics of `perplexity` (see kld.h).
#include "kld.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

namespace cli {

using lmllm::Status;

namespace {

constexpr char kMagic[8] = {'L', 'M', 'G', 'G', 'M', 'L', 'K', 'L'};
constexpr uint32_t kVersion = 1;

double mean_of(const std::vector<double> & v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0.0 : s / double(v.size());
}

// standard error of the mean
double sem(const std::vector<double> & v) {
    if (v.size() < 2) return 0.0;
    const double m = mean_of(v);
    double s = 0;
    for (double x : v) s += (x - m) * (x - m);
    return std::sqrt(s / double(v.size() - 1) / double(v.size()));
}

// log-softmax of logits, in double
void log_softmax(const float * logits, uint32_t n, std::vector<double> & out) {
    out.resize(n);
    double mx = logits[0];
    for (uint32_t i = 1; i < n; i++) mx = std::max(mx, double(logits[i]));
    double sum = 0;
    for (uint32_t i = 0; i < n; i++) sum += std::exp(double(logits[i]) - mx);
    const double lse = mx + std::log(sum);
    for (uint32_t i = 0; i < n; i++) out[i] = double(logits[i]) - lse;
}

} // namespace

size_t kld_row_bytes(uint32_t n_vocab) { return 2 * sizeof(float) + size_t(n_vocab) * sizeof(uint16_t); }

void quantize_log_probs(const float * logits, uint32_t n_vocab, std::vector<uint8_t> & row) {
    std::vector<double> lp;
    log_softmax(logits, n_vocab, lp);
    const double lo = *std::min_element(lp.begin(), lp.end());
    const double hi = *std::max_element(lp.begin(), lp.end());
    const float scale = float((hi - lo) / 65535.0);
    const float min_lp = float(lo);
    row.resize(kld_row_bytes(n_vocab));
    std::memcpy(row.data(), &scale, sizeof scale);
    std::memcpy(row.data() + sizeof scale, &min_lp, sizeof min_lp);
    uint8_t * q = row.data() + 2 * sizeof(float);
    for (uint32_t i = 0; i < n_vocab; i++) {
        const double v = scale > 0 ? std::nearbyint((lp[i] - lo) / double(scale)) : 0.0;
        const uint16_t u = uint16_t(std::clamp(v, 0.0, 65535.0));
        std::memcpy(q + 2 * size_t(i), &u, sizeof u);
    }
}

void dequantize_log_probs(const std::vector<uint8_t> & row, uint32_t n_vocab, std::vector<double> & lp) {
    float scale = 0, min_lp = 0;
    std::memcpy(&scale, row.data(), sizeof scale);
    std::memcpy(&min_lp, row.data() + sizeof scale, sizeof min_lp);
    lp.resize(n_vocab);
    const uint8_t * q = row.data() + 2 * sizeof(float);
    for (uint32_t i = 0; i < n_vocab; i++) {
        uint16_t u = 0;
        std::memcpy(&u, q + 2 * size_t(i), sizeof u);
        lp[i] = double(min_lp) + double(scale) * double(u);
    }
}

lmllm::Result<std::unique_ptr<KldFile>> KldFile::create(const std::string & path, const KldHeader & h) {
    std::FILE * f = std::fopen(path.c_str(), "wb");
    if (!f) return Status::error("cannot create '" + path + "': " + std::strerror(errno));
    std::unique_ptr<KldFile> k(new KldFile(f, path, h.n_vocab));
    const uint32_t head[4] = {kVersion, h.n_ctx, h.n_vocab, h.n_chunk};
    if (std::fwrite(kMagic, 1, 8, f) != 8 || std::fwrite(head, sizeof head, 1, f) != 1 ||
        std::fwrite(h.tokens.data(), sizeof(lmllm::Token), h.tokens.size(), f) != h.tokens.size())
        return Status::error("cannot write '" + path + "'");
    return k;
}

lmllm::Result<std::unique_ptr<KldFile>> KldFile::open(const std::string & path, KldHeader & h) {
    std::FILE * f = std::fopen(path.c_str(), "rb");
    if (!f) return Status::error("cannot open '" + path + "': " + std::strerror(errno));
    std::unique_ptr<KldFile> k(new KldFile(f, path, 0));
    char magic[8] = {};
    uint32_t head[4] = {};
    if (std::fread(magic, 1, 8, f) != 8 || std::memcmp(magic, kMagic, 8) != 0)
        return Status::error("'" + path + "' is not a logits file of lmggml perplexity --kl-divergence-base");
    if (std::fread(head, sizeof head, 1, f) != 1 || head[0] != kVersion)
        return Status::error("'" + path + "': unsupported version of the logits file");
    h.n_ctx = head[1];
    h.n_vocab = head[2];
    h.n_chunk = head[3];
    if (h.n_ctx < 4 || h.n_vocab == 0 || h.n_chunk == 0 || uint64_t(h.n_ctx) * h.n_chunk > (1ull << 32))
        return Status::error("'" + path + "': bad header");
    h.tokens.resize(size_t(h.n_ctx) * h.n_chunk);
    if (std::fread(h.tokens.data(), sizeof(lmllm::Token), h.tokens.size(), f) != h.tokens.size())
        return Status::error("'" + path + "' is truncated");
    k->n_vocab_ = h.n_vocab;
    return k;
}

KldFile::~KldFile() {
    if (f_) std::fclose(f_);
}

Status KldFile::write_row(const float * logits) {
    quantize_log_probs(logits, n_vocab_, row_);
    if (std::fwrite(row_.data(), 1, row_.size(), f_) != row_.size())
        return Status::error("cannot write '" + path_ + "'");
    return Status();
}

Status KldFile::read_row(std::vector<double> & log_probs) {
    row_.resize(kld_row_bytes(n_vocab_));
    if (std::fread(row_.data(), 1, row_.size(), f_) != row_.size())
        return Status::error("'" + path_ + "' is truncated");
    dequantize_log_probs(row_, n_vocab_, log_probs);
    return Status();
}

Status KldFile::close() {
    const int rc = std::fclose(f_);
    f_ = nullptr;
    return rc == 0 ? Status() : Status::error("cannot write '" + path_ + "'");
}

void KldStats::add(const std::vector<double> & base, const float * logits, uint32_t n_vocab, lmllm::Token next) {
    std::vector<double> lp;
    log_softmax(logits, n_vocab, lp);
    double kld = 0;
    size_t top_base = 0, top_q = 0;
    for (uint32_t i = 0; i < n_vocab; i++) {
        kld += std::exp(base[i]) * (base[i] - lp[i]);
        if (base[i] > base[top_base]) top_base = i;
        if (lp[i] > lp[top_q]) top_q = i;
    }
    kld_.push_back(std::max(0.0, kld)); // the 16-bit rows can make a true 0 slightly negative
    nll_q_.push_back(-lp[size_t(next)]);
    nll_base_.push_back(-base[size_t(next)]);
    same_top_ += top_base == top_q;
}

double KldStats::mean_kld() const { return mean_of(kld_); }
double KldStats::same_top() const { return kld_.empty() ? 0.0 : double(same_top_) / double(kld_.size()); }

std::string KldStats::report() const {
    const size_t n = kld_.size();
    std::vector<double> ln_ratio(n);
    for (size_t i = 0; i < n; i++) ln_ratio[i] = nll_q_[i] - nll_base_[i];
    const double ppl_q = std::exp(mean_of(nll_q_)), ppl_b = std::exp(mean_of(nll_base_));
    const double lr = mean_of(ln_ratio), lr_e = sem(ln_ratio);
    std::vector<double> sorted = kld_;
    std::sort(sorted.begin(), sorted.end());
    auto pct = [&](double q) {
        return sorted.empty() ? 0.0 : sorted[size_t(std::lround(q * double(sorted.size() - 1)))];
    };
    const double st = same_top();
    const double st_e = n > 1 ? std::sqrt(st * (1 - st) / double(n - 1)) : 0.0;

    char b[2048];
    std::snprintf(b, sizeof b,
                  "====== Perplexity statistics ======\n"
                  "Mean PPL(Q)                   : %10.6f ± %10.6f\n"
                  "Mean PPL(base)                : %10.6f ± %10.6f\n"
                  "Mean ln(PPL(Q)/PPL(base))     : %10.6f ± %10.6f\n"
                  "Mean PPL(Q)/PPL(base)         : %10.6f ± %10.6f\n"
                  "\n====== KL divergence statistics ======\n"
                  "Mean    KLD: %10.6f ± %10.6f\n"
                  "Maximum KLD: %10.6f\n"
                  "99.0%%   KLD: %10.6f\n"
                  "Median  KLD: %10.6f\n"
                  "Minimum KLD: %10.6f\n"
                  "\n====== Token probability statistics ======\n"
                  "Same top p: %6.3f ± %5.3f %%\n",
                  ppl_q, ppl_q * sem(nll_q_), ppl_b, ppl_b * sem(nll_base_), lr, lr_e, std::exp(lr),
                  std::exp(lr) * lr_e, mean_of(kld_), sem(kld_), sorted.empty() ? 0.0 : sorted.back(), pct(0.99),
                  pct(0.5), sorted.empty() ? 0.0 : sorted.front(), 100.0 * st, 100.0 * st_e);
    return b;
}

} // namespace cli
