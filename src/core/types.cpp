// Type traits (block size, bytes per block, name, conversions) and op names.
#include "ggml-impl.h"

#include <mutex>

// Quantized formats (src/quant/traits.cpp) fill in their conversion functions
// once. A strong reference, so static links always pull the formats in.
extern "C" void lm_quant_fill_traits(struct lm_ggml_type_traits * table);

namespace {

void f16_to_f32(const void * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t k) {
    lm_ggml_fp16_to_fp32_row(static_cast<const lm_ggml_fp16_t *>(x), y, k);
}
void f32_to_f16(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT y, int64_t k) {
    lm_ggml_fp32_to_fp16_row(x, static_cast<lm_ggml_fp16_t *>(y), k);
}
void bf16_to_f32(const void * LM_GGML_RESTRICT x, float * LM_GGML_RESTRICT y, int64_t k) {
    lm_ggml_bf16_to_fp32_row(static_cast<const lm_ggml_bf16_t *>(x), y, k);
}
void f32_to_bf16(const float * LM_GGML_RESTRICT x, void * LM_GGML_RESTRICT y, int64_t k) {
    lm_ggml_fp32_to_bf16_row_ref(x, static_cast<lm_ggml_bf16_t *>(y), k);
}

struct TraitsTable {
    lm_ggml_type_traits t[LM_GGML_TYPE_COUNT] = {};

    void set(lm_ggml_type type, const char * name, int64_t blck, size_t size, bool quantized) {
        t[type] = lm_ggml_type_traits{name, blck, 0, size, quantized, nullptr, nullptr};
    }

    TraitsTable() {
        // (type, name, elements per block, bytes per block, quantized): GGUF facts
        set(LM_GGML_TYPE_F32, "f32", 1, 4, false);
        set(LM_GGML_TYPE_F16, "f16", 1, 2, false);
        set(LM_GGML_TYPE_Q4_0, "q4_0", 32, 18, true);
        set(LM_GGML_TYPE_Q4_1, "q4_1", 32, 20, true);
        set(LM_GGML_TYPE_Q5_0, "q5_0", 32, 22, true);
        set(LM_GGML_TYPE_Q5_1, "q5_1", 32, 24, true);
        set(LM_GGML_TYPE_Q8_0, "q8_0", 32, 34, true);
        set(LM_GGML_TYPE_Q8_1, "q8_1", 32, 36, true);
        set(LM_GGML_TYPE_Q2_K, "q2_K", 256, 84, true);
        set(LM_GGML_TYPE_Q3_K, "q3_K", 256, 110, true);
        set(LM_GGML_TYPE_Q4_K, "q4_K", 256, 144, true);
        set(LM_GGML_TYPE_Q5_K, "q5_K", 256, 176, true);
        set(LM_GGML_TYPE_Q6_K, "q6_K", 256, 210, true);
        set(LM_GGML_TYPE_Q8_K, "q8_K", 256, 292, true);
        set(LM_GGML_TYPE_IQ2_XXS, "iq2_xxs", 256, 66, true);
        set(LM_GGML_TYPE_IQ2_XS, "iq2_xs", 256, 74, true);
        set(LM_GGML_TYPE_IQ3_XXS, "iq3_xxs", 256, 98, true);
        set(LM_GGML_TYPE_IQ1_S, "iq1_s", 256, 50, true);
        set(LM_GGML_TYPE_IQ4_NL, "iq4_nl", 32, 18, true);
        set(LM_GGML_TYPE_IQ3_S, "iq3_s", 256, 110, true);
        set(LM_GGML_TYPE_IQ2_S, "iq2_s", 256, 82, true);
        set(LM_GGML_TYPE_IQ4_XS, "iq4_xs", 256, 136, true);
        set(LM_GGML_TYPE_I8, "i8", 1, 1, false);
        set(LM_GGML_TYPE_I16, "i16", 1, 2, false);
        set(LM_GGML_TYPE_I32, "i32", 1, 4, false);
        set(LM_GGML_TYPE_I64, "i64", 1, 8, false);
        set(LM_GGML_TYPE_F64, "f64", 1, 8, false);
        set(LM_GGML_TYPE_IQ1_M, "iq1_m", 256, 56, true);
        set(LM_GGML_TYPE_BF16, "bf16", 1, 2, false);
        set(LM_GGML_TYPE_TQ1_0, "tq1_0", 256, 54, true);
        set(LM_GGML_TYPE_TQ2_0, "tq2_0", 256, 66, true);
        // removed formats (values 4, 5, 31-33, 36-38) stay zero: blck_size 0 marks them invalid
        t[LM_GGML_TYPE_F16].to_float = f16_to_f32;
        t[LM_GGML_TYPE_F16].from_float_ref = f32_to_f16;
        t[LM_GGML_TYPE_BF16].to_float = bf16_to_f32;
        t[LM_GGML_TYPE_BF16].from_float_ref = f32_to_bf16;
        lm_quant_fill_traits(t);
    }
};

const TraitsTable & traits() {
    static const TraitsTable table; // thread-safe one-time init
    return table;
}

bool valid_type(int type) { return type >= 0 && type < LM_GGML_TYPE_COUNT && traits().t[type].blck_size > 0; }

const char * const OP_NAME[LM_GGML_OP_COUNT] = {
    "NONE",
    "DUP",
    "ADD",
    "ADD1",
    "ACC",
    "SUB",
    "MUL",
    "DIV",
    "SQR",
    "SQRT",
    "LOG",
    "SIN",
    "COS",
    "SUM",
    "SUM_ROWS",
    "MEAN",
    "ARGMAX",
    "COUNT_EQUAL",
    "REPEAT",
    "REPEAT_BACK",
    "CONCAT",
    "SILU_BACK",
    "NORM",
    "RMS_NORM",
    "RMS_NORM_BACK",
    "GROUP_NORM",
    "MUL_MAT",
    "MUL_MAT_ID",
    "OUT_PROD",
    "SCALE",
    "SET",
    "CPY",
    "CONT",
    "RESHAPE",
    "VIEW",
    "PERMUTE",
    "TRANSPOSE",
    "GET_ROWS",
    "GET_ROWS_BACK",
    "DIAG",
    "DIAG_MASK_INF",
    "DIAG_MASK_ZERO",
    "SOFT_MAX",
    "SOFT_MAX_BACK",
    "ROPE",
    "ROPE_BACK",
    "CLAMP",
    "CONV_TRANSPOSE_1D",
    "IM2COL",
    "IM2COL_BACK",
    "CONV_TRANSPOSE_2D",
    "POOL_1D",
    "POOL_2D",
    "POOL_2D_BACK",
    "UPSCALE",
    "PAD",
    "PAD_REFLECT_1D",
    "ARANGE",
    "TIMESTEP_EMBEDDING",
    "ARGSORT",
    "LEAKY_RELU",
    "FLASH_ATTN_EXT",
    "FLASH_ATTN_BACK",
    "SSM_CONV",
    "SSM_SCAN",
    "WIN_PART",
    "WIN_UNPART",
    "GET_REL_POS",
    "ADD_REL_POS",
    "RWKV_WKV6",
    "GATED_LINEAR_ATTN",
    "UNARY",
    "MAP_UNARY",
    "MAP_BINARY",
    "MAP_CUSTOM1_F32",
    "MAP_CUSTOM2_F32",
    "MAP_CUSTOM3_F32",
    "MAP_CUSTOM1",
    "MAP_CUSTOM2",
    "MAP_CUSTOM3",
    "CROSS_ENTROPY_LOSS",
    "CROSS_ENTROPY_LOSS_BACK",
    "OPT_STEP_ADAMW",
};
static_assert(LM_GGML_OP_COUNT == 83, "op table out of date");

const char * const OP_SYMBOL[LM_GGML_OP_COUNT] = {
    "none",
    "x",
    "x+y",
    "x+y",
    "view(x,nb,offset)+=y->x",
    "x-y",
    "x*y",
    "x/y",
    "x^2",
    "\xe2\x88\x9ax",
    "log(x)",
    "sin(x)",
    "cos(x)",
    "\xce\xa3x",
    "\xce\xa3x_k",
    "\xce\xa3x/n",
    "argmax(x)",
    "count_equal(x)",
    "repeat(x)",
    "repeat_back(x)",
    "concat(x, y)",
    "silu_back(x)",
    "norm(x)",
    "rms_norm(x)",
    "rms_norm_back(x)",
    "group_norm(x)",
    "X*Y",
    "X[i]*Y",
    "X*Y",
    "x*v",
    "y-\\>view(x)",
    "x-\\>y",
    "cont(x)",
    "reshape(x)",
    "view(x)",
    "permute(x)",
    "transpose(x)",
    "get_rows(x)",
    "get_rows_back(x)",
    "diag(x)",
    "diag_mask_inf(x)",
    "diag_mask_zero(x)",
    "soft_max(x)",
    "soft_max_back(x)",
    "rope(x)",
    "rope_back(x)",
    "clamp(x)",
    "conv_transpose_1d(x)",
    "im2col(x)",
    "im2col_back(x)",
    "conv_transpose_2d(x)",
    "pool_1d(x)",
    "pool_2d(x)",
    "pool_2d_back(x)",
    "upscale(x)",
    "pad(x)",
    "pad_reflect_1d(x)",
    "arange(start, stop, step)",
    "timestep_embedding(timesteps, dim, max_period)",
    "argsort(x)",
    "leaky_relu(x)",
    "flash_attn_ext(x)",
    "flash_attn_back(x)",
    "ssm_conv(x)",
    "ssm_scan(x)",
    "win_part(x)",
    "win_unpart(x)",
    "get_rel_pos(x)",
    "add_rel_pos(x)",
    "rwkv_wkv6(k, v, r, tf, td, s)",
    "gated_linear_attn(k, v, q, gate, s)",
    "unary(x)",
    "f(x)",
    "f(x,y)",
    "custom_f32(x)",
    "custom_f32(x,y)",
    "custom_f32(x,y,z)",
    "custom(x)",
    "custom(x,y)",
    "custom(x,y,z)",
    "cross_entropy_loss(x,y)",
    "cross_entropy_loss_back(x,y)",
    "adamw(x)",
};

const char * const UNARY_OP_NAME[LM_GGML_UNARY_OP_COUNT] = {
    "ABS",     "SGN",  "NEG",        "STEP", "TANH",      "ELU",         "RELU",
    "SIGMOID", "GELU", "GELU_QUICK", "SILU", "HARDSWISH", "HARDSIGMOID", "EXP",
};

} // namespace

extern "C" const struct lm_ggml_type_traits * lm_ggml_get_type_traits(enum lm_ggml_type type) {
    if (!valid_type(type)) {
        LM_GGML_LOG_ERROR("lm_ggml_get_type_traits: invalid type %d\n", (int) type);
        return nullptr;
    }
    return &traits().t[type];
}

// Queries below return 0 / "NONE" for invalid types instead of reading out of bounds.
extern "C" int64_t lm_ggml_blck_size(enum lm_ggml_type type) {
    return valid_type(type) ? traits().t[type].blck_size : 0;
}

extern "C" size_t lm_ggml_type_size(enum lm_ggml_type type) {
    return valid_type(type) ? traits().t[type].type_size : 0;
}

extern "C" size_t lm_ggml_row_size(enum lm_ggml_type type, int64_t ne) {
    if (!valid_type(type) || ne < 0) return 0;
    const lm_ggml_type_traits & t = traits().t[type];
    return t.type_size * (size_t) (ne / t.blck_size);
}

extern "C" const char * lm_ggml_type_name(enum lm_ggml_type type) {
    return valid_type(type) ? traits().t[type].type_name : "NONE";
}

extern "C" bool lm_ggml_is_quantized(enum lm_ggml_type type) {
    return valid_type(type) && traits().t[type].is_quantized;
}

extern "C" const char * lm_ggml_op_name(enum lm_ggml_op op) {
    return (op >= 0 && op < LM_GGML_OP_COUNT) ? OP_NAME[op] : "INVALID";
}

extern "C" const char * lm_ggml_op_symbol(enum lm_ggml_op op) {
    return (op >= 0 && op < LM_GGML_OP_COUNT) ? OP_SYMBOL[op] : "INVALID";
}

extern "C" const char * lm_ggml_unary_op_name(enum lm_ggml_unary_op op) {
    return (op >= 0 && op < LM_GGML_UNARY_OP_COUNT) ? UNARY_OP_NAME[op] : "INVALID";
}

extern "C" enum lm_ggml_unary_op lm_ggml_get_unary_op(const struct lm_ggml_tensor * tensor) {
    if (!tensor) {
        lm_ggml_null_arg("lm_ggml_get_unary_op");
        return LM_GGML_UNARY_OP_COUNT;
    }
    return (enum lm_ggml_unary_op) lm_ggml_get_op_params_i32(tensor, 0);
}

extern "C" const char * lm_ggml_op_desc(const struct lm_ggml_tensor * t) {
    if (!t) {
        lm_ggml_null_arg("lm_ggml_op_desc");
        return nullptr;
    }
    if (t->op == LM_GGML_OP_UNARY) return lm_ggml_unary_op_name(lm_ggml_get_unary_op(t));
    return lm_ggml_op_name(t->op);
}
