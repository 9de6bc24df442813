// SPDX-License-Identifier: MIT
// future_registry.h - the live hipacm_future handles, their reference counts and ownership.
#pragma once

#include <hipacm/hipacm.h>

#include <memory>

#include "plugin/mode/future.h"

namespace hipacm {

/// A counted reference to a Future, released on destruction. It keeps the
/// future alive across a blocking call even if the host releases its own
/// reference meanwhile.
class FutureRef {
 public:
  FutureRef() = default;
  explicit FutureRef(Future* f) noexcept : future_(f) {}  // adopts one reference
  FutureRef(FutureRef&& other) noexcept : future_(other.future_) { other.future_ = nullptr; }
  FutureRef& operator=(FutureRef&& other) noexcept;
  FutureRef(const FutureRef&) = delete;
  FutureRef& operator=(const FutureRef&) = delete;
  ~FutureRef();

  Future* get() const noexcept { return future_; }
  Future* operator->() const noexcept { return future_; }
  explicit operator bool() const noexcept { return future_ != nullptr; }
  /// Gives the reference to the caller (e.g. to hand to the host).
  Future* release() noexcept;
  /// A second reference to the same future.
  FutureRef share() const;

 private:
  Future* future_ = nullptr;
};

/// Creates a registered future holding one reference.
FutureRef make_future(std::string key, std::string arch, Callbacks callbacks);

/// Looks a host handle up; NULL, released or unknown handles throw INVALID_ARGUMENT.
FutureRef acquire_future(hipacm_future* handle);

/// For host-facing retain/release: false for an unknown handle.
bool retain_future(hipacm_future* handle) noexcept;
bool release_future(hipacm_future* handle) noexcept;

/// How many futures exist (test hook: leak checks).
std::size_t live_future_count() noexcept;

/// The host handle of `f` (NULL for NULL): an id, never the address.
inline hipacm_future* to_handle(const Future* f) noexcept {
  return f != nullptr ? f->handle() : nullptr;
}

}  // namespace hipacm
