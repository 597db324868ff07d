// Row kernels: GET_ROWS (one work-item per row), and the reductions
// RMS_NORM, NORM, SOFT_MAX (one work-group of WG work-items per row, a
// tree reduction in local memory).
#define WG 64

// dst[:, i10, i11, i12] = a[:, ids[i10, i11, i12], i11, i12], dequantized
kernel void k_get_rows(global const char * a, ulong oa, long ne00, ulong nb00, ulong nb01, ulong nb02, ulong nb03,
                       long ne01, int ta,
                       global const char * ids, ulong oi, ulong nbi0, ulong nbi1, ulong nbi2,
                       global char * d, ulong od, ulong nbd0, ulong nbd1, ulong nbd2, ulong nbd3, int td) {
    const long i10 = get_global_id(0);
    const long i11 = get_global_id(1);
    const long i12 = get_global_id(2);
    const int r = *(global const int *)(ids + oi + i10 * nbi0 + i11 * nbi1 + i12 * nbi2);
    global char * out = d + od + i10 * nbd1 + i11 * nbd2 + i12 * nbd3;
    if (r < 0 || r >= ne01) {
        // an id outside the table: a visible NaN row rather than a stray read
        for (long i0 = 0; i0 < ne00; i0++) {
            st(out + i0 * nbd0, td, NAN);
        }
        return;
    }
    global const char * row = a + oa + r * nb01 + i11 * nb02 + i12 * nb03;
    for (long i0 = 0; i0 < ne00; i0++) {
        st(out + i0 * nbd0, td, row_elem(row, ta, i0, nb00));
    }
}

inline float wg_sum(local float * buf, float v) {
    const int l = get_local_id(0);
    buf[l] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = WG / 2; s > 0; s >>= 1) {
        if (l < s) {
            buf[l] += buf[l + s];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const float r = buf[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}

inline float wg_max(local float * buf, float v) {
    const int l = get_local_id(0);
    buf[l] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = WG / 2; s > 0; s >>= 1) {
        if (l < s) {
            buf[l] = fmax(buf[l], buf[l + s]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const float r = buf[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}

// NDRange (WG * ne01, ne02, ne03), local (WG, 1, 1). rms: 1 = RMS_NORM, 0 = NORM
kernel void k_norm(int rms, float eps, long ne00,
                   global const char * a, ulong oa, ulong nba0, ulong nba1, ulong nba2, ulong nba3,
                   global char * d, ulong od, ulong nbd0, ulong nbd1, ulong nbd2, ulong nbd3) {
    local float buf[WG];
    const long i1 = get_group_id(0);
    const long i2 = get_global_id(1);
    const long i3 = get_global_id(2);
    const int  l  = get_local_id(0);
    global const char * x = a + oa + i1 * nba1 + i2 * nba2 + i3 * nba3;
    global char * y = d + od + i1 * nbd1 + i2 * nbd2 + i3 * nbd3;
    float mean = 0.0f;
    if (!rms) {
        float s = 0.0f;
        for (long i = l; i < ne00; i += WG) {
            s += *(global const float *)(x + i * nba0);
        }
        mean = wg_sum(buf, s) / (float)ne00;
    }
    float s2 = 0.0f;
    for (long i = l; i < ne00; i += WG) {
        const float v = *(global const float *)(x + i * nba0) - mean;
        s2 += v * v;
    }
    const float scale = rsqrt(wg_sum(buf, s2) / (float)ne00 + eps);
    for (long i = l; i < ne00; i += WG) {
        *(global float *)(y + i * nbd0) = (*(global const float *)(x + i * nba0) - mean) * scale;
    }
}

// y = softmax(x * scale + slope * mask) along dim 0; mask row i1 serves
// every head (tm < 0: no mask). NDRange (WG * ne01, ne02, ne03).
kernel void k_soft_max(float scale, float max_bias, float m0, float m1, uint n_log2, long ne00,
                       global const char * a, ulong oa, ulong nba1, ulong nba2, ulong nba3,
                       global const char * m, ulong om, ulong nbm0, ulong nbm1, int tm,
                       global char * d, ulong od, ulong nbd1, ulong nbd2, ulong nbd3) {
    local float buf[WG];
    const long i1 = get_group_id(0);
    const long i2 = get_global_id(1);
    const long i3 = get_global_id(2);
    const int  l  = get_local_id(0);
    global const float * x = (global const float *)(a + oa + i1 * nba1 + i2 * nba2 + i3 * nba3);
    global float * y = (global float *)(d + od + i1 * nbd1 + i2 * nbd2 + i3 * nbd3);
    global const char * mrow = m + om + i1 * nbm1;
    float slope = 1.0f;
    if (max_bias > 0.0f) {
        const uint h = (uint)i2;
        slope = h < n_log2 ? pow(m0, (float)(h + 1)) : pow(m1, (float)(2 * (h - n_log2) + 1));
    }
    float mx = -INFINITY;
    for (long i = l; i < ne00; i += WG) {
        const float v = x[i] * scale + (tm >= 0 ? slope * ld(mrow + i * nbm0, tm) : 0.0f);
        y[i] = v;
        mx = fmax(mx, v);
    }
    mx = wg_max(buf, mx);
    float s = 0.0f;
    for (long i = l; i < ne00; i += WG) {
        const float e = mx == -INFINITY ? 0.0f : exp(y[i] - mx);
        y[i] = e;
        s += e;
    }
    s = wg_sum(buf, s);
    const float inv = s > 0.0f ? 1.0f / s : 0.0f;
    for (long i = l; i < ne00; i += WG) {
        y[i] *= inv;
    }
}
