// SPDX-License-Identifier: MIT
// dynamic_library.cpp - dlopen/dlsym/dlclose behind an RAII handle.
#include "support/dynamic_library.h"

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

void set_error(std::string* error, std::string message) {
  if (error != nullptr) *error = std::move(message);
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

std::optional<DynamicLibrary> DynamicLibrary::open_with(const std::string& name, int extra_flags,
                                                        Lifetime lifetime, std::string* error) {
  if (name.empty()) {
    set_error(error, "empty library name");
    return std::nullopt;
  }
  // dlopen("") would return the main program; a NUL inside the name would
  // silently open a different file.
  if (name.find('\0') != std::string::npos) {
    set_error(error, "library name contains a NUL byte");
    return std::nullopt;
  }
  int flags = RTLD_NOW | RTLD_LOCAL | extra_flags;
  if (lifetime == Lifetime::kPinned) flags |= RTLD_NODELETE;
  dlerror();
  void* handle = dlopen(name.c_str(), flags);
  if (handle == nullptr) {
    set_error(error,
              take_dlerror((extra_flags & RTLD_NOLOAD) != 0 ? "not loaded" : "dlopen failed"));
    return std::nullopt;
  }
  return DynamicLibrary(handle, name);
}

std::optional<DynamicLibrary> DynamicLibrary::open_if_loaded(const std::string& name,
                                                             std::string* error,
                                                             Lifetime lifetime) {
  return open_with(name, RTLD_NOLOAD, lifetime, error);
}

std::optional<DynamicLibrary> DynamicLibrary::open(const std::string& name, std::string* error,
                                                   Lifetime lifetime) {
  if (auto loaded = open_with(name, RTLD_NOLOAD, lifetime, nullptr)) return loaded;
  return open_with(name, 0, lifetime, error);
}

void* DynamicLibrary::symbol(const char* name, std::string* error) const {
  if (handle_ == nullptr || name == nullptr) {
    set_error(error, "no library or no symbol name");
    return nullptr;
  }
  dlerror();
  void* address = dlsym(handle_, name);
  if (address == nullptr) {
    set_error(error, take_dlerror("symbol has a NULL address"));
  }
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
