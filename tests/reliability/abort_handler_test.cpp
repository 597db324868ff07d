// Programmer errors in graph building (shape mismatches) are documented to
// assert, and every assert goes through lm_ggml_abort and the replaceable
// abort handler (lm_ggml_set_abort_handler). Death tests prove both: the
// handler sees the message with file and line, a handler that returns does
// not resume the failed operation (the process still aborts), and without a
// handler the message reaches stderr.
#include "ggml.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>

namespace {

void marking_handler(const char * message) {
    std::fprintf(stderr, "REL-HANDLER-A: %s\n", message);
    std::fflush(stderr);
}

// Exits with 44: the process ends that way only if this handler, not the
// earlier one (which returns, so abort follows), was called.
void other_handler(const char * message) {
    std::fprintf(stderr, "REL-HANDLER-B: %s\n", message);
    std::fflush(stderr);
    std::_Exit(44);
}

// Ends the process itself with a distinctive code: an app may unwind its own way.
void exiting_handler(const char * message) {
    std::fprintf(stderr, "REL-HANDLER-EXIT: %s\n", message);
    std::fflush(stderr);
    std::_Exit(42);
}

lm_ggml_context * meta_ctx() {
    lm_ggml_init_params ip = {32 * lm_ggml_tensor_overhead(), nullptr, true};
    return lm_ggml_init(ip);
}

class AbortHandlerDeathTest : public ::testing::Test {
protected:
    void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
    void TearDown() override { lm_ggml_set_abort_handler(nullptr); }
};

TEST_F(AbortHandlerDeathTest, ShapeMismatchGoesThroughTheHandler) {
    EXPECT_EXIT(
        {
            lm_ggml_set_abort_handler(marking_handler);
            lm_ggml_context * ctx = meta_ctx();
            lm_ggml_tensor * a = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 4);
            lm_ggml_tensor * b = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 5);
            lm_ggml_add(ctx, a, b); // b cannot be broadcast to a
        },
        ::testing::KilledBySignal(SIGABRT), "REL-HANDLER-A: .*[.]cpp:[0-9]+: .*LM_GGML_ASSERT");
}

TEST_F(AbortHandlerDeathTest, MulMatMismatchGoesThroughTheHandler) {
    EXPECT_EXIT(
        {
            lm_ggml_set_abort_handler(marking_handler);
            lm_ggml_context * ctx = meta_ctx();
            lm_ggml_tensor * w = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 8, 4);
            lm_ggml_tensor * x = lm_ggml_new_tensor_2d(ctx, LM_GGML_TYPE_F32, 7, 3); // row length 7 != 8
            lm_ggml_mul_mat(ctx, w, x);
        },
        ::testing::KilledBySignal(SIGABRT), "REL-HANDLER-A: .*LM_GGML_ASSERT");
}

TEST_F(AbortHandlerDeathTest, ReplacedHandlerIsTheOneCalled) {
    EXPECT_EXIT(
        {
            lm_ggml_set_abort_handler(marking_handler);
            lm_ggml_set_abort_handler(other_handler);
            lm_ggml_context * ctx = meta_ctx();
            lm_ggml_tensor * a = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 4);
            lm_ggml_reshape_2d(ctx, a, 3, 3); // 9 elements from 4
        },
        ::testing::ExitedWithCode(44), "REL-HANDLER-B: .*LM_GGML_ASSERT");
}

TEST_F(AbortHandlerDeathTest, HandlerMayEndTheProcessItsOwnWay) {
    EXPECT_EXIT(
        {
            lm_ggml_set_abort_handler(exiting_handler);
            LM_GGML_ABORT("test abort %d", 7);
        },
        ::testing::ExitedWithCode(42), "REL-HANDLER-EXIT: .*abort_handler_test[.]cpp:[0-9]+: test abort 7");
}

TEST_F(AbortHandlerDeathTest, WithoutAHandlerTheMessageReachesStderr) {
    EXPECT_EXIT(
        {
            lm_ggml_set_abort_handler(nullptr);
            lm_ggml_context * ctx = meta_ctx();
            lm_ggml_tensor * a = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 4);
            lm_ggml_tensor * b = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 5);
            lm_ggml_mul(ctx, a, b);
        },
        ::testing::KilledBySignal(SIGABRT), "[.]cpp:[0-9]+: LM_GGML_ASSERT");
}

} // namespace
