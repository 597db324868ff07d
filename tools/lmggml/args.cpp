// Command-line parsing: strict numbers (the whole value must parse and fit),
// "--name value" and "--name=value", one error line naming what is wrong.
#include "args.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace cli {

using lmllm::Status;

namespace {

template <typename T> bool parse_int(const std::string & s, T & out) {
    const char * b = s.data();
    const char * e = b + s.size();
    if (b != e && *b == '+') b++;
    auto [p, ec] = std::from_chars(b, e, out);
    return ec == std::errc() && p == e && b != e;
}

// A well-formed integer that does not fit T (e.g. -n 99999999999).
template <typename T> bool out_of_range(const std::string & s) {
    const char * b = s.data();
    const char * e = b + s.size();
    if (b != e && *b == '+') b++;
    T v{};
    auto [p, ec] = std::from_chars(b, e, v);
    return ec == std::errc::result_out_of_range && p == e;
}

template <typename T> Status int_error(const std::string & name, const std::string & value, const char * what) {
    if (out_of_range<T>(value)) {
        return Status::error("invalid value '" + value + "' for " + name +
                             " (out of range: " + std::to_string(std::numeric_limits<T>::min()) + " to " +
                             std::to_string(std::numeric_limits<T>::max()) + ")");
    }
    return Status::error("invalid value '" + value + "' for " + name + " (expected " + what + ")");
}

bool parse_float(const std::string & s, float & out) {
    if (s.empty()) return false;
    errno = 0;
    char * end = nullptr;
    const float v = std::strtof(s.c_str(), &end);
    if (errno != 0 || end != s.c_str() + s.size() || !std::isfinite(v)) return false;
    out = v;
    return true;
}

Status bad_value(const std::string & name, const std::string & value, const char * what) {
    return Status::error("invalid value '" + value + "' for " + name + " (expected " + what + ")");
}

} // namespace

ArgParser::ArgParser(std::string command, std::string usage, std::string summary)
    : command_(std::move(command)), usage_(std::move(usage)), summary_(std::move(summary)) {}

void ArgParser::add(const std::vector<std::string> & names, const std::string & metavar, const std::string & help,
                    std::function<Status(const std::string &)> set) {
    specs_.push_back({names, metavar, help, std::move(set)});
}

void ArgParser::flag(const std::vector<std::string> & names, bool * out, const std::string & help) {
    add(names, "", help, [out](const std::string &) {
        *out = true;
        return Status();
    });
}

void ArgParser::option(const std::vector<std::string> & names, std::string * out, const std::string & metavar,
                       const std::string & help) {
    add(names, metavar, help, [out](const std::string & v) {
        *out = v;
        return Status();
    });
}

void ArgParser::option(const std::vector<std::string> & names, int32_t * out, const std::string & metavar,
                       const std::string & help) {
    const std::string & name = names.back(); // the lambda keeps its own copy
    add(names, metavar, help, [out, name](const std::string & v) {
        return parse_int(v, *out) ? Status() : int_error<int32_t>(name, v, "an integer");
    });
}

void ArgParser::option(const std::vector<std::string> & names, uint32_t * out, const std::string & metavar,
                       const std::string & help) {
    const std::string & name = names.back(); // the lambda keeps its own copy
    add(names, metavar, help, [out, name](const std::string & v) {
        return parse_int(v, *out) ? Status() : int_error<uint32_t>(name, v, "a non-negative integer");
    });
}

void ArgParser::option(const std::vector<std::string> & names, float * out, const std::string & metavar,
                       const std::string & help) {
    const std::string & name = names.back(); // the lambda keeps its own copy
    add(names, metavar, help, [out, name](const std::string & v) {
        return parse_float(v, *out) ? Status() : bad_value(name, v, "a number");
    });
}

void ArgParser::option(const std::vector<std::string> & names, std::vector<int32_t> * out, const std::string & metavar,
                       const std::string & help) {
    const std::string & name = names.back(); // the lambda keeps its own copy
    add(names, metavar, help, [out, name](const std::string & v) {
        std::vector<int32_t> vals;
        size_t pos = 0;
        while (pos <= v.size()) {
            const size_t comma = std::min(v.find(',', pos), v.size());
            int32_t x = 0;
            if (!parse_int(v.substr(pos, comma - pos), x)) return bad_value(name, v, "comma-separated integers");
            vals.push_back(x);
            pos = comma + 1;
        }
        *out = std::move(vals);
        return Status();
    });
}

void ArgParser::option(const std::vector<std::string> & names, std::vector<std::string> * out,
                       const std::string & metavar, const std::string & help) {
    add(names, metavar, help, [out](const std::string & v) {
        out->push_back(v);
        return Status();
    });
}

void ArgParser::seed_option(const std::vector<std::string> & names, uint64_t * out, const std::string & help) {
    const std::string & name = names.back(); // the lambda keeps its own copy
    add(names, "S", help, [out, name](const std::string & v) {
        if (v == "-1") {
            *out = 0xFFFFFFFFu;
            return Status();
        }
        return parse_int(v, *out) ? Status() : bad_value(name, v, "a non-negative integer or -1");
    });
}

void ArgParser::positional(std::string * out, const std::string & metavar) {
    positional_ = out;
    positional_name_ = metavar;
}

void ArgParser::positionals(std::vector<std::string> * out) { positionals_ = out; }

const ArgParser::Spec * ArgParser::find(const std::string & name) const {
    for (const Spec & s : specs_) {
        for (const std::string & n : s.names) {
            if (n == name) return &s;
        }
    }
    return nullptr;
}

Status ArgParser::parse(int argc, char ** argv, int first, bool & help) const {
    help = false;
    for (int i = first; i < argc; i++) {
        const std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            help = true;
            return Status();
        }
    }
    bool have_positional = false;
    for (int i = first; i < argc; i++) {
        std::string a = argv[i];
        if (a.size() < 2 || a[0] != '-' || (a[1] >= '0' && a[1] <= '9')) {
            if (positionals_) {
                positionals_->push_back(a);
                continue;
            }
            if (!positional_ || have_positional) return Status::error("unexpected argument '" + a + "'");
            *positional_ = a;
            have_positional = true;
            continue;
        }
        std::string value;
        bool inline_value = false;
        if (const size_t eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
            value = a.substr(eq + 1);
            a = a.substr(0, eq);
            inline_value = true;
        }
        const Spec * s = find(a);
        if (!s) return Status::error("unknown option '" + a + "'");
        if (s->metavar.empty()) {
            if (inline_value) return Status::error("option " + a + " takes no value");
        } else if (!inline_value) {
            if (i + 1 >= argc) return Status::error("option " + a + " needs a value (" + s->metavar + ")");
            value = argv[++i];
        }
        if (Status st = s->set(value); !st.ok()) return st;
    }
    return Status();
}

std::string ArgParser::help_text() const {
    std::string out = "usage: lmggml " + usage_ + "\n\n" + summary_ + "\n";
    if (!specs_.empty()) out += "\noptions:\n";
    for (const Spec & s : specs_) {
        std::string left = "  ";
        for (size_t i = 0; i < s.names.size(); i++) left += (i ? ", " : "") + s.names[i];
        if (!s.metavar.empty()) left += " " + s.metavar;
        if (left.size() < 28)
            left.resize(28, ' ');
        else
            left += "\n" + std::string(28, ' ');
        out += left + s.help + "\n";
    }
    out += "  -h, --help                show this help and exit\n";
    return out;
}

} // namespace cli
