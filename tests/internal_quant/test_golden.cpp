// Bytes written by ggml v1.4.1's own quantizers (quantize_row_*_ref, and
// quantize_<type> with an importance matrix), for the deterministic input of
// quant_test_util.h (4 rows x 512 values, seed 42; weights seed 7). The
// digests are FNV-1a 64 of all output bytes; the hex string is the first
// block. They were produced by compiling ggml-quants.c of cui-llama.rn v1.4.1
// (with -ffp-contract=off, as files are written) against this input generator.
#include "quant/quants.h"
#include "quant_test_util.h"

#include <gtest/gtest.h>

namespace {

struct Golden {
    lm_ggml_type type;
    uint64_t ref_digest;
    uint64_t imatrix_digest; // 0: the type has no importance-weighted variant
    const char * first_block_hex;
};

const Golden kGolden[] = {
    {LM_GGML_TYPE_Q4_0, 0x424650c7702ac909ull, 0xec770402b9818a2eull, "073a60ba69777789888689a8698687a9a679"},
    {LM_GGML_TYPE_Q4_1, 0x4178c84f52daac10ull, 0x17426383830e4114ull, "433807c680fe9daaaabdcbb9bdeb9cc8baece9ac"},
    {LM_GGML_TYPE_Q5_0, 0xb67d76c2afc7b560ull, 0xece1d04549eb40dcull, "073626a7e27bc053c2eeee021f0c0340c11c0e424dd1"},
    {LM_GGML_TYPE_Q5_1, 0xa23661b746b9b85eull, 0xedef5ea127b65c59ull,
     "203407c6feffffff10fc2b55447b86727cd7299274dad349"},
    {LM_GGML_TYPE_Q8_0, 0x8839bbba2cd64424ull, 0x0000000000000000ull,
     "132a811b13f2ee13f8e417fd0ae0ef0ce809de29e1f3f0000501fd1de106fd1c1eec"},
    {LM_GGML_TYPE_Q8_1, 0x3b50455901dd9ef9ull, 0x0000000000000000ull,
     "132abcc7811b13f2ee13f8e417fd0ae0ef0ce809de29e1f3f0000501fd1de106fd1c1eec"},
    {LM_GGML_TYPE_Q2_K, 0x5e1e2c6dedea5644ull, 0x9bc8521182984058ull,
     "8924792578342435243536ff00002345fc7b6beb7ab3bb7eabff0bfe7ebbfaff30fb84e9a18a82a2d9a7a462a167736941c0c686cb86c487c"
     "2cac6ce4545cd00cccecd8dcccccd4dcf428d0e8f8ecdcde233303a"},
    {LM_GGML_TYPE_Q3_K, 0x603de0e7d681403full, 0x64d41341f50b69abull,
     "26afbbb59c35a5beb1b7b9962e2f9627a5bea9afad8ba82dbb18a93431b2a4a30481714c4fd1cc8bbd50cc078310034417b40fc506040300a"
     "c3d2f8be4f191fecf8dc945cac9800b4cc246828747c40d40414303000d428202800201c3018342bf95610b010bc47994966945ccad"},
    {LM_GGML_TYPE_Q4_K, 0xa359571b0b8186a4ull, 0xf5f2ed5a74ab75aaull,
     "2423e33166e5205620dc1d4de4ff0015c0aead7a7a0d8af98dbb7cd8baac99cc88bf98ba7abb6c6bdb9e988c8bae7ed9cc5c79cb7d9e9d5ca"
     "8be30dd5d8edcbc0dcf78fc9c77989cca7b7a4c6a6b4c6bb8b4cbdbedcad2cebadcdcfcd8d7f9b4e0cbe7f7c1b3e5d6cd09c6cbcfdcc7e590"
     "e0e0b0e090d0b0c0f0c0d08070f060c0e0d0a0c0c0d060b040b00090a0f0c0"},
    {LM_GGML_TYPE_Q5_K, 0x4f6e47220aee7d12ull, 0x3c3939edad30cdffull,
     "3b1fe03164e41f5421dd1e4de4ff0015bea7b7bfb5bdafb7bfbfb1bfb72fbf2fa7bfa7afada7ad2dbf17a737b7b7a5a7905d5b05f50b16f31"
     "c77fab2755a3399018f3275f568d9d8a74d3219076deda4aab9e4a7fb3c3bc9618e60ccbb2dca990baff1f829f03039b5f8f699e5c88ad760"
     "577596ca84a48c53a798f8909ee168c086bede8265bb9b8a028b868f978fba20b0c060b030905080e070a000e0d0b080c0a0407080a0c0608"
     "050002040e090"},
    {LM_GGML_TYPE_Q6_K, 0xf592508309af14a7ull, 0x2d4237a469d14daeull,
     "1007a5dd2c452e09666f13482c431a027a2048eafc103c1032b948fb32ca499f6600707867a0a9f03ab3e61903e10ea71d1ac7b939d531432"
     "5cbda11ae8205850a07070801040007010c0d0d0b050d080106090a050b04040e00040705080a02583f7449628fd21fafe17610f878c70852"
     "be71e33d4b822f2ed10e0ebeffdd5228ea9a15a56265ad5629c629e96a252a23f847da924a81a2de5457555258605e4dccce8ac74a888b8ec"
     "a8ac20909c10c88868949848489458602850647468589c015c8e9c4e911e6ebe317800000f1defd99"},
    {LM_GGML_TYPE_Q8_K, 0x87f96553584f8738ull, 0x0000000000000000ull,
     "180cbb3dbe0e0af9f70afcf10cfe05eff706f405ee15f0f9f8000300fe0ff003ff0f0ff60a0000f1f0c7f41df505ee100601fc0df207f907e"
     "f04e9ea0ffcfcf5f302ec0f0201f4fa050804ffec0cc407040801ff050debfeffe9eb01f7fcf7fff7fd03fb0ef7fc0dfd0303f8070bf011f7"
     "01120ce60efd1702fd03030ffdfef4fbf9f3f9fcef04050b03ea0f01080909fdf9fef0e306f9fae7ecf4f50d00f5061307fbf3efe9f1fa0af"
     "5fff5e900fc17fafa13ee09f8040ef4eb07fcf881f7f6f6fcf507000000000000000000000000000000000000000000000000000000000000"
     "0000fb090b020afc0601050f0408f8f40ef0050c08fe040409f102ec00ddfbff0e06b1fffaffcbffabffd0ffaaff3200ebfffaffa8ffa7ff4"
     "9ff000000002800f2ff"},
};

constexpr int64_t kRows = 4, kPerRow = 512;

class QuantGolden : public ::testing::TestWithParam<Golden> {};

TEST_P(QuantGolden, ReferencePathMatchesGgml) {
    const Golden & g = GetParam();
    const std::vector<float> x = qtest::make_input(kRows * kPerRow, 42);
    const size_t row = lm_ggml_row_size(g.type, kPerRow);
    std::vector<uint8_t> out(row * kRows, 0x5A);
    ASSERT_EQ(lm_ggml_quantize_chunk(g.type, x.data(), out.data(), 0, kRows, kPerRow, nullptr), row * kRows);
    EXPECT_EQ(qtest::hex(out.data(), lm_ggml_type_size(g.type)), g.first_block_hex);
    EXPECT_EQ(qtest::fnv1a64(out.data(), out.size()), g.ref_digest);

    // the traits' reference quantizer is the same function
    std::vector<uint8_t> out2(out.size(), 0);
    const lm_ggml_type_traits * tr = lm_ggml_get_type_traits(g.type);
    ASSERT_NE(tr, nullptr);
    ASSERT_NE(tr->from_float_ref, nullptr);
    tr->from_float_ref(x.data(), out2.data(), kRows * kPerRow);
    EXPECT_EQ(out2, out);
}

TEST_P(QuantGolden, ImportanceMatrixPathMatchesGgml) {
    const Golden & g = GetParam();
    const std::vector<float> x = qtest::make_input(kRows * kPerRow, 42);
    const std::vector<float> w = qtest::make_weights(kPerRow, 7);
    const size_t row = lm_ggml_row_size(g.type, kPerRow);
    std::vector<uint8_t> with(row * kRows, 0x5A), without(row * kRows, 0x5A);
    ASSERT_EQ(lm_ggml_quantize_chunk(g.type, x.data(), with.data(), 0, kRows, kPerRow, w.data()), row * kRows);
    ASSERT_EQ(lm_ggml_quantize_chunk(g.type, x.data(), without.data(), 0, kRows, kPerRow, nullptr), row * kRows);
    if (g.imatrix_digest == 0) {
        EXPECT_EQ(with, without) << "formats without an imatrix variant ignore the weights";
    } else {
        EXPECT_EQ(qtest::fnv1a64(with.data(), with.size()), g.imatrix_digest);
        EXPECT_NE(with, without);
    }
}

std::string name(const ::testing::TestParamInfo<Golden> & info) { return lm_ggml_type_name(info.param.type); }

INSTANTIATE_TEST_SUITE_P(AllBlockTypes, QuantGolden, ::testing::ValuesIn(kGolden), name);

} // namespace
