// SPDX-License-Identifier: MIT
// config.hpp - hipacm::Config, the options a hipacm::Mode is entered with.
#ifndef HIPACM_CPP_CONFIG_HPP
#define HIPACM_CPP_CONFIG_HPP

#include <hipacm/hipacm.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace hipacm {

/// Where compiles run.
enum class Isolation : int32_t {
  /// $HIPACM_ISOLATION when set, else worker processes when hipacm-worker is found.
  Auto = HIPACM_ISOLATION_AUTO,
  /// On threads of this process, one compile at a time.
  InProcess = HIPACM_ISOLATION_IN_PROCESS,
  /// In hipacm-worker processes; entering fails when none can be found.
  Process = HIPACM_ISOLATION_PROCESS,
};

/// Whether a mode reads and writes the persistent cache (ABI 1.2).
enum class CachePolicy : int32_t {
  /// $HIPACM_CACHE (off|read|readwrite) when set, else ReadWrite.
  Default = HIPACM_CACHE_DEFAULT,
  /// Never read or write the cache.
  Off = HIPACM_CACHE_OFF,
  /// Serve hits, never write.
  Read = HIPACM_CACHE_READ,
  /// Serve hits and store new code objects.
  ReadWrite = HIPACM_CACHE_READWRITE,
};

/// Options for Mode; the defaults are the plugin's.
class Config {
 public:
  Config& max_workers(uint32_t n) { return set(max_workers_, n); }
  Config& ignore_errors(bool yes = true) { return set(ignore_errors_, yes); }
  Config& fail_fast(bool yes = true) { return set(fail_fast_, yes); }
  /// e.g. "gfx90a"; default: $HIPACM_ARCH, otherwise the device's.
  Config& arch(std::string a) { return set(arch_, std::move(a)); }
  Config& isolation(Isolation i) { return set(isolation_, i); }
  /// Per-compile limit in worker processes (rounded up to ms); zero = none.
  template <class Rep, class Period>
  Config& compile_timeout(std::chrono::duration<Rep, Period> d) {
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(d).count();
    const uint32_t clamped = ms <= 0                    ? 0u
                             : ms > int64_t{UINT32_MAX} ? UINT32_MAX
                                                        : static_cast<uint32_t>(ms);
    return set(compile_timeout_ms_, clamped);
  }
  /// The read-write cache directory; empty (the default): $HIPACM_CACHE_DIR, else
  /// $XDG_CACHE_HOME/hipacm, else ~/.cache/hipacm.
  Config& cache_dir(std::string dir) { return set(cache_dir_, std::move(dir)); }
  Config& cache_policy(CachePolicy p) { return set(cache_policy_, p); }
  /// The device each code object is loaded into, with its kernels resolved, before its future
  /// completes (see hipacm::loaded_module, hipacm::functions). HIPACM_LOAD_NONE (-1, the
  /// default) compiles only.
  Config& load_device(int device) { return set(load_device_, static_cast<int32_t>(device)); }
  /// Store failed compiles (HIPACM_ERROR_COMPILATION) in the persistent cache and serve them
  /// again (ABI 1.4).
  Config& cache_failures(bool yes = true) { return set(cache_failures_, yes); }
  /// The shared remote cache tier beneath the persistent cache (ABI 1.5):
  /// "redis://[user[:password]@]host[:port][/db]", or "off" for none; empty (the default):
  /// $HIPACM_REMOTE_CACHE. A malformed URL fails the Mode's enter with INVALID_ARGUMENT.
  Config& remote_cache(std::string url) { return set(remote_cache_, std::move(url)); }

  /// The C struct; `arch`, `cache_dir` and `remote_cache` point into this Config.
  hipacm_mode_config to_c() const noexcept {
    hipacm_mode_config cfg;
    hipacm_mode_config_init(&cfg);  // the macro: sizeof(cfg) as this header declares it
    cfg.max_workers = max_workers_;
    cfg.ignore_errors = ignore_errors_ ? 1 : 0;
    cfg.fail_fast = fail_fast_ ? 1 : 0;
    cfg.arch = arch_ ? arch_->c_str() : nullptr;
    cfg.isolation = static_cast<int32_t>(isolation_);
    cfg.compile_timeout_ms = compile_timeout_ms_;
    // NULL rather than "": the plugin reads both alike, and NULL is the field's default.
    cfg.cache_dir = cache_dir_.empty() ? nullptr : cache_dir_.c_str();
    cfg.cache_policy = static_cast<int32_t>(cache_policy_);
    cfg.load_device = load_device_;
    cfg.cache_failures = cache_failures_ ? 1 : 0;
    cfg.remote_cache = remote_cache_.empty() ? nullptr : remote_cache_.c_str();
    return cfg;
  }

 private:
  template <class Field, class Value>
  Config& set(Field& field, Value&& value) {
    field = std::forward<Value>(value);
    return *this;
  }

  uint32_t max_workers_ = 0;
  bool ignore_errors_ = false;
  bool fail_fast_ = false;
  std::optional<std::string> arch_;
  Isolation isolation_ = Isolation::Auto;
  uint32_t compile_timeout_ms_ = 0;
  std::string cache_dir_;
  CachePolicy cache_policy_ = CachePolicy::Default;
  int32_t load_device_ = HIPACM_LOAD_NONE;
  bool cache_failures_ = false;
  std::string remote_cache_;
};

}  // namespace hipacm

#endif  // HIPACM_CPP_CONFIG_HPP
