// Shared double-precision references used by several tables.
#include "refs.h"

#include <cmath>

namespace opstest {

HTensor mul_mat_ref(const HTensor & a, const HTensor & b) {
    const int64_t K = a.ne[0];
    const int64_t r2 = b.ne[2] / a.ne[2], r3 = b.ne[3] / a.ne[3];
    return generate(sh(a.ne[1], b.ne[1], b.ne[2], b.ne[3]), [&](int64_t i, int64_t j, int64_t i2, int64_t i3) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k) {
            s += a.at(k, i, i2 / r2, i3 / r3) * b.at(k, j, i2, i3);
        }
        return s;
    });
}

HTensor norm_ref(const HTensor & a, double eps, bool rms) {
    HTensor r(a.ne);
    const int64_t n = a.ne[0];
    for (int64_t i3 = 0; i3 < a.ne[3]; ++i3)
        for (int64_t i2 = 0; i2 < a.ne[2]; ++i2)
            for (int64_t i1 = 0; i1 < a.ne[1]; ++i1) {
                double mean = 0, sq = 0;
                for (int64_t i0 = 0; i0 < n; ++i0) mean += a.at(i0, i1, i2, i3);
                mean = rms ? 0.0 : mean / n;
                for (int64_t i0 = 0; i0 < n; ++i0) {
                    const double d = a.at(i0, i1, i2, i3) - mean;
                    sq += d * d;
                }
                const double scale = 1.0 / std::sqrt(sq / n + eps);
                for (int64_t i0 = 0; i0 < n; ++i0) r.at(i0, i1, i2, i3) = (a.at(i0, i1, i2, i3) - mean) * scale;
            }
    return r;
}

double alibi_slope(int64_t h, int64_t n_head, double max_bias) {
    if (max_bias <= 0) {
        return 1.0;
    }
    const int64_t n = int64_t(1) << static_cast<int>(std::floor(std::log2(static_cast<double>(n_head))));
    const double m0 = std::pow(2.0, -max_bias / n);
    const double m1 = std::pow(2.0, -(max_bias / 2.0) / n);
    return h < n ? std::pow(m0, h + 1) : std::pow(m1, 2 * (h - n) + 1);
}

HTensor soft_max_ref(const HTensor & a, const HTensor * mask, double scale, double max_bias) {
    HTensor r(a.ne);
    std::vector<double> w(static_cast<size_t>(a.ne[0]));
    for (int64_t i3 = 0; i3 < a.ne[3]; ++i3)
        for (int64_t i2 = 0; i2 < a.ne[2]; ++i2)
            for (int64_t i1 = 0; i1 < a.ne[1]; ++i1) {
                const double slope = alibi_slope(i2, a.ne[2], max_bias);
                double mx = -INFINITY;
                for (int64_t i0 = 0; i0 < a.ne[0]; ++i0) {
                    w[i0] = a.at(i0, i1, i2, i3) * scale + (mask ? slope * mask->at(i0, i1) : 0.0);
                    mx = std::fmax(mx, w[i0]);
                }
                double sum = 0;
                for (int64_t i0 = 0; i0 < a.ne[0]; ++i0) {
                    w[i0] = std::exp(w[i0] - mx);
                    sum += w[i0];
                }
                for (int64_t i0 = 0; i0 < a.ne[0]; ++i0) r.at(i0, i1, i2, i3) = w[i0] / sum;
            }
    return r;
}

} // namespace opstest
