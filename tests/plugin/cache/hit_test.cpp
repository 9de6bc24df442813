// SPDX-License-Identifier: MIT
// hit_test.cpp - cache hits through the C ABI: identical code, from_cache set, no compile run.
#include <gtest/gtest.h>

#include <filesystem>

#include "hip_backend/dispatch/compiler_identity.h"
#include "plugin/cache/cache_admin.h"
#include "tests/hip_backend/rocm_facts.h"
#include "tests/plugin/cache/cache_test_support.h"

namespace hipacm::cache_test {
namespace {

class CacheHit : public CacheEnvironment {};

TEST_F(CacheHit, CompilerIdentityNamesTheCompilerOfEachPlatform) {
  const auto amd = backend::compiler_identity(kArch);
  EXPECT_EQ(amd.backend, "hiprtc");
  // hipRTC's version and the file it loaded from (libamdhip64.so.5.2.21153 in ROCm 5,
  // libhiprtc.so.6.4.43484 in ROCm 6.4), whose name carries the release.
  const rocm_facts::HiprtcFacts hiprtc = rocm_facts::mapped_hiprtc();
  ASSERT_FALSE(hiprtc.file.empty()) << "the identity is read from a loaded hipRTC";
  EXPECT_EQ(amd.version.rfind(hiprtc.version + " ", 0), 0u) << amd.version;
  EXPECT_NE(amd.version.find(std::filesystem::path(hiprtc.file).filename().string()),
            std::string::npos)
      << amd.version;
  const auto nvidia = backend::compiler_identity("sm_90");
  EXPECT_EQ(nvidia.backend, "nvrtc");
  // Empty only when NVRTC cannot be loaded here; then nothing for sm_ is cached.
  if (!nvidia.version.empty()) {
    EXPECT_NE(nvidia.version.find("libnvrtc"), std::string::npos) << nvidia.version;
  }
  const auto other = backend::compiler_identity("xyz_1");
  EXPECT_EQ(other.backend, "unknown");
  EXPECT_EQ(other.version, "");
}

TEST_F(CacheHit, NvidiaCubinIsServedFromTheCache) {
  if (backend::compiler_identity("sm_90").version.empty())
    GTEST_SKIP() << "NVRTC cannot be loaded here, so sm_90 kernels are not compiled or cached";
  TempDir dir;
  CompileSpec spec;
  spec.arch = "sm_90";
  Outcome cold, hit;
  ASSERT_NO_FATAL_FAILURE(compile_cold_then_hit(dir.path(), spec, &cold, &hit));
  auto admin = cache::CacheAdmin::open(dir.db());
  const auto entries = admin.list();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].backend, "nvrtc");
  // The stored CUBIN passes the same check on verify.
  EXPECT_TRUE(admin.verify(false).bad.empty());
}

TEST_F(CacheHit, SecondModeServesIdenticalCodeWithoutCompiling) {
  for (const char* arch : {kArch, kOtherArch}) {
    SCOPED_TRACE(arch);
    TempDir dir;
    CompileSpec spec;
    spec.arch = arch;
    Outcome cold, hit;
    ASSERT_NO_FATAL_FAILURE(compile_cold_then_hit(dir.path(), spec, &cold, &hit));

    auto admin = cache::CacheAdmin::open(dir.db());
    const auto entries = admin.list();
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].arch, arch);
    EXPECT_EQ(entries[0].hits, 1);
    EXPECT_EQ(entries[0].backend, "hiprtc");
  }
}

TEST_F(CacheHit, LoweredNamesRoundTrip) {
  TempDir dir;
  CompileSpec spec;
  spec.source = kTemplatedSource;
  spec.name_expressions = {"scale<float>", "scale<double>"};
  Outcome cold, hit;
  ASSERT_NO_FATAL_FAILURE(compile_cold_then_hit(dir.path(), spec, &cold, &hit));
  ASSERT_EQ(cold.lowered_names.size(), 2u);
  EXPECT_EQ(hit.lowered_names, cold.lowered_names);
}

TEST_F(CacheHit, ReadPolicyServesButNeverStores) {
  TempDir dir;
  CountingFactory counter;
  CompileSpec read;
  read.policy = HIPACM_CACHE_READ;
  ASSERT_EQ(compile_in_mode(dir.path(), read).status, HIPACM_SUCCESS);
  ASSERT_EQ(compile_in_mode(dir.path(), read).status, HIPACM_SUCCESS);
  EXPECT_EQ(counter.compiles.load(), 2);
  EXPECT_FALSE(std::filesystem::exists(dir.db()));

  ASSERT_EQ(compile_in_mode(dir.path()).status, HIPACM_SUCCESS);  // READWRITE stores
  const Outcome hit = compile_in_mode(dir.path(), read);
  EXPECT_TRUE(hit.from_cache);
  EXPECT_EQ(counter.compiles.load(), 3);
}

TEST_F(CacheHit, OffPolicyNeitherReadsNorWrites) {
  TempDir dir;
  CountingFactory counter;
  ASSERT_EQ(compile_in_mode(dir.path()).status, HIPACM_SUCCESS);
  CompileSpec off;
  off.policy = HIPACM_CACHE_OFF;
  const Outcome outcome = compile_in_mode(dir.path(), off);
  ASSERT_EQ(outcome.status, HIPACM_SUCCESS);
  EXPECT_FALSE(outcome.from_cache);
  EXPECT_EQ(counter.compiles.load(), 2);
}

TEST_F(CacheHit, EnvironmentChoosesPolicyAndDirectoryForDefault) {
  TempDir dir;
  CountingFactory counter;
  setenv("HIPACM_CACHE_DIR", dir.path().c_str(), 1);
  CompileSpec by_env;
  by_env.policy = HIPACM_CACHE_DEFAULT;
  setenv("HIPACM_CACHE", "off", 1);
  ASSERT_EQ(compile_in_mode("", by_env).status, HIPACM_SUCCESS);
  EXPECT_FALSE(std::filesystem::exists(dir.db()));
  setenv("HIPACM_CACHE", "readwrite", 1);
  ASSERT_EQ(compile_in_mode("", by_env).status, HIPACM_SUCCESS);
  EXPECT_TRUE(std::filesystem::exists(dir.db()));
  EXPECT_TRUE(compile_in_mode("", by_env).from_cache);
  // An explicit policy in the config wins over the environment.
  setenv("HIPACM_CACHE", "off", 1);
  CompileSpec explicit_rw;
  EXPECT_TRUE(compile_in_mode("", explicit_rw).from_cache);
  EXPECT_EQ(counter.compiles.load(), 2);
}

TEST_F(CacheHit, BadEnvironmentPolicyIsRefusedAtModeEnter) {
  TempDir dir;
  setenv("HIPACM_CACHE", "sometimes", 1);
  CompileSpec by_env;
  by_env.policy = HIPACM_CACHE_DEFAULT;
  const Outcome outcome = compile_in_mode(dir.path(), by_env);
  EXPECT_EQ(outcome.enter_status, HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hipacm_last_error_message()).find("HIPACM_CACHE"), std::string::npos);
  EXPECT_EQ(hipacm_active_mode(), nullptr);
}

TEST_F(CacheHit, SystemCacheIsAReadOnlyLayerBeneath) {
  TempDir system_dir;
  TempDir user_dir;
  CountingFactory counter;
  ASSERT_EQ(compile_in_mode(system_dir.path()).status, HIPACM_SUCCESS);
  TempDir exported;
  const std::string file = exported.path() + "/system.sqlite3";
  ASSERT_EQ(cache::CacheAdmin::open(system_dir.db()).export_to(file), 1u);
  setenv("HIPACM_SYSTEM_CACHE", file.c_str(), 1);
  const Outcome outcome = compile_in_mode(user_dir.path());
  ASSERT_EQ(outcome.status, HIPACM_SUCCESS);
  EXPECT_TRUE(outcome.from_cache);
  EXPECT_EQ(counter.compiles.load(), 1);
  EXPECT_EQ(cache::CacheAdmin::open(user_dir.db()).list().size(), 0u)
      << "a system-layer hit is served as is, not copied";
}

TEST_F(CacheHit, SynchronousCompileUsesTheCache) {
  TempDir dir;
  CountingFactory counter;
  setenv("HIPACM_CACHE_DIR", dir.path().c_str(), 1);
  const std::string source = kernel_source("sync_kernel");
  for (int round = 0; round < 2; ++round) {
    hipacm_request req{};
    req.struct_size = sizeof req;
    req.source = source.c_str();
    hipacm_future* future = nullptr;
    ASSERT_EQ(hipacm_compile(&req, kArch, &future), HIPACM_SUCCESS);
    const hipacm_kernel* kernel = nullptr;
    ASSERT_EQ(hipacm_future_result(future, &kernel), HIPACM_SUCCESS);
    EXPECT_EQ(kernel->from_cache, round);
    hipacm_future_release(future);
  }
  EXPECT_EQ(counter.compiles.load(), 1);
}

}  // namespace
}  // namespace hipacm::cache_test
