#pragma once
// llama.cpp's RPC wire protocol, version 7.0.0: message layouts (packed,
// little-endian, as the peer sends them) and the command numbers.
//
// request : | command (1 byte) | size (u64) | payload (size bytes) |
// response: | size (u64) | payload (size bytes) |   (commands that answer)
//
// The first command on a connection must be HELLO.

#include "ggml.h"

#include <cstddef>
#include <cstdint>

namespace rpc {

constexpr uint8_t kProtoMajor = 7;
constexpr uint8_t kProtoMinor = 0;
constexpr uint8_t kProtoPatch = 0;

constexpr size_t kConnCapsSize = 24; // transport capabilities (RDMA); zeros: plain TCP
constexpr size_t kWireMaxDims = 4;
constexpr size_t kWireMaxSrc = 10;
constexpr size_t kWireMaxOpParams = 64;
constexpr size_t kWireMaxName = 64;

static_assert(LM_GGML_MAX_DIMS == kWireMaxDims && LM_GGML_MAX_SRC == kWireMaxSrc &&
                  LM_GGML_MAX_OP_PARAMS == kWireMaxOpParams && LM_GGML_MAX_NAME == kWireMaxName,
              "lmggml's tensor limits must match the wire's");

enum Cmd : uint8_t {
    CMD_ALLOC_BUFFER = 0,
    CMD_GET_ALIGNMENT = 1,
    CMD_GET_MAX_SIZE = 2,
    CMD_BUFFER_GET_BASE = 3,
    CMD_FREE_BUFFER = 4,
    CMD_BUFFER_CLEAR = 5,
    CMD_SET_TENSOR = 6,
    CMD_SET_TENSOR_HASH = 7,
    CMD_GET_TENSOR = 8,
    CMD_COPY_TENSOR = 9,
    CMD_GRAPH_COMPUTE = 10,
    CMD_GET_DEVICE_MEMORY = 11,
    CMD_INIT_TENSOR = 12,
    CMD_GET_ALLOC_SIZE = 13,
    CMD_HELLO = 14,
    CMD_DEVICE_COUNT = 15,
    CMD_GRAPH_RECOMPUTE = 16,
    CMD_MEMSET_TENSOR = 17,
    CMD_COUNT = 18, // the peer's RPC_CMD_NONE is local only
    // lmggml extension, only to a server started with a key (rpc-auth.h):
    // far from the peer's numbers so its future commands cannot collide
    CMD_AUTH_NONCE = 0xE0,
    CMD_AUTH_PROOF = 0xE1,
};

#pragma pack(push, 1)

// A tensor on the wire. id: the client's handle (its address); buffer: the
// server's buffer handle; data: an address inside that buffer's base range.
struct WireTensor {
    uint64_t id;
    uint32_t type;
    uint64_t buffer;
    uint32_t ne[kWireMaxDims];
    uint32_t nb[kWireMaxDims];
    uint32_t op;
    int32_t op_params[kWireMaxOpParams / sizeof(int32_t)];
    int32_t flags;
    uint64_t src[kWireMaxSrc];
    uint64_t view_src;
    uint64_t view_offs;
    uint64_t data;
    char name[kWireMaxName];
    int32_t use_count;
};
static_assert(sizeof(WireTensor) == 296, "rpc_tensor is 296 bytes on the wire");

struct HelloReq {
    uint8_t conn_caps[kConnCapsSize];
};
struct HelloRsp {
    uint8_t major, minor, patch, padding;
    uint8_t conn_caps[kConnCapsSize];
};
struct DeviceCountRsp {
    uint32_t device_count;
};
struct DeviceReq {
    uint32_t device;
}; // GET_ALIGNMENT, GET_MAX_SIZE, GET_DEVICE_MEMORY, GRAPH_RECOMPUTE
struct U64Rsp {
    uint64_t value;
}; // GET_ALIGNMENT, GET_MAX_SIZE, GET_ALLOC_SIZE
struct AllocBufferReq {
    uint32_t device;
    uint64_t size;
};
struct AllocBufferRsp {
    uint64_t remote_ptr;
    uint64_t remote_size;
};
struct BufferReq {
    uint64_t remote_ptr;
}; // BUFFER_GET_BASE, FREE_BUFFER
struct BufferGetBaseRsp {
    uint64_t base_ptr;
};
struct BufferClearReq {
    uint64_t remote_ptr;
    uint8_t value;
};
struct GetAllocSizeReq {
    uint32_t device;
    WireTensor tensor;
    WireTensor srcs[kWireMaxSrc];
};
struct InitTensorReq {
    WireTensor tensor;
};
struct MemsetTensorReq {
    WireTensor tensor;
    uint64_t offset;
    uint64_t size;
    uint8_t value;
};
struct SetTensorHashReq {
    WireTensor tensor;
    uint64_t offset;
    uint64_t hash;
};
struct ResultRsp {
    uint8_t result;
}; // SET_TENSOR_HASH, COPY_TENSOR
struct GetTensorReq {
    WireTensor tensor;
    uint64_t offset;
    uint64_t size;
};
struct CopyTensorReq {
    WireTensor src;
    WireTensor dst;
};
struct DeviceMemoryRsp {
    uint64_t free_mem;
    uint64_t total_mem;
};
struct AuthNonceReq {
    uint8_t client_nonce[32];
}; // lmggml extension: see rpc-auth.h
struct AuthNonceRsp {
    uint8_t server_nonce[32];
};
struct AuthProofReq {
    uint8_t client_proof[32];
};
struct AuthProofRsp {
    uint8_t server_proof[32];
};

#pragma pack(pop)

// SET_TENSOR payload: | WireTensor | cache flag (u8) | offset (u64) | data |
constexpr size_t kSetTensorHeader = sizeof(WireTensor) + 1 + 8;
// GRAPH_COMPUTE payload: | device (u32) | n_nodes (u32) | node ids (u64 each) |
//                        | n_tensors (u32) | WireTensor each |
// The set's payloads above the peer's hash threshold go through SET_TENSOR_HASH first.
constexpr size_t kHashThreshold = 10u * 1024 * 1024;

// FNV-1a, 64 bit: the hash SET_TENSOR_HASH and the cache files use
inline uint64_t fnv1a(const void * data, size_t n, uint64_t h = 0xcbf29ce484222325ULL) {
    const uint8_t * p = static_cast<const uint8_t *>(data);
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

} // namespace rpc
