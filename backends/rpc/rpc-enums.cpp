// Enum numbers of the RPC peer (llama.cpp's ggml at protocol 7.0.0) for
// lmggml's ops, unary ops and types, matched by name; -1 where the peer has
// no such value (that op, unary op or type cannot travel).
#include "rpc-enums.h"

namespace rpc {

const EnumPair kOpPairs[] = {
    {LM_GGML_OP_NONE, 0},
    {LM_GGML_OP_DUP, 1},
    {LM_GGML_OP_ADD, 2},
    {LM_GGML_OP_ADD1, 4},
    {LM_GGML_OP_ACC, 5},
    {LM_GGML_OP_SUB, 6},
    {LM_GGML_OP_MUL, 7},
    {LM_GGML_OP_DIV, 8},
    {LM_GGML_OP_SQR, 9},
    {LM_GGML_OP_SQRT, 10},
    {LM_GGML_OP_LOG, 11},
    {LM_GGML_OP_SIN, 12},
    {LM_GGML_OP_COS, 13},
    {LM_GGML_OP_SUM, 14},
    {LM_GGML_OP_SUM_ROWS, 15},
    {LM_GGML_OP_MEAN, 17},
    {LM_GGML_OP_ARGMAX, 18},
    {LM_GGML_OP_COUNT_EQUAL, 19},
    {LM_GGML_OP_REPEAT, 20},
    {LM_GGML_OP_REPEAT_BACK, 21},
    {LM_GGML_OP_CONCAT, 22},
    {LM_GGML_OP_SILU_BACK, 23},
    {LM_GGML_OP_NORM, 24},
    {LM_GGML_OP_RMS_NORM, 25},
    {LM_GGML_OP_RMS_NORM_BACK, 26},
    {LM_GGML_OP_GROUP_NORM, 27},
    {LM_GGML_OP_MUL_MAT, 29},
    {LM_GGML_OP_MUL_MAT_ID, 30},
    {LM_GGML_OP_OUT_PROD, 31},
    {LM_GGML_OP_SCALE, 32},
    {LM_GGML_OP_SET, 33},
    {LM_GGML_OP_CPY, 34},
    {LM_GGML_OP_CONT, 35},
    {LM_GGML_OP_RESHAPE, 36},
    {LM_GGML_OP_VIEW, 37},
    {LM_GGML_OP_PERMUTE, 38},
    {LM_GGML_OP_TRANSPOSE, 39},
    {LM_GGML_OP_GET_ROWS, 40},
    {LM_GGML_OP_GET_ROWS_BACK, 41},
    {LM_GGML_OP_DIAG, 43},
    {LM_GGML_OP_DIAG_MASK_INF, 44},
    {LM_GGML_OP_DIAG_MASK_ZERO, 45},
    {LM_GGML_OP_SOFT_MAX, 46},
    {LM_GGML_OP_SOFT_MAX_BACK, 47},
    {LM_GGML_OP_ROPE, 48},
    {LM_GGML_OP_ROPE_BACK, 49},
    {LM_GGML_OP_CLAMP, 50},
    {LM_GGML_OP_CONV_TRANSPOSE_1D, 51},
    {LM_GGML_OP_IM2COL, 52},
    {LM_GGML_OP_IM2COL_BACK, 53},
    {LM_GGML_OP_CONV_TRANSPOSE_2D, 59},
    {LM_GGML_OP_POOL_1D, 60},
    {LM_GGML_OP_POOL_2D, 61},
    {LM_GGML_OP_POOL_2D_BACK, 62},
    {LM_GGML_OP_UPSCALE, 63},
    {LM_GGML_OP_PAD, 64},
    {LM_GGML_OP_PAD_REFLECT_1D, 65},
    {LM_GGML_OP_ARANGE, 67},
    {LM_GGML_OP_TIMESTEP_EMBEDDING, 68},
    {LM_GGML_OP_ARGSORT, 69},
    {LM_GGML_OP_LEAKY_RELU, 71},
    {LM_GGML_OP_FLASH_ATTN_EXT, 74},
    {LM_GGML_OP_FLASH_ATTN_BACK, 75},
    {LM_GGML_OP_SSM_CONV, 76},
    {LM_GGML_OP_SSM_SCAN, 77},
    {LM_GGML_OP_WIN_PART, 78},
    {LM_GGML_OP_WIN_UNPART, 79},
    {LM_GGML_OP_GET_REL_POS, 80},
    {LM_GGML_OP_ADD_REL_POS, 81},
    {LM_GGML_OP_RWKV_WKV6, 82},
    {LM_GGML_OP_GATED_LINEAR_ATTN, 83},
    {LM_GGML_OP_UNARY, 91},
    {LM_GGML_OP_MAP_UNARY, -1},
    {LM_GGML_OP_MAP_BINARY, -1},
    {LM_GGML_OP_MAP_CUSTOM1_F32, -1},
    {LM_GGML_OP_MAP_CUSTOM2_F32, -1},
    {LM_GGML_OP_MAP_CUSTOM3_F32, -1},
    {LM_GGML_OP_MAP_CUSTOM1, 92},
    {LM_GGML_OP_MAP_CUSTOM2, 93},
    {LM_GGML_OP_MAP_CUSTOM3, 94},
    {LM_GGML_OP_CROSS_ENTROPY_LOSS, 96},
    {LM_GGML_OP_CROSS_ENTROPY_LOSS_BACK, 97},
    {LM_GGML_OP_OPT_STEP_ADAMW, 98},
};
const size_t kOpPairCount = sizeof(kOpPairs) / sizeof(kOpPairs[0]);

const EnumPair kUnaryPairs[] = {
    {LM_GGML_UNARY_OP_ABS, 0},          {LM_GGML_UNARY_OP_SGN, 1},     {LM_GGML_UNARY_OP_NEG, 2},
    {LM_GGML_UNARY_OP_STEP, 3},         {LM_GGML_UNARY_OP_TANH, 4},    {LM_GGML_UNARY_OP_ELU, 5},
    {LM_GGML_UNARY_OP_RELU, 6},         {LM_GGML_UNARY_OP_SIGMOID, 7}, {LM_GGML_UNARY_OP_GELU, 8},
    {LM_GGML_UNARY_OP_GELU_QUICK, 9},   {LM_GGML_UNARY_OP_SILU, 10},   {LM_GGML_UNARY_OP_HARDSWISH, 11},
    {LM_GGML_UNARY_OP_HARDSIGMOID, 12}, {LM_GGML_UNARY_OP_EXP, 13},
};
const size_t kUnaryPairCount = sizeof(kUnaryPairs) / sizeof(kUnaryPairs[0]);

const EnumPair kTypePairs[] = {
    {LM_GGML_TYPE_F32, 0},      {LM_GGML_TYPE_F16, 1},     {LM_GGML_TYPE_Q4_0, 2},     {LM_GGML_TYPE_Q4_1, 3},
    {LM_GGML_TYPE_Q5_0, 6},     {LM_GGML_TYPE_Q5_1, 7},    {LM_GGML_TYPE_Q8_0, 8},     {LM_GGML_TYPE_Q8_1, 9},
    {LM_GGML_TYPE_Q2_K, 10},    {LM_GGML_TYPE_Q3_K, 11},   {LM_GGML_TYPE_Q4_K, 12},    {LM_GGML_TYPE_Q5_K, 13},
    {LM_GGML_TYPE_Q6_K, 14},    {LM_GGML_TYPE_Q8_K, 15},   {LM_GGML_TYPE_IQ2_XXS, 16}, {LM_GGML_TYPE_IQ2_XS, 17},
    {LM_GGML_TYPE_IQ3_XXS, 18}, {LM_GGML_TYPE_IQ1_S, 19},  {LM_GGML_TYPE_IQ4_NL, 20},  {LM_GGML_TYPE_IQ3_S, 21},
    {LM_GGML_TYPE_IQ2_S, 22},   {LM_GGML_TYPE_IQ4_XS, 23}, {LM_GGML_TYPE_I8, 24},      {LM_GGML_TYPE_I16, 25},
    {LM_GGML_TYPE_I32, 26},     {LM_GGML_TYPE_I64, 27},    {LM_GGML_TYPE_F64, 28},     {LM_GGML_TYPE_IQ1_M, 29},
    {LM_GGML_TYPE_BF16, 30},    {LM_GGML_TYPE_TQ1_0, 34},  {LM_GGML_TYPE_TQ2_0, 35},
};
const size_t kTypePairCount = sizeof(kTypePairs) / sizeof(kTypePairs[0]);

} // namespace rpc

namespace rpc {

namespace {

int to_wire(const EnumPair * pairs, size_t n, int lm) {
    for (size_t i = 0; i < n; i++) {
        if (pairs[i].lm == lm) {
            return pairs[i].wire;
        }
    }
    return -1;
}

int from_wire(const EnumPair * pairs, size_t n, int64_t wire) {
    if (wire < 0) {
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (pairs[i].wire == wire) {
            return pairs[i].lm;
        }
    }
    return -1;
}

} // namespace

int op_to_wire(lm_ggml_op op) { return to_wire(kOpPairs, kOpPairCount, op); }
int op_from_wire(uint32_t op) { return from_wire(kOpPairs, kOpPairCount, op); }
int unary_to_wire(lm_ggml_unary_op op) { return to_wire(kUnaryPairs, kUnaryPairCount, op); }
int unary_from_wire(int32_t op) { return from_wire(kUnaryPairs, kUnaryPairCount, op); }
int type_to_wire(lm_ggml_type type) { return to_wire(kTypePairs, kTypePairCount, type); }
int type_from_wire(uint32_t type) { return from_wire(kTypePairs, kTypePairCount, type); }

namespace {

constexpr int32_t kWirePrecDefault = 0;
constexpr int32_t kWirePrecF32 = 10;

// the word of op params holding a precision, or -1
int prec_word(lm_ggml_op op) { return op == LM_GGML_OP_MUL_MAT ? 0 : op == LM_GGML_OP_FLASH_ATTN_EXT ? 3 : -1; }

} // namespace

bool op_params_to_wire(lm_ggml_op op, int32_t * params) {
    if (op == LM_GGML_OP_UNARY) {
        const int u =
            params[0] >= 0 && params[0] < LM_GGML_UNARY_OP_COUNT ? unary_to_wire((lm_ggml_unary_op) params[0]) : -1;
        params[0] = u;
        return u >= 0;
    }
    if (const int w = prec_word(op); w >= 0) {
        if (params[w] != LM_GGML_PREC_DEFAULT && params[w] != LM_GGML_PREC_F32) {
            return false;
        }
        params[w] = params[w] == LM_GGML_PREC_F32 ? kWirePrecF32 : kWirePrecDefault;
    }
    return true;
}

bool op_params_from_wire(lm_ggml_op op, int32_t * params) {
    if (op == LM_GGML_OP_UNARY) {
        const int u = unary_from_wire(params[0]);
        params[0] = u;
        return u >= 0;
    }
    if (const int w = prec_word(op); w >= 0) {
        if (params[w] != kWirePrecDefault && params[w] != kWirePrecF32) {
            return false;
        }
        params[w] = params[w] == kWirePrecF32 ? LM_GGML_PREC_F32 : LM_GGML_PREC_DEFAULT;
    }
    return true;
}

} // namespace rpc
