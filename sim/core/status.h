// Status and StatusOr: how configuration and trace errors travel up to main,
// which is the only place that prints them and picks the exit code.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

namespace servesim {

// Thrown only while parsing configuration or input files; the loaders catch
// it at their boundary and return it as a Status. The message is one
// complete line: "<file>: <json path or line>: expected ..., got ...".
class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(const std::string& message)
      : std::runtime_error(message) {}
};

class Status {
 public:
  static Status Ok() { return Status(); }
  static Status Error(std::string message) {
    Status s;
    s.message_ = std::move(message);
    s.ok_ = false;
    return s;
  }
  bool ok() const { return ok_; }
  const std::string& message() const { return message_; }

 private:
  bool ok_ = true;
  std::string message_;
};

template <typename T>
class StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  StatusOr(Status status) : status_(std::move(status)) {}  // NOLINT
  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() { return *value_; }
  const T& value() const { return *value_; }
  T& operator*() { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

// Runs fn(), turning a ConfigError into an error Status.
template <typename Fn>
auto CatchConfigErrors(Fn&& fn) -> StatusOr<decltype(fn())> {
  try {
    return fn();
  } catch (const ConfigError& e) {
    return Status::Error(e.what());
  }
}

}  // namespace servesim
