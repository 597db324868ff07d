#pragma once
// The optional shared secret (`--auth-key`), an lmggml extension of
// llama.cpp's RPC protocol (docs/RPC.md): after HELLO, the client proves it
// knows the key, then the server proves it too; the key never travels. Here:
// SHA-256 and HMAC-SHA256 (FIPS 180-4, RFC 2104), a constant-time compare,
// nonces from the kernel, and the two proofs.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace rpc {

using Digest = std::array<uint8_t, 32>;

constexpr size_t kAuthNonceSize = 32;

Digest sha256(const void * data, size_t n);
Digest hmac_sha256(const void * key, size_t key_n, const void * msg, size_t n);

// a == b over n bytes, in time that depends on n only
bool ct_equal(const void * a, const void * b, size_t n);

// n bytes from the kernel's random source; false (nothing usable) on failure
bool random_bytes(void * out, size_t n);

enum class AuthRole : uint8_t { Client = 'C', Server = 'S' };

// HMAC-SHA256 under key of "lmggml-rpc-auth-1", the role, and both nonces:
// the role keeps one side's proof from serving as the other's.
Digest auth_proof(const std::string & key, AuthRole role, const uint8_t * client_nonce, const uint8_t * server_nonce);

} // namespace rpc
