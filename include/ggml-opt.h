// Training on top of the backend scheduler (ggml 1.4.1's ggml-opt API):
// datasets, an optimization context (forward graph, backward graph, AdamW
// step), per-epoch results, and the lm_ggml_opt_fit loop. See docs/TRAINING.md.
//
// Tensors of the model: parameters (lm_ggml_set_param) and the input tensor
// live in a context the caller allocates; every other tensor of the forward
// graph (inputs -> outputs) lives in ctx_compute, a no_alloc context that the
// scheduler (re)allocates on each evaluation. The second dimension of inputs
// and outputs counts datapoints.

#pragma once

#include "ggml.h"
#include "ggml-backend.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

    struct lm_ggml_opt_dataset;
    struct lm_ggml_opt_context;
    struct lm_ggml_opt_result;

    typedef struct lm_ggml_opt_dataset * lm_ggml_opt_dataset_t;
    typedef struct lm_ggml_opt_context * lm_ggml_opt_context_t;
    typedef struct lm_ggml_opt_result  * lm_ggml_opt_result_t;

    // ====== Loss ======

    // the scalar minimized: MEAN / SUM reduce the outputs themselves (a custom
    // loss computed in the graph), the other two compare outputs with labels
    enum lm_ggml_opt_loss_type {
        LM_GGML_OPT_LOSS_TYPE_MEAN,
        LM_GGML_OPT_LOSS_TYPE_SUM,
        LM_GGML_OPT_LOSS_TYPE_CROSS_ENTROPY,
        LM_GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR,
    };

    // ====== Dataset ======

    // ndata datapoints of ne_datapoint floats (and labels of ne_label floats,
    // none when 0) in host memory; shuffled and copied in shards of
    // ndata_shard datapoints. NULL (logged) on bad sizes.
    LM_GGML_API lm_ggml_opt_dataset_t lm_ggml_opt_dataset_init(
            int64_t ne_datapoint,
            int64_t ne_label,
            int64_t ndata,
            int64_t ndata_shard);
    LM_GGML_API void lm_ggml_opt_dataset_free(lm_ggml_opt_dataset_t dataset);

    // the tensors holding the data, F32 [ne_datapoint, ndata] and [ne_label, ndata] (NULL without labels)
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_opt_dataset_data  (lm_ggml_opt_dataset_t dataset);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_opt_dataset_labels(lm_ggml_opt_dataset_t dataset);

    // shuffles the shards of the first idata datapoints (all when idata < 0)
    // with opt_ctx's random generator; idata must be a multiple of ndata_shard
    LM_GGML_API void lm_ggml_opt_dataset_shuffle(lm_ggml_opt_context_t opt_ctx, lm_ggml_opt_dataset_t dataset, int64_t idata);

    // copies batch ibatch (in shuffled order) into data_batch [ne_datapoint, n]
    // and labels_batch [ne_label, n] (NULL exactly when the dataset has no labels)
    LM_GGML_API void lm_ggml_opt_dataset_get_batch(
            lm_ggml_opt_dataset_t   dataset,
            struct lm_ggml_tensor * data_batch,
            struct lm_ggml_tensor * labels_batch,
            int64_t              ibatch);

    // ====== Model / Context ======

    enum lm_ggml_opt_build_type {
        LM_GGML_OPT_BUILD_TYPE_FORWARD, // forward graph only
        LM_GGML_OPT_BUILD_TYPE_GRAD,    // plus gradients (accumulated)
        LM_GGML_OPT_BUILD_TYPE_OPT,     // plus an AdamW step for every parameter
    };

    struct lm_ggml_opt_optimizer_params {
        struct {
            float alpha; // learning rate
            float beta1;
            float beta2;
            float eps;
            float wd;    // decoupled weight decay, 0 disables it
        } adamw;
    };

    // called before each optimizer step to get that step's parameters
    typedef struct lm_ggml_opt_optimizer_params (*lm_ggml_opt_get_optimizer_params)(void * userdata);

    // alpha 1e-3, beta1 0.9, beta2 0.999, eps 1e-8, wd 0 (userdata unused)
    LM_GGML_API struct lm_ggml_opt_optimizer_params lm_ggml_opt_get_default_optimizer_params(void * userdata);

    struct lm_ggml_opt_params {
        lm_ggml_backend_sched_t backend_sched; // the backends that run the graphs

        struct lm_ggml_context * ctx_compute; // no_alloc context of the non-static tensors

        struct lm_ggml_tensor * inputs;  // statically allocated, [ne_datapoint, ndata_batch]
        struct lm_ggml_tensor * outputs; // [ne_label, ndata_batch] when labels are used

        enum lm_ggml_opt_loss_type  loss_type;
        enum lm_ggml_opt_build_type build_type;

        int32_t opt_period; // gradient accumulation steps per optimizer step

        lm_ggml_opt_get_optimizer_params get_opt_pars;
        void * get_opt_pars_ud;
    };

    // build_type OPT, opt_period 1, default optimizer parameters
    LM_GGML_API struct lm_ggml_opt_params lm_ggml_opt_default_params(
            lm_ggml_backend_sched_t      backend_sched,
            struct lm_ggml_context     * ctx_compute,
            struct lm_ggml_tensor      * inputs,
            struct lm_ggml_tensor      * outputs,
            enum lm_ggml_opt_loss_type   loss_type);

    // NULL (logged) on bad parameters or when memory runs out
    LM_GGML_API lm_ggml_opt_context_t lm_ggml_opt_init(struct lm_ggml_opt_params params);
    LM_GGML_API void lm_ggml_opt_free(lm_ggml_opt_context_t opt_ctx);

    // zeroes the gradients and seeds the loss gradient; with optimizer also
    // zeroes the AdamW moments and restarts the step count
    LM_GGML_API void lm_ggml_opt_reset(lm_ggml_opt_context_t opt_ctx, bool optimizer);

    LM_GGML_API struct lm_ggml_tensor * lm_ggml_opt_inputs(  lm_ggml_opt_context_t opt_ctx);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_opt_outputs( lm_ggml_opt_context_t opt_ctx);
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_opt_labels(  lm_ggml_opt_context_t opt_ctx); // NULL for MEAN / SUM
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_opt_loss(    lm_ggml_opt_context_t opt_ctx); // F32 scalar
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_opt_pred(    lm_ggml_opt_context_t opt_ctx); // I32 argmax per datapoint
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_opt_ncorrect(lm_ggml_opt_context_t opt_ctx); // I64 scalar, NULL without labels

    // the gradient accumulator of a parameter (NULL when gradients are not accumulated)
    LM_GGML_API struct lm_ggml_tensor * lm_ggml_opt_grad_acc(lm_ggml_opt_context_t opt_ctx, struct lm_ggml_tensor * node);

    // ====== Optimization Result ======

    LM_GGML_API lm_ggml_opt_result_t lm_ggml_opt_result_init(void);
    LM_GGML_API void lm_ggml_opt_result_free(lm_ggml_opt_result_t result);
    LM_GGML_API void lm_ggml_opt_result_reset(lm_ggml_opt_result_t result);

    // uncertainties (unc) may be NULL
    LM_GGML_API void lm_ggml_opt_result_ndata(   lm_ggml_opt_result_t result, int64_t * ndata);
    LM_GGML_API void lm_ggml_opt_result_loss(    lm_ggml_opt_result_t result, double  * loss,     double * unc);
    LM_GGML_API void lm_ggml_opt_result_pred(    lm_ggml_opt_result_t result, int32_t * pred); // ndata values
    LM_GGML_API void lm_ggml_opt_result_accuracy(lm_ggml_opt_result_t result, double  * accuracy, double * unc);

    // ====== Computation ======

    // forward pass; adds loss, predictions and matches to result unless NULL
    LM_GGML_API void lm_ggml_opt_forward(lm_ggml_opt_context_t opt_ctx, lm_ggml_opt_result_t result);

    // forward and backward pass (and every opt_period-th call an optimizer step)
    LM_GGML_API void lm_ggml_opt_forward_backward(lm_ggml_opt_context_t opt_ctx, lm_ggml_opt_result_t result);

    // ====== High level ======

    // called after each batch of an epoch
    typedef void (*lm_ggml_opt_epoch_callback)(
            bool               train,       // training (true) or evaluation batches
            lm_ggml_opt_context_t opt_ctx,
            lm_ggml_opt_dataset_t dataset,
            lm_ggml_opt_result_t  result,      // result of this part of the dataset
            int64_t            ibatch,      // batches done so far
            int64_t            ibatch_max,  // batches in this part
            int64_t            t_start_us); // when this part started

    // trains on datapoints [0, idata_split) and evaluates on the rest (idata_split < 0: trains on all)
    LM_GGML_API void lm_ggml_opt_epoch(
            lm_ggml_opt_context_t      opt_ctx,
            lm_ggml_opt_dataset_t      dataset,
            lm_ggml_opt_result_t       result_train,
            lm_ggml_opt_result_t       result_eval,
            int64_t                 idata_split,
            lm_ggml_opt_epoch_callback callback_train,
            lm_ggml_opt_epoch_callback callback_eval);

    // a progress bar with loss and accuracy on stderr
    LM_GGML_API void lm_ggml_opt_epoch_callback_progress_bar(
            bool               train,
            lm_ggml_opt_context_t opt_ctx,
            lm_ggml_opt_dataset_t dataset,
            lm_ggml_opt_result_t  result,
            int64_t            ibatch,
            int64_t            ibatch_max,
            int64_t            t_start_us);

    // nepoch epochs of training on the first (1 - val_split) of the dataset,
    // nbatch_logical datapoints per optimizer step (a multiple of inputs->ne[1]);
    // get_opt_pars gets a pointer to the epoch number (int64_t) as userdata
    LM_GGML_API void lm_ggml_opt_fit(
            lm_ggml_backend_sched_t            backend_sched,
            struct lm_ggml_context           * ctx_compute,
            struct lm_ggml_tensor            * inputs,
            struct lm_ggml_tensor            * outputs,
            lm_ggml_opt_dataset_t              dataset,
            enum lm_ggml_opt_loss_type         loss_type,
            lm_ggml_opt_get_optimizer_params   get_opt_pars,
            int64_t                         nepoch,
            int64_t                         nbatch_logical,
            float                           val_split,
            bool                            silent);

#ifdef __cplusplus
}
#endif
