// Shared helpers. Tensors arrive as (global char * base, ulong offset) and
// byte strides; F16 is read and written with vload_half/vstore_half_rte
// (core OpenCL 1.2, no cl_khr_fp16 needed). Type codes match lm_ggml_type.
#define T_F32  0
#define T_F16  1
#define T_Q4_0 2
#define T_Q4_1 3
#define T_Q5_0 6
#define T_Q5_1 7
#define T_Q8_0 8
#define T_Q4_K 12
#define T_Q6_K 14

#define QK4_0 32
#define QK4_1 32
#define QK5_0 32
#define QK5_1 32
#define QK8_0 32
#define QK_K 256

// block sizes in bytes: Q4_0 2+16, Q4_1 2+2+16, Q5_0 2+4+16, Q5_1 2+2+4+16,
// Q8_0 2+32, Q4_K 2+2+12+128, Q6_K 128+64+16+2
#define BS_Q4_0 18
#define BS_Q4_1 20
#define BS_Q5_0 22
#define BS_Q5_1 24
#define BS_Q8_0 34
#define BS_Q4_K 144
#define BS_Q6_K 210

inline float ld_half(global const char * p) {
    return vload_half(0, (global const half *)p);
}

inline float ld(global const char * p, int type) {
    return type == T_F16 ? vload_half(0, (global const half *)p) : *(global const float *)p;
}

inline void st(global char * p, int type, float v) {
    if (type == T_F16) {
        vstore_half_rte(v, 0, (global half *)p);
    } else {
        *(global float *)p = v;
    }
}

// Q5_0/Q5_1: the 32 fifth bits of a block, a little-endian uint32 at p
// (2-byte aligned only, so read byte by byte)
inline uint q5_high_bits(global const char * p) {
    global const uchar * u = (global const uchar *)p;
    return (uint)u[0] | ((uint)u[1] << 8) | ((uint)u[2] << 16) | ((uint)u[3] << 24);
}

// Q5_x value j (0..31) of a block: low nibble of qs[j] (j < 16) or high
// nibble of qs[j - 16], with bit j of qh as its fifth bit
inline int q5_value(global const uchar * qs, uint qh, int j) {
    const int lo = j < 16 ? (qs[j] & 0xF) : (qs[j - 16] >> 4);
    return lo | (int)(((qh >> j) & 1u) << 4);
}

// Q4_K/Q5_K packed 6-bit scale and min of sub-block j (0..7)
inline void k_scale_min(int j, global const uchar * q, uchar * d, uchar * m) {
    if (j < 4) {
        *d = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *d = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
        *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

// Element i of a row of `type` starting at `row` (rows of quantized types
// are whole blocks, contiguous).
inline float row_elem(global const char * row, int type, long i, ulong nb0) {
    switch (type) {
        case T_F32: return *(global const float *)(row + i * nb0);
        case T_F16: return vload_half(0, (global const half *)(row + i * nb0));
        case T_Q4_0: {
            global const char * b = row + (i / QK4_0) * BS_Q4_0;
            const int j = (int)(i % QK4_0);
            const uchar q = ((global const uchar *)(b + 2))[j & 15];
            const int v = j < 16 ? (q & 0xF) : (q >> 4);
            return ld_half(b) * (float)(v - 8);
        }
        case T_Q4_1: {
            global const char * b = row + (i / QK4_1) * BS_Q4_1;
            const int j = (int)(i % QK4_1);
            const uchar q = ((global const uchar *)(b + 4))[j & 15];
            const int v = j < 16 ? (q & 0xF) : (q >> 4);
            return ld_half(b) * (float)v + ld_half(b + 2);
        }
        case T_Q5_0: {
            global const char * b = row + (i / QK5_0) * BS_Q5_0;
            const int v = q5_value((global const uchar *)(b + 6), q5_high_bits(b + 2), (int)(i % QK5_0));
            return ld_half(b) * (float)(v - 16);
        }
        case T_Q5_1: {
            global const char * b = row + (i / QK5_1) * BS_Q5_1;
            const int v = q5_value((global const uchar *)(b + 8), q5_high_bits(b + 4), (int)(i % QK5_1));
            return ld_half(b) * (float)v + ld_half(b + 2);
        }
        case T_Q8_0: {
            global const char * b = row + (i / QK8_0) * BS_Q8_0;
            return ld_half(b) * (float)b[2 + (int)(i % QK8_0)];
        }
        case T_Q4_K: {
            global const char * b = row + (i / QK_K) * BS_Q4_K;
            const int j = (int)(i % QK_K);        // 0..255
            const int g = j / 64;                 // 64-element group: two sub-blocks
            const int l = j % 64;
            global const uchar * qs = (global const uchar *)(b + 16) + g * 32;
            uchar sc, mn;
            const int sb = 2 * g + (l >= 32);
            k_scale_min(sb, (global const uchar *)(b + 4), &sc, &mn);
            const int v = l < 32 ? (qs[l] & 0xF) : (qs[l - 32] >> 4);
            return ld_half(b) * sc * v - ld_half(b + 2) * mn;
        }
        case T_Q6_K: {
            global const char * b = row + (i / QK_K) * BS_Q6_K;
            const int j = (int)(i % QK_K);
            const int h = j / 128;                // half: 128 elements
            const int l = j % 128;
            const int quarter = l / 32;           // which of the 4 interleaved groups
            const int t = l % 32;
            global const uchar * ql = (global const uchar *)b + h * 64;
            global const uchar * qh = (global const uchar *)(b + 128) + h * 32;
            global const char  * sc = b + 192 + h * 8;
            int lo;
            switch (quarter) {
                case 0:  lo = ql[t] & 0xF; break;
                case 1:  lo = ql[t + 32] & 0xF; break;
                case 2:  lo = ql[t] >> 4; break;
                default: lo = ql[t + 32] >> 4; break;
            }
            const int hi = (qh[t] >> (2 * quarter)) & 3;
            const int q = (lo | (hi << 4)) - 32;
            return ld_half(b + 208) * sc[t / 16 + 2 * quarter] * q;
        }
        default: return 0.0f;
    }
}
