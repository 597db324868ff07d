// FLASH_ATTN_EXT: one work-group of WG work-items per query row
// (NDRange (WG * n_q, n_head, n_batch)). Keys go by in chunks of WG: each
// work-item scores one key of the chunk, the group folds the chunk into a
// running max M and sum S (online softmax), and each work-item then
// accumulates its own output dimensions d = l, l + WG, ... over the chunk.
#define FA_MAX_D 256
#define FA_PER_LANE (FA_MAX_D / WG)

kernel void k_flash_attn(long D, long n_kv, float scale, float softcap, float max_bias, float m0, float m1, uint n_log2,
                         long rk2, long rk3, long rv2, long rv3,
                         global const char * q, ulong oq, ulong nbq1, ulong nbq2, ulong nbq3,
                         global const char * k, ulong ok, ulong nbk0, ulong nbk1, ulong nbk2, ulong nbk3, int tk,
                         global const char * v, ulong ov, ulong nbv0, ulong nbv1, ulong nbv2, ulong nbv3, int tv,
                         global const char * m, ulong om, ulong nbm0, ulong nbm1, int tm,
                         global char * d, ulong od, ulong nbd1, ulong nbd2, ulong nbd3) {
    local float qs[FA_MAX_D];
    local float w[WG];
    local float red[WG];
    const long iq1 = get_group_id(0);
    const long iq2 = get_global_id(1);
    const long iq3 = get_global_id(2);
    const int  l   = get_local_id(0);

    global const char * qrow = q + oq + iq1 * nbq1 + iq2 * nbq2 + iq3 * nbq3;
    for (long i = l; i < D; i += WG) {
        qs[i] = ((global const float *)qrow)[i];
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    float slope = 1.0f;
    if (max_bias > 0.0f) {
        const uint h = (uint)iq2;
        slope = h < n_log2 ? pow(m0, (float)(h + 1)) : pow(m1, (float)(2 * (h - n_log2) + 1));
    }
    global const char * kbase = k + ok + (iq2 / rk2) * nbk2 + (iq3 / rk3) * nbk3;
    global const char * vbase = v + ov + (iq2 / rv2) * nbv2 + (iq3 / rv3) * nbv3;
    global const char * mrow  = m + om + iq1 * nbm1;

    float acc[FA_PER_LANE];
    for (int j = 0; j < FA_PER_LANE; j++) {
        acc[j] = 0.0f;
    }
    float M = -INFINITY, S = 0.0f;
    for (long c0 = 0; c0 < n_kv; c0 += WG) {
        const long ic = c0 + l;
        float s = -INFINITY;
        if (ic < n_kv) {
            const float mv = tm >= 0 ? slope * ld(mrow + ic * nbm0, tm) : 0.0f;
            if (mv != -INFINITY) {
                global const char * krow = kbase + ic * nbk1;
                float dot = 0.0f;
                for (long i = 0; i < D; i++) {
                    dot += qs[i] * ld(krow + i * nbk0, tk);
                }
                s = dot * scale;
                if (softcap != 0.0f) {
                    s = softcap * tanh(s);
                }
                s += mv;
            }
        }
        const float cmax = wg_max(red, s);
        const float newM = fmax(M, cmax);
        if (newM == -INFINITY) {
            continue; // every key so far masked (the same for the whole group)
        }
        const float ms = M == -INFINITY ? 0.0f : exp(M - newM);
        const float wi = s == -INFINITY ? 0.0f : exp(s - newM);
        w[l] = wi;
        S = S * ms + wg_sum(red, wi);
        M = newM;
        const int nc = (int)min((long)WG, n_kv - c0);
        for (int j = 0; j < FA_PER_LANE; j++) {
            const long i = l + (long)j * WG;
            if (i < D) {
                float a = acc[j] * ms;
                for (int c = 0; c < nc; c++) {
                    if (w[c] != 0.0f) {
                        a += w[c] * ld(vbase + (c0 + c) * nbv1 + i * nbv0, tv);
                    }
                }
                acc[j] = a;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE); // w is rewritten by the next chunk
    }
    global float * out = (global float *)(d + od + iq2 * nbd1 + iq1 * nbd2 + iq3 * nbd3);
    for (int j = 0; j < FA_PER_LANE; j++) {
        const long i = l + (long)j * WG;
        if (i < D) {
            out[i] = acc[j] / S;
        }
    }
}
