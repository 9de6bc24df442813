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

/// Options for Mode; the defaults are the plugin's.
class Config {
 public:
  Config& max_workers(uint32_t n) {
    max_workers_ = n;
    return *this;
  }
  Config& ignore_errors(bool yes = true) {
    ignore_errors_ = yes;
    return *this;
  }
  Config& fail_fast(bool yes = true) {
    fail_fast_ = yes;
    return *this;
  }
  /// e.g. "gfx90a"; default: $HIPACM_ARCH, otherwise the device's.
  Config& arch(std::string a) {
    arch_ = std::move(a);
    return *this;
  }
  Config& isolation(Isolation i) {
    isolation_ = i;
    return *this;
  }
  /// Per-compile limit in worker processes (rounded up to ms); zero = none.
  template <class Rep, class Period>
  Config& compile_timeout(std::chrono::duration<Rep, Period> d) {
    auto ms = std::chrono::ceil<std::chrono::milliseconds>(d).count();
    compile_timeout_ms_ = ms <= 0                    ? 0u
                          : ms > int64_t{UINT32_MAX} ? UINT32_MAX
                                                     : static_cast<uint32_t>(ms);
    return *this;
  }

  /// The C struct; `arch` points into this Config.
  hipacm_mode_config to_c() const noexcept {
    hipacm_mode_config cfg;
    hipacm_mode_config_init(&cfg);  // the macro: sizeof(cfg) as this header declares it
    cfg.max_workers = max_workers_;
    cfg.ignore_errors = ignore_errors_ ? 1 : 0;
    cfg.fail_fast = fail_fast_ ? 1 : 0;
    cfg.arch = arch_ ? arch_->c_str() : nullptr;
    cfg.isolation = static_cast<int32_t>(isolation_);
    cfg.compile_timeout_ms = compile_timeout_ms_;
    return cfg;
  }

 private:
  uint32_t max_workers_ = 0;
  bool ignore_errors_ = false;
  bool fail_fast_ = false;
  std::optional<std::string> arch_;
  Isolation isolation_ = Isolation::Auto;
  uint32_t compile_timeout_ms_ = 0;
};

}  // namespace hipacm

#endif  // HIPACM_CPP_CONFIG_HPP
