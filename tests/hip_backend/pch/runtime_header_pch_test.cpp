// SPDX-License-Identifier: MIT
// runtime_header_pch_test.cpp - workers compile through the runtime-header PCH with real hipRTC:
// the same bytes as a plain compile, one PCH per key on the machine, and every way back to the
// plain compile (a failing PCH, a refused key, options it cannot serve, the switch).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <boost/thread/thread.hpp>

#include "hip_backend/dispatch/compile_dispatch.h"
#include "hip_backend/hiprtc/inprocess_compiler.h"
#include "hip_backend/hiprtc/rocm_toolchain.h"
#include "hip_backend/pch/runtime_header_pch.h"
#include "hip_backend/pch/runtime_header_pch_store.h"
#include "hip_backend/pool/worker_compiler.h"
#include "hip_backend/pool/worker_pool.h"
#include "support/libraries/dynamic_library.h"
#include "support/libraries/loaded_objects.h"
#include "tests/hip_backend/worker_test_support.h"

namespace hipacm::test {
namespace {

namespace fs = std::filesystem;
using backend::CompileRequest;
using backend::CompileResult;
using backend::WorkerCompiler;
using backend::WorkerPool;

class RuntimeHeaderPch : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(root_.empty());
    fs::create_directory(root_ + "/run");
    fs::permissions(root_ + "/run", fs::perms::owner_all);
    runtime_.emplace("HIPACM_RUNTIME_DIR", root_ + "/run");
    WorkerPool::instance().shutdown();  // workers take the environment when they start
  }
  void TearDown() override {
    WorkerPool::instance().shutdown();
    runtime_.reset();
  }

  std::string store_root() const { return root_ + "/run/pch"; }

  /// The keys that hold a PCH now.
  std::vector<std::string> ready_keys() const {
    std::vector<std::string> keys;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(store_root(), ec)) {
      const std::string name = entry.path().filename().string();
      if (backend::valid_runtime_header_pch_key(name) && entry.is_directory()) keys.push_back(name);
    }
    return keys;
  }

  /// The key a worker files `request`'s PCH under.
  static std::string key_for(const CompileRequest& request) {
    return backend::runtime_header_pch_key(request.arch, backend::hiprtc_compile_options(request))
        .value_or("");
  }

  /// How many keys the store has settled: published or refused.
  std::size_t settled_keys() const {
    std::size_t refused = 0;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(store_root(), ec)) {
      if (entry.path().extension() == ".refused") ++refused;
    }
    return ready_keys().size() + refused;
  }

  /// A key's build runs in the worker after the result that claimed it was sent: waits, with no
  /// request in flight, until `count` keys are settled. Generous: only a hang reaches the end.
  void wait_for_settled(std::size_t count) const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (settled_keys() < count && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  /// Whether the compiles so far published one PCH. ROCm 5.2's hipRTC must (measured); on
  /// another hipRTC the refusal marker says why it did not, and *why gets it.
  bool pch_published(std::string* why) const {
    std::string reason = "no refusal recorded";
    if (const auto supported = backend::runtime_header_pch_supported(); !supported) {
      reason = supported.failure().message;
      // Such a hipRTC never claims a key: nothing can settle, so there is nothing to wait for.
      *why = "no runtime-header PCH with this hipRTC: " + reason;
      EXPECT_FALSE(hiprtc_is_rocm52()) << *why;
      EXPECT_EQ(settled_keys(), 0u) << "a hipRTC without PCH support filed a key";
      std::error_code ec;
      EXPECT_FALSE(fs::exists(store_root(), ec) && !fs::is_empty(store_root(), ec))
          << "a hipRTC without PCH support wrote into the store";
      return false;
    }
    wait_for_settled(1);
    if (ready_keys().size() == 1) return true;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(store_root(), ec)) {
      if (entry.path().extension() == ".refused") {
        std::ifstream in(entry.path());
        reason.assign(std::istreambuf_iterator<char>(in), {});
      }
    }
    *why = "no runtime-header PCH with this hipRTC: " + reason;
    EXPECT_FALSE(hiprtc_is_rocm52()) << *why;
    return false;
  }

  static bool hiprtc_is_rocm52() {
    const auto toolchain = backend::rocm_toolchain();
    return toolchain &&
           backend::file_base_name(backend::real_file_path(toolchain.value()->hiprtc_path))
                   .rfind("libamdhip64.so.5.2", 0) == 0;
  }

  /// Compiles through a worker and in this process, where no PCH is ever used: the results must
  /// be the same, byte for byte.
  CompileResult expect_same_as_plain(WorkerCompiler& workers, const CompileRequest& request) {
    const CompileResult via_worker = workers.compile(request);
    const CompileResult plain = backend::compile_for_target(request);
    EXPECT_EQ(via_worker.status, plain.status) << via_worker.error_message;
    if (request.name_expressions.empty()) {
      EXPECT_EQ(via_worker.code, plain.code) << request.source_name << " differs";
    } else {
      // hipRTC 6.4 and 7.2 order the variables behind name expressions differently from one
      // compile to the next (WorkerCompiler's byte-for-byte test says more): the same bytes in
      // another order is all that can be asked of any two compiles there.
      std::vector<std::uint8_t> a = via_worker.code, b = plain.code;
      std::sort(a.begin(), a.end());
      std::sort(b.begin(), b.end());
      EXPECT_EQ(a, b) << request.source_name << " differs beyond symbol order";
    }
    EXPECT_EQ(via_worker.lowered_names, plain.lowered_names);
    if (plain.status == HIPACM_SUCCESS) {
      EXPECT_EQ(via_worker.log, plain.log);
    }
    return via_worker;
  }

  const TempDir temp_{"hipacm-pch-run-"};
  const std::string root_ = temp_.path();
  std::optional<ScopedEnv> runtime_;
};

TEST_F(RuntimeHeaderPch, WorkersServeThePchAndMatchThePlainCompileByteForByte) {
  WorkerCompiler workers(kWorkerPath, 1, 0);
  expect_gfx90a_kernel(expect_same_as_plain(workers, make_request(kernel_source(1))), "k1");
  std::string why;
  if (!pch_published(&why)) GTEST_SKIP() << why;
  // The first compile had the PCH emitted, checked and published.
  EXPECT_EQ(ready_keys()[0], key_for(make_request(kernel_source(1))));
  for (int i = 2; i <= 6; ++i) {
    expect_gfx90a_kernel(expect_same_as_plain(workers, make_request(kernel_source(i))),
                         "k" + std::to_string(i));
  }
  CompileRequest templated = make_request(
      "template <typename T> __global__ void scale(T* x, T a, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) x[i] *= a;\n}\n",
      "scale.hip");
  templated.name_expressions = {"scale<float>", "scale<double>"};
  EXPECT_EQ(expect_same_as_plain(workers, templated).lowered_names.size(), 2u);
  // Device math and atomics come from the runtime header: the parts a PCH replaces.
  expect_same_as_plain(workers, make_request("extern \"C\" __global__ void m(float* x, int* c) {\n"
                                             "  x[threadIdx.x] = sinf(x[threadIdx.x]) + "
                                             "__expf(x[0]);\n  atomicAdd(c, 1);\n}\n",
                                             "math.hip"));
  EXPECT_EQ(ready_keys().size(), 1u) << "one key, one PCH";
}

TEST_F(RuntimeHeaderPch, AKeyFirstCompiledWithNameExpressionsGetsItsPchToo) {
  // A templated kernel whose names are all a program ever asks for under its options: its key
  // is built and checked on the source without the names, then serves compiles with them.
  WorkerCompiler workers(kWorkerPath, 1, 0);
  const std::string source =
      "template <typename T, int N> __global__ void scale(T* x) { x[threadIdx.x] *= N; }\n";
  CompileRequest templated = make_request(source, "scale.hip");
  templated.options = {"-O3", "-DONLY_TEMPLATES=1"};
  templated.name_expressions = {"scale<float, 2>", "scale<int, 3>"};
  EXPECT_EQ(expect_same_as_plain(workers, templated).lowered_names.size(), 2u);
  std::string why;
  if (!pch_published(&why)) GTEST_SKIP() << why;
  EXPECT_EQ(ready_keys()[0], key_for(templated));
  CompileRequest other = make_request(source + "// another program\n", "scale2.hip");
  other.options = templated.options;
  other.name_expressions = {"scale<double, 4>"};
  EXPECT_EQ(expect_same_as_plain(workers, other).lowered_names.size(), 1u);
  CompileRequest plain_kernel = make_request(kernel_source(3));
  plain_kernel.options = templated.options;
  expect_gfx90a_kernel(expect_same_as_plain(workers, plain_kernel), "k3");
  EXPECT_EQ(ready_keys().size(), 1u);
}

TEST_F(RuntimeHeaderPch, APchThatFailsIsRemovedAndThePlainCompileAnswers) {
  WorkerCompiler workers(kWorkerPath, 1, 0);
  expect_same_as_plain(workers, make_request(kernel_source(1)));
  std::string why;
  if (!pch_published(&why)) GTEST_SKIP() << why;
  const std::string gfx90a_key = ready_keys()[0];
  // A real PCH, for gfx908, with its digest: it passes every check of the store, and clang
  // refuses it for a gfx90a compile. Only a compile that reads it can fail on it.
  CompileRequest for_gfx908 = make_request(kernel_source(2));
  for_gfx908.arch = "gfx908";
  ASSERT_EQ(workers.compile(for_gfx908).status, HIPACM_SUCCESS);
  wait_for_settled(2);
  ASSERT_EQ(ready_keys().size(), 2u);
  const std::string gfx908_key = ready_keys()[0] == gfx90a_key ? ready_keys()[1] : ready_keys()[0];
  for (const char* name : {"hiprtc_runtime.h.pch", "hiprtc_runtime.h.pch.sha256"}) {
    fs::copy_file(store_root() + "/" + gfx908_key + "/" + name,
                  store_root() + "/" + gfx90a_key + "/" + name,
                  fs::copy_options::overwrite_existing);
  }
  expect_gfx90a_kernel(expect_same_as_plain(workers, make_request(kernel_source(3))), "k3");
  EXPECT_FALSE(fs::exists(store_root() + "/" + gfx90a_key)) << "the PCH that failed was removed";
  // The next compile of that key builds a good one again.
  expect_same_as_plain(workers, make_request(kernel_source(4)));
  wait_for_settled(2);
  EXPECT_TRUE(fs::exists(store_root() + "/" + gfx90a_key));
}

TEST_F(RuntimeHeaderPch, APchWhoseBytesChangedIsNeverUsedAndIsRebuilt) {
  WorkerCompiler workers(kWorkerPath, 1, 0);
  expect_same_as_plain(workers, make_request(kernel_source(1)));
  std::string why;
  if (!pch_published(&why)) GTEST_SKIP() << why;
  // Bytes that begin like a PCH and then are garbage: LLVM may abort on such a file rather than
  // fail the compile, so the digest must keep it from clang.
  const std::string pch =
      store_root() + "/" + ready_keys()[0] + "/" + backend::kRuntimeHeaderPchName;
  const std::string garbage = "CPCH" + std::string(4096, '\x7f');
  std::ofstream(pch, std::ios::binary | std::ios::trunc) << garbage;
  expect_gfx90a_kernel(expect_same_as_plain(workers, make_request(kernel_source(2))), "k2");
  // Found unusable, the key is claimed and built again.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  auto bytes = [&] {
    std::ifstream in(pch, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  // Published by a rename after the old directory is removed: a read between the two finds no
  // file, so wait for a PCH that is not the garbage.
  auto rebuilt = [&] {
    const std::string now = bytes();
    return now != garbage && now.compare(0, 4, "CPCH") == 0;
  };
  while (!rebuilt() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_NE(bytes(), garbage);
  EXPECT_EQ(bytes().compare(0, 4, "CPCH"), 0);
  expect_same_as_plain(workers, make_request(kernel_source(3)));
}

TEST_F(RuntimeHeaderPch, ACompileErrorIsTheUsersAndKeepsThePch) {
  WorkerCompiler workers(kWorkerPath, 1, 0);
  expect_same_as_plain(workers, make_request(kernel_source(1)));
  std::string why;
  if (!pch_published(&why)) GTEST_SKIP() << why;
  const CompileResult broken =
      workers.compile(make_request("extern \"C\" __global__ void k(float* a { a[0] = 1; }\n"));
  EXPECT_EQ(broken.status, HIPACM_ERROR_COMPILATION) << broken.error_message;
  EXPECT_NE(broken.log.find("error"), std::string::npos) << broken.log;
  EXPECT_EQ(ready_keys().size(), 1u);
}

TEST_F(RuntimeHeaderPch, AFirstCompileThatFailsPublishesNothing) {
  WorkerCompiler workers(kWorkerPath, 1, 0);
  const CompileResult broken =
      workers.compile(make_request("extern \"C\" __global__ void k(float* a { a[0] = 1; }\n"));
  EXPECT_EQ(broken.status, HIPACM_ERROR_COMPILATION);
  EXPECT_TRUE(ready_keys().empty()) << "a kernel that does not compile proves nothing";
  expect_same_as_plain(workers, make_request(kernel_source(1)));
  std::string why;
  if (!pch_published(&why)) GTEST_SKIP() << why;
}

TEST_F(RuntimeHeaderPch, ARefusedKeyIsNeverBuilt) {
  const CompileRequest request = make_request(kernel_source(1));
  fs::create_directories(store_root());
  fs::permissions(store_root(), fs::perms::owner_all);
  std::ofstream(store_root() + "/" + key_for(request) + ".refused") << "differed";
  WorkerCompiler workers(kWorkerPath, 1, 0);
  expect_same_as_plain(workers, request);
  expect_same_as_plain(workers, make_request(kernel_source(2)));
  EXPECT_TRUE(ready_keys().empty());
}

TEST_F(RuntimeHeaderPch, EachOptionSetHasItsOwnPchAndSomeHaveNone) {
  WorkerCompiler workers(kWorkerPath, 1, 0);
  auto with_options = [](int i, std::vector<std::string> options) {
    CompileRequest r = make_request(kernel_source(i));
    r.options = std::move(options);
    return r;
  };
  // Paths depend on the directory, and warnings on whether the header is parsed: plain compiles.
  expect_same_as_plain(workers, with_options(1, {"-I" + root_}));
  expect_same_as_plain(workers, with_options(2, {"-Wall"}));
  // A virtual header of the runtime header's name may take its place in a plain compile.
  CompileRequest shadowing = make_request(kernel_source(8));
  shadowing.headers = {{"hiprtc_runtime.h", "#define SHADOW 1\n"}};
  expect_same_as_plain(workers, shadowing);
  EXPECT_TRUE(ready_keys().empty());
  expect_same_as_plain(workers, with_options(3, {"-DSCALE=2"}));
  std::string why;
  if (!pch_published(&why)) GTEST_SKIP() << why;
  expect_same_as_plain(workers, with_options(4, {"-DSCALE=3"}));
  wait_for_settled(2);
  expect_same_as_plain(workers, with_options(5, {"-O1", "-ffast-math"}));
  wait_for_settled(3);
  EXPECT_EQ(ready_keys().size(), 3u);
  // Reused, each by its own options.
  expect_same_as_plain(workers, with_options(6, {"-DSCALE=2"}));
  expect_same_as_plain(workers, with_options(7, {"-O1", "-ffast-math"}));
  EXPECT_EQ(ready_keys().size(), 3u);
}

TEST_F(RuntimeHeaderPch, CheckModeComparesEveryCompileAndFindsNoDifference) {
  ScopedEnv check("HIPACM_HIPRTC_PCH", "check");
  WorkerCompiler workers(kWorkerPath, 1, 0);
  expect_same_as_plain(workers, make_request(kernel_source(1)));
  std::string why;
  if (!pch_published(&why)) GTEST_SKIP() << why;
  for (int i = 2; i <= 6; ++i) expect_same_as_plain(workers, make_request(kernel_source(i)));
  EXPECT_EQ(ready_keys().size(), 1u);
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(store_root(), ec)) {
    EXPECT_NE(entry.path().extension(), ".refused") << "no compile differed";
  }
}

TEST_F(RuntimeHeaderPch, TheSwitchKeepsEveryCompilePlain) {
  ScopedEnv off("HIPACM_HIPRTC_PCH", "off");
  WorkerCompiler workers(kWorkerPath, 1, 0);
  expect_same_as_plain(workers, make_request(kernel_source(1)));
  expect_same_as_plain(workers, make_request(kernel_source(2)));
  EXPECT_TRUE(ready_keys().empty());
}

TEST_F(RuntimeHeaderPch, WorkersThatStartTogetherBuildOnePchAndAllMatch) {
  constexpr int kKernels = 24;
  std::vector<CompileRequest> requests;
  for (int i = 0; i < kKernels; ++i) requests.push_back(make_request(kernel_source(100 + i)));
  WorkerCompiler workers(kWorkerPath, 4, 0);
  std::vector<CompileResult> results(requests.size());
  std::atomic<std::size_t> next{0};
  boost::thread_group group;
  for (int t = 0; t < 4; ++t) {
    group.create_thread([&] {
      for (std::size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < requests.size();)
        results[i] = workers.compile(requests[i]);
    });
  }
  group.join_all();
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const CompileResult plain = backend::compile_for_target(requests[i]);
    ASSERT_EQ(results[i].status, HIPACM_SUCCESS) << results[i].error_message;
    EXPECT_EQ(results[i].code, plain.code) << "kernel " << i << " differs";
  }
  std::string why;
  if (!pch_published(&why)) GTEST_SKIP() << why;
  EXPECT_EQ(ready_keys().size(), 1u) << "one key, one PCH";
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(store_root(), ec)) {
    EXPECT_EQ(entry.path().filename().string().rfind(".stage-", 0), std::string::npos)
        << "nothing staged is left behind";
  }
}

}  // namespace
}  // namespace hipacm::test
