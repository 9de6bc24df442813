// SPDX-License-Identifier: MIT
// library_facts.cpp - remembers facts read from shared libraries, keyed by dlopen's search inputs
// and validated against the library file's identity.
#include "hip_backend/library_facts.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "support/libraries/dynamic_library.h"

namespace hipacm::backend {
namespace {

// Bumped whenever the key or record layout changes, so old records miss.
constexpr std::string_view kRecordFormat = "hipacm-library-fact 3";
// A fact names hipRTC, comgr and their LLVM: a handful of files, never more than this.
constexpr std::size_t kMaxRecordedFiles = 32;

// "dev ino size mtime ctime" for a file or directory; "missing" when it cannot be stat'ed. The
// change time because a file replaced by another of the same size, with its modification time set
// back, may even get the old inode number (a freed one is reused): nothing sets a ctime back.
std::string file_identity(const char* path) {
  struct stat st {};
  if (::stat(path, &st) != 0) return "missing";
  const auto stamp = [](const timespec& t) {
    return std::to_string(t.tv_sec) + '.' + std::to_string(t.tv_nsec);
  };
  return std::to_string(st.st_dev) + ' ' + std::to_string(st.st_ino) + ' ' +
         std::to_string(st.st_size) + ' ' + stamp(st.st_mtim) + ' ' + stamp(st.st_ctim);
}

// A dlopen handle that is closed with its scope.
struct HandleCloser {
  void operator()(void* handle) const noexcept { ::dlclose(handle); }
};
using Handle = std::unique_ptr<void, HandleCloser>;

// The object this code is linked into (the plugin, or a program that links
// the backend statically): dlopen searches its RUNPATH.
Handle own_object(std::string* file) {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&recall_library_fact), &info) != 0 &&
      info.dli_fname != nullptr) {
    *file = info.dli_fname;
    if (void* handle = ::dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD)) return Handle(handle);
  }
  return Handle(::dlopen(nullptr, RTLD_LAZY));
}

// Every directory dlopen would search from `handle`, in order, with its identity.
std::string search_directories(void* handle) {
  if (handle == nullptr) return "no handle\n";
  Dl_serinfo size{};
  if (::dlinfo(handle, RTLD_DI_SERINFOSIZE, &size) != 0 || size.dls_size < sizeof(Dl_serinfo))
    return "no search path\n";
  // Dl_serinfo ends in a flexible array: the buffer is sized by dlinfo and
  // kept in max_align_t units so the struct is properly aligned.
  std::vector<std::max_align_t> buffer((size.dls_size + sizeof(std::max_align_t) - 1) /
                                       sizeof(std::max_align_t));
  auto* info = reinterpret_cast<Dl_serinfo*>(buffer.data());
  info->dls_size = size.dls_size;
  info->dls_cnt = size.dls_cnt;
  if (::dlinfo(handle, RTLD_DI_SERINFOSIZE, info) != 0 ||
      ::dlinfo(handle, RTLD_DI_SERINFO, info) != 0)
    return "no search path\n";
  std::string out;
  for (unsigned i = 0; i < info->dls_cnt; ++i) {
    const char* dir = info->dls_serpath[i].dls_name;
    out += "dir ";
    out += dir;
    out += ": ";
    out += file_identity(dir);
    out += '\n';
  }
  return out;
}

bool any_loaded(const std::vector<std::string>& candidates) {
  for (const std::string& name : candidates) {
    if (DynamicLibrary::open_if_loaded(name)) return true;
  }
  return false;
}

std::string fact_key(std::string_view fact, const std::vector<std::string>& candidates) {
  std::string key(kRecordFormat);
  key += "\nfact ";
  key += fact;
  key += '\n';
  for (const std::string& name : candidates) key += "candidate " + name + '\n';
  std::string own_file;
  const Handle own = own_object(&own_file);
  key += "object " + own_file + ": " + file_identity(own_file.c_str()) + '\n';
  key += search_directories(own.get());
  key += "ld.so.cache: " + file_identity("/etc/ld.so.cache") + '\n';
  return key;
}

// The record: the dlopen path, where it resolves, that file's identity, then the payload.
std::string library_record(const std::string& library_path) {
  const std::string real = real_file_path(library_path);
  if (real.empty()) return std::string();
  const std::string identity = file_identity(real.c_str());
  if (identity == "missing") return std::string();
  return library_path + '\n' + real + '\n' + identity + '\n';
}

// Splits off the first line of `text`; false when there is no newline.
bool take_line(std::string_view* text, std::string* line) {
  const std::size_t end = text->find('\n');
  if (end == std::string_view::npos) return false;
  line->assign(text->substr(0, end));
  text->remove_prefix(end + 1);
  return true;
}

}  // namespace

std::optional<std::string> FactMemoBackend::recall(const std::string& key) noexcept {
  try {
    return load(key);
  } catch (...) {
    return std::nullopt;  // a store that cannot answer only means reading the library again
  }
}

void FactMemoBackend::remember(const std::string& key, const std::string& value) noexcept {
  if (!writable()) return;
  try {
    store(key, value);
  } catch (...) {
    // Remembering is an optimisation: a full, locked or unwritable store skips it.
  }
}

std::optional<std::string> recall_library_fact(LibraryFactMemo* memo, std::string_view fact,
                                               const std::vector<std::string>& candidates) {
  if (memo == nullptr || candidates.empty() || any_loaded(candidates)) return std::nullopt;
  std::optional<std::string> value;
  try {
    value = memo->recall(fact_key(fact, candidates));
  } catch (...) {
    return std::nullopt;
  }
  if (!value) return std::nullopt;
  std::string_view rest(*value);
  std::string count_line;
  if (!take_line(&rest, &count_line) || count_line.rfind("files ", 0) != 0) return std::nullopt;
  const std::string count_text = count_line.substr(6);
  if (count_text.empty() || count_text.size() > 2 ||
      count_text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  const std::size_t count = std::stoul(count_text);
  if (count == 0 || count > kMaxRecordedFiles) return std::nullopt;
  for (std::size_t i = 0; i < count; ++i) {
    std::string library_path, real, identity;
    if (!take_line(&rest, &library_path) || !take_line(&rest, &real) ||
        !take_line(&rest, &identity))
      return std::nullopt;
    // Re-resolving catches a soname link that now points elsewhere while the
    // old file is still in place.
    if (library_record(library_path) != library_path + '\n' + real + '\n' + identity + '\n')
      return std::nullopt;
  }
  return std::string(rest);
}

void remember_library_fact(LibraryFactMemo* memo, std::string_view fact,
                           const std::vector<std::string>& candidates,
                           const std::vector<std::string>& library_paths,
                           const std::string& payload) {
  if (memo == nullptr || candidates.empty() || library_paths.empty() ||
      library_paths.size() > kMaxRecordedFiles)
    return;
  try {
    std::string record = "files " + std::to_string(library_paths.size()) + '\n';
    for (const std::string& path : library_paths) {
      if (path.empty()) return;
      const std::string file = library_record(path);
      if (file.empty()) return;
      record += file;
    }
    memo->remember(fact_key(fact, candidates), record + payload);
  } catch (...) {
    // Remembering is an optimisation; the fact is read again next time.
  }
}

}  // namespace hipacm::backend
