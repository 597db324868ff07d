// Element-wise kernels over 4-D strided tensors. The NDRange is
// (ne0, ne1, ne2 * ne3) of the destination; every tensor is addressed by
// byte strides, so views, permutations and broadcasts need no copies.

#define OP_ADD 0
#define OP_SUB 1
#define OP_MUL 2
#define OP_DIV 3

// d = a (op) b, b repeated over every dimension to a's shape
kernel void k_binary(int op,
                     global const char * a, ulong oa, ulong nba0, ulong nba1, ulong nba2, ulong nba3, int ta,
                     global const char * b, ulong ob, long neb0, long neb1, long neb2, long neb3,
                     ulong nbb0, ulong nbb1, ulong nbb2, ulong nbb3, int tb,
                     global char * d, ulong od, long ne2, ulong nbd0, ulong nbd1, ulong nbd2, ulong nbd3, int td) {
    const long i0 = get_global_id(0);
    const long i1 = get_global_id(1);
    const long i2 = get_global_id(2) % ne2;
    const long i3 = get_global_id(2) / ne2;
    const float x = ld(a + oa + i0 * nba0 + i1 * nba1 + i2 * nba2 + i3 * nba3, ta);
    const float y = ld(b + ob + (i0 % neb0) * nbb0 + (i1 % neb1) * nbb1 + (i2 % neb2) * nbb2 + (i3 % neb3) * nbb3, tb);
    float r;
    switch (op) {
        case OP_ADD: r = x + y; break;
        case OP_SUB: r = x - y; break;
        case OP_MUL: r = x * y; break;
        default:     r = x / y; break;
    }
    st(d + od + i0 * nbd0 + i1 * nbd1 + i2 * nbd2 + i3 * nbd3, td, r);
}

#define U_SCALE      0
#define U_SILU       1
#define U_GELU       2
#define U_GELU_QUICK 3
#define U_TANH       4
#define U_RELU       5
#define U_NEG        6
#define U_SIGMOID    7
#define U_SQR        8
#define U_SQRT       9
#define U_COPY       10
#define U_ABS        11
#define U_SGN        12
#define U_STEP       13
#define U_ELU        14
#define U_HARDSWISH  15
#define U_HARDSIGMOID 16
#define U_EXP        17
#define U_SIN        18
#define U_COS        19
#define U_LOG        20
#define U_CLAMP      21

inline float unary_f(int op, float x, float p0, float p1) {
    switch (op) {
        case U_SCALE:      return x * p0;
        case U_SILU:       return x / (1.0f + exp(-x));
        case U_GELU: {
            const float c = 0.7978845608028654f; // sqrt(2/pi)
            return 0.5f * x * (1.0f + tanh(c * x * (1.0f + 0.044715f * x * x)));
        }
        case U_GELU_QUICK: return x / (1.0f + exp(-1.702f * x));
        case U_TANH:       return tanh(x);
        case U_RELU:       return x > 0.0f ? x : 0.0f;
        case U_NEG:        return -x;
        case U_SIGMOID:    return 1.0f / (1.0f + exp(-x));
        case U_SQR:        return x * x;
        case U_SQRT:       return sqrt(x);
        case U_ABS:        return fabs(x);
        case U_SGN:        return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f);
        case U_STEP:       return x > 0.0f ? 1.0f : 0.0f;
        case U_ELU:        return x > 0.0f ? x : expm1(x);
        case U_HARDSWISH:  return x * fmin(1.0f, fmax(0.0f, (x + 3.0f) / 6.0f));
        case U_HARDSIGMOID: return fmin(1.0f, fmax(0.0f, (x + 3.0f) / 6.0f));
        case U_EXP:        return exp(x);
        case U_SIN:        return sin(x);
        case U_COS:        return cos(x);
        case U_LOG:        return log(x);
        case U_CLAMP:      return fmin(fmax(x, p0), p1);
        default:           return x;
    }
}

// d = f(a), same shape
kernel void k_unary(int op, float p0, float p1,
                    global const char * a, ulong oa, ulong nba0, ulong nba1, ulong nba2, ulong nba3, int ta,
                    global char * d, ulong od, long ne2, ulong nbd0, ulong nbd1, ulong nbd2, ulong nbd3, int td) {
    const long i0 = get_global_id(0);
    const long i1 = get_global_id(1);
    const long i2 = get_global_id(2) % ne2;
    const long i3 = get_global_id(2) / ne2;
    const float x = ld(a + oa + i0 * nba0 + i1 * nba1 + i2 * nba2 + i3 * nba3, ta);
    st(d + od + i0 * nbd0 + i1 * nbd1 + i2 * nbd2 + i3 * nbd3, td, unary_f(op, x, p0, p1));
}

// Element k (row-major logical order) of a goes to element k of d; the
// shapes may differ, the element counts match (CPY, CONT, DUP).
kernel void k_cpy(global const char * a, ulong oa, long nea0, long nea1, long nea2,
                  ulong nba0, ulong nba1, ulong nba2, ulong nba3, int ta,
                  global char * d, ulong od, long ne0, long ne1, long ne2,
                  ulong nbd0, ulong nbd1, ulong nbd2, ulong nbd3, int td) {
    const long i0 = get_global_id(0);
    const long i1 = get_global_id(1);
    const long i2 = get_global_id(2) % ne2;
    const long i3 = get_global_id(2) / ne2;
    long k = i0 + ne0 * (i1 + ne1 * (i2 + ne2 * i3));
    const long j0 = k % nea0; k /= nea0;
    const long j1 = k % nea1; k /= nea1;
    const long j2 = k % nea2; k /= nea2;
    const float x = ld(a + oa + j0 * nba0 + j1 * nba1 + j2 * nba2 + k * nba3, ta);
    st(d + od + i0 * nbd0 + i1 * nbd1 + i2 * nbd2 + i3 * nbd3, td, x);
}

// d = a and b joined along dimension dim
kernel void k_concat(int dim,
                     global const char * a, ulong oa, long nea0, long nea1, long nea2, long nea3,
                     ulong nba0, ulong nba1, ulong nba2, ulong nba3,
                     global const char * b, ulong ob, ulong nbb0, ulong nbb1, ulong nbb2, ulong nbb3, int t,
                     global char * d, ulong od, long ne2, ulong nbd0, ulong nbd1, ulong nbd2, ulong nbd3) {
    long i[4];
    i[0] = get_global_id(0);
    i[1] = get_global_id(1);
    i[2] = get_global_id(2) % ne2;
    i[3] = get_global_id(2) / ne2;
    const long nea[4] = {nea0, nea1, nea2, nea3};
    float x;
    if (i[dim] < nea[dim]) {
        x = ld(a + oa + i[0] * nba0 + i[1] * nba1 + i[2] * nba2 + i[3] * nba3, t);
    } else {
        i[dim] -= nea[dim];
        x = ld(b + ob + i[0] * nbb0 + i[1] * nbb1 + i[2] * nbb2 + i[3] * nbb3, t);
        i[dim] += nea[dim];
    }
    st(d + od + i[0] * nbd0 + i[1] * nbd1 + i[2] * nbd2 + i[3] * nbd3, t, x);
}
