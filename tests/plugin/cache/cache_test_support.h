// SPDX-License-Identifier: MIT
// cache_test_support.h - temporary cache directories, a counting real compiler, and one-kernel
// modes.
#pragma once

#include <gtest/gtest.h>
#include <hipacm/hipacm.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "hip_backend/compiler.h"
#include "hip_backend/dispatch/compile_dispatch.h"
#include "plugin/cache/store/schema.h"
#include "plugin/mode/compiler_factory.h"
#include "tests/plugin/plugin_test_support.h"

namespace hipacm::cache_test {

using test::kArch;
using test::kTemplatedSource;
inline constexpr const char* kOtherArch = "gfx1030";

inline std::string kernel_source(const std::string& name = "vadd") {
  return test::vadd_source(name);
}

/// A fresh directory, removed (with everything in it) on destruction.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "hipacm-cache-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, ec);
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string db() const { return path_ + "/" + cache::kDatabaseFileName; }

 private:
  std::string path_;
};

/// Real in-process hipRTC compiles, counted.
class CountingCompiler final : public backend::Compiler {
 public:
  explicit CountingCompiler(std::atomic<int>* count) : count_(count) {}
  backend::CompileResult compile(const backend::CompileRequest& request) override {
    count_->fetch_add(1, std::memory_order_relaxed);
    return real_.compile(request);
  }

 private:
  std::atomic<int>* count_;
  backend::InProcessCompiler real_;
};

/// Installs the counting compiler for every mode entered while it lives.
class CountingFactory {
 public:
  CountingFactory() {
    set_compiler_factory_for_testing(
        [this](const ModeSettings&) { return std::make_shared<CountingCompiler>(&compiles); });
  }
  CountingFactory(const CountingFactory&) = delete;
  CountingFactory& operator=(const CountingFactory&) = delete;
  ~CountingFactory() { set_compiler_factory_for_testing({}); }
  std::atomic<int> compiles{0};
};

/// What one compile through a mode produced.
struct Outcome {
  hipacm_status enter_status = HIPACM_ERROR_INTERNAL;
  hipacm_status status = HIPACM_ERROR_INTERNAL;
  std::vector<std::uint8_t> code;
  std::vector<std::string> lowered_names;
  bool from_cache = false;
  std::string error_message;  ///< the future's, on a failed compile
  std::string log;            ///< the future's, on a failed compile
};

struct CompileSpec {
  std::string source = kernel_source();
  std::string arch = kArch;
  std::vector<std::string> name_expressions;
  std::vector<std::string> options;
  std::int32_t policy = HIPACM_CACHE_READWRITE;
  bool cache_failures = false;
  std::uint32_t compile_timeout_ms = 0;
  std::int32_t isolation = HIPACM_ISOLATION_IN_PROCESS;
};

/// A mode's settings for reading and writing the cache in `cache_dir` (empty: the environment
/// decides), which must outlive them, on kArch.
inline hipacm_mode_config cache_mode_config(const std::string& cache_dir,
                                            std::int32_t isolation = HIPACM_ISOLATION_IN_PROCESS,
                                            std::uint32_t max_workers = 1) {
  hipacm_mode_config cfg;
  hipacm_mode_config_init(&cfg);
  cfg.arch = kArch;
  cfg.max_workers = max_workers;
  cfg.isolation = isolation;
  cfg.cache_dir = cache_dir.empty() ? nullptr : cache_dir.c_str();
  cfg.cache_policy = HIPACM_CACHE_READWRITE;
  return cfg;
}

/// Enters a mode on `cache_dir` (empty: the environment decides), compiles
/// one kernel, reads its result, and exits.
inline Outcome compile_in_mode(const std::string& cache_dir, const CompileSpec& spec = {}) {
  Outcome out;
  hipacm_mode_config cfg = cache_mode_config(cache_dir, spec.isolation);
  cfg.arch = spec.arch.c_str();
  cfg.cache_policy = spec.policy;
  cfg.cache_failures = spec.cache_failures ? 1 : 0;
  cfg.compile_timeout_ms = spec.compile_timeout_ms;
  hipacm_mode* mode = nullptr;
  out.enter_status = hipacm_mode_enter(&cfg, &mode);
  if (out.enter_status != HIPACM_SUCCESS) return out;

  test::Request req(spec.source);
  req.with_options(spec.options).with_name_expressions(spec.name_expressions);
  hipacm_future* future = nullptr;
  out.status = hipacm_submit(mode, req.get(), &future);
  if (out.status == HIPACM_SUCCESS) {
    const hipacm_kernel* kernel = nullptr;
    out.status = hipacm_future_result(future, &kernel);
    if (out.status == HIPACM_SUCCESS) {
      const auto* bytes = static_cast<const std::uint8_t*>(kernel->code);
      out.code.assign(bytes, bytes + kernel->code_size);
      for (std::size_t i = 0; i < kernel->num_lowered_names; ++i)
        out.lowered_names.emplace_back(kernel->lowered_names[i]);
      out.from_cache = kernel->from_cache != 0;
    } else {
      out.error_message = hipacm_future_error_message(future);
      out.log = hipacm_future_log(future);
    }
    hipacm_future_release(future);
  }
  hipacm_mode_exit(mode, nullptr);
  return out;
}

/// Compiles `spec` in a mode on `cache_dir` twice: a cold compile, then a hit that serves the same
/// code without running the compiler (a fatal failure when either compile fails: call it through
/// ASSERT_NO_FATAL_FAILURE).
inline void compile_cold_then_hit(const std::string& cache_dir, const CompileSpec& spec,
                                  Outcome* cold, Outcome* hit) {
  CountingFactory counter;
  *cold = compile_in_mode(cache_dir, spec);
  ASSERT_EQ(cold->status, HIPACM_SUCCESS);
  EXPECT_FALSE(cold->from_cache);
  EXPECT_EQ(counter.compiles.load(), 1);
  *hit = compile_in_mode(cache_dir, spec);
  ASSERT_EQ(hit->status, HIPACM_SUCCESS);
  EXPECT_TRUE(hit->from_cache);
  EXPECT_EQ(hit->code, cold->code);
  EXPECT_EQ(counter.compiles.load(), 1) << "a hit must not run the compiler";
}

/// Compiles `spec` in a mode on `cache_dir`, which must run the compiler once and serve nothing
/// from the cache (a fatal failure when the compile fails: call it through
/// ASSERT_NO_FATAL_FAILURE).
inline void compile_afresh(const std::string& cache_dir, const CompileSpec& spec, Outcome* out) {
  CountingFactory counter;
  *out = compile_in_mode(cache_dir, spec);
  ASSERT_EQ(out->status, HIPACM_SUCCESS);
  EXPECT_FALSE(out->from_cache) << "the cache served what it must not";
  EXPECT_EQ(counter.compiles.load(), 1);
}

/// Expects `action` to throw a std::runtime_error whose message holds `reason`; `what` names the
/// action in the failure when it does not throw.
template <typename Action>
void expect_refused(Action&& action, const std::string& reason, const std::string& what) {
  try {
    action();
    ADD_FAILURE() << what << " was not refused";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
  }
}

/// Clears the cache variables for the test and restores them afterwards.
class CacheEnvironment : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name :
         {"HIPACM_CACHE", "HIPACM_CACHE_DIR", "HIPACM_SYSTEM_CACHE", "HIPACM_CACHE_MAX_BYTES"})
      unsetenv(name);
  }
  void TearDown() override { SetUp(); }
};

}  // namespace hipacm::cache_test
