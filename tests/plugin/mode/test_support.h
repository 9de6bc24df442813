// SPDX-License-Identifier: MIT
// test_support.h - kernels, fault-injecting compilers and RAII helpers shared by the core tests.
#pragma once

#include <hipacm/hipacm.h>

#include <gtest/gtest.h>

#include <boost/chrono.hpp>
#include <boost/thread/thread.hpp>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hip_backend/codeobject/code_object_check.h"
#include "hip_backend/compiler.h"
#include "hip_backend/hiprtc/inprocess_compiler.h"
#include "plugin/mode/compiler_factory.h"
#include "tests/plugin/plugin_test_support.h"

namespace hipacm::test {

// The Triton seed scenario's kernel: a compile-time assertion that fails.
inline const char* kStaticAssertSource =
    "template <int X> struct check { static_assert(X == 2, \"hipacm seed: X must be 2\"); };\n"
    "extern \"C\" __global__ void seed(int* p) { check<1> c; (void)c; p[0] = 1; }\n";

/// Owns one future reference.
struct FutureHandle {
  hipacm_future* f = nullptr;
  FutureHandle() = default;
  explicit FutureHandle(hipacm_future* h) : f(h) {}
  FutureHandle(const FutureHandle&) = delete;
  FutureHandle& operator=(const FutureHandle&) = delete;
  FutureHandle(FutureHandle&& o) noexcept : f(o.f) { o.f = nullptr; }
  ~FutureHandle() {
    if (f) hipacm_future_release(f);
  }
  hipacm_future** out() { return &f; }
};

/// Fault and timing injection: a compile step that sleeps, then fails or
/// delegates to the real hipRTC compiler (or fakes a result when `real` is off).
class FakeCompiler final : public backend::Compiler {
 public:
  int delay_ms = 0;
  bool real = false;
  std::string fail_marker;  // sources containing it fail with COMPILATION
  std::atomic<int> calls{0};

  backend::CompileResult compile(const backend::CompileRequest& request) override {
    calls.fetch_add(1);
    if (delay_ms > 0) boost::this_thread::sleep_for(boost::chrono::milliseconds(delay_ms));
    backend::CompileResult r;
    if (!fail_marker.empty() && request.source.find(fail_marker) != std::string::npos) {
      r.status = HIPACM_ERROR_COMPILATION;
      r.error_message = "injected failure";
      r.log = "injected log: " + fail_marker;
      return r;
    }
    if (real) return backend::compile_with_hiprtc(request);
    r.status = HIPACM_SUCCESS;
    r.code.assign({0x7f, 'E', 'L', 'F'});
    r.log = "fake";
    return r;
  }
};

/// Installs a fake for the lifetime of a test, and restores the real one.
class ScopedFakeCompiler {
 public:
  ScopedFakeCompiler() : ScopedFakeCompiler(std::make_shared<FakeCompiler>()) {}
  explicit ScopedFakeCompiler(std::shared_ptr<FakeCompiler> fake) : fake_(std::move(fake)) {
    set_compiler_factory_for_testing([f = fake_](const ModeSettings&) { return f; });
  }
  ScopedFakeCompiler(const ScopedFakeCompiler&) = delete;
  ScopedFakeCompiler& operator=(const ScopedFakeCompiler&) = delete;
  ~ScopedFakeCompiler() { set_compiler_factory_for_testing({}); }
  FakeCompiler& operator*() const { return *fake_; }
  FakeCompiler* operator->() const { return fake_.get(); }

 private:
  std::shared_ptr<FakeCompiler> fake_;
};

inline hipacm_mode_config config(unsigned workers = 2) {
  hipacm_mode_config cfg;
  hipacm_mode_config_init(&cfg);
  cfg.max_workers = workers;
  cfg.arch = kArch;
  return cfg;
}

/// A test that enters modes: `mode` is the last one entered, and fake() installs a FakeCompiler
/// for every mode entered after its first call, until the test ends.
class ModeTest : public ::testing::Test {
 protected:
  hipacm_status enter(hipacm_mode_config cfg) { return hipacm_mode_enter(&cfg, &mode); }
  hipacm_status enter(unsigned workers) { return enter(config(workers)); }
  FakeCompiler& fake() {
    if (!fake_) fake_.emplace();
    return **fake_;
  }
  /// Submits every request to `mode`, appending their futures to *futures (a fatal failure
  /// when one is refused: call it through ASSERT_NO_FATAL_FAILURE).
  void submit_all(std::vector<Request>& requests, std::vector<FutureHandle>* futures) {
    for (auto& r : requests) {
      futures->emplace_back();
      ASSERT_EQ(hipacm_submit(mode, r.get(), futures->back().out()), HIPACM_SUCCESS);
    }
  }

  hipacm_mode* mode = nullptr;

 private:
  std::optional<ScopedFakeCompiler> fake_;
};

/// The real success criterion from hip_backend, applied to a test's kernel.
inline bool code_object_ok(const hipacm_kernel* k, const std::vector<std::string>& kernels,
                           std::string* error) {
  std::vector<std::uint8_t> code(static_cast<const std::uint8_t*>(k->code),
                                 static_cast<const std::uint8_t*>(k->code) + k->code_size);
  const Expected<void> checked = backend::check_amdgpu_code_object(code, k->arch, kernels);
  if (!checked && error != nullptr) *error = checked.failure().message;
  return checked.has_value();
}

}  // namespace hipacm::test
