#pragma once
// A model on the OpenCL device against the same model on the CPU: greedy
// decoding in lockstep and perplexity. Shared by the SmolLM2 and Gemma 3
// OpenCL tests.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lmllm/model.h"

namespace opencl_compare {

// "OpenCL0" when the plugin registered an OpenCL device, else null.
const char * device_name();

// True (and why) when there is no OpenCL device; under
// LMGGML_REQUIRE_OPENCL=1 that is also a test failure.
bool no_device(std::string * why);

// path with n_layers (1000: all) on the OpenCL device; null (with a test failure) when it does not load.
std::unique_ptr<lmllm::Model> load_on_device(const std::string & path, int n_layers);

// Logits of the device against the CPU's: rms and max over every
// vocabulary entry of every step.
struct Bounds {
    double rms;
    double max_abs;
};

// n greedy steps after the prompt, both contexts fed the CPU's choice;
// wherever the device's argmax differs, the CPU's choice must have been a
// near-tie (margin < 0.3, as the llama.cpp comparison allows).
void lockstep(const lmllm::Model & cpu, const lmllm::Model & dev, const std::string & prompt, int n, Bounds bounds);

// Perplexity over the first n_chunks chunks of n_ctx tokens, each decoded
// from an empty cache with BOS first, scoring the second half (as
// llama-perplexity does). NAN (with a test failure) on errors.
double perplexity(const lmllm::Model & model, const std::vector<int32_t> & tokens, int n_ctx, int n_chunks);

} // namespace opencl_compare
