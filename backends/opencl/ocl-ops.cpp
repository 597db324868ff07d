// Graph compute: each node becomes one kernel launch on the stream's queue
// (views and reshapes launch nothing). Launches are asynchronous; the
// caller synchronizes. An OpenCL error logs one line and fails the graph.

#include "ocl.h"

#include <cmath>
#include <cstring>

namespace lmocl {

namespace {

// Sets kernel arguments in order; remembers the first failure.
class Args {
public:
    explicit Args(cl_kernel k) : k_(k) {}

    Args & i32(int32_t v) { return raw(&v, sizeof(cl_int)); }
    Args & u32(uint32_t v) { return raw(&v, sizeof(cl_uint)); }
    Args & i64(int64_t v) { return raw(&v, sizeof(cl_long)); }
    Args & u64(uint64_t v) { return raw(&v, sizeof(cl_ulong)); }
    Args & f32(float v) { return raw(&v, sizeof(cl_float)); }
    Args & mem(cl_mem m) { return raw(&m, sizeof(cl_mem)); }

    // a tensor's (cl_mem, byte offset)
    Args & at(const lm_ggml_tensor * t) {
        cl_mem m = nullptr;
        size_t off = 0;
        if (!mem_of(t, &m, &off)) {
            bad_tensor_ = t;
            err_ = CL_INVALID_MEM_OBJECT;
        }
        return mem(m).u64(off);
    }
    Args & nb(const lm_ggml_tensor * t) { return u64(t->nb[0]).u64(t->nb[1]).u64(t->nb[2]).u64(t->nb[3]); }
    Args & type(const lm_ggml_tensor * t) { return i32((int32_t) t->type); }

    bool ok(const lm_ggml_tensor * node) const {
        if (bad_tensor_ != nullptr) {
            log(LM_GGML_LOG_LEVEL_ERROR, "opencl: node '%s': tensor '%s' is not in this device's memory\n", node->name,
                bad_tensor_->name);
            return false;
        }
        if (err_ != CL_SUCCESS) {
            log(LM_GGML_LOG_LEVEL_ERROR, "opencl: node '%s': clSetKernelArg(%u): %s\n", node->name, i_ - 1,
                cl_error_name(err_));
            return false;
        }
        return true;
    }

private:
    Args & raw(const void * p, size_t n) {
        if (err_ == CL_SUCCESS) {
            err_ = clSetKernelArg(k_, i_, n, p);
        }
        i_++;
        return *this;
    }
    cl_kernel k_;
    cl_uint i_ = 0;
    cl_int err_ = CL_SUCCESS;
    const lm_ggml_tensor * bad_tensor_ = nullptr;
};

bool launch(stream_ctx * s, cl_kernel k, const lm_ggml_tensor * node, size_t g0, size_t g1, size_t g2,
            const size_t * local = nullptr) {
    const size_t global[3] = {g0, g1, g2};
    cl_event ev = nullptr;
    const cl_int err =
        clEnqueueNDRangeKernel(s->queue, k, 3, nullptr, global, local, 0, nullptr, s->profile ? &ev : nullptr);
    if (err != CL_SUCCESS) {
        log(LM_GGML_LOG_LEVEL_ERROR, "opencl: node '%s' (%s): clEnqueueNDRangeKernel: %s\n", node->name,
            lm_ggml_op_desc(node), cl_error_name(err));
        return false;
    }
    if (ev != nullptr) {
        cl_ulong t0 = 0, t1 = 0;
        char name[64] = {0};
        clWaitForEvents(1, &ev);
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof(t0), &t0, nullptr);
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(t1), &t1, nullptr);
        clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof(name) - 1, name, nullptr);
        auto & p = s->prof[name];
        p.first += (double) (t1 - t0) * 1e-6;
        p.second++;
        clReleaseEvent(ev);
    }
    return true;
}

constexpr size_t kRowWG = 64;  // WG in rows.cl, MV_WG in mul_mat.cl
constexpr size_t kColTile = 8; // RB_C in mul_mat.cl

bool binary(stream_ctx * s, const lm_ggml_tensor * n, int op) {
    cl_kernel k = kernel_of(s, "k_binary");
    if (k == nullptr) {
        return false;
    }
    const lm_ggml_tensor * a = n->src[0];
    const lm_ggml_tensor * b = n->src[1];
    Args args(k);
    args.i32(op).at(a).nb(a).type(a);
    args.at(b).i64(b->ne[0]).i64(b->ne[1]).i64(b->ne[2]).i64(b->ne[3]).nb(b).type(b);
    args.at(n).i64(n->ne[2]).nb(n).type(n);
    return args.ok(n) && launch(s, k, n, n->ne[0], n->ne[1], n->ne[2] * n->ne[3]);
}

// unary op codes of elementwise.cl
enum : int {
    U_SCALE,
    U_SILU,
    U_GELU,
    U_GELU_QUICK,
    U_TANH,
    U_RELU,
    U_NEG,
    U_SIGMOID,
    U_SQR,
    U_SQRT,
    U_COPY,
    U_ABS,
    U_SGN,
    U_STEP,
    U_ELU,
    U_HARDSWISH,
    U_HARDSIGMOID,
    U_EXP,
    U_SIN,
    U_COS,
    U_LOG,
    U_CLAMP
};

bool unary(stream_ctx * s, const lm_ggml_tensor * n, int op, float p0, float p1 = 0.0f) {
    cl_kernel k = kernel_of(s, "k_unary");
    if (k == nullptr) {
        return false;
    }
    const lm_ggml_tensor * a = n->src[0];
    Args args(k);
    args.i32(op).f32(p0).f32(p1).at(a).nb(a).type(a).at(n).i64(n->ne[2]).nb(n).type(n);
    return args.ok(n) && launch(s, k, n, n->ne[0], n->ne[1], n->ne[2] * n->ne[3]);
}

int unary_code(const lm_ggml_tensor * n) {
    switch (lm_ggml_get_unary_op(n)) {
        case LM_GGML_UNARY_OP_SILU: return U_SILU;
        case LM_GGML_UNARY_OP_GELU: return U_GELU;
        case LM_GGML_UNARY_OP_GELU_QUICK: return U_GELU_QUICK;
        case LM_GGML_UNARY_OP_TANH: return U_TANH;
        case LM_GGML_UNARY_OP_RELU: return U_RELU;
        case LM_GGML_UNARY_OP_NEG: return U_NEG;
        case LM_GGML_UNARY_OP_ABS: return U_ABS;
        case LM_GGML_UNARY_OP_SGN: return U_SGN;
        case LM_GGML_UNARY_OP_STEP: return U_STEP;
        case LM_GGML_UNARY_OP_ELU: return U_ELU;
        case LM_GGML_UNARY_OP_HARDSWISH: return U_HARDSWISH;
        case LM_GGML_UNARY_OP_HARDSIGMOID: return U_HARDSIGMOID;
        case LM_GGML_UNARY_OP_EXP: return U_EXP;
        default: return U_SIGMOID;
    }
}

bool copy(stream_ctx * s, const lm_ggml_tensor * n) {
    cl_kernel k = kernel_of(s, "k_cpy");
    if (k == nullptr) {
        return false;
    }
    const lm_ggml_tensor * a = n->src[0];
    Args args(k);
    args.at(a).i64(a->ne[0]).i64(a->ne[1]).i64(a->ne[2]).nb(a).type(a);
    args.at(n).i64(n->ne[0]).i64(n->ne[1]).i64(n->ne[2]).nb(n).type(n);
    return args.ok(n) && launch(s, k, n, n->ne[0], n->ne[1], n->ne[2] * n->ne[3]);
}

bool concat(stream_ctx * s, const lm_ggml_tensor * n) {
    cl_kernel k = kernel_of(s, "k_concat");
    if (k == nullptr) {
        return false;
    }
    const lm_ggml_tensor * a = n->src[0];
    const lm_ggml_tensor * b = n->src[1];
    Args args(k);
    args.i32(op_i32(n, 0));
    args.at(a).i64(a->ne[0]).i64(a->ne[1]).i64(a->ne[2]).i64(a->ne[3]).nb(a);
    args.at(b).nb(b).type(n);
    args.at(n).i64(n->ne[2]).nb(n);
    return args.ok(n) && launch(s, k, n, n->ne[0], n->ne[1], n->ne[2] * n->ne[3]);
}

bool get_rows(stream_ctx * s, const lm_ggml_tensor * n) {
    cl_kernel k = kernel_of(s, "k_get_rows");
    if (k == nullptr) {
        return false;
    }
    const lm_ggml_tensor * a = n->src[0];
    const lm_ggml_tensor * ids = n->src[1];
    Args args(k);
    args.at(a).i64(a->ne[0]).nb(a).i64(a->ne[1]).type(a);
    args.at(ids).u64(ids->nb[0]).u64(ids->nb[1]).u64(ids->nb[2]);
    args.at(n).nb(n).type(n);
    return args.ok(n) && launch(s, k, n, ids->ne[0], ids->ne[1], ids->ne[2]);
}

bool norm(stream_ctx * s, const lm_ggml_tensor * n, bool rms) {
    cl_kernel k = kernel_of(s, "k_norm");
    if (k == nullptr) {
        return false;
    }
    const lm_ggml_tensor * a = n->src[0];
    float eps = 0.0f;
    std::memcpy(&eps, n->op_params, sizeof(eps));
    Args args(k);
    args.i32(rms ? 1 : 0).f32(eps).i64(a->ne[0]).at(a).nb(a).at(n).nb(n);
    const size_t local[3] = {kRowWG, 1, 1};
    return args.ok(n) && launch(s, k, n, kRowWG * a->ne[1], a->ne[2], a->ne[3], local);
}

bool soft_max(stream_ctx * s, const lm_ggml_tensor * n) {
    cl_kernel k = kernel_of(s, "k_soft_max");
    if (k == nullptr) {
        return false;
    }
    const lm_ggml_tensor * a = n->src[0];
    const lm_ggml_tensor * m = n->src[1];
    float scale = 1.0f, max_bias = 0.0f;
    std::memcpy(&scale, (const float *) n->op_params + 0, sizeof(float));
    std::memcpy(&max_bias, (const float *) n->op_params + 1, sizeof(float));
    // ALiBi constants, as the CPU backend forms them
    const uint32_t n_head = (uint32_t) a->ne[2];
    const uint32_t n_log2 = 1u << (uint32_t) std::floor(std::log2((double) n_head));
    const float m0 = std::pow(2.0f, -max_bias / (float) n_log2);
    const float m1 = std::pow(2.0f, -(max_bias / 2.0f) / (float) n_log2);
    Args args(k);
    args.f32(scale).f32(max_bias).f32(m0).f32(m1).u32(n_log2).i64(a->ne[0]);
    args.at(a).u64(a->nb[1]).u64(a->nb[2]).u64(a->nb[3]);
    if (m != nullptr) {
        args.at(m).u64(m->nb[0]).u64(m->nb[1]).type(m);
    } else {
        args.at(a).u64(0).u64(0).i32(-1); // any valid buffer: never read
    }
    args.at(n).u64(n->nb[1]).u64(n->nb[2]).u64(n->nb[3]);
    const size_t local[3] = {kRowWG, 1, 1};
    return args.ok(n) && launch(s, k, n, kRowWG * a->ne[1], a->ne[2], a->ne[3], local);
}

// YaRN correction dims, the same float formula as the CPU backend's
float corr_dim(int n_dims, int n_ctx_orig, float n_rot, float base) {
    return (float) n_dims * logf((float) n_ctx_orig / (n_rot * 2.0f * (float) M_PI)) / (2.0f * logf(base));
}

bool rope(stream_ctx * s, const lm_ggml_tensor * n) {
    cl_kernel k = kernel_of(s, "k_rope");
    if (k == nullptr) {
        return false;
    }
    const lm_ggml_tensor * a = n->src[0];
    const lm_ggml_tensor * pos = n->src[1];
    const lm_ggml_tensor * ff = n->src[2];
    const int32_t * ip = (const int32_t *) n->op_params;
    float fp[16];
    std::memcpy(fp, n->op_params, sizeof(fp));
    const int n_dims = ip[1], mode = ip[2], n_ctx_orig = ip[4];
    const float base = fp[5], freq_scale = fp[6], ext_factor = fp[7], attn_factor = fp[8];
    const float beta_fast = fp[9], beta_slow = fp[10];
    const float low = std::max(0.0f, floorf(corr_dim(n_dims, n_ctx_orig, beta_fast, base)));
    const float high = std::min((float) (n_dims - 1), ceilf(corr_dim(n_dims, n_ctx_orig, beta_slow, base)));
    float mscale = attn_factor;
    if (ext_factor != 0.0f) {
        mscale *= 1.0f + 0.1f * logf(1.0f / freq_scale);
    }
    const float theta_scale = powf(base, -2.0f / (float) n_dims);
    Args args(k);
    args.i32(n_dims).i32(mode == LM_GGML_ROPE_TYPE_NEOX ? 1 : 0).f32(theta_scale).f32(freq_scale).f32(ext_factor);
    args.f32(mscale).f32(low).f32(high);
    args.at(a).nb(a).type(a).at(pos);
    if (ff != nullptr) {
        args.at(ff).i32(1);
    } else {
        args.at(pos).i32(0); // any valid buffer: never read
    }
    args.at(n).i64(n->ne[2]).nb(n);
    return args.ok(n) && launch(s, k, n, n->ne[0] / 2, n->ne[1], n->ne[2] * n->ne[3]);
}

bool mul_mat(stream_ctx * s, const lm_ggml_tensor * n) {
    const lm_ggml_tensor * a = n->src[0];
    const lm_ggml_tensor * b = n->src[1];
    const int64_t r2 = b->ne[2] / a->ne[2];
    const int64_t r3 = b->ne[3] / a->ne[3];
    // one column on a GPU: a work-group per dot product; otherwise register
    // tiles that decode each weight once for up to kColTile columns
    const bool vec = b->ne[1] == 1 && s->matvec_wg;
    cl_kernel k = kernel_of(s, vec ? "k_mul_mat_vec" : "k_mul_mat_rb");
    if (k == nullptr) {
        return false;
    }
    Args args(k);
    args.at(a).i64(a->ne[0]).nb(a).type(a);
    if (vec) {
        args.at(b).nb(b).type(b);
    } else {
        args.at(b).i64(b->ne[1]).nb(b).type(b);
    }
    args.at(n).u64(n->nb[1]).u64(n->nb[2]).u64(n->nb[3]).i64(b->ne[2]).i64(r2).i64(r3);
    if (!args.ok(n)) {
        return false;
    }
    if (!vec) {
        return launch(s, k, n, a->ne[1], (b->ne[1] + kColTile - 1) / kColTile, b->ne[2] * b->ne[3]);
    }
    const size_t local[3] = {kRowWG, 1, 1};
    return launch(s, k, n, kRowWG * a->ne[1], 1, b->ne[2] * b->ne[3], local);
}

bool flash_attn(stream_ctx * s, const lm_ggml_tensor * n) {
    cl_kernel k = kernel_of(s, "k_flash_attn");
    if (k == nullptr) {
        return false;
    }
    const lm_ggml_tensor * q = n->src[0];
    const lm_ggml_tensor * kt = n->src[1];
    const lm_ggml_tensor * v = n->src[2];
    const lm_ggml_tensor * m = n->src[3];
    float fp[3];
    std::memcpy(fp, n->op_params, sizeof(fp));
    float scale = fp[0];
    const float max_bias = fp[1], softcap = fp[2];
    if (softcap != 0.0f) {
        scale /= softcap; // s = softcap * tanh(q.k * scale / softcap)
    }
    const uint32_t n_head = (uint32_t) q->ne[2];
    const uint32_t n_log2 = 1u << (uint32_t) std::floor(std::log2((double) n_head));
    const float m0 = std::pow(2.0f, -max_bias / (float) n_log2);
    const float m1 = std::pow(2.0f, -(max_bias / 2.0f) / (float) n_log2);
    Args args(k);
    args.i64(q->ne[0]).i64(kt->ne[1]).f32(scale).f32(softcap).f32(max_bias).f32(m0).f32(m1).u32(n_log2);
    args.i64(q->ne[2] / kt->ne[2]).i64(q->ne[3] / kt->ne[3]).i64(q->ne[2] / v->ne[2]).i64(q->ne[3] / v->ne[3]);
    args.at(q).u64(q->nb[1]).u64(q->nb[2]).u64(q->nb[3]);
    args.at(kt).nb(kt).type(kt);
    args.at(v).nb(v).type(v);
    if (m != nullptr) {
        args.at(m).u64(m->nb[0]).u64(m->nb[1]).type(m);
    } else {
        args.at(q).u64(0).u64(0).i32(-1); // any valid buffer: never read
    }
    args.at(n).u64(n->nb[1]).u64(n->nb[2]).u64(n->nb[3]);
    const size_t local[3] = {kRowWG, 1, 1};
    return args.ok(n) && launch(s, k, n, kRowWG * q->ne[1], q->ne[2], q->ne[3], local);
}

bool compute_node(stream_ctx * s, const lm_ggml_tensor * n) {
    switch (n->op) {
        case LM_GGML_OP_ADD: return binary(s, n, 0);
        case LM_GGML_OP_SUB: return binary(s, n, 1);
        case LM_GGML_OP_MUL: return binary(s, n, 2);
        case LM_GGML_OP_DIV: return binary(s, n, 3);
        case LM_GGML_OP_SCALE: {
            float v = 1.0f;
            std::memcpy(&v, n->op_params, sizeof(v));
            return unary(s, n, U_SCALE, v);
        }
        case LM_GGML_OP_SQR: return unary(s, n, U_SQR, 0.0f);
        case LM_GGML_OP_SQRT: return unary(s, n, U_SQRT, 0.0f);
        case LM_GGML_OP_SIN: return unary(s, n, U_SIN, 0.0f);
        case LM_GGML_OP_COS: return unary(s, n, U_COS, 0.0f);
        case LM_GGML_OP_LOG: return unary(s, n, U_LOG, 0.0f);
        case LM_GGML_OP_CLAMP: {
            float mm[2];
            std::memcpy(mm, n->op_params, sizeof(mm));
            return unary(s, n, U_CLAMP, mm[0], mm[1]);
        }
        case LM_GGML_OP_UNARY: return unary(s, n, unary_code(n), 0.0f);
        case LM_GGML_OP_CPY:
        case LM_GGML_OP_CONT:
        case LM_GGML_OP_DUP: return copy(s, n);
        case LM_GGML_OP_CONCAT: return concat(s, n);
        case LM_GGML_OP_GET_ROWS: return get_rows(s, n);
        case LM_GGML_OP_NORM: return norm(s, n, false);
        case LM_GGML_OP_RMS_NORM: return norm(s, n, true);
        case LM_GGML_OP_SOFT_MAX: return soft_max(s, n);
        case LM_GGML_OP_ROPE: return rope(s, n);
        case LM_GGML_OP_MUL_MAT: return mul_mat(s, n);
        case LM_GGML_OP_FLASH_ATTN_EXT: return flash_attn(s, n);
        default:
            log(LM_GGML_LOG_LEVEL_ERROR, "opencl: node '%s': op %s is not supported\n", n->name, lm_ggml_op_desc(n));
            return false;
    }
}

bool is_no_op(lm_ggml_op op) {
    return op == LM_GGML_OP_NONE || op == LM_GGML_OP_VIEW || op == LM_GGML_OP_RESHAPE || op == LM_GGML_OP_PERMUTE ||
           op == LM_GGML_OP_TRANSPOSE;
}

} // namespace

lm_ggml_status compute_graph(stream_ctx * s, lm_ggml_cgraph * graph) {
    for (int i = 0; i < lm_ggml_graph_n_nodes(graph); i++) {
        const lm_ggml_tensor * n = lm_ggml_graph_node(graph, i);
        if (is_no_op(n->op) || lm_ggml_is_empty(n)) {
            continue;
        }
        if (!supports_op(s->dev, n)) {
            log(LM_GGML_LOG_LEVEL_ERROR, "opencl %s: node '%s' (%s): not supported by this device\n", s->name.c_str(),
                n->name, lm_ggml_op_desc(n));
            return LM_GGML_STATUS_FAILED;
        }
        if (!compute_node(s, n)) {
            return LM_GGML_STATUS_FAILED;
        }
    }
    return LM_GGML_STATUS_SUCCESS;
}

} // namespace lmocl
