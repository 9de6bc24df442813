// SPDX-License-Identifier: MIT
// one_pass_test.cpp - one cache miss makes each costly pass once: the request is keyed and its
// includes scanned once, the store is looked in by the submit's lookup and once more under the
// claim, and the code object is checked once in the host, in process and from a worker alike.
#include <gtest/gtest.h>
#include <hipacm/hipacm.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hip_backend/dispatch/compile_dispatch.h"
#include "hip_backend/pool/worker_pool.h"
#include "plugin/cache/caching_compiler.h"
#include "support/pass_counts.h"
#include "tests/plugin/cache/cache_test_support.h"

namespace hipacm::cache_test {
namespace {

namespace fs = std::filesystem;

/// The passes made between its construction and passes().
class PassCounter {
 public:
  PassCounter() : start_(now()) {}
  struct Passes {
    std::uint64_t keys = 0, scans = 0, lookups = 0, checks = 0;
  };
  Passes passes() const {
    const Passes end = now();
    return {end.keys - start_.keys, end.scans - start_.scans, end.lookups - start_.lookups,
            end.checks - start_.checks};
  }

 private:
  static Passes now() {
    const backend::PassCounts& c = backend::pass_counts();
    return {c.cache_keys.load(), c.input_scans.load(), c.store_lookups.load(),
            c.result_checks.load()};
  }
  Passes start_;
};

/// Sets `name` to `value` for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

/// One kernel through a mode with `isolation`, on the cache in `cache_dir`.
Outcome compile_once(const std::string& cache_dir, std::int32_t isolation,
                     const std::string& source = kernel_source("one_pass"),
                     const std::vector<std::string>& options = {}) {
  Outcome out;
  hipacm_mode_config cfg;
  hipacm_mode_config_init(&cfg);
  cfg.arch = kArch;
  cfg.max_workers = 1;
  cfg.isolation = isolation;
  cfg.cache_dir = cache_dir.c_str();
  cfg.cache_policy = HIPACM_CACHE_READWRITE;
  hipacm_mode* mode = nullptr;
  out.enter_status = hipacm_mode_enter(&cfg, &mode);
  if (out.enter_status != HIPACM_SUCCESS) return out;
  test::Request req(source);
  req.with_options(options);
  hipacm_future* future = nullptr;
  out.status = hipacm_submit(mode, req.get(), &future);
  if (out.status == HIPACM_SUCCESS) {
    const hipacm_kernel* kernel = nullptr;
    out.status = hipacm_future_result(future, &kernel);
    if (out.status == HIPACM_SUCCESS) out.from_cache = kernel->from_cache != 0;
    hipacm_future_release(future);
  }
  hipacm_mode_exit(mode, nullptr);
  return out;
}

class OnePassPerMiss : public CacheEnvironment {
 protected:
  void SetUp() override {
    CacheEnvironment::SetUp();
    fs::create_directory(root_.path() + "/run");
    fs::permissions(root_.path() + "/run", fs::perms::owner_all);
    worker_.emplace("HIPACM_WORKER", HIPACM_WORKER_BINARY);
    runtime_.emplace("HIPACM_RUNTIME_DIR", root_.path() + "/run");
    pch_.emplace("HIPACM_HIPRTC_PCH", "off");
  }
  void TearDown() override {
    backend::WorkerPool::instance().shutdown();
    pch_.reset();
    runtime_.reset();
    worker_.reset();
    CacheEnvironment::TearDown();
  }

  /// A miss, then a hit of the same kernel, with `isolation`: the miss keys and scans the request
  /// once, looks in the store at submit and under the claim, and checks the result once in this
  /// process; the hit keys, scans, looks and checks (the entry it serves) once.
  void expect_one_pass(std::int32_t isolation) {
    const PassCounter miss_counter;
    const Outcome miss = compile_once(cache_.path(), isolation);
    const PassCounter::Passes miss_passes = miss_counter.passes();
    ASSERT_EQ(miss.status, HIPACM_SUCCESS);
    ASSERT_FALSE(miss.from_cache);
    EXPECT_EQ(miss_passes.keys, 1u) << "a miss keys its request once";
    EXPECT_EQ(miss_passes.scans, 1u) << "a miss scans its request's includes once";
    EXPECT_EQ(miss_passes.lookups, 2u)
        << "a miss looks in the store at submit, and once more under its claim";
    EXPECT_EQ(miss_passes.checks, 1u) << "the host checks a fresh code object once";

    const PassCounter hit_counter;
    const Outcome hit = compile_once(cache_.path(), isolation);
    const PassCounter::Passes hit_passes = hit_counter.passes();
    ASSERT_EQ(hit.status, HIPACM_SUCCESS);
    ASSERT_TRUE(hit.from_cache);
    EXPECT_EQ(hit_passes.keys, 1u);
    EXPECT_EQ(hit_passes.scans, 1u);
    EXPECT_EQ(hit_passes.lookups, 1u);
    EXPECT_EQ(hit_passes.checks, 1u) << "a served entry is checked against its request once";
  }

  TempDir root_, cache_;
  std::optional<ScopedEnv> worker_, runtime_, pch_;
};

TEST_F(OnePassPerMiss, InProcess) { expect_one_pass(HIPACM_ISOLATION_IN_PROCESS); }

TEST_F(OnePassPerMiss, FromWorker) { expect_one_pass(HIPACM_ISOLATION_PROCESS); }

// A request that reads a header from disk is scanned once for its key, and once more after the
// compile: a header edited while the compiler ran must keep its result out of the cache.
TEST_F(OnePassPerMiss, HeaderOnDiskIsScannedAgainOnlyToVerifyTheStore) {
  const std::string include = root_.path() + "/include";
  fs::create_directory(include);
  std::ofstream(include + "/one_pass_scale.h") << "#define ONE_PASS_SCALE 2.0f\n";
  const std::string source =
      "#include \"one_pass_scale.h\"\n"
      "extern \"C\" __global__ void one_pass_scaled(float* a, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) a[i] *= ONE_PASS_SCALE;\n"
      "}\n";
  const PassCounter counter;
  const Outcome miss =
      compile_once(cache_.path(), HIPACM_ISOLATION_IN_PROCESS, source, {"-I" + include});
  const PassCounter::Passes passes = counter.passes();
  ASSERT_EQ(miss.status, HIPACM_SUCCESS);
  ASSERT_FALSE(miss.from_cache);
  EXPECT_EQ(passes.keys, 1u);
  EXPECT_EQ(passes.scans, 2u) << "the key's scan, and the check that the headers did not change";
  EXPECT_EQ(passes.lookups, 2u);
  EXPECT_EQ(passes.checks, 1u);
}

// Without a lookup before it (a compile step used on its own), the compile looks in the store
// once, under its claim.
TEST_F(OnePassPerMiss, CompileOnItsOwnLooksOnce) {
  cache::CacheSettings settings;
  settings.policy = cache::Policy::kReadWrite;
  settings.user_db = cache_.db();
  settings.max_bytes = std::int64_t{1} << 30;
  cache::CachingCompiler compiler(std::make_shared<backend::InProcessCompiler>(0), settings);
  backend::CompileRequest request;
  request.source = kernel_source("one_pass_alone");
  request.arch = kArch;
  const PassCounter counter;
  const backend::CompileResult result = compiler.compile(request);
  const PassCounter::Passes passes = counter.passes();
  ASSERT_EQ(result.status, HIPACM_SUCCESS) << result.error_message;
  EXPECT_FALSE(result.from_cache);
  EXPECT_EQ(passes.keys, 1u);
  EXPECT_EQ(passes.scans, 1u);
  EXPECT_EQ(passes.lookups, 1u);
  EXPECT_EQ(passes.checks, 1u);
}

}  // namespace
}  // namespace hipacm::cache_test
