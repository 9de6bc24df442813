// SPDX-License-Identifier: MIT
// dynamic_library.cpp - dlopen/dlsym/dlclose behind an RAII handle.
#include "support/libraries/dynamic_library.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <memory>
#include <utility>

namespace hipacm::backend {

namespace {

// dlerror() is thread-local in glibc, but it is also reset by the next dl*
// call, so it has to be copied right away.
std::string take_dlerror(const char* fallback) {
  const char* message = dlerror();
  return message != nullptr ? std::string(message) : std::string(fallback);
}

Failure unavailable(std::string message) {
  return Failure{HIPACM_ERROR_BACKEND_UNAVAILABLE, std::move(message)};
}

}  // namespace

DynamicLibrary::DynamicLibrary(void* handle, const std::string& requested_name)
    : handle_(handle), path_(requested_name) {
  struct link_map* map = nullptr;
  if (dlinfo(handle_, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
      map->l_name[0] != '\0') {
    path_ = map->l_name;
  }
}

DynamicLibrary::DynamicLibrary(DynamicLibrary&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), path_(std::move(other.path_)) {}

DynamicLibrary& DynamicLibrary::operator=(DynamicLibrary&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) dlclose(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

DynamicLibrary::~DynamicLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

Expected<DynamicLibrary> DynamicLibrary::open_with(const std::string& name, int extra_flags,
                                                   Lifetime lifetime) {
  if (name.empty()) return Failure{HIPACM_ERROR_INVALID_ARGUMENT, "empty library name"};
  // dlopen("") would return the main program; a NUL inside the name would
  // silently open a different file.
  if (name.find('\0') != std::string::npos)
    return Failure{HIPACM_ERROR_INVALID_ARGUMENT, "library name contains a NUL byte"};
  int flags = RTLD_NOW | RTLD_LOCAL | extra_flags;
  if (lifetime == Lifetime::kPinned) flags |= RTLD_NODELETE;
  dlerror();
  void* handle = dlopen(name.c_str(), flags);
  if (handle == nullptr)
    return unavailable(
        take_dlerror((extra_flags & RTLD_NOLOAD) != 0 ? "not loaded" : "dlopen failed"));
  return DynamicLibrary(handle, name);
}

Expected<DynamicLibrary> DynamicLibrary::open_if_loaded(const std::string& name,
                                                        Lifetime lifetime) {
  return open_with(name, RTLD_NOLOAD, lifetime);
}

Expected<DynamicLibrary> DynamicLibrary::open(const std::string& name, Lifetime lifetime) {
  if (auto loaded = open_with(name, RTLD_NOLOAD, lifetime)) return loaded;
  return open_with(name, 0, lifetime);
}

Expected<void*> DynamicLibrary::symbol(const char* name) const {
  if (handle_ == nullptr || name == nullptr) return unavailable("no library or no symbol name");
  dlerror();
  void* address = dlsym(handle_, name);
  if (address == nullptr) return unavailable(take_dlerror("symbol has a NULL address"));
  return address;
}

std::string real_file_path(const std::string& path) {
  struct FreeDeleter {
    void operator()(char* p) const noexcept { std::free(p); }
  };
  std::unique_ptr<char, FreeDeleter> real(::realpath(path.c_str(), nullptr));
  return real ? std::string(real.get()) : std::string();
}

}  // namespace hipacm::backend
