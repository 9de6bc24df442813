// SPDX-License-Identifier: MIT
// future.hpp - hipacm::Future (a counted reference to a compile's outcome) and CompileError.
#ifndef HIPACM_CPP_FUTURE_HPP
#define HIPACM_CPP_FUTURE_HPP

#include <hipacm/cpp/callbacks.hpp>
#include <hipacm/cpp/error.hpp>
#include <hipacm/cpp/kernel.hpp>  // lowered_names and the other hipacm_kernel readers

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace hipacm {

/// A counted reference to one compile's outcome. Copy = retain; destruction =
/// release. Valid after its mode has exited. Thread-safe like the C API.
class Future {
 public:
  Future() noexcept = default;

  /// Adopts one reference (e.g. from hipacm_submit).
  explicit Future(hipacm_future* owned, std::shared_ptr<detail::FinalizeErrors> errors = nullptr,
                  std::shared_ptr<detail::Slot> slot = nullptr) noexcept
      : raw_(owned), errors_(std::move(errors)), slot_(std::move(slot)) {}

  Future(const Future& other) noexcept
      : raw_(other.raw_), errors_(other.errors_), slot_(other.slot_) {
    if (raw_ != nullptr) hipacm_future_retain(raw_);
  }
  Future(Future&& other) noexcept
      : raw_(std::exchange(other.raw_, nullptr)),
        errors_(std::move(other.errors_)),
        slot_(std::move(other.slot_)) {}
  Future& operator=(Future other) noexcept {
    swap(other);
    return *this;  // `other` releases the old reference, then drops the old slot
  }
  ~Future() {
    // Release first: the slot (compile() only) must outlive the handle.
    if (raw_ != nullptr) hipacm_future_release(raw_);
  }

  void swap(Future& other) noexcept {
    std::swap(raw_, other.raw_);
    errors_.swap(other.errors_);
    slot_.swap(other.slot_);
  }

  /// Blocks until done, runs finalize or cleanup exactly once (here, unless
  /// another thread got there first), and returns the kernel, owned by the
  /// future. Throws hipacm::Error with the status, key and log on failure.
  const hipacm_kernel& result() const {
    const hipacm_kernel* kernel = nullptr;
    const hipacm_status status = hipacm_future_result(raw_, &kernel);
    if (status == HIPACM_SUCCESS && kernel != nullptr) return *kernel;
    throw error(status);
  }

  /// Waits until done (whatever the outcome); false on timeout. Never runs callbacks.
  bool wait() const noexcept { return hipacm_future_wait(raw_, -1) == HIPACM_SUCCESS; }
  /// Rounded up to milliseconds; one too long for int64_t milliseconds
  /// (e.g. hours::max()) waits forever, and zero, negative or NaN only polls.
  template <class Rep, class Period>
  bool wait_for(std::chrono::duration<Rep, Period> timeout) const noexcept {
    // Compared in floating point first: converting a huge duration to integer
    // milliseconds would overflow into a negative, i.e. no wait at all.
    const double ms = std::chrono::duration<double, std::milli>(timeout).count();
    if (!(ms > 0.0)) return hipacm_future_wait(raw_, 0) == HIPACM_SUCCESS;  // also NaN
    if (ms >= 9.0e18) return wait();
    const auto whole = static_cast<int64_t>(ms);
    return hipacm_future_wait(raw_, whole < ms ? whole + 1 : whole) == HIPACM_SUCCESS;
  }

  /// NotReady while pending, else the outcome.
  Status status() const noexcept { return static_cast<Status>(hipacm_future_status(raw_)); }
  bool done() const noexcept { return status() != Status::NotReady; }

  /// Owned by the future; never NULL.
  const char* key() const noexcept { return hipacm_future_key(raw_); }
  const char* log() const noexcept { return hipacm_future_log(raw_); }
  const char* error_message() const noexcept { return hipacm_future_error_message(raw_); }

  hipacm_future* get() const noexcept { return raw_; }
  explicit operator bool() const noexcept { return raw_ != nullptr; }
  /// The same compile (dedup hits compare equal).
  friend bool operator==(const Future& a, const Future& b) noexcept { return a.raw_ == b.raw_; }
  friend bool operator!=(const Future& a, const Future& b) noexcept { return a.raw_ != b.raw_; }

 private:
  Error error(hipacm_status status) const {
    std::string message = detail::to_string(hipacm_future_error_message(raw_));
    const std::string key = detail::to_string(hipacm_future_key(raw_));
    if (status == HIPACM_ERROR_FINALIZE_FAILED && errors_) {
      if (auto why = errors_->find(raw_))
        message = "the finalize callback of '" + key + "' failed: " + *why;
    }
    if (raw_ == nullptr) message = "empty hipacm::Future";
    return Error(static_cast<Status>(status), std::move(message), key,
                 detail::to_string(hipacm_future_log(raw_)));
  }

  hipacm_future* raw_ = nullptr;
  std::shared_ptr<detail::FinalizeErrors> errors_;
  std::shared_ptr<detail::Slot> slot_;
};

/// Thrown by Mode::exit(): the first failed compile, in completion order. The
/// mode slot is already free when this is thrown.
class CompileError : public Error {
 public:
  CompileError(Error error, Future first_failure)
      : Error(std::move(error)), first_failure_(std::move(first_failure)) {}
  /// The failed compile's future (empty when the exit call itself failed).
  const Future& first_failure() const noexcept { return first_failure_; }

 private:
  Future first_failure_;
};

}  // namespace hipacm

#endif  // HIPACM_CPP_FUTURE_HPP
