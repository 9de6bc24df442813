// SPDX-License-Identifier: MIT
// hipacm_hpp_cache_test.cpp - Config's cache and load-device settings; the ABI 1.2 kernel readers.
#include <hipacm/hipacm.hpp>

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "../temp_dir.h"
#include "hpp_test_support.h"

namespace {

using namespace hpp_test;

// A fresh cache directory for one test, removed with everything in it.
class TempCacheDir : public hipacm::test::TempDir {
 public:
  TempCacheDir() : TempDir("hipacm-hpp-cache-") {}
};

// One mode over `dir` with `policy`: compiles `source` and says whether the cache served it.
bool served_from_cache(const std::string& dir, hipacm::CachePolicy policy,
                       const std::string& source) {
  hipacm::Mode mode(config().cache_dir(dir).cache_policy(policy));
  hipacm::Future future = mode.submit(hipacm::Request(source));
  mode.exit();
  const hipacm_kernel& kernel = future.result();
  EXPECT_TRUE(IsAmdgpuElf(kernel));
  return hipacm::from_cache(kernel);
}

TEST(HppConfig, ToCCarriesTheCacheAndLoadSettings) {
  const hipacm::Config defaults;
  const hipacm_mode_config plain = defaults.to_c();
  EXPECT_EQ(plain.struct_size, sizeof(hipacm_mode_config));
  EXPECT_EQ(plain.cache_dir, nullptr);
  EXPECT_EQ(plain.cache_policy, HIPACM_CACHE_DEFAULT);
  EXPECT_EQ(plain.load_device, HIPACM_LOAD_NONE);

  const hipacm::Config set = hipacm::Config()
                                 .cache_dir("/some/dir")
                                 .cache_policy(hipacm::CachePolicy::Read)
                                 .load_device(3);
  const hipacm_mode_config c = set.to_c();
  ASSERT_NE(c.cache_dir, nullptr);
  EXPECT_STREQ(c.cache_dir, "/some/dir");
  EXPECT_EQ(c.cache_policy, HIPACM_CACHE_READ);
  EXPECT_EQ(c.load_device, 3);
  EXPECT_EQ(hipacm::Config().cache_dir("").to_c().cache_dir, nullptr) << "empty is the default";
  EXPECT_EQ(plain.remote_cache, nullptr) << "NULL: $HIPACM_REMOTE_CACHE";
  const hipacm::Config remote = hipacm::Config().remote_cache("redis://127.0.0.1:6390/1");
  ASSERT_NE(remote.to_c().remote_cache, nullptr);
  EXPECT_STREQ(remote.to_c().remote_cache, "redis://127.0.0.1:6390/1");
  EXPECT_EQ(hipacm::Config().remote_cache("").to_c().remote_cache, nullptr);

  EXPECT_EQ(static_cast<int>(hipacm::CachePolicy::Default), HIPACM_CACHE_DEFAULT);
  EXPECT_EQ(static_cast<int>(hipacm::CachePolicy::Off), HIPACM_CACHE_OFF);
  EXPECT_EQ(static_cast<int>(hipacm::CachePolicy::Read), HIPACM_CACHE_READ);
  EXPECT_EQ(static_cast<int>(hipacm::CachePolicy::ReadWrite), HIPACM_CACHE_READWRITE);
}

// Fields past the plugin's struct_size were never written: they read as absent, whatever the
// memory behind them holds.
TEST(HppKernel, FieldsPastTheStructSizeReadAsAbsent) {
  const char* names[] = {"vadd"};
  void* handles[] = {&names[0]};
  hipacm_kernel k{};
  k.struct_size = sizeof k;
  k.from_cache = 1;
  k.module = &names;
  k.function_names = names;
  k.functions = handles;
  k.num_functions = 1;
  EXPECT_TRUE(hipacm::from_cache(k));
  EXPECT_EQ(hipacm::loaded_module(k), static_cast<void*>(&names));
  EXPECT_EQ(hipacm::function_names(k), std::vector<std::string_view>{"vadd"});
  EXPECT_EQ(hipacm::functions(k), std::vector<void*>{handles[0]});

  k.struct_size = offsetof(hipacm_kernel, from_cache);  // an ABI 1.0 / 1.1 plugin's kernel
  EXPECT_FALSE(hipacm::from_cache(k));
  EXPECT_EQ(hipacm::loaded_module(k), nullptr);
  EXPECT_TRUE(hipacm::function_names(k).empty());
  EXPECT_TRUE(hipacm::functions(k).empty());
}

TEST_F(HppTest, ASecondModeOverTheSameCacheDirIsServedFromIt) {
  TempCacheDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string source = vadd_source("cached_vadd");
  EXPECT_FALSE(served_from_cache(dir.path(), hipacm::CachePolicy::ReadWrite, source))
      << "a fresh directory holds nothing";
  EXPECT_TRUE(served_from_cache(dir.path(), hipacm::CachePolicy::ReadWrite, source));
  EXPECT_TRUE(served_from_cache(dir.path(), hipacm::CachePolicy::Read, source));

  // Read serves hits but never stores: a new kernel is compiled again by the next mode.
  const std::string other = vadd_source("read_only_vadd");
  EXPECT_FALSE(served_from_cache(dir.path(), hipacm::CachePolicy::Read, other));
  EXPECT_FALSE(served_from_cache(dir.path(), hipacm::CachePolicy::ReadWrite, other));
}

TEST_F(HppTest, CacheOffIsNeverServedFromTheCache) {
  TempCacheDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string source = vadd_source("uncached_vadd");
  ASSERT_FALSE(served_from_cache(dir.path(), hipacm::CachePolicy::ReadWrite, source));
  ASSERT_TRUE(served_from_cache(dir.path(), hipacm::CachePolicy::ReadWrite, source))
      << "the entry is there";
  EXPECT_FALSE(served_from_cache(dir.path(), hipacm::CachePolicy::Off, source));
  EXPECT_FALSE(served_from_cache(dir.path(), hipacm::CachePolicy::Off, source));
}

TEST_F(HppTest, CompileOnlyKernelsListTheirFunctionsWithoutHandles) {
  hipacm::Mode mode(config().cache_policy(hipacm::CachePolicy::Off));
  hipacm::Future future =
      mode.submit(hipacm::Request(vadd_source("listed_b") + "\n" + vadd_source("listed_a")));
  mode.exit();
  const hipacm_kernel& kernel = future.result();
  const std::vector<std::string_view> names = hipacm::function_names(kernel);
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0], "listed_a") << "sorted by name";
  EXPECT_EQ(names[1], "listed_b");
  const std::vector<void*> handles = hipacm::functions(kernel);
  ASSERT_EQ(handles.size(), names.size());
  for (void* handle : handles) EXPECT_EQ(handle, nullptr) << "nothing is loaded";
  EXPECT_EQ(hipacm::loaded_module(kernel), nullptr);
  EXPECT_FALSE(hipacm::from_cache(kernel));
}

// No device has index 999, with or without a GPU: the load fails as docs/ABI.md says, and the
// compile's code object is not handed out.
TEST_F(HppTest, LoadDeviceWithoutSuchADeviceEndsBackendUnavailable) {
  hipacm::Mode mode(config().cache_policy(hipacm::CachePolicy::Off).load_device(999));
  hipacm::Future future = mode.submit(hipacm::Request(vadd_source("load_999")).key("load-999"));
  const hipacm::Error exited = thrown_error([&] { mode.exit(); });
  EXPECT_EQ(exited.status(), hipacm::Status::BackendUnavailable) << exited.what();
  EXPECT_EQ(exited.key(), "load-999") << "the exit names the failed compile";
  EXPECT_EQ(future.status(), hipacm::Status::BackendUnavailable);
  const hipacm::Error result = thrown_error([&] { future.result(); });
  EXPECT_EQ(result.status(), hipacm::Status::BackendUnavailable);
  EXPECT_TRUE(contains(result.message(), "device")) << result.message();
}

}  // namespace
