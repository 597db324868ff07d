#pragma once
// The base model's log-probabilities for `perplexity --kl-divergence`.
//
// File format (lmggml's own, little-endian; not llama.cpp's):
//   char[8]  "LMGGMLKL"
//   uint32   version (1)
//   uint32   n_ctx, n_vocab, n_chunk
//   int32    tokens[n_chunk * n_ctx]   the scored text, as tokenized
//   then for each chunk, for each scored position j = n_ctx/2 .. n_ctx-2
//   (the logits of j predict token j + 1), one row:
//     float32 scale, float32 min_log_prob, uint16 q[n_vocab]
//   where log p(i) = min_log_prob + scale * q[i] (the log-softmax quantized to
//   16 bits over its range: the error is at most scale/2, about 1e-4 nats).

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "lmllm/status.h"
#include "lmllm/vocab.h"

namespace cli {

struct KldHeader {
    uint32_t n_ctx = 0, n_vocab = 0, n_chunk = 0;
    std::vector<lmllm::Token> tokens; // n_chunk * n_ctx
};

// Rows quantized as above; log_probs (n_vocab) are written through a row.
void quantize_log_probs(const float * logits, uint32_t n_vocab, std::vector<uint8_t> & row);
// The row back to log-probabilities.
void dequantize_log_probs(const std::vector<uint8_t> & row, uint32_t n_vocab, std::vector<double> & log_probs);
size_t kld_row_bytes(uint32_t n_vocab);

class KldFile {
public:
    static lmllm::Result<std::unique_ptr<KldFile>> create(const std::string & path, const KldHeader & h);
    static lmllm::Result<std::unique_ptr<KldFile>> open(const std::string & path, KldHeader & h);
    ~KldFile();
    lmllm::Status write_row(const float * logits);
    lmllm::Status read_row(std::vector<double> & log_probs);
    lmllm::Status close(); // flushes a written file

private:
    KldFile(std::FILE * f, std::string path, uint32_t n_vocab) : f_(f), path_(std::move(path)), n_vocab_(n_vocab) {}
    std::FILE * f_;
    std::string path_;
    uint32_t n_vocab_;
    std::vector<uint8_t> row_;
};

// Running statistics of the comparison, printed as llama-perplexity does.
class KldStats {
public:
    // base: the base model's log-probabilities; logits: the model's; next: the token that follows
    void add(const std::vector<double> & base, const float * logits, uint32_t n_vocab, lmllm::Token next);
    size_t count() const { return kld_.size(); }
    double mean_kld() const;
    double same_top() const; // fraction
    std::string report() const;

private:
    std::vector<double> kld_;
    std::vector<double> nll_q_, nll_base_;
    int64_t same_top_ = 0;
};

} // namespace cli
