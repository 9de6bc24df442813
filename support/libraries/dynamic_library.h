// SPDX-License-Identifier: MIT
// dynamic_library.h - an owning dlopen handle: move-only, dlclose'd when it goes away.
#pragma once

#include <string>

#include "support/failure.h"

namespace hipacm::backend {

/// One reference to a shared library. Each successful open holds exactly one
/// dlopen reference and the destructor drops it, so nothing leaks on any path.
class DynamicLibrary {
 public:
  /// kPinned adds RTLD_NODELETE: the handle is still closed, but the code stays
  /// mapped. Needed for runtimes (HIP, comgr) that start threads or register
  /// atexit handlers, and for function pointers that outlive the handle.
  enum class Lifetime { kUnloadable, kPinned };

  /// Reuses the library if the process already has it (RTLD_NOLOAD), otherwise
  /// loads it; `name` is a soname or a path, searched like dlopen does.
  /// A failure (BACKEND_UNAVAILABLE; INVALID_ARGUMENT for an empty name or one with a NUL byte)
  /// holds dlerror().
  static Expected<DynamicLibrary> open(const std::string& name,
                                       Lifetime lifetime = Lifetime::kUnloadable);

  /// Only the RTLD_NOLOAD half of open(): a failure when it is not loaded yet.
  static Expected<DynamicLibrary> open_if_loaded(const std::string& name,
                                                 Lifetime lifetime = Lifetime::kUnloadable);

  DynamicLibrary(DynamicLibrary&& other) noexcept;
  DynamicLibrary& operator=(DynamicLibrary&& other) noexcept;
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;
  ~DynamicLibrary();

  /// The address of `name`, or a BACKEND_UNAVAILABLE failure saying why.
  /// A symbol whose value is NULL counts as missing: callers want functions.
  Expected<void*> symbol(const char* name) const;

  /// Resolves `name` into the function pointer *fn; when it is missing, *fn is left alone and
  /// the failure holds the dlerror text. The one place where a symbol's address becomes a typed
  /// function pointer.
  template <class Fn>
  Expected<void> bind(const char* name, Fn* fn) const {
    Expected<void*> address = symbol(name);
    if (!address) return std::move(address).failure();
    *fn = reinterpret_cast<Fn>(address.value());
    return {};
  }

  /// The file that was opened (from dlinfo), or the requested name if unknown.
  const std::string& path() const { return path_; }

 private:
  DynamicLibrary(void* handle, const std::string& requested_name);
  static Expected<DynamicLibrary> open_with(const std::string& name, int extra_flags,
                                            Lifetime lifetime);

  void* handle_ = nullptr;
  std::string path_;
};

/// `path` with every symbolic link resolved (realpath(3)), e.g. the file a
/// library's soname link points at; empty when it does not exist.
std::string real_file_path(const std::string& path);

}  // namespace hipacm::backend
