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
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hip_backend/dispatch/compile_dispatch.h"
#include "hip_backend/pool/worker_pool.h"
#include "plugin/cache/cache_admin.h"
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

/// Real in-process compiles, with `after` run once the compiler is done and before the cache
/// stores the result: a header edited while the compiler ran.
class EditingCompiler final : public backend::Compiler {
 public:
  explicit EditingCompiler(std::function<void()> after) : after_(std::move(after)) {}
  backend::CompileResult compile(const backend::CompileRequest& request) override {
    backend::CompileResult result = real_.compile(request);
    after_();
    return result;
  }

 private:
  std::function<void()> after_;
  backend::InProcessCompiler real_;
};

const char* const kScaledSource =
    "#include \"one_pass_scale.h\"\n"
    "extern \"C\" __global__ void one_pass_scaled(float* a, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) a[i] *= ONE_PASS_SCALE;\n"
    "}\n";

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

  /// The include directory holding one_pass_scale.h with `text`.
  std::string include_dir(const std::string& text) {
    const std::string include = root_.path() + "/include";
    fs::create_directories(include);
    std::ofstream(include + "/one_pass_scale.h") << text;
    return include;
  }

  /// A compile of kScaledSource with `-I include` by a caching compiler around `inner`, and the
  /// entries the cache holds after it.
  std::size_t compile_and_count_entries(std::shared_ptr<backend::Compiler> inner,
                                        const std::string& include) {
    cache::CacheSettings settings;
    settings.policy = cache::Policy::kReadWrite;
    settings.user_db = cache_.db();
    settings.max_bytes = std::int64_t{1} << 30;
    cache::CachingCompiler compiler(std::move(inner), settings);
    backend::CompileRequest request;
    request.source = kScaledSource;
    request.options = {"-I" + include};
    request.arch = kArch;
    const backend::CompileResult result = compiler.compile(request);
    EXPECT_EQ(result.status, HIPACM_SUCCESS) << result.error_message;
    EXPECT_FALSE(result.from_cache);
    return cache::CacheAdmin::open(cache_.db()).list().size();
  }

  TempDir root_, cache_;
  std::optional<ScopedEnv> worker_, runtime_, pch_;
};

TEST_F(OnePassPerMiss, InProcess) { expect_one_pass(HIPACM_ISOLATION_IN_PROCESS); }

TEST_F(OnePassPerMiss, FromWorker) { expect_one_pass(HIPACM_ISOLATION_PROCESS); }

// A request that reads a header from disk is scanned once too: after the compile, the paths the
// scan looked at are only looked at again (a header edited while the compiler ran must keep its
// result out of the cache: external_inputs_test and the cache tests check that).
TEST_F(OnePassPerMiss, HeaderOnDiskIsScannedOnce) {
  const std::string include = include_dir("#define ONE_PASS_SCALE 2.0f\n");
  const PassCounter counter;
  const Outcome miss =
      compile_once(cache_.path(), HIPACM_ISOLATION_IN_PROCESS, kScaledSource, {"-I" + include});
  const PassCounter::Passes passes = counter.passes();
  ASSERT_EQ(miss.status, HIPACM_SUCCESS);
  ASSERT_FALSE(miss.from_cache);
  EXPECT_EQ(passes.keys, 1u);
  EXPECT_EQ(passes.scans, 1u) << "the headers unchanged after the compile are not scanned again";
  EXPECT_EQ(passes.lookups, 2u);
  EXPECT_EQ(passes.checks, 1u);
}

// The look after the compile still keeps out of the cache a result whose header was edited while
// the compiler ran, and a header written again with the same bytes (a new mtime) is scanned again
// and found unchanged: its result is stored, as before.
TEST_F(OnePassPerMiss, HeaderEditedDuringTheCompileIsNotStored) {
  const std::string include = include_dir("#define ONE_PASS_SCALE 2.0f\n");
  const std::string header = include + "/one_pass_scale.h";
  const auto edit = [header] {
    std::ofstream(header) << "#define ONE_PASS_SCALE 3.0f /* edited */\n";
  };
  EXPECT_EQ(compile_and_count_entries(std::make_shared<EditingCompiler>(edit), include), 0u);
}

TEST_F(OnePassPerMiss, HeaderRewrittenUnchangedDuringTheCompileIsStored) {
  const std::string include = include_dir("#define ONE_PASS_SCALE 2.0f\n");
  const std::string header = include + "/one_pass_scale.h";
  const auto rewrite = [header] {
    fs::remove(header);  // a new inode: the stat differs, the contents do not
    std::ofstream(header) << "#define ONE_PASS_SCALE 2.0f\n";
  };
  const PassCounter counter;
  EXPECT_EQ(compile_and_count_entries(std::make_shared<EditingCompiler>(rewrite), include), 1u);
  EXPECT_EQ(counter.passes().scans, 2u) << "a changed stat is decided by a new scan";
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
