#pragma once
// The fault-injection scenario: a tiny feed-forward "model" written as a GGUF
// file, loaded through lm_gguf + the backend API, and one graph computed
// through the scheduler (or the graph allocator). Every step checks its
// result and stops with the step's code on failure, freeing what it made, so
// an injected allocation failure anywhere must surface as a clean error.
//
// Model (GGUF tensors):
//   tok_embd  F32  (n_embd, n_vocab)
//   norm      F32  (n_embd)
//   ffn_up    F16  (n_embd, n_ff)     values k/64, exact in fp16
//   ffn_down  Q8_0 (n_ff, n_embd)     quants and fp16 scale 2^-10 chosen exactly
// Graph, for tokens (n_tok):
//   x   = get_rows(tok_embd, tokens)               // (n_embd, n_tok)
//   n   = rms_norm(x, eps) * norm                  // (n_embd, n_tok)
//   h   = silu(ffn_up x n)                         // (n_ff, n_tok)
//   out = soft_max(x + ffn_down x h)               // (n_embd, n_tok)

#include <cstddef>
#include <string>

namespace rel {

constexpr int kVocab = 8;
constexpr int kEmbd = 32;
constexpr int kFf = 64;
constexpr int kTok = 3;
constexpr int kOut = kEmbd * kTok;

enum Step : int {
    kStepOk = 0,
    kStepGgufInit,     // lm_gguf_init_from_file
    kStepBackendInit,  // lm_ggml_backend_cpu_init
    kStepAllocWeights, // lm_ggml_backend_alloc_ctx_tensors
    kStepReadWeights,  // reading the file / finding tensors (test side)
    kStepGraphCtx,     // lm_ggml_init for the graph
    kStepGraphBuild,   // an op constructor or lm_ggml_new_graph returned NULL
    kStepPlanner,      // lm_ggml_backend_sched_new / lm_ggml_gallocr_new
    kStepAllocGraph,   // sched_alloc_graph / gallocr_alloc_graph
    kStepCompute,      // graph compute status
    kStepCount
};
const char * step_name(int step);

enum class Planner { Sched, Gallocr };

// Writes the model to `path` with the lm_gguf writer. True on success.
bool write_model(const char * path);

// Loads the model, computes the graph and reads the result into out[kOut].
// Returns kStepOk or the step that failed. Uses no heap memory of its own
// (file reads go through a static buffer), so that under fault injection
// every counted allocation is the library's.
int run_scenario(const char * path, Planner planner, int n_threads, float * out);

// The same computation in double precision from the values write_model uses.
void reference_output(double * out);

double nmse(const float * actual, const double * expected, int n);

} // namespace rel
