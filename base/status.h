// Status and StatusOr: how every error a user or a file can cause is reported (the one status
// type).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <variant>

namespace verisub {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,
  kNotFound,
  kFailedPrecondition,
  kDataLoss,
  kUnimplemented,
  kInternal,
  kDeadlineExceeded
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // Prefixes the message with context ("file x.cfg:12: ..."), keeping the code.
  Status WithContext(const std::string& context) const {
    if (ok()) return *this;
    return Status(code_, context + ": " + message_);
  }
  std::string ToString() const { return ok() ? "OK" : message_; }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) {
  return Status(StatusCode::kInvalidArgument, std::move(m));
}
inline Status NotFound(std::string m) { return Status(StatusCode::kNotFound, std::move(m)); }
inline Status DataLoss(std::string m) { return Status(StatusCode::kDataLoss, std::move(m)); }
inline Status FailedPrecondition(std::string m) {
  return Status(StatusCode::kFailedPrecondition, std::move(m));
}
inline Status Unimplemented(std::string m) {
  return Status(StatusCode::kUnimplemented, std::move(m));
}
inline Status InternalError(std::string m) { return Status(StatusCode::kInternal, std::move(m)); }

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : v_(std::move(value)) {}        // NOLINT: implicit by design
  StatusOr(Status status) : v_(std::move(status)) {  // NOLINT
    if (std::get<Status>(v_).ok()) v_ = Status(StatusCode::kInternal, "StatusOr built from OK");
  }
  bool ok() const { return std::holds_alternative<T>(v_); }
  Status status() const { return ok() ? Status() : std::get<Status>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  std::variant<Status, T> v_;
};

// Always-on check for internal invariants (never for user input).
#define VERISUB_CHECK(cond)                                                                 \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      std::fprintf(stderr, "internal error: %s:%d: check failed: %s\n", __FILE__, __LINE__, \
                   #cond);                                                                  \
      std::abort();                                                                         \
    }                                                                                       \
  } while (0)

#define VERISUB_RETURN_IF_ERROR(expr) \
  do {                                \
    ::verisub::Status _st = (expr);   \
    if (!_st.ok()) return _st;        \
  } while (0)

#define VERISUB_CONCAT_INNER(a, b) a##b
#define VERISUB_CONCAT(a, b) VERISUB_CONCAT_INNER(a, b)
#define VERISUB_ASSIGN_OR_RETURN(lhs, expr)                                                   \
  auto VERISUB_CONCAT(_sor_, __LINE__) = (expr);                                              \
  if (!VERISUB_CONCAT(_sor_, __LINE__).ok()) return VERISUB_CONCAT(_sor_, __LINE__).status(); \
  lhs = std::move(VERISUB_CONCAT(_sor_, __LINE__)).value()

}  // namespace verisub
