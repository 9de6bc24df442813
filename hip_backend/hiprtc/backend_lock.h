// SPDX-License-Identifier: MIT
// backend_lock.h - the one lock around ROCm's process-wide state: hipRTC, comgr and the HIP
// runtime.
#pragma once

#include <boost/thread/lock_guard.hpp>
#include <boost/thread/mutex.hpp>

namespace hipacm::backend {

/// Serializes every call into hipRTC, comgr and the HIP runtime. hipRTC 5.2.3 aborts the process
/// on overlapping compiles; comgr is its compiler engine; the HIP runtime shares its library and
/// its lazy initialization with hipRTC on ROCm 5. So the three are one critical section, not
/// three. Never destroyed, so a compile still running during exit() does not meet a dead mutex.
/// Lock order: finish any once-only loader (load_hiprtc, the comgr table) before taking it; those
/// loaders take it themselves.
boost::mutex& rocm_backend_mutex();

/// Holds rocm_backend_mutex() for one scope.
class RocmBackendLock {
 public:
  RocmBackendLock() : guard_(rocm_backend_mutex()) {}
  RocmBackendLock(const RocmBackendLock&) = delete;
  RocmBackendLock& operator=(const RocmBackendLock&) = delete;

 private:
  boost::lock_guard<boost::mutex> guard_;
};

}  // namespace hipacm::backend
