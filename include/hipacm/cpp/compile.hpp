// SPDX-License-Identifier: MIT
// compile.hpp - hipacm::compile and hipacm::backend_info, the calls that need no mode.
#ifndef HIPACM_CPP_COMPILE_HPP
#define HIPACM_CPP_COMPILE_HPP

#include <hipacm/cpp/callbacks.hpp>
#include <hipacm/cpp/error.hpp>
#include <hipacm/cpp/future.hpp>
#include <hipacm/cpp/request.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace hipacm {

/// Compiles synchronously, without a mode. arch NULL: $HIPACM_ARCH, else the
/// device's. Returns a finished future whenever the plugin accepted the
/// request, also for a failed compile (result() then throws; that is also
/// when the callables run). Throws hipacm::Error when the request is rejected.
inline Future compile(const Request& request, const char* arch = nullptr) {
  std::vector<const char*> ptrs;
  hipacm_request req = request.to_c(ptrs);
  auto errors = std::make_shared<detail::FinalizeErrors>();
  auto slot = request.make_slot(errors);
  if (slot) detail::attach(slot, req);
  hipacm_future* out = nullptr;
  const hipacm_status status = hipacm_compile(&req, arch, &out);
  if (out == nullptr) {
    Error error = status == HIPACM_SUCCESS
                      ? Error(Status::Internal, "hipacm_compile returned no future")
                      : detail::last_error(status);
    if (slot) slot->discard();
    throw error;
  }
  // The slot lives until the last Future copy has released its handle.
  return Future(out, std::move(errors), std::move(slot));
}

inline Future compile(const Request& request, const std::string& arch) {
  return compile(request, arch.c_str());
}

/// What the plugin found (strings owned by the plugin, alive until it is unloaded).
struct BackendInfo {
  bool available = false;
  std::string compiler;
  std::string version;
  std::string library_path;
  std::string default_arch;
  std::string error;  // why it is unavailable, when it is
};

inline BackendInfo backend_info() {
  hipacm_backend_info raw{};
  raw.struct_size = sizeof raw;
  const hipacm_status status = hipacm_get_backend_info(&raw);
  BackendInfo info;
  if (status != HIPACM_SUCCESS) info.error = detail::to_string(hipacm_last_error_message());
  info.available = raw.available != 0;
  info.compiler = detail::to_string(raw.compiler);
  info.version = detail::to_string(raw.version);
  info.library_path = detail::to_string(raw.library_path);
  info.default_arch = detail::to_string(raw.default_arch);
  return info;
}

}  // namespace hipacm

#endif  // HIPACM_CPP_COMPILE_HPP
