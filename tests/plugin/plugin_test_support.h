// SPDX-License-Identifier: MIT
// plugin_test_support.h - kernel sources, a C request and callback counters for the plugin tests.
#pragma once

#include <hipacm/hipacm.h>

#include <atomic>
#include <string>
#include <utility>
#include <vector>

namespace hipacm::test {

inline constexpr const char* kArch = "gfx90a";

/// An extern "C" kernel `name`(float* a, const float* b, int n) that adds b into a.
inline std::string vadd_source(const std::string& name = "vadd") {
  return "extern \"C\" __global__ void " + name +
         "(float* a, const float* b, int n) {\n"
         "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
         "  if (i < n) a[i] += b[i];\n"
         "}\n";
}

/// A template `scale<T>`: its instances are reached through name expressions.
inline const char* kTemplatedSource =
    "template <typename T> __global__ void scale(T* x, T a, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) x[i] *= a;\n"
    "}\n";

/// Counts exactly-once callbacks.
struct CallbackCounts {
  std::atomic<int> finalized{0};
  std::atomic<int> cleaned{0};
  int finalize_result = 0;
};

inline int count_finalize(void* user, hipacm_future*) {
  auto* c = static_cast<CallbackCounts*>(user);
  c->finalized.fetch_add(1);
  return c->finalize_result;
}
inline void count_cleanup(void* user, hipacm_future*) {
  static_cast<CallbackCounts*>(user)->cleaned.fetch_add(1);
}

/// A C request whose strings live as long as this object.
struct Request {
  std::string source;
  std::string key;          ///< empty: none (the plugin derives one)
  std::string source_name;  ///< empty: none
  std::vector<std::string> options;
  std::vector<std::pair<std::string, std::string>> headers;  ///< (name, contents)
  std::vector<std::string> names;                            ///< name expressions
  hipacm_request req{};

  /// With `counts`, its finalize and cleanup count into them.
  explicit Request(std::string src, std::string k = "", CallbackCounts* counts = nullptr)
      : source(std::move(src)), key(std::move(k)) {
    req.struct_size = sizeof(hipacm_request);
    if (counts != nullptr) with_callbacks(count_finalize, count_cleanup, counts);
    refresh();
  }
  Request& with_name_expressions(std::vector<std::string> n) {
    names = std::move(n);
    refresh();
    return *this;
  }
  Request& with_options(std::vector<std::string> o) {
    options = std::move(o);
    refresh();
    return *this;
  }
  Request& with_callbacks(hipacm_finalize_fn f, hipacm_cleanup_fn c, void* user) {
    req.finalize = f;
    req.cleanup = c;
    req.user_data = user;
    return *this;
  }
  void refresh() {
    req.source = source.c_str();
    req.key = key.empty() ? nullptr : key.c_str();
    req.source_name = source_name.empty() ? nullptr : source_name.c_str();
    option_ptrs_ = c_strings(options);
    req.options = option_ptrs_.data();
    req.num_options = option_ptrs_.size();
    header_name_ptrs_.clear();
    header_source_ptrs_.clear();
    for (const auto& [name, contents] : headers) {
      header_name_ptrs_.push_back(name.c_str());
      header_source_ptrs_.push_back(contents.c_str());
    }
    req.header_names = header_name_ptrs_.data();
    req.header_sources = header_source_ptrs_.data();
    req.num_headers = headers.size();
    name_ptrs_ = c_strings(names);
    req.name_expressions = name_ptrs_.data();
    req.num_name_expressions = name_ptrs_.size();
  }
  // Refreshes the pointers first: a Request may have moved (e.g. inside a
  // vector), and short strings move their bytes with them.
  const hipacm_request* get() {
    refresh();
    return &req;
  }

 private:
  static std::vector<const char*> c_strings(const std::vector<std::string>& strings) {
    std::vector<const char*> out;
    for (const auto& s : strings) out.push_back(s.c_str());
    return out;
  }
  std::vector<const char*> option_ptrs_, header_name_ptrs_, header_source_ptrs_, name_ptrs_;
};

}  // namespace hipacm::test
