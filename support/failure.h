// SPDX-License-Identifier: MIT
// failure.h - one error path: a status with its message, the exception in flight turned into one,
// and Expected<T> for results that are a value or a failure.
#pragma once

#include <hipacm/hipacm.h>

#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace hipacm {

/// Why something failed: a hipacm status and one line for humans.
struct Failure {
  hipacm_status status = HIPACM_ERROR_INTERNAL;
  std::string message;
};

/// Call only inside a catch block. Maps the exception in flight to a Failure so that every layer
/// reports the same way: a status-carrying exception keeps its status, bad_alloc becomes
/// OUT_OF_MEMORY, anything else INTERNAL. `context` (may be empty) is put before the message as
/// "<context>: <message>". Never throws; under memory exhaustion the message may lose its context
/// ("out of memory" itself needs no allocation).
Failure failure_from_current_exception(std::string_view context = {}) noexcept;

/// A value or the Failure that prevented it. Small on purpose: the project needs has_value, the
/// value, the failure, and nothing more.
template <class T>
class Expected {
 public:
  Expected(T value) : state_(std::in_place_index<0>, std::move(value)) {}
  Expected(Failure failure) : state_(std::in_place_index<1>, std::move(failure)) {}

  bool has_value() const noexcept { return state_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }
  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Failure& failure() const& { return std::get<1>(state_); }
  Failure&& failure() && { return std::get<1>(std::move(state_)); }

 private:
  std::variant<T, Failure> state_;
};

/// Success with nothing to return, or the Failure.
template <>
class Expected<void> {
 public:
  Expected() = default;
  Expected(Failure failure) : failure_(std::move(failure)), failed_(true) {}

  bool has_value() const noexcept { return !failed_; }
  explicit operator bool() const noexcept { return has_value(); }
  const Failure& failure() const& { return failure_; }
  Failure&& failure() && { return std::move(failure_); }

 private:
  Failure failure_;
  bool failed_ = false;
};

}  // namespace hipacm
