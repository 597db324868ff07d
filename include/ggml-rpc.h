#pragma once
// RPC backend: devices of other machines, reached over TCP with llama.cpp's
// RPC protocol (version 7.0.0), and the server that exposes this machine's
// devices. Built as the plugin liblmggml-rpc; with the plugin loaded, reach
// these functions through lm_ggml_backend_reg_get_proc_address on the "RPC"
// reg, by their names below.

#include "ggml-backend.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LM_RPC_PROTO_MAJOR_VERSION 7
#define LM_RPC_PROTO_MINOR_VERSION 0
#define LM_RPC_PROTO_PATCH_VERSION 0

#define LM_GGML_RPC_MAX_SERVERS 16

// backend API
LM_GGML_BACKEND_API lm_ggml_backend_t lm_ggml_backend_rpc_init(const char * endpoint, uint32_t device);
LM_GGML_BACKEND_API bool lm_ggml_backend_is_rpc(lm_ggml_backend_t backend);

LM_GGML_BACKEND_API lm_ggml_backend_buffer_type_t lm_ggml_backend_rpc_buffer_type(const char * endpoint, uint32_t device);

LM_GGML_BACKEND_API void lm_ggml_backend_rpc_get_device_memory(const char * endpoint, uint32_t device, size_t * free, size_t * total);

// Serves devices on endpoint ("host:port") until the process ends; returns
// at once on bad arguments or when the endpoint cannot be bound.
LM_GGML_BACKEND_API void lm_ggml_backend_rpc_start_server(const char * endpoint, const char * cache_dir,
                                                          size_t n_threads, size_t n_devices, lm_ggml_backend_dev_t * devices);

LM_GGML_BACKEND_API lm_ggml_backend_reg_t lm_ggml_backend_rpc_reg(void);
// A reg holding one device per device of the server at endpoint (NULL when
// it cannot be reached); the same reg for the same endpoint. Register it with
// lm_ggml_backend_register to make its devices visible to the registry.
LM_GGML_BACKEND_API lm_ggml_backend_reg_t lm_ggml_backend_rpc_add_server(const char * endpoint);
// The server's first device (ggml's older single-device entry point).
LM_GGML_BACKEND_API lm_ggml_backend_dev_t lm_ggml_backend_rpc_add_device(const char * endpoint);

// lmggml extension: a server in background threads. endpoint "host:0" picks
// a free port (lm_ggml_backend_rpc_server_port). NULL on failure (logged).
typedef struct lm_ggml_backend_rpc_server * lm_ggml_backend_rpc_server_t;
LM_GGML_BACKEND_API lm_ggml_backend_rpc_server_t lm_ggml_backend_rpc_server_start(const char * endpoint, const char * cache_dir,
                                                                                  size_t n_threads, size_t n_devices,
                                                                                  lm_ggml_backend_dev_t * devices);
LM_GGML_BACKEND_API int  lm_ggml_backend_rpc_server_port(lm_ggml_backend_rpc_server_t server);
// lmggml extension: as above, and with a non-empty auth_key every client must
// prove it knows the key before any command (docs/RPC.md); NULL or "": none.
LM_GGML_BACKEND_API lm_ggml_backend_rpc_server_t lm_ggml_backend_rpc_server_start_auth(const char * endpoint, const char * cache_dir,
                                                                                       size_t n_threads, size_t n_devices,
                                                                                       lm_ggml_backend_dev_t * devices,
                                                                                       const char * auth_key);
// lmggml extension: the key this process's client proves to servers that
// require one (copied; NULL or "" clears it). Without it the client uses env
// LMGGML_RPC_AUTH_KEY when set, else speaks the plain protocol.
LM_GGML_BACKEND_API void lm_ggml_backend_rpc_set_auth_key(const char * key);
LM_GGML_BACKEND_API void lm_ggml_backend_rpc_server_stop(lm_ggml_backend_rpc_server_t server);

#ifdef __cplusplus
}
#endif
