// Cross-check with the `gguf` Python package (the numpy quantizers that write
// the GGUF files in circulation): the same floats quantized by lmggml and by
// gguf.quants must give identical bytes, and gguf.quants' dequantization of
// lmggml's bytes must give identical floats. gguf_oracle.py does the Python
// side in a venv under the build tree; the test skips only when pip cannot
// install gguf and numpy.
#include "ggml.h"
#include "quant_test_util.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;

namespace {

constexpr int64_t kRows = 10, kPerRow = 512;

// Rows of different character: typical weights, outliers, tiny values (fp16
// subnormal scales), large values, all-zero, constant, exact rounding ties.
std::vector<float> make_rows() {
    std::vector<float> x;
    auto add = [&](std::vector<float> row) { x.insert(x.end(), row.begin(), row.end()); };
    add(qtest::make_input(kPerRow, 1, false));
    add(qtest::make_input(kPerRow, 2, true));
    std::vector<float> r = qtest::make_input(kPerRow, 3, false);
    for (float & v : r) v *= 1.0f / 65536;
    add(r);
    r = qtest::make_input(kPerRow, 4, true);
    for (float & v : r) v *= 4096.0f;
    add(r);
    add(std::vector<float>(kPerRow, 0.0f));
    add(std::vector<float>(kPerRow, -0.375f));
    r.assign(kPerRow, 0.0f); // x.5 steps of the q8_0 grid (amax 127) and other ties
    for (int64_t i = 0; i < kPerRow; ++i) r[i] = (i % 32 == 0) ? 127.0f : (float) ((int) (i % 64) - 32) + 0.5f;
    add(r);
    add(qtest::make_input(kPerRow, 5, false));
    r = qtest::make_input(kPerRow, 6, false);
    for (int64_t i = 0; i < kPerRow; ++i) r[i] = r[i] > 0 ? r[i] : r[i] * 0.25f; // skewed
    add(r);
    r = qtest::make_input(kPerRow, 7, false);
    for (float & v : r) v += 2.0f; // all positive: min/max formats
    add(r);
    return x;
}

void write_file(const fs::path & p, const void * data, size_t n) {
    std::ofstream f(p, std::ios::binary);
    f.write(static_cast<const char *>(data), (std::streamsize) n);
}

std::vector<uint8_t> read_file(const fs::path & p) {
    std::ifstream f(p, std::ios::binary);
    return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

std::string read_text(const fs::path & p) {
    std::ifstream f(p);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

const lm_ggml_type kTypes[] = {LM_GGML_TYPE_F16,  LM_GGML_TYPE_BF16, LM_GGML_TYPE_Q4_0, LM_GGML_TYPE_Q4_1,
                               LM_GGML_TYPE_Q5_0, LM_GGML_TYPE_Q5_1, LM_GGML_TYPE_Q8_0, LM_GGML_TYPE_Q2_K,
                               LM_GGML_TYPE_Q3_K, LM_GGML_TYPE_Q4_K, LM_GGML_TYPE_Q5_K, LM_GGML_TYPE_Q6_K};

// first block where a and b differ, for the failure message
size_t first_diff_block(const std::vector<uint8_t> & a, const std::vector<uint8_t> & b, size_t block_bytes) {
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
        if (a[i] != b[i]) return i / block_bytes;
    }
    return (size_t) -1;
}

TEST(QuantGgufPython, BytesAndValuesMatchGgufQuants) {
    if (std::system("python3 -c 'import venv' >/dev/null 2>&1") != 0) {
        GTEST_SKIP() << "python3 with the venv module is not installed, so pip cannot be reached";
    }
    const fs::path work = fs::path(LMGGML_QUANT_PY_WORK) / std::to_string(getpid());
    fs::remove_all(work);
    fs::create_directories(work);

    const std::vector<float> x = make_rows();
    write_file(work / "input.f32", x.data(), x.size() * sizeof(float));
    {
        std::ofstream meta(work / "meta.txt");
        meta << kRows << " " << kPerRow << "\n";
    }
    std::map<std::string, std::vector<uint8_t>> ours;
    for (lm_ggml_type t : kTypes) {
        std::vector<uint8_t> q(lm_ggml_row_size(t, kPerRow) * kRows);
        ASSERT_EQ(lm_ggml_quantize_chunk(t, x.data(), q.data(), 0, kRows, kPerRow, nullptr), q.size());
        write_file(work / ("ours." + std::string(lm_ggml_type_name(t)) + ".bin"), q.data(), q.size());
        ours[lm_ggml_type_name(t)] = std::move(q);
    }

    const fs::path log = work / "oracle.log";
    const std::string cmd = std::string("python3 '") + LMGGML_QUANT_PY_SCRIPT + "' --venv '" + LMGGML_QUANT_PY_VENV +
                            "' --work '" + work.string() + "' > '" + log.string() + "' 2>&1";
    const int status = std::system(cmd.c_str());
    const int rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (rc == 3) {
        GTEST_SKIP() << "pip could not install gguf/numpy: " << read_text(log);
    }
    ASSERT_EQ(rc, 0) << "gguf_oracle.py failed:\n" << read_text(log);
    std::printf("%s", read_text(log).c_str());

    // which types the installed gguf package can quantize / dequantize
    std::map<std::string, std::pair<bool, bool>> can;
    {
        std::istringstream rep(read_text(work / "report.txt"));
        std::string name, w1, q, w2, d;
        while (rep >> name >> w1 >> q >> w2 >> d) can[name] = {q == "yes", d == "yes"};
    }
    int n_quant = 0, n_dequant = 0;
    for (lm_ggml_type t : kTypes) {
        const std::string name = lm_ggml_type_name(t);
        ASSERT_TRUE(can.count(name)) << name << " missing from the gguf package's types";
        const std::vector<uint8_t> & mine = ours[name];
        if (can[name].first) {
            const std::vector<uint8_t> theirs = read_file(work / ("np." + name + ".bin"));
            ASSERT_EQ(theirs.size(), mine.size()) << name;
            EXPECT_TRUE(theirs == mine) << name << ": bytes differ from gguf.quants first in block "
                                        << first_diff_block(theirs, mine, lm_ggml_type_size(t));
            ++n_quant;
        }
        if (can[name].second) {
            const std::vector<uint8_t> theirs = read_file(work / ("npdeq." + name + ".f32"));
            std::vector<float> deq((size_t) (kRows * kPerRow));
            lm_ggml_get_type_traits(t)->to_float(mine.data(), deq.data(), kRows * kPerRow);
            ASSERT_EQ(theirs.size(), deq.size() * sizeof(float)) << name;
            EXPECT_EQ(std::memcmp(theirs.data(), deq.data(), theirs.size()), 0)
                << name << ": dequantized values differ from gguf.quants";
            ++n_dequant;
        }
    }
    // what gguf has quantized since 0.10 (K-quants: dequantize only); guards against a
    // test that compares nothing
    for (const char * name : {"bf16", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0"}) EXPECT_TRUE(can[name].first) << name;
    for (const char * name : {"q2_K", "q3_K", "q4_K", "q5_K", "q6_K"}) EXPECT_TRUE(can[name].second) << name;
    std::printf("compared %d quantizations and %d dequantizations with gguf.quants\n", n_quant, n_dequant);
    fs::remove_all(work);
}

} // namespace
