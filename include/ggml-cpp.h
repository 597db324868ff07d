#pragma once
// lmggml: owning smart pointers for the C handles (C++ only). The names are
// ggml's, so code written for ggml-cpp.h builds unchanged.

#ifndef __cplusplus
#error "ggml-cpp.h is a C++ header"
#endif

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "gguf.h"

#include <memory>

struct lm_ggml_context_deleter { void operator()(lm_ggml_context * ctx) const { lm_ggml_free(ctx); } };
struct lm_gguf_context_deleter { void operator()(lm_gguf_context * ctx) const { lm_gguf_free(ctx); } };

typedef std::unique_ptr<lm_ggml_context, lm_ggml_context_deleter> lm_ggml_context_ptr;
typedef std::unique_ptr<lm_gguf_context, lm_gguf_context_deleter> lm_gguf_context_ptr;

struct lm_ggml_gallocr_deleter { void operator()(lm_ggml_gallocr_t galloc) const { lm_ggml_gallocr_free(galloc); } };

// ggml spells this unique_ptr<lm_ggml_gallocr_t, ...>, which cannot be
// destroyed; the pointee here is the struct, so the deleter gets the handle.
typedef std::unique_ptr<struct lm_ggml_gallocr, lm_ggml_gallocr_deleter> lm_ggml_gallocr_ptr;

struct lm_ggml_backend_deleter        { void operator()(lm_ggml_backend_t backend)       const { lm_ggml_backend_free(backend); } };
struct lm_ggml_backend_buffer_deleter { void operator()(lm_ggml_backend_buffer_t buffer) const { lm_ggml_backend_buffer_free(buffer); } };
struct lm_ggml_backend_event_deleter  { void operator()(lm_ggml_backend_event_t event)   const { lm_ggml_backend_event_free(event); } };
struct lm_ggml_backend_sched_deleter  { void operator()(lm_ggml_backend_sched_t sched)   const { lm_ggml_backend_sched_free(sched); } };

typedef std::unique_ptr<lm_ggml_backend,        lm_ggml_backend_deleter>        lm_ggml_backend_ptr;
typedef std::unique_ptr<lm_ggml_backend_buffer, lm_ggml_backend_buffer_deleter> lm_ggml_backend_buffer_ptr;
typedef std::unique_ptr<lm_ggml_backend_event,  lm_ggml_backend_event_deleter>  lm_ggml_backend_event_ptr;
typedef std::unique_ptr<lm_ggml_backend_sched,  lm_ggml_backend_sched_deleter>  lm_ggml_backend_sched_ptr;
