// SPDX-License-Identifier: MIT
// library_facts_settle_test.cpp - comgr's table and hipRTC's identity settle from a memo without
// loading the library, and a concurrent first use reads and records them once. Each test needs a
// process of its own (ctest runs one per test): the settled facts last for the process.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "hip_backend/dispatch/compiler_identity.h"
#include "hip_backend/hiprtc/comgr_isa.h"
#include "hip_backend/hiprtc/comgr_isa_internal.h"
#include "hip_backend/hiprtc/hiprtc_internal.h"
#include "hip_backend/hiprtc/rocm_toolchain.h"
#include "hip_backend/library_facts.h"
#include "support/libraries/dynamic_library.h"
#include "tests/hip_backend/rocm_facts.h"
#include "tests/hip_backend/test_support.h"

namespace hipacm::backend {
namespace {

namespace fs = std::filesystem;
using testing::ScopedEnv;

class CountingMemo final : public LibraryFactMemo {
 public:
  std::optional<std::string> recall(const std::string& key) noexcept override {
    std::lock_guard<std::mutex> lock(mutex_);
    ++recalls;
    auto it = values.find(key);
    if (it == values.end()) return std::nullopt;
    return it->second;
  }
  void remember(const std::string& key, const std::string& value) noexcept override {
    std::lock_guard<std::mutex> lock(mutex_);
    ++remembers;
    values[key] = value;
  }
  std::map<std::string, std::string> values;
  int recalls = 0;
  int remembers = 0;

 private:
  std::mutex mutex_;
};

// Any comgr: ROCm 5 maps libamd_comgr.so.2, ROCm 6 and 7 libamd_comgr.so.3.
bool comgr_loaded() { return rocm_facts::comgr_mapped(); }

bool hiprtc_loaded() {
  for (const std::string& name : hiprtc_library_candidates())
    if (DynamicLibrary::open_if_loaded(name)) return true;
  return false;
}

// A file that stands in for a library: the memo is trusted by its identity, and
// loading it would fail, so a pass proves nothing was loaded.
class StandIn {
 public:
  explicit StandIn(const std::string& name)
      : dir_(fs::temp_directory_path() / ("hipacm-settle-" + std::to_string(::getpid()))),
        path_(dir_ / name) {
    fs::create_directories(dir_);
    std::ofstream(path_) << "not an ELF file";
  }
  ~StandIn() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path() const { return path_.string(); }

 private:
  fs::path dir_;
  fs::path path_;
};

TEST(LibraryFactsSettle, ComgrTableComesFromTheMemoWithoutLoadingComgr) {
  if (comgr_loaded()) GTEST_SKIP() << "comgr is already loaded here; run under ctest";
  StandIn comgr("libamd_comgr.so.2");
  ScopedEnv env("HIPACM_COMGR_LIBRARY", comgr.path());
  AmdgpuIsaTable table;
  table.library_path = comgr.path();
  table.features_known = true;
  table.processors = {"gfx90a", "gfx999"};
  table.details = {{"gfx90a", true, true}, {"gfx999", false, false}};
  CountingMemo memo;
  remember_library_fact(&memo, "comgr-isa-table 2", toolchain_memo_candidates(), comgr.path(),
                        amdgpu_isa_table_payload(table));

  std::string error;
  Expected<void> checked;
  // gfx999 exists only in the remembered table; gfx1030 only in the real comgr.
  checked = validate_amdgpu_arch("gfx999", &memo);
  error = checked.failure().message;
  EXPECT_TRUE(checked) << error;
  checked = validate_amdgpu_arch("gfx90a:xnack-", &memo);
  error = checked.failure().message;
  EXPECT_TRUE(checked) << error;
  checked = validate_amdgpu_arch("gfx1030", &memo);
  error = checked.failure().message;
  EXPECT_FALSE(checked);
  EXPECT_NE(error.find("supported processors: gfx90a, gfx999"), std::string::npos) << error;
  EXPECT_FALSE(comgr_loaded());
  EXPECT_EQ(memo.recalls, 1);  // settled by the first call
}

TEST(LibraryFactsSettle, HiprtcIdentityComesFromTheMemoWithoutLoadingHiprtc) {
  if (hiprtc_loaded()) GTEST_SKIP() << "hipRTC is already loaded here; run under ctest";
  StandIn hiprtc("libhiprtc.so");
  ScopedEnv env("HIPACM_HIPRTC_LIBRARY", hiprtc.path());
  CountingMemo memo;
  remember_library_fact(&memo, "hiprtc-identity 2", toolchain_memo_candidates(), hiprtc.path(),
                        "9.9 libhiprtc.so.9.9.99999");
  const CompilerIdentity identity = compiler_identity("gfx90a", &memo);
  EXPECT_EQ(identity.backend, "hiprtc");
  EXPECT_EQ(identity.version, "9.9 libhiprtc.so.9.9.99999");
  EXPECT_TRUE(identity.error.empty()) << identity.error;
  EXPECT_EQ(compiler_identity("gfx1030").version, identity.version);  // settled
}

TEST(LibraryFactsSettle, WithNothingRememberedComgrIsReadAndRecorded) {
  if (comgr_loaded()) GTEST_SKIP() << "comgr is already loaded here; run under ctest";
  CountingMemo memo;
  std::string error;
  Expected<void> checked;
  checked = validate_amdgpu_arch("gfx1030", &memo);
  error = checked.failure().message;
  EXPECT_TRUE(checked) << error;
  EXPECT_TRUE(comgr_loaded());
  EXPECT_EQ(memo.recalls, 1);
  EXPECT_EQ(memo.remembers, 1);  // the real table, for the next process
  ASSERT_EQ(memo.values.size(), 1u);
  EXPECT_NE(memo.values.begin()->second.find("\ngfx1030 0 0\n"), std::string::npos);
  EXPECT_NE(memo.values.begin()->second.find("\ngfx90a 1 1\n"), std::string::npos);
}

TEST(LibraryFactsConcurrency, FirstUseFromManyThreadsReadsAndRecordsOnce) {
  if (comgr_loaded() || hiprtc_loaded())
    GTEST_SKIP() << "comgr or hipRTC is already loaded here; run under ctest";
  CountingMemo memo;
  constexpr int kThreads = 8;
  std::atomic<int> ready{0};
  std::atomic<int> valid{0};
  std::atomic<int> identified{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      ready.fetch_add(1, std::memory_order_acq_rel);
      while (ready.load(std::memory_order_acquire) < kThreads) std::this_thread::yield();
      if (validate_amdgpu_arch(i % 2 == 0 ? "gfx90a" : "gfx1030", &memo))
        valid.fetch_add(1, std::memory_order_relaxed);
      if (!compiler_identity("gfx90a", &memo).version.empty())
        identified.fetch_add(1, std::memory_order_relaxed);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(valid.load(), kThreads);
  EXPECT_EQ(identified.load(), kThreads);
  // At most one recall per fact, whatever the number of threads (none for hipRTC's identity when
  // reading comgr's table already loaded hipRTC: dlopen would return the loaded one).
  EXPECT_GE(memo.recalls, 1);
  EXPECT_LE(memo.recalls, 2);
  EXPECT_EQ(memo.remembers, 2);  // comgr's table and hipRTC's identity
  EXPECT_EQ(memo.values.size(), 2u);
}

}  // namespace
}  // namespace hipacm::backend
