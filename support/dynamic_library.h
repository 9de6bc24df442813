// SPDX-License-Identifier: MIT
// dynamic_library.h - an owning dlopen handle: move-only, dlclose'd when it goes away.
#pragma once

#include <optional>
#include <string>

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
  /// Returns nullopt with *error (may be null) holding dlerror().
  static std::optional<DynamicLibrary> open(const std::string& name, std::string* error,
                                            Lifetime lifetime = Lifetime::kUnloadable);

  /// Only the RTLD_NOLOAD half of open(): nullopt when it is not loaded yet.
  static std::optional<DynamicLibrary> open_if_loaded(const std::string& name, std::string* error,
                                                      Lifetime lifetime = Lifetime::kUnloadable);

  DynamicLibrary(DynamicLibrary&& other) noexcept;
  DynamicLibrary& operator=(DynamicLibrary&& other) noexcept;
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;
  ~DynamicLibrary();

  /// The address of `name`, or nullptr with *error (may be null) saying why.
  /// A symbol whose value is NULL counts as missing: callers want functions.
  void* symbol(const char* name, std::string* error) const;

  /// Resolves `name` into the function pointer *fn. False, with *error (may
  /// be null) holding the dlerror text, when it is missing. The one place
  /// where a symbol's address becomes a typed function pointer.
  template <class Fn>
  bool bind(const char* name, Fn* fn, std::string* error) const {
    void* address = symbol(name, error);
    if (address == nullptr) return false;
    *fn = reinterpret_cast<Fn>(address);
    return true;
  }

  /// The file that was opened (from dlinfo), or the requested name if unknown.
  const std::string& path() const { return path_; }

 private:
  DynamicLibrary(void* handle, const std::string& requested_name);
  static std::optional<DynamicLibrary> open_with(const std::string& name, int extra_flags,
                                                 Lifetime lifetime, std::string* error);

  void* handle_ = nullptr;
  std::string path_;
};

/// `path` with every symbolic link resolved (realpath(3)), e.g. the file a
/// library's soname link points at; empty when it does not exist.
std::string real_file_path(const std::string& path);

}  // namespace hipacm::backend
