//===- Status.h - Errors as values, for every layer of Turbine ------------===//
//
// The one error type of the whole stack (artifact, runtime, compiler,
// frontends, kernels, tools): a call that can fail on user input returns a
// Status (success, or an error message) or a Result<T> (a value, or an
// error). Nothing in a public API throws or aborts on bad input.
//
// Messages speak of the API's own terms (an argument, a file, a node), never
// of a particular front door's flags: the CLI adds its flag names where it
// reports an error, the Python and C++ APIs their argument names.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_BASE_STATUS_H
#define TURBINE_BASE_STATUS_H

#include <optional>
#include <string>
#include <utility>

namespace turbine {

/// Success, or failure with a human-readable message.
class [[nodiscard]] Status {
public:
  /// A successful status.
  Status() = default;
  static Status success() { return Status(); }
  static Status error(std::string message) {
    Status s;
    s.failed_ = true;
    s.message_ = std::move(message);
    return s;
  }

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  /// The error message; empty on success.
  const std::string &message() const { return message_; }

  /// The same error with `context` in front ("<context>: <message>"); a
  /// success stays a success.
  Status withContext(const std::string &context) const {
    return ok() ? *this : error(context + ": " + message_);
  }

private:
  bool failed_ = false;
  std::string message_;
};

/// A value of type T, or an error Status.
template <typename T> class [[nodiscard]] Result {
public:
  Result(T value) : value_(std::move(value)) {}
  /// Must be given a failed status.
  Result(Status status) : status_(std::move(status)) {
    if (status_.ok())
      status_ = Status::error("internal error: Result built from a success status");
  }

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Status &status() const { return status_; }
  const std::string &message() const { return status_.message(); }

  /// The value; only valid when ok().
  T &value() & { return *value_; }
  const T &value() const & { return *value_; }
  T &&value() && { return std::move(*value_); }
  T &operator*() & { return *value_; }
  const T &operator*() const & { return *value_; }
  T &&operator*() && { return std::move(*value_); }
  T *operator->() { return &*value_; }
  const T *operator->() const { return &*value_; }

private:
  std::optional<T> value_;
  Status status_;
};

} // namespace turbine

#endif // TURBINE_BASE_STATUS_H
