// The --auth-key extension (rpc-auth.h): SHA-256 and HMAC-SHA256 against the
// published test vectors (FIPS 180-2 examples, RFC 4231), the constant-time
// compare, and the handshake against servers with and without a key, both
// through raw messages and through the client API.

#include "rpc_test_util.h"
#include "rpc-auth.h"

#include "ggml-backend.h"
#include "ggml-rpc.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace {

using namespace rpctest;

std::string hex(const rpc::Digest & d) {
    static const char * k = "0123456789abcdef";
    std::string s;
    for (uint8_t b : d) {
        s += k[b >> 4];
        s += k[b & 15];
    }
    return s;
}

TEST(RpcAuth, Sha256KnownAnswers) {
    EXPECT_EQ(hex(rpc::sha256("", 0)), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(hex(rpc::sha256("abc", 3)), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const std::string two =
        "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"; // 56 bytes: a second padding block
    EXPECT_EQ(hex(rpc::sha256(two.data(), two.size())),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    const std::string million(1000000, 'a');
    EXPECT_EQ(hex(rpc::sha256(million.data(), million.size())),
              "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(RpcAuth, HmacSha256Rfc4231) {
    const std::string k1(20, '\x0b'), d1 = "Hi There";
    EXPECT_EQ(hex(rpc::hmac_sha256(k1.data(), k1.size(), d1.data(), d1.size())),
              "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    const std::string k2 = "Jefe", d2 = "what do ya want for nothing?";
    EXPECT_EQ(hex(rpc::hmac_sha256(k2.data(), k2.size(), d2.data(), d2.size())),
              "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    const std::string k6(131, '\xaa'),
        d6 = "Test Using Larger Than Block-Size Key - Hash Key First"; // key hashed first
    EXPECT_EQ(hex(rpc::hmac_sha256(k6.data(), k6.size(), d6.data(), d6.size())),
              "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST(RpcAuth, ConstantTimeCompare) {
    uint8_t a[32], b[32];
    for (int i = 0; i < 32; i++) a[i] = b[i] = (uint8_t) (7 * i + 1);
    EXPECT_TRUE(rpc::ct_equal(a, b, 32));
    EXPECT_TRUE(rpc::ct_equal(a, b, 0));
    for (int i : {0, 17, 31}) {
        b[i] ^= 0x80;
        EXPECT_FALSE(rpc::ct_equal(a, b, 32)) << "difference at byte " << i;
        b[i] ^= 0x80;
    }
}

TEST(RpcAuth, ProofsDependOnRoleKeyAndNonces) {
    uint8_t cn[32] = {1}, sn[32] = {2};
    const rpc::Digest c = rpc::auth_proof("key", rpc::AuthRole::Client, cn, sn);
    EXPECT_NE(c, rpc::auth_proof("key", rpc::AuthRole::Server, cn, sn))
        << "one side's proof must not serve as the other's";
    EXPECT_NE(c, rpc::auth_proof("kez", rpc::AuthRole::Client, cn, sn));
    EXPECT_NE(c, rpc::auth_proof("key", rpc::AuthRole::Client, sn, cn));
    uint8_t r1[32] = {}, r2[32] = {};
    ASSERT_TRUE(rpc::random_bytes(r1, 32));
    ASSERT_TRUE(rpc::random_bytes(r2, 32));
    EXPECT_FALSE(rpc::ct_equal(r1, r2, 32));
}

const char * kKey = "correct horse battery staple";

rpc::ServerOptions keyed(const std::string & key = kKey) {
    rpc::ServerOptions o;
    o.auth_key = key;
    return o;
}

// The client's half of the handshake on a raw connection; false when the
// server closes it. server_ok: whether the server's proof checked out.
bool raw_auth(Raw & c, const std::string & key, bool * server_ok = nullptr, rpc::AuthProofReq * sent = nullptr) {
    rpc::AuthNonceReq nreq;
    rpc::AuthNonceRsp nrsp;
    if (!rpc::random_bytes(nreq.client_nonce, 32) ||
        !c.call(rpc::CMD_AUTH_NONCE, &nreq, sizeof(nreq), &nrsp, sizeof(nrsp))) {
        return false;
    }
    rpc::AuthProofReq preq;
    const rpc::Digest p = rpc::auth_proof(key, rpc::AuthRole::Client, nreq.client_nonce, nrsp.server_nonce);
    std::memcpy(preq.client_proof, p.data(), 32);
    if (sent) *sent = preq;
    rpc::AuthProofRsp prsp;
    if (!c.call(rpc::CMD_AUTH_PROOF, &preq, sizeof(preq), &prsp, sizeof(prsp))) {
        return false;
    }
    const rpc::Digest want = rpc::auth_proof(key, rpc::AuthRole::Server, nreq.client_nonce, nrsp.server_nonce);
    if (server_ok) *server_ok = rpc::ct_equal(want.data(), prsp.server_proof, 32);
    return true;
}

TEST(RpcAuth, RightKeyIsServedAndTheServerProvesItToo) {
    LoopbackServer srv(keyed());
    Raw c(srv.port());
    bool server_ok = false;
    ASSERT_TRUE(raw_auth(c, kKey, &server_ok));
    EXPECT_TRUE(server_ok);
    EXPECT_TRUE(c.alive());
    EXPECT_NE(c.alloc(64), 0u);
}

TEST(RpcAuth, WrongKeyIsRefusedAndOthersAreStillServed) {
    LoopbackServer srv(keyed());
    Raw bad(srv.port());
    EXPECT_FALSE(raw_auth(bad, "correct horse battery stapler"));
    EXPECT_FALSE(bad.alive());
    Raw good(srv.port());
    ASSERT_TRUE(raw_auth(good, kKey));
    EXPECT_TRUE(good.alive());
}

TEST(RpcAuth, NoKeyIsRefused) {
    LoopbackServer srv(keyed());
    Raw plain(srv.port()); // a plain version-7 client: HELLO, then commands
    ASSERT_GE(plain.fd, 0) << "HELLO is answered before authentication";
    EXPECT_FALSE(plain.alive());
    Raw good(srv.port());
    ASSERT_TRUE(raw_auth(good, kKey));
    EXPECT_TRUE(good.alive());
}

TEST(RpcAuth, ReplayedProofIsRefused) {
    LoopbackServer srv(keyed());
    rpc::AuthProofReq recorded;
    {
        Raw c(srv.port());
        ASSERT_TRUE(raw_auth(c, kKey, nullptr, &recorded));
    }
    Raw eve(srv.port()); // fresh nonces: the recorded proof no longer fits
    rpc::AuthNonceReq nreq = {};
    rpc::AuthNonceRsp nrsp;
    ASSERT_TRUE(eve.call(rpc::CMD_AUTH_NONCE, &nreq, sizeof(nreq), &nrsp, sizeof(nrsp)));
    rpc::AuthProofRsp prsp;
    EXPECT_FALSE(eve.call(rpc::CMD_AUTH_PROOF, &recorded, sizeof(recorded), &prsp, sizeof(prsp)));
    Raw good(srv.port());
    EXPECT_TRUE(raw_auth(good, kKey) && good.alive());
}

TEST(RpcAuth, MalformedAuthIsRefused) {
    LoopbackServer srv(keyed());
    {
        Raw c(srv.port());
        const uint8_t shorter[16] = {};
        ASSERT_TRUE(c.send_cmd(rpc::CMD_AUTH_NONCE, shorter, sizeof(shorter)));
        EXPECT_FALSE(c.alive());
    }
    {
        Raw c(srv.port()); // the proof before the nonce
        rpc::AuthProofReq preq = {};
        ASSERT_TRUE(c.send_cmd(rpc::CMD_AUTH_PROOF, &preq, sizeof(preq)));
        EXPECT_FALSE(c.alive());
    }
    Raw good(srv.port());
    EXPECT_TRUE(raw_auth(good, kKey) && good.alive());
}

TEST(RpcAuth, StalledAuthIsDroppedWhileOthersAreServed) {
    LoopbackServer srv(keyed()); // 2 s I/O timeout
    Raw stalled(srv.port());
    ASSERT_GE(stalled.fd, 0);
    Raw good(srv.port());
    ASSERT_TRUE(raw_auth(good, kKey));
    EXPECT_TRUE(good.alive());
    const auto t0 = std::chrono::steady_clock::now();
    uint8_t byte;
    EXPECT_FALSE(rpc::recv_all(stalled.fd, &byte, 1, 10000)) << "a connection that never authenticates must be closed";
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(8));
}

TEST(RpcAuth, KeylessServerClosesOnAuth) {
    LoopbackServer srv; // no key: the extension's commands are unknown there
    Raw c(srv.port());
    EXPECT_FALSE(raw_auth(c, kKey));
    Raw plain(srv.port());
    EXPECT_TRUE(plain.alive()) << "plain clients keep working against a keyless server";
}

// the client API: the key set in this process is proven on every connection
TEST(RpcAuth, ClientApiProvesTheKey) {
    LoopbackServer right(keyed()), other(keyed("another key entirely")), keyless;
    lm_ggml_backend_rpc_set_auth_key(kKey);
    lm_ggml_backend_reg_t reg = lm_ggml_backend_rpc_add_server(right.endpoint().c_str());
    EXPECT_NE(reg, nullptr);
    EXPECT_EQ(lm_ggml_backend_rpc_add_server(other.endpoint().c_str()), nullptr) << "a server with another key";
    EXPECT_EQ(lm_ggml_backend_rpc_add_server(keyless.endpoint().c_str()), nullptr)
        << "a client with a key talks only to servers that prove it";
    lm_ggml_backend_rpc_set_auth_key(nullptr);
    LoopbackServer right2(keyed());
    EXPECT_EQ(lm_ggml_backend_rpc_add_server(right2.endpoint().c_str()), nullptr) << "no key against a keyed server";
    if (reg != nullptr) {
        size_t free_mem = 0, total = 0;
        lm_ggml_backend_dev_memory(lm_ggml_backend_reg_dev_get(reg, 0), &free_mem, &total);
        EXPECT_GT(total, 0u) << "the authenticated connection serves";
    }
}

} // namespace
