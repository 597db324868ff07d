// ggml-opt datasets: data and labels in host memory, handed out in batches
// of whole shards in a (shuffled) shard order.

#include "opt-internal.h"

#include "ggml-alloc.h"
#include "ggml-cpu.h"

#include <algorithm>
#include <new>

extern "C" lm_ggml_opt_dataset_t lm_ggml_opt_dataset_init(int64_t ne_datapoint, int64_t ne_label, int64_t ndata,
                                                          int64_t ndata_shard) {
    static const char * fn = "lm_ggml_opt_dataset_init";
    if (ne_datapoint <= 0 || ne_label < 0 || ndata <= 0 || ndata_shard <= 0) {
        LM_GGML_LOG_ERROR("%s: invalid sizes (ne_datapoint %lld, ne_label %lld, ndata %lld, ndata_shard %lld)\n", fn,
                          (long long) ne_datapoint, (long long) ne_label, (long long) ndata, (long long) ndata_shard);
        return nullptr;
    }
    auto * d = new (std::nothrow) lm_ggml_opt_dataset;
    if (!d) {
        LM_GGML_LOG_ERROR("%s: out of memory\n", fn);
        return nullptr;
    }
    d->ndata = ndata;
    d->ndata_shard = ndata_shard;
    lm_ggml_init_params ip = {2 * lm_ggml_tensor_overhead(), nullptr, true};
    d->ctx = lm_ggml_init(ip);
    if (d->ctx) {
        d->data = lm_ggml_new_tensor_2d(d->ctx, LM_GGML_TYPE_F32, ne_datapoint, ndata);
        if (ne_label > 0) d->labels = lm_ggml_new_tensor_2d(d->ctx, LM_GGML_TYPE_F32, ne_label, ndata);
    }
    if (d->data && (ne_label == 0 || d->labels)) {
        d->buf = lm_ggml_backend_alloc_ctx_tensors_from_buft(d->ctx, lm_ggml_backend_cpu_buffer_type());
    }
    if (!d->buf) {
        LM_GGML_LOG_ERROR("%s: out of memory for %lld datapoints\n", fn, (long long) ndata);
        lm_ggml_opt_dataset_free(d);
        return nullptr;
    }
    // a trailing partial shard is never handed out (as ggml)
    d->nbs_data = lm_ggml_nbytes(d->data) * ndata_shard / ndata;
    d->nbs_labels = d->labels ? lm_ggml_nbytes(d->labels) * ndata_shard / ndata : 0;
    d->permutation.resize(ndata / ndata_shard);
    for (size_t i = 0; i < d->permutation.size(); i++) d->permutation[i] = (int64_t) i;
    return d;
}

extern "C" void lm_ggml_opt_dataset_free(lm_ggml_opt_dataset_t dataset) {
    if (!dataset) return;
    lm_ggml_backend_buffer_free(dataset->buf);
    lm_ggml_free(dataset->ctx);
    delete dataset;
}

extern "C" struct lm_ggml_tensor * lm_ggml_opt_dataset_data(lm_ggml_opt_dataset_t dataset) {
    if (!dataset) {
        lm_ggml_null_arg("lm_ggml_opt_dataset_data");
        return nullptr;
    }
    return dataset->data;
}

extern "C" struct lm_ggml_tensor * lm_ggml_opt_dataset_labels(lm_ggml_opt_dataset_t dataset) {
    if (!dataset) {
        lm_ggml_null_arg("lm_ggml_opt_dataset_labels");
        return nullptr;
    }
    return dataset->labels;
}

extern "C" void lm_ggml_opt_dataset_shuffle(lm_ggml_opt_context_t opt_ctx, lm_ggml_opt_dataset_t dataset,
                                            int64_t idata) {
    static const char * fn = "lm_ggml_opt_dataset_shuffle";
    if (!opt_ctx || !dataset) {
        lm_ggml_null_arg(fn);
        return;
    }
    if (idata > dataset->ndata) {
        LM_GGML_LOG_ERROR("%s: idata %lld is beyond the dataset's %lld datapoints\n", fn, (long long) idata,
                          (long long) dataset->ndata);
        return;
    }
    if (idata < 0) {
        std::shuffle(dataset->permutation.begin(), dataset->permutation.end(), opt_ctx->rng);
        return;
    }
    if (idata % dataset->ndata_shard != 0) {
        LM_GGML_LOG_ERROR("%s: idata %lld is not a multiple of the shard size %lld\n", fn, (long long) idata,
                          (long long) dataset->ndata_shard);
        return;
    }
    std::shuffle(dataset->permutation.begin(), dataset->permutation.begin() + idata / dataset->ndata_shard,
                 opt_ctx->rng);
}

extern "C" void lm_ggml_opt_dataset_get_batch(lm_ggml_opt_dataset_t dataset, struct lm_ggml_tensor * data_batch,
                                              struct lm_ggml_tensor * labels_batch, int64_t ibatch) {
    static const char * fn = "lm_ggml_opt_dataset_get_batch";
    if (!dataset || !data_batch) {
        lm_ggml_null_arg(fn);
        return;
    }
    if (!lm_ggml_is_contiguous(data_batch) || (labels_batch && !lm_ggml_is_contiguous(labels_batch))) {
        LM_GGML_LOG_ERROR("%s: the batch tensors must be contiguous\n", fn);
        return;
    }
    if ((labels_batch == nullptr) != (dataset->labels == nullptr)) {
        LM_GGML_LOG_ERROR("%s: labels_batch must be given exactly when the dataset has labels\n", fn);
        return;
    }
    if (data_batch->type != LM_GGML_TYPE_F32 || (labels_batch && labels_batch->type != LM_GGML_TYPE_F32)) {
        LM_GGML_LOG_ERROR("%s: the batch tensors must be F32\n", fn);
        return;
    }
    const size_t nb_data = lm_ggml_nbytes(data_batch);
    if (nb_data == 0 || nb_data % dataset->nbs_data != 0) {
        LM_GGML_LOG_ERROR("%s: data_batch (%zu bytes) is not a whole number of shards (%zu bytes each)\n", fn, nb_data,
                          dataset->nbs_data);
        return;
    }
    const int64_t shards = (int64_t) (nb_data / dataset->nbs_data);
    if (labels_batch && lm_ggml_nbytes(labels_batch) != (size_t) shards * dataset->nbs_labels) {
        LM_GGML_LOG_ERROR("%s: labels_batch does not hold the labels of %lld shards\n", fn, (long long) shards);
        return;
    }
    if (ibatch < 0 || (ibatch + 1) * shards > (int64_t) dataset->permutation.size()) {
        LM_GGML_LOG_ERROR("%s: batch %lld is beyond the dataset\n", fn, (long long) ibatch);
        return;
    }
    if ((!data_batch->buffer && !data_batch->data) || (labels_batch && !labels_batch->buffer && !labels_batch->data)) {
        LM_GGML_LOG_ERROR("%s: the batch tensors have no memory\n", fn);
        return;
    }
    auto put = [](lm_ggml_tensor * t, const void * src, size_t off, size_t n) {
        if (t->buffer)
            lm_ggml_backend_tensor_set(t, src, off, n);
        else
            std::memcpy(static_cast<char *>(t->data) + off, src, n);
    };
    for (int64_t k = 0; k < shards; k++) {
        const int64_t shard = dataset->permutation[(size_t) (ibatch * shards + k)];
        put(data_batch, static_cast<const char *>(dataset->data->data) + shard * dataset->nbs_data,
            (size_t) k * dataset->nbs_data, dataset->nbs_data);
        if (labels_batch) {
            put(labels_batch, static_cast<const char *>(dataset->labels->data) + shard * dataset->nbs_labels,
                (size_t) k * dataset->nbs_labels, dataset->nbs_labels);
        }
    }
}
