// MUL_MAT: d[i01, i11, i12, i13] = sum_k a[k, i01, i12 / r2, i13 / r3] * b[k, i11, i12, i13]
// a: F32, F16 (any strides) or a quantized type (rows of whole blocks);
// b: F32 or F16, any strides; d: F32.
#define MV_WG 64

// 32 elements of a quantized row from element u * 32, decoded
inline void decode32(global const char * row, int ta, long u, float * w) {
    switch (ta) {
        case T_Q4_0: {
            global const char * blk = row + u * BS_Q4_0;
            global const uchar * qs = (global const uchar *)(blk + 2);
            const float dd = ld_half(blk);
            for (int j = 0; j < 16; j++) {
                w[j]      = dd * (float)((qs[j] & 0xF) - 8);
                w[j + 16] = dd * (float)((qs[j] >> 4) - 8);
            }
            break;
        }
        case T_Q4_1: {
            global const char * blk = row + u * BS_Q4_1;
            global const uchar * qs = (global const uchar *)(blk + 4);
            const float dd = ld_half(blk), mm = ld_half(blk + 2);
            for (int j = 0; j < 16; j++) {
                w[j]      = dd * (float)(qs[j] & 0xF) + mm;
                w[j + 16] = dd * (float)(qs[j] >> 4) + mm;
            }
            break;
        }
        case T_Q5_0: {
            global const char * blk = row + u * BS_Q5_0;
            global const uchar * qs = (global const uchar *)(blk + 6);
            const uint qh = q5_high_bits(blk + 2);
            const float dd = ld_half(blk);
            for (int j = 0; j < 32; j++) {
                w[j] = dd * (float)(q5_value(qs, qh, j) - 16);
            }
            break;
        }
        case T_Q5_1: {
            global const char * blk = row + u * BS_Q5_1;
            global const uchar * qs = (global const uchar *)(blk + 8);
            const uint qh = q5_high_bits(blk + 4);
            const float dd = ld_half(blk), mm = ld_half(blk + 2);
            for (int j = 0; j < 32; j++) {
                w[j] = dd * (float)q5_value(qs, qh, j) + mm;
            }
            break;
        }
        case T_Q8_0: {
            global const char * blk = row + u * BS_Q8_0;
            const float dd = ld_half(blk);
            for (int j = 0; j < 32; j++) {
                w[j] = dd * (float)blk[2 + j];
            }
            break;
        }
        case T_Q4_K: {
            // sub-block u % 8 of super-block u / 8: 4-bit values of one
            // nibble half of a 32-byte group, 6-bit scale and min
            global const char * blk = row + (u / 8) * BS_Q4_K;
            const int sb = (int)(u % 8);
            global const uchar * qs = (global const uchar *)(blk + 16) + (sb / 2) * 32;
            uchar sc, mn;
            k_scale_min(sb, (global const uchar *)(blk + 4), &sc, &mn);
            const float dd = ld_half(blk) * sc, mm = ld_half(blk + 2) * mn;
            const int shift = (sb % 2) * 4;
            for (int j = 0; j < 32; j++) {
                w[j] = dd * (float)((qs[j] >> shift) & 0xF) - mm;
            }
            break;
        }
        case T_Q6_K: {
            // quarter c % 4 of half c / 4 (c = u % 8) of super-block u / 8
            global const char * blk = row + (u / 8) * BS_Q6_K;
            const int c = (int)(u % 8), h = c / 4, q = c % 4;
            global const uchar * ql = (global const uchar *)blk + h * 64 + (q % 2) * 32;
            global const uchar * qh = (global const uchar *)(blk + 128) + h * 32;
            global const char  * sc = blk + 192 + h * 8 + 2 * q;
            const float dd = ld_half(blk + 208);
            const int lshift = (q / 2) * 4, hshift = 2 * q;
            for (int j = 0; j < 32; j++) {
                const int v = (((ql[j] >> lshift) & 0xF) | (((qh[j] >> hshift) & 3) << 4)) - 32;
                w[j] = dd * sc[j / 16] * (float)v;
            }
            break;
        }
        default:
            for (int j = 0; j < 32; j++) {
                w[j] = row_elem(row, ta, u * 32 + j, 0);
            }
            break;
    }
}

// 32 consecutive elements of a quantized row, from element u * 32, dotted
// with b's elements at the same positions.
inline float dot32(global const char * row, int ta, long u, global const char * bp, ulong nb10, int tb) {
    float s = 0.0f;
    switch (ta) {
        case T_Q4_0: {
            global const char * blk = row + u * BS_Q4_0;
            global const uchar * qs = (global const uchar *)(blk + 2);
            for (int j = 0; j < 16; j++) {
                s += (float)((qs[j] & 0xF) - 8) * ld(bp + j * nb10, tb) +
                     (float)((qs[j] >> 4) - 8) * ld(bp + (j + 16) * nb10, tb);
            }
            return s * ld_half(blk);
        }
        case T_Q4_1: {
            global const char * blk = row + u * BS_Q4_1;
            global const uchar * qs = (global const uchar *)(blk + 4);
            float sb = 0.0f;
            for (int j = 0; j < 16; j++) {
                const float b0 = ld(bp + j * nb10, tb);
                const float b1 = ld(bp + (j + 16) * nb10, tb);
                s += (float)(qs[j] & 0xF) * b0 + (float)(qs[j] >> 4) * b1;
                sb += b0 + b1;
            }
            return s * ld_half(blk) + sb * ld_half(blk + 2);
        }
        case T_Q8_0: {
            global const char * blk = row + u * BS_Q8_0;
            for (int j = 0; j < 32; j++) {
                s += (float)blk[2 + j] * ld(bp + j * nb10, tb);
            }
            return s * ld_half(blk);
        }
        default: {
            float w[32];
            decode32(row, ta, u, w);
            for (int j = 0; j < 32; j++) {
                s += w[j] * ld(bp + j * nb10, tb);
            }
            return s;
        }
    }
}

// One work-group per (i01, i11, i12 + ne12 * i13): NDRange (MV_WG * ne01, ne11, ne12 * ne13).
kernel void k_mul_mat_vec(global const char * a, ulong oa, long ne00, ulong nb00, ulong nb01, ulong nb02, ulong nb03, int ta,
                          global const char * b, ulong ob, ulong nb10, ulong nb11, ulong nb12, ulong nb13, int tb,
                          global char * d, ulong od, ulong nbd1, ulong nbd2, ulong nbd3,
                          long ne12, long r2, long r3) {
    local float buf[MV_WG];
    const long i01 = get_group_id(0);
    const long i11 = get_global_id(1);
    const long i12 = get_global_id(2) % ne12;
    const long i13 = get_global_id(2) / ne12;
    const int  l   = get_local_id(0);
    global const char * row = a + oa + i01 * nb01 + (i12 / r2) * nb02 + (i13 / r3) * nb03;
    global const char * col = b + ob + i11 * nb11 + i12 * nb12 + i13 * nb13;
    float s = 0.0f;
    if (ta == T_F32 || ta == T_F16) {
        for (long k = l; k < ne00; k += MV_WG) {
            s += ld(row + k * nb00, ta) * ld(col + k * nb10, tb);
        }
    } else {
        for (long u = l; u < ne00 / 32; u += MV_WG) {
            s += dot32(row, ta, u, col + u * 32 * nb10, nb10, tb);
        }
    }
    buf[l] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = MV_WG / 2; h > 0; h >>= 1) {
        if (l < h) {
            buf[l] += buf[l + h];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) {
        *(global float *)(d + od + i01 * 4 + i11 * nbd1 + i12 * nbd2 + i13 * nbd3) = buf[0];
    }
}

// Register tiles: each work-item computes one row of a against RB_C
// columns of b, decoding every weight once for all of them.
// NDRange (ne01, ceil(ne11 / RB_C), ne12 * ne13).
#define RB_C 8
kernel void k_mul_mat_rb(global const char * a, ulong oa, long ne00, ulong nb00, ulong nb01, ulong nb02, ulong nb03, int ta,
                         global const char * b, ulong ob, long ne11, ulong nb10, ulong nb11, ulong nb12, ulong nb13, int tb,
                         global char * d, ulong od, ulong nbd1, ulong nbd2, ulong nbd3,
                         long ne12, long r2, long r3) {
    const long i01 = get_global_id(0);
    const long c0  = get_global_id(1) * RB_C;
    const long i12 = get_global_id(2) % ne12;
    const long i13 = get_global_id(2) / ne12;
    const int  nc  = (int)min((long)RB_C, ne11 - c0);
    global const char * row = a + oa + i01 * nb01 + (i12 / r2) * nb02 + (i13 / r3) * nb03;
    global const char * col = b + ob + c0 * nb11 + i12 * nb12 + i13 * nb13;
    const bool b_dense = tb == T_F32 && nb10 == 4; // the common case, without per-element type tests
    float acc[RB_C];
    for (int c = 0; c < RB_C; c++) {
        acc[c] = 0.0f;
    }
    if (ta == T_F32 || ta == T_F16) {
        for (long k = 0; k < ne00; k++) {
            const float w = ld(row + k * nb00, ta);
            for (int c = 0; c < nc; c++) {
                acc[c] += w * ld(col + c * nb11 + k * nb10, tb);
            }
        }
    } else {
        float w[32];
        for (long u = 0; u < ne00 / 32; u++) {
            decode32(row, ta, u, w);
            for (int c = 0; c < nc; c++) {
                global const char * bp = col + c * nb11 + u * 32 * nb10;
                float s = 0.0f;
                if (b_dense) {
                    // explicit 4-wide products: compilers do not reorder a float sum themselves
                    global const float * bf = (global const float *)bp;
                    float4 s4 = (float4)(0.0f);
                    for (int j = 0; j < 8; j++) {
                        s4 = mad(vload4(j, w), vload4(j, bf), s4);
                    }
                    s = (s4.x + s4.y) + (s4.z + s4.w);
                } else {
                    for (int j = 0; j < 32; j++) {
                        s += w[j] * ld(bp + j * nb10, tb);
                    }
                }
                acc[c] += s;
            }
        }
    }
    global char * out = d + od + i01 * 4 + i12 * nbd2 + i13 * nbd3;
    for (int c = 0; c < nc; c++) {
        *(global float *)(out + (c0 + c) * nbd1) = acc[c];
    }
}
