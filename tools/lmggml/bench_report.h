#pragma once
// Results of `lmggml bench` and their three renderings (markdown table like
// llama-bench's, JSON array, CSV).

#include <cstdint>
#include <string>
#include <vector>

namespace cli {

struct BenchResult {
    std::string model_filename;
    std::string model_type;  // Model::description()
    uint64_t model_size = 0; // bytes
    uint64_t model_n_params = 0;
    std::string backend;
    int32_t n_batch = 0;
    int32_t n_threads = 0;
    int32_t n_prompt = 0;           // pp test: tokens in the one decode (else 0)
    int32_t n_gen = 0;              // tg test: single-token decodes (else 0); both: a pg test (prompt, then generation)
    int32_t n_depth = 0;            // tokens already in the cache when the timed part starts
    std::vector<double> samples_ns; // one per repetition

    std::string test_name() const; // "pp512", "tg128", "pp512+tg128", with " @ d4096" at a depth
    double tokens() const { return double(n_prompt) + double(n_gen); }
    std::vector<double> samples_ts() const;
};

double mean(const std::vector<double> & v);
double stddev(const std::vector<double> & v); // sample standard deviation (n - 1), 0 for n < 2

std::string report_markdown(const std::vector<BenchResult> & rs, const std::string & build);
std::string report_json(const std::vector<BenchResult> & rs, const std::string & version, const std::string & commit);
std::string report_csv(const std::vector<BenchResult> & rs, const std::string & version, const std::string & commit);

} // namespace cli
