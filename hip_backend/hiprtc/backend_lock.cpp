// SPDX-License-Identifier: MIT
// backend_lock.cpp - the ROCm lock's storage, created on first use and never destroyed.
#include "hip_backend/hiprtc/backend_lock.h"

#include "support/no_destructor.h"

namespace hipacm::backend {

boost::mutex& rocm_backend_mutex() {
  static NoDestructor<boost::mutex> mutex;
  return mutex.get();
}

}  // namespace hipacm::backend
