// Renderings of benchmark results (see bench_report.h).
#include "bench_report.h"

#include <cmath>
#include <cstdio>

#include "common.h"

namespace cli {

namespace {

std::string fmt(const char * f, double v) {
    char b[64];
    std::snprintf(b, sizeof b, f, v);
    return b;
}

std::string json_string(const std::string & s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\')
            out += '\\', out += char(c);
        else if (c == '\n')
            out += "\\n";
        else if (c < 0x20)
            out += fmt("\\u%04x", c);
        else
            out += char(c);
    }
    return out + "\"";
}

std::string json_numbers(const std::vector<double> & v, const char * f) {
    std::string out = "[";
    for (size_t i = 0; i < v.size(); i++) out += (i ? ", " : "") + fmt(f, v[i]);
    return out + "]";
}

std::string csv_field(const std::string & s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

// Right- or left-aligned cell of a fixed width.
std::string cell(const std::string & s, size_t w, bool right) {
    if (s.size() >= w) return s;
    const std::string pad(w - s.size(), ' ');
    return right ? pad + s : s + pad;
}

} // namespace

std::string BenchResult::test_name() const {
    std::string name = n_prompt > 0 && n_gen > 0 ? "pp" + std::to_string(n_prompt) + "+tg" + std::to_string(n_gen)
                       : n_prompt > 0            ? "pp" + std::to_string(n_prompt)
                                                 : "tg" + std::to_string(n_gen);
    return n_depth > 0 ? name + " @ d" + std::to_string(n_depth) : name;
}

std::vector<double> BenchResult::samples_ts() const {
    std::vector<double> ts;
    for (double ns : samples_ns) ts.push_back(ns > 0 ? tokens() * 1e9 / ns : 0.0);
    return ts;
}

double mean(const std::vector<double> & v) {
    if (v.empty()) return 0.0;
    double s = 0;
    for (double x : v) s += x;
    return s / double(v.size());
}

double stddev(const std::vector<double> & v) {
    if (v.size() < 2) return 0.0;
    const double m = mean(v);
    double s = 0;
    for (double x : v) s += (x - m) * (x - m);
    return std::sqrt(s / double(v.size() - 1));
}

std::string report_markdown(const std::vector<BenchResult> & rs, const std::string & build) {
    struct Col {
        const char * name;
        size_t width;
        bool right;
    };
    const Col cols[] = {{"model", 30, false}, {"size", 10, true}, {"params", 10, true}, {"backend", 10, false},
                        {"threads", 7, true}, {"test", 15, true}, {"t/s", 20, true}};
    std::string out = "|";
    for (const Col & c : cols) {
        out += ' ';
        out += cell(c.name, c.width, c.right);
        out += " |";
    }
    out += "\n|";
    for (const Col & c : cols) {
        out += ' ';
        out += std::string(c.width - 1, '-');
        out += c.right ? ": |" : "- |";
    }
    out += "\n";
    for (const BenchResult & r : rs) {
        const std::vector<double> ts = r.samples_ts();
        const std::string vals[] = {r.model_type,
                                    format_bytes(r.model_size),
                                    format_count(r.model_n_params),
                                    r.backend,
                                    std::to_string(r.n_threads),
                                    r.test_name(),
                                    fmt("%.2f", mean(ts)) + " ± " + fmt("%.2f", stddev(ts))};
        out += "|";
        for (size_t i = 0; i < std::size(cols); i++) {
            // "±" is two bytes but one column wide
            const size_t w = cols[i].width + (i + 1 == std::size(cols) ? 1 : 0);
            out += ' ';
            out += cell(vals[i], w, cols[i].right);
            out += " |";
        }
        out += "\n";
    }
    return out + "\nbuild: " + build + "\n";
}

std::string report_json(const std::vector<BenchResult> & rs, const std::string & version, const std::string & commit) {
    std::string out = "[\n";
    for (size_t i = 0; i < rs.size(); i++) {
        const BenchResult & r = rs[i];
        const std::vector<double> ts = r.samples_ts();
        out += "  {\n";
        out += "    \"build_version\": " + json_string(version) + ",\n";
        out += "    \"build_commit\": " + json_string(commit) + ",\n";
        out += "    \"model_filename\": " + json_string(r.model_filename) + ",\n";
        out += "    \"model_type\": " + json_string(r.model_type) + ",\n";
        out += "    \"model_size\": " + std::to_string(r.model_size) + ",\n";
        out += "    \"model_n_params\": " + std::to_string(r.model_n_params) + ",\n";
        out += "    \"backend\": " + json_string(r.backend) + ",\n";
        out += "    \"n_batch\": " + std::to_string(r.n_batch) + ",\n";
        out += "    \"n_threads\": " + std::to_string(r.n_threads) + ",\n";
        out += "    \"n_prompt\": " + std::to_string(r.n_prompt) + ",\n";
        out += "    \"n_gen\": " + std::to_string(r.n_gen) + ",\n";
        out += "    \"n_depth\": " + std::to_string(r.n_depth) + ",\n";
        out += "    \"test\": " + json_string(r.test_name()) + ",\n";
        out += "    \"avg_ns\": " + fmt("%.0f", mean(r.samples_ns)) + ",\n";
        out += "    \"stddev_ns\": " + fmt("%.0f", stddev(r.samples_ns)) + ",\n";
        out += "    \"avg_ts\": " + fmt("%.6f", mean(ts)) + ",\n";
        out += "    \"stddev_ts\": " + fmt("%.6f", stddev(ts)) + ",\n";
        out += "    \"samples_ns\": " + json_numbers(r.samples_ns, "%.0f") + ",\n";
        out += "    \"samples_ts\": " + json_numbers(ts, "%.6f") + "\n";
        out += i + 1 < rs.size() ? "  },\n" : "  }\n";
    }
    return out + "]\n";
}

std::string report_csv(const std::vector<BenchResult> & rs, const std::string & version, const std::string & commit) {
    std::string out =
        "build_version,build_commit,model_filename,model_type,model_size,model_n_params,backend,n_batch,n_threads,"
        "n_prompt,n_gen,n_depth,test,avg_ns,stddev_ns,avg_ts,stddev_ts\n";
    for (const BenchResult & r : rs) {
        const std::vector<double> ts = r.samples_ts();
        const std::string fields[] = {version,
                                      commit,
                                      r.model_filename,
                                      r.model_type,
                                      std::to_string(r.model_size),
                                      std::to_string(r.model_n_params),
                                      r.backend,
                                      std::to_string(r.n_batch),
                                      std::to_string(r.n_threads),
                                      std::to_string(r.n_prompt),
                                      std::to_string(r.n_gen),
                                      std::to_string(r.n_depth),
                                      r.test_name(),
                                      fmt("%.0f", mean(r.samples_ns)),
                                      fmt("%.0f", stddev(r.samples_ns)),
                                      fmt("%.6f", mean(ts)),
                                      fmt("%.6f", stddev(ts))};
        for (size_t i = 0; i < std::size(fields); i++) {
            if (i) out += ',';
            out += csv_field(fields[i]);
        }
        out += "\n";
    }
    return out;
}

} // namespace cli
