#pragma once
// Errors as values for the runner library: every fallible call returns a
// Status or a Result<T>; the message is one line naming what failed and why.

#include <optional>
#include <string>
#include <utility>

namespace lmllm {

class [[nodiscard]] Status {
public:
    Status() = default; // ok
    static Status error(std::string message) { return Status(std::move(message)); }
    bool ok() const { return !msg_.has_value(); }
    explicit operator bool() const { return ok(); }
    const std::string & message() const {
        static const std::string empty;
        return msg_ ? *msg_ : empty;
    }

private:
    explicit Status(std::string m) : msg_(std::move(m)) {}
    std::optional<std::string> msg_;
};

template <typename T> class [[nodiscard]] Result {
public:
    // Implicit both ways on purpose, so a function returns a value or a
    // Status as it is; google-explicit-constructor is on in .clang-tidy.
    Result(T value) : value_(std::move(value)) {}         // NOLINT(google-explicit-constructor)
    Result(Status status) : status_(std::move(status)) {} // NOLINT(google-explicit-constructor)
    bool ok() const { return value_.has_value(); }
    explicit operator bool() const { return ok(); }
    const Status & status() const { return status_; }
    T & value() { return *value_; }
    const T & value() const { return *value_; }
    T * operator->() { return &*value_; }
    T & operator*() { return *value_; }

private:
    std::optional<T> value_;
    Status status_;
};

} // namespace lmllm
