// Dynamic loading: lm_ggml_backend_load / load_all_from_path / load_all /
// unload, with the real refdev plugin and the tiny test plugins. Every
// refusal returns NULL (or loads nothing) and logs exactly one line.

#include "backend_test_utils.h"
#include "ggml-backend-impl.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace fs = std::filesystem;
using lmtest::BackendLogCapture;

namespace {

std::string plugin(const char * file) { return std::string(LMGGML_PLUGIN_DIR) + "/" + file; }
std::string testplugin(const char * dir, const char * file) {
    return std::string(LMGGML_TESTPLUGIN_DIR) + "/" + dir + "/" + file;
}
std::string testplugin_dir(const char * dir) { return std::string(LMGGML_TESTPLUGIN_DIR) + "/" + dir; }

// A fresh temporary directory, removed with its contents at scope end.
struct TempDir {
    fs::path path;
    TempDir() {
        path = fs::temp_directory_path() / ("lmggml-dl-" + std::to_string(getpid()) + "-" + std::to_string(rand()));
        fs::create_directories(path);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

// Tests of this binary share a process when run directly (not via ctest):
// start the refdev tests from a registry without it.
void unload_refdev_if_loaded() {
    if (lm_ggml_backend_reg_t reg = lm_ggml_backend_reg_by_name("REFDEV")) {
        lm_ggml_backend_unload(reg);
    }
}

} // namespace

TEST(Load, RefdevFromPluginDirectory) {
    // the folder's other plugins (opencl, where it is built) registered
    // first, so that the counts below are refdev's alone
    lm_ggml_backend_load_all_from_path(LMGGML_PLUGIN_DIR);
    unload_refdev_if_loaded();
    const size_t regs0 = lm_ggml_backend_reg_count();
    const size_t devs0 = lm_ggml_backend_dev_count();
    ASSERT_EQ(lm_ggml_backend_reg_by_name("REFDEV"), nullptr);
    lm_ggml_backend_load_all_from_path(LMGGML_PLUGIN_DIR);
    lm_ggml_backend_reg_t reg = lm_ggml_backend_reg_by_name("refdev");
    ASSERT_NE(reg, nullptr);
    EXPECT_EQ(lm_ggml_backend_reg_count(), regs0 + 1);
    EXPECT_EQ(lm_ggml_backend_dev_count(), devs0 + 1);
    lm_ggml_backend_dev_t dev = lm_ggml_backend_dev_by_name("REFDEV0");
    ASSERT_NE(dev, nullptr);
    EXPECT_EQ(lm_ggml_backend_dev_backend_reg(dev), reg);
    EXPECT_EQ(lm_ggml_backend_dev_type(dev), LM_GGML_BACKEND_DEVICE_TYPE_GPU);

    // scanning again, or loading the same file, does not register it twice
    lm_ggml_backend_load_all_from_path(LMGGML_PLUGIN_DIR);
    EXPECT_EQ(lm_ggml_backend_reg_count(), regs0 + 1);
    EXPECT_EQ(lm_ggml_backend_load(plugin("liblmggml-refdev.so").c_str()), reg);
    EXPECT_EQ(lm_ggml_backend_reg_count(), regs0 + 1);
    EXPECT_EQ(lm_ggml_backend_dev_count(), devs0 + 1);
}

TEST(Load, LoadAllUsesTheEnvironmentVariable) {
    unload_refdev_if_loaded();
    setenv("LMGGML_BACKEND_PATH", LMGGML_PLUGIN_DIR, 1);
    lm_ggml_backend_load_all();
    unsetenv("LMGGML_BACKEND_PATH");
    EXPECT_NE(lm_ggml_backend_dev_by_name("REFDEV0"), nullptr);
}

TEST(Load, LoadAllWithoutEnvironmentFindsTheBuildTreesPlugins) {
    // the test binary is <build>/tests/test_dl: <build>/plugins is its build
    // tree's plugin folder, searched after the executable's own folder
    unload_refdev_if_loaded();
    unsetenv("LMGGML_BACKEND_PATH");
    BackendLogCapture log;
    lm_ggml_backend_load_all();
    EXPECT_NE(lm_ggml_backend_dev_by_name("REFDEV0"), nullptr) << log.text();
    EXPECT_EQ(log.errors(), 0u) << log.text();
    EXPECT_NE(log.text().find("plugin search path: "), std::string::npos) << log.text();
    EXPECT_NE(log.text().find("/plugins"), std::string::npos) << log.text();
}

TEST(Load, LoadAllSearchesEveryFolderOfTheEnvironmentVariable) {
    unload_refdev_if_loaded();
    const std::string list = std::string("/nonexistent/a::") + LMGGML_PLUGIN_DIR;
    setenv("LMGGML_BACKEND_PATH", list.c_str(), 1);
    BackendLogCapture log;
    lm_ggml_backend_load_all();
    unsetenv("LMGGML_BACKEND_PATH");
    EXPECT_NE(lm_ggml_backend_dev_by_name("REFDEV0"), nullptr) << log.text();
    EXPECT_EQ(log.errors(), 0u) << log.text(); // a missing folder is skipped quietly
}

TEST(Load, MissingFile) {
    BackendLogCapture log;
    EXPECT_EQ(lm_ggml_backend_load("/nonexistent/liblmggml-nothing.so"), nullptr);
    EXPECT_EQ(log.lines(), 1u) << log.text();
    EXPECT_NE(log.text().find("no such file"), std::string::npos) << log.text();
}

TEST(Load, NotALibrary) {
    TempDir dir;
    const fs::path bogus = dir.path / "liblmggml-bogus.so";
    std::ofstream(bogus) << "this is a text file, not a shared library\n";
    const size_t regs0 = lm_ggml_backend_reg_count();
    {
        BackendLogCapture log;
        EXPECT_EQ(lm_ggml_backend_load(bogus.c_str()), nullptr);
        EXPECT_EQ(log.lines(), 1u) << log.text();
    }
    {
        BackendLogCapture log;
        lm_ggml_backend_load_all_from_path(dir.path.c_str());
        EXPECT_EQ(log.errors(), 1u) << log.text();
        EXPECT_EQ(lm_ggml_backend_reg_count(), regs0);
    }
}

TEST(Load, ScoreZeroIsNotRegistered) {
    const size_t regs0 = lm_ggml_backend_reg_count();
    {
        BackendLogCapture log;
        EXPECT_EQ(lm_ggml_backend_load(testplugin("score0", "liblmggml-zero.so").c_str()), nullptr);
        EXPECT_EQ(log.lines(), 1u) << log.text();
        EXPECT_EQ(log.errors(), 0u) << "score 0 is not an error: " << log.text();
    }
    lm_ggml_backend_load_all_from_path(testplugin_dir("score0").c_str());
    EXPECT_EQ(lm_ggml_backend_reg_by_name("ZERO"), nullptr);
    EXPECT_EQ(lm_ggml_backend_dev_by_name("ZERO0"), nullptr);
    EXPECT_EQ(lm_ggml_backend_reg_count(), regs0);
}

TEST(Load, WrongApiVersionIsRefusedWithoutCallingIt) {
    const std::string path = testplugin("badver", "liblmggml-badver.so");
    // keep our own handle so the library (and its counter) outlives the refusal
    void * h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(h, nullptr) << dlerror();
    auto * calls = static_cast<int *>(dlsym(h, "testplugin_calls"));
    ASSERT_NE(calls, nullptr);
    *calls = 0;
    const size_t regs0 = lm_ggml_backend_reg_count();
    {
        BackendLogCapture log;
        EXPECT_EQ(lm_ggml_backend_load(path.c_str()), nullptr);
        EXPECT_EQ(log.errors(), 1u) << log.text();
        EXPECT_EQ(log.lines(), 1u) << log.text();
        EXPECT_NE(log.text().find("api_version 99"), std::string::npos) << log.text();
    }
    EXPECT_EQ(*calls, 0) << "a function of the refused reg was called";
    lm_ggml_backend_load_all_from_path(testplugin_dir("badver").c_str());
    EXPECT_EQ(*calls, 0);
    EXPECT_EQ(lm_ggml_backend_reg_count(), regs0);
    EXPECT_EQ(lm_ggml_backend_reg_by_name("BADVER"), nullptr); // (CPU's name function, not the plugin's)
    dlclose(h);
}

TEST(Load, MissingInitSymbol) {
    BackendLogCapture log;
    EXPECT_EQ(lm_ggml_backend_load(testplugin("noinit", "liblmggml-noinit.so").c_str()), nullptr);
    EXPECT_EQ(log.errors(), 1u) << log.text();
    EXPECT_NE(log.text().find("lm_ggml_backend_init"), std::string::npos) << log.text();
    EXPECT_EQ(lm_ggml_backend_dev_by_name("NOINIT0"), nullptr);
}

TEST(Load, PluginWithoutScoreFunctionLoads) {
    lm_ggml_backend_load_all_from_path(testplugin_dir("noscore").c_str());
    lm_ggml_backend_reg_t reg = lm_ggml_backend_reg_by_name("PLAIN");
    ASSERT_NE(reg, nullptr);
    EXPECT_NE(lm_ggml_backend_dev_by_name("PLAIN0"), nullptr);
    lm_ggml_backend_unload(reg);
    EXPECT_EQ(lm_ggml_backend_dev_by_name("PLAIN0"), nullptr);
}

TEST(Load, HighestScoringVariantWins) {
    const size_t regs0 = lm_ggml_backend_reg_count();
    const size_t devs0 = lm_ggml_backend_dev_count();
    lm_ggml_backend_load_all_from_path(testplugin_dir("variants").c_str());
    EXPECT_EQ(lm_ggml_backend_reg_count(), regs0 + 1);
    EXPECT_EQ(lm_ggml_backend_dev_count(), devs0 + 1);
    EXPECT_NE(lm_ggml_backend_dev_by_name("VARIANT_HI"), nullptr);  // score 7
    EXPECT_EQ(lm_ggml_backend_dev_by_name("VARIANT_LO"), nullptr);  // score 3
    EXPECT_EQ(lm_ggml_backend_dev_by_name("VARIANT_OFF"), nullptr); // score 0
    // once one variant is registered a rescan loads no other
    lm_ggml_backend_load_all_from_path(testplugin_dir("variants").c_str());
    EXPECT_EQ(lm_ggml_backend_reg_count(), regs0 + 1);
}

TEST(Load, ExplicitLoadOfAVariantStillWorks) {
    lm_ggml_backend_reg_t reg = lm_ggml_backend_load(testplugin("variants", "liblmggml-variant-lo.so").c_str());
    ASSERT_NE(reg, nullptr);
    EXPECT_NE(lm_ggml_backend_dev_by_name("VARIANT_LO"), nullptr);
}

TEST(Load, NotADirectory) {
    BackendLogCapture log;
    lm_ggml_backend_load_all_from_path("/nonexistent/dir");
    EXPECT_EQ(log.errors(), 1u) << log.text();
}

TEST(Unload, RemovesTheRegAndItsDevicesAndAllowsReloading) {
    unload_refdev_if_loaded();
    const size_t regs0 = lm_ggml_backend_reg_count();
    const size_t devs0 = lm_ggml_backend_dev_count();
    lm_ggml_backend_reg_t reg = lm_ggml_backend_load(plugin("liblmggml-refdev.so").c_str());
    ASSERT_NE(reg, nullptr);
    EXPECT_EQ(lm_ggml_backend_dev_count(), devs0 + 1);

    lm_ggml_backend_unload(reg);
    EXPECT_EQ(lm_ggml_backend_reg_count(), regs0);
    EXPECT_EQ(lm_ggml_backend_dev_count(), devs0);
    EXPECT_EQ(lm_ggml_backend_reg_by_name("REFDEV"), nullptr);
    EXPECT_EQ(lm_ggml_backend_dev_by_name("REFDEV0"), nullptr);
    for (size_t i = 0; i < lm_ggml_backend_dev_count(); i++) {
        EXPECT_NE(lm_ggml_backend_dev_backend_reg(lm_ggml_backend_dev_get(i)), reg);
    }
    {
        BackendLogCapture log;
        lm_ggml_backend_unload(reg); // gone already
        EXPECT_EQ(log.errors(), 1u) << log.text();
    }
    reg = lm_ggml_backend_load(plugin("liblmggml-refdev.so").c_str());
    ASSERT_NE(reg, nullptr);
    EXPECT_NE(lm_ggml_backend_dev_by_name("REFDEV0"), nullptr);
}
