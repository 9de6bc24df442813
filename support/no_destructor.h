// SPDX-License-Identifier: MIT
// no_destructor.h - storage for a process-lifetime object whose destructor never runs.
#pragma once

#include <utility>

namespace hipacm::backend {

/// Holds a T that is constructed in place and deliberately never destroyed.
/// For function-local statics that other threads may still use while exit()
/// runs static destructors (a destroyed mutex there would be undefined
/// behaviour). Anything such an object owns is reclaimed by process exit.
template <typename T>
class NoDestructor {
 public:
  template <typename... Args>
  explicit NoDestructor(Args&&... args) : value_(std::forward<Args>(args)...) {}
  NoDestructor(const NoDestructor&) = delete;
  NoDestructor& operator=(const NoDestructor&) = delete;
  ~NoDestructor() {}  // NOLINT: intentionally does not destroy value_

  T& get() { return value_; }
  const T& get() const { return value_; }
  T& operator*() { return value_; }
  T* operator->() { return &value_; }

 private:
  union {
    T value_;
  };
};

}  // namespace hipacm::backend
