// ROPE, normal and NeoX modes, with optional frequency factors and YaRN.
// One work-item per pair of elements: NDRange (ne0 / 2, ne1, ne2 * ne3).
// Pair k's angle is pos * theta_scale^k, the power formed by repeated float
// multiplication exactly as the CPU backend forms it, so both agree.
kernel void k_rope(int n_dims, int neox, float theta_scale, float freq_scale, float ext_factor, float mscale,
                   float corr_low, float corr_high,
                   global const char * a, ulong oa, ulong nba0, ulong nba1, ulong nba2, ulong nba3, int t,
                   global const char * pos, ulong op,
                   global const char * ff, ulong of, int has_ff,
                   global char * d, ulong od, long ne2, ulong nbd0, ulong nbd1, ulong nbd2, ulong nbd3) {
    const int  p  = get_global_id(0);
    const long i1 = get_global_id(1);
    const long i2 = get_global_id(2) % ne2;
    const long i3 = get_global_id(2) / ne2;
    global const char * x = a + oa + i1 * nba1 + i2 * nba2 + i3 * nba3;
    global char * y = d + od + i1 * nbd1 + i2 * nbd2 + i3 * nbd3;
    if (2 * p >= n_dims && !(neox && p < n_dims / 2)) {
        // beyond the rotated dimensions: copied
        st(y + (2 * p) * nbd0, t, ld(x + (2 * p) * nba0, t));
        st(y + (2 * p + 1) * nbd0, t, ld(x + (2 * p + 1) * nba0, t));
        return;
    }
    const int k = p;
    const int e0 = neox ? p : 2 * p;
    const int e1 = neox ? p + n_dims / 2 : 2 * p + 1;
    float theta = (float)((global const int *)(pos + op))[i2];
    for (int j = 0; j < k; j++) {
        theta *= theta_scale;
    }
    const float f = has_ff ? ((global const float *)(ff + of))[k] : 1.0f;
    const float theta_extrap = theta / f;
    float th = freq_scale * theta_extrap;
    if (ext_factor != 0.0f) {
        const float r    = ((float)k - corr_low) / fmax(0.001f, corr_high - corr_low);
        const float ramp = (1.0f - fmin(1.0f, fmax(0.0f, r))) * ext_factor;
        th = th * (1.0f - ramp) + theta_extrap * ramp;
    }
    const float c = cos(th) * mscale;
    const float s = sin(th) * mscale;
    const float x0 = ld(x + e0 * nba0, t);
    const float x1 = ld(x + e1 * nba0, t);
    st(y + e0 * nbd0, t, x0 * c - x1 * s);
    st(y + e1 * nbd0, t, x0 * s + x1 * c);
}
