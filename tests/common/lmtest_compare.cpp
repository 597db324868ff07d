#include "lmtest_compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace lmtest {
namespace {

std::string index_str(const Shape & ne, int64_t flat) {
    int64_t i[4];
    for (int k = 0; k < 4; ++k) {
        i[k] = flat % ne[k];
        flat /= ne[k];
    }
    char buf[96];
    std::snprintf(buf, sizeof(buf), "[%lld,%lld,%lld,%lld]", (long long) i[0], (long long) i[1], (long long) i[2],
                  (long long) i[3]);
    return buf;
}

bool shapes_match(const HTensor & e, const HTensor & a, CompareResult * r) {
    if (e.ne != a.ne || e.v.size() != a.v.size()) {
        char buf[256];
        std::snprintf(buf, sizeof(buf), "shape mismatch: expected [%lld,%lld,%lld,%lld], got [%lld,%lld,%lld,%lld]",
                      (long long) e.ne[0], (long long) e.ne[1], (long long) e.ne[2], (long long) e.ne[3],
                      (long long) a.ne[0], (long long) a.ne[1], (long long) a.ne[2], (long long) a.ne[3]);
        r->ok = false;
        r->message = buf;
        return false;
    }
    return true;
}

bool skipped(const HTensor & e, size_t i) { return !e.dont_care.empty() && e.dont_care[i]; }

bool same_nonfinite(double e, double a) {
    if (std::isnan(e)) {
        return std::isnan(a);
    }
    return a == e; // +-inf
}

// up to `count` worst elements as "idx: got X, want Y" lines
std::string worst_elements(const HTensor & e, const HTensor & a, int count) {
    std::vector<std::pair<double, size_t>> errs;
    for (size_t i = 0; i < e.v.size(); ++i) {
        if (skipped(e, i)) {
            continue;
        }
        double d = std::fabs(a.v[i] - e.v[i]);
        if (std::isnan(d)) {
            d = INFINITY;
        }
        if (d > 0 || (std::isnan(a.v[i]) != std::isnan(e.v[i]))) {
            errs.emplace_back(d, i);
        }
    }
    std::partial_sort(errs.begin(), errs.begin() + std::min<size_t>(count, errs.size()), errs.end(),
                      [](const auto & x, const auto & y) { return x.first > y.first; });
    std::string s;
    char buf[192];
    for (size_t k = 0; k < std::min<size_t>(count, errs.size()); ++k) {
        const size_t i = errs[k].second;
        std::snprintf(buf, sizeof(buf), "\n    %s: got %.9g, want %.9g", index_str(e.ne, (int64_t) i).c_str(), a.v[i],
                      e.v[i]);
        s += buf;
    }
    std::snprintf(buf, sizeof(buf), "\n    (%zu of %zu elements differ)", errs.size(), e.v.size());
    return s + buf;
}

} // namespace

CompareResult compare_nmse(const HTensor & expected, const HTensor & actual, double max_nmse) {
    CompareResult r;
    if (!shapes_match(expected, actual, &r)) {
        return r;
    }
    double num = 0.0, den = 0.0;
    size_t bad_nonfinite = 0;
    for (size_t i = 0; i < expected.v.size(); ++i) {
        if (skipped(expected, i)) {
            continue;
        }
        const double e = expected.v[i], a = actual.v[i];
        if (!std::isfinite(e) || !std::isfinite(a)) {
            if (!std::isfinite(e) && same_nonfinite(e, a)) {
                continue;
            }
            ++bad_nonfinite;
            continue;
        }
        num += (a - e) * (a - e);
        den += e * e;
    }
    r.nmse = den > 0 ? num / den : num;
    char buf[256];
    if (bad_nonfinite != 0) {
        r.ok = false;
        r.nmse = NAN;
        std::snprintf(buf, sizeof(buf), "%zu elements are non-finite where the reference is not (or vice versa)",
                      bad_nonfinite);
        r.message = buf + worst_elements(expected, actual, 6);
        return r;
    }
    r.ok = r.nmse <= max_nmse;
    if (!r.ok) {
        std::snprintf(buf, sizeof(buf), "NMSE %.3e > limit %.1e", r.nmse, max_nmse);
        r.message = buf + worst_elements(expected, actual, 6);
    }
    return r;
}

CompareResult compare_exact(const HTensor & expected, const HTensor & actual) {
    CompareResult r;
    if (!shapes_match(expected, actual, &r)) {
        return r;
    }
    size_t diff = 0;
    for (size_t i = 0; i < expected.v.size(); ++i) {
        if (skipped(expected, i)) {
            continue;
        }
        const double e = expected.v[i], a = actual.v[i];
        if (!(a == e || (std::isnan(a) && std::isnan(e)))) {
            ++diff;
        }
    }
    r.ok = diff == 0;
    if (!r.ok) {
        r.message = "exact comparison failed:" + worst_elements(expected, actual, 8);
    }
    return r;
}

} // namespace lmtest
