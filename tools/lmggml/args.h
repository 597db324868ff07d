#pragma once
// A small declarative command-line parser shared by the subcommands: each
// option is registered with its names, a destination and a help line; parse()
// fills the destinations or returns one clear error message.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "lmllm/status.h"

namespace cli {

class ArgParser {
public:
    // command: e.g. "run"; usage: the synopsis printed under "usage: lmggml ".
    ArgParser(std::string command, std::string usage, std::string summary);

    void flag(const std::vector<std::string> & names, bool * out, const std::string & help);
    void option(const std::vector<std::string> & names, std::string * out, const std::string & metavar,
                const std::string & help);
    void option(const std::vector<std::string> & names, int32_t * out, const std::string & metavar,
                const std::string & help);
    void option(const std::vector<std::string> & names, uint32_t * out, const std::string & metavar,
                const std::string & help);
    void option(const std::vector<std::string> & names, float * out, const std::string & metavar,
                const std::string & help);
    // comma-separated integers, e.g. "-t 1,2,4"
    void option(const std::vector<std::string> & names, std::vector<int32_t> * out, const std::string & metavar,
                const std::string & help);
    // repeatable: each occurrence appends its value (e.g. "-r A -r B")
    void option(const std::vector<std::string> & names, std::vector<std::string> * out, const std::string & metavar,
                const std::string & help);
    // a seed: an unsigned 64-bit number, or -1 for "random" (stored as 0xFFFFFFFF)
    void seed_option(const std::vector<std::string> & names, uint64_t * out, const std::string & help);
    // one positional argument (optional unless marked required by the command itself)
    void positional(std::string * out, const std::string & metavar);
    // any number of positional arguments, in order (instead of positional())
    void positionals(std::vector<std::string> * out);

    // Parses argv[first..argc). help is set when -h/--help was given (no
    // other checks are made then). The error message names the bad argument.
    lmllm::Status parse(int argc, char ** argv, int first, bool & help) const;

    std::string help_text() const;
    const std::string & command() const { return command_; }

private:
    struct Spec {
        std::vector<std::string> names;
        std::string metavar; // empty: a flag
        std::string help;
        std::function<lmllm::Status(const std::string &)> set;
    };
    void add(const std::vector<std::string> & names, const std::string & metavar, const std::string & help,
             std::function<lmllm::Status(const std::string &)> set);
    const Spec * find(const std::string & name) const;

    std::string command_, usage_, summary_;
    std::vector<Spec> specs_;
    std::string * positional_ = nullptr;
    std::string positional_name_;
    std::vector<std::string> * positionals_ = nullptr;
};

} // namespace cli
