// The ggml-opt functions the other training tests do not call: the inputs /
// outputs accessors and the progress-bar epoch callback (its text on stderr).

#include <string>

#include "opt_util.h"

using namespace opttest;

namespace {

TEST(OptAccessors, InputsAndOutputsAreTheGraphsTensors) {
    Backends be(false);
    Net net;
    build_mlp(net, 2, 4, 3, 16);
    net.allocate(5);
    lm_ggml_opt_params p = lm_ggml_opt_default_params(be.sched, net.ctx_compute, net.inputs, net.outputs,
                                                      LM_GGML_OPT_LOSS_TYPE_CROSS_ENTROPY);
    lm_ggml_opt_context_t opt = lm_ggml_opt_init(p);
    ASSERT_NE(opt, nullptr);
    EXPECT_EQ(lm_ggml_opt_inputs(opt), net.inputs);
    EXPECT_EQ(lm_ggml_opt_outputs(opt), net.outputs);
    lm_ggml_opt_free(opt);
}

TEST(OptAccessors, ProgressBarReportsEveryBatch) {
    Backends be(false);
    Net net;
    build_mlp(net, 2, 4, 3, 16);
    net.allocate(6);
    lm_ggml_opt_dataset_t d = blobs(2, 3, 64, 7);
    lm_ggml_opt_params p = lm_ggml_opt_default_params(be.sched, net.ctx_compute, net.inputs, net.outputs,
                                                      LM_GGML_OPT_LOSS_TYPE_CROSS_ENTROPY);
    lm_ggml_opt_context_t opt = lm_ggml_opt_init(p);
    ASSERT_NE(opt, nullptr);
    lm_ggml_opt_result_t rt = lm_ggml_opt_result_init(), rv = lm_ggml_opt_result_init();
    ::testing::internal::CaptureStderr();
    // 48 points to train on (3 batches of 16), 16 to validate on (1 batch)
    lm_ggml_opt_epoch(opt, d, rt, rv, 48, lm_ggml_opt_epoch_callback_progress_bar,
                      lm_ggml_opt_epoch_callback_progress_bar);
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("train: ["), std::string::npos) << err;
    EXPECT_NE(err.find("val:   ["), std::string::npos) << err;
    for (const char * step : {"data=000016/000048", "data=000032/000048", "data=000048/000048", "data=000016/000016"}) {
        EXPECT_NE(err.find(step), std::string::npos) << step << " in " << err;
    }
    EXPECT_NE(err.find("[=========================|"), std::string::npos) << "a full bar at the end: " << err;
    int64_t nd = 0;
    lm_ggml_opt_result_ndata(rt, &nd);
    EXPECT_EQ(nd, 48);
    lm_ggml_opt_result_free(rt);
    lm_ggml_opt_result_free(rv);
    lm_ggml_opt_free(opt);
    lm_ggml_opt_dataset_free(d);
}

} // namespace
