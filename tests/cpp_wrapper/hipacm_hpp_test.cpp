// SPDX-License-Identifier: MIT
// hipacm_hpp_test.cpp - the C++17 RAII layer (hipacm.hpp) against the real plugin and hipRTC.
#include <hipacm/hipacm.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "hpp_test_support.h"

namespace {

using namespace hpp_test;

// Triton's seed scenario: a compile-time assertion that fails.
const char* const kStaticAssertSource =
    "template <int X> struct check { static_assert(X == 2, \"hipacm seed: X must be 2\"); };\n"
    "extern \"C\" __global__ void seed(int* p) { check<1> c; (void)c; p[0] = 1; }\n";

const char* const kTemplatedSource =
    "template <typename T> __global__ void scale(T* x, T a, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) x[i] *= a;\n"
    "}\n";

// What every report of a kStaticAssertSource compile carries, whichever call made it.
::testing::AssertionResult IsStaticAssertFailure(const hipacm::Error& e, const std::string& key) {
  if (e.status() != hipacm::Status::Compilation)
    return ::testing::AssertionFailure() << "status " << hipacm::status_string(e.status());
  if (e.key() != key) return ::testing::AssertionFailure() << "key '" << e.key() << "'";
  if (!contains(e.log(), "X must be 2"))
    return ::testing::AssertionFailure() << "the log lacks the assertion: " << e.log();
  if (e.message().empty()) return ::testing::AssertionFailure() << "no message";
  return ::testing::AssertionSuccess();
}

TEST_F(HppTest, SeedScenarioFailingCompileFreesTheSlotAndNextModeCompiles) {
  std::atomic<int> finalized{0}, cleaned{0};
  hipacm::Future submitted;
  {
    hipacm::Mode mode(config());
    EXPECT_TRUE(hipacm::active_mode_is_set());
    EXPECT_EQ(hipacm_active_mode(), mode.get());
    submitted = mode.submit(hipacm::Request(kStaticAssertSource)
                                .key("seed-x1")
                                .finalize([&](const hipacm_kernel&) { ++finalized; })
                                .cleanup([&](const hipacm::Error& e) {
                                  EXPECT_EQ(e.status(), hipacm::Status::Compilation);
                                  ++cleaned;
                                }));
    try {
      mode.exit();
      FAIL() << "a failing static_assert must fail the exit";
    } catch (const hipacm::CompileError& e) {
      EXPECT_TRUE(IsStaticAssertFailure(e, "seed-x1"));
      EXPECT_TRUE(contains(e.message(), "seed-x1")) << e.message();
      EXPECT_TRUE(contains(e.what(), "HIPACM_ERROR_COMPILATION")) << e.what();
      EXPECT_TRUE(e.first_failure() == submitted);
      EXPECT_FALSE(hipacm::active_mode_is_set()) << "the slot is free when exit() throws";
    }
    EXPECT_FALSE(mode.active());
  }  // the destructor of an exited guard does nothing
  EXPECT_EQ(finalized.load(), 0);
  EXPECT_EQ(cleaned.load(), 1);
  EXPECT_THROW(submitted.result(), hipacm::Error);
  EXPECT_EQ(cleaned.load(), 1) << "cleanup ran exactly once";

  // The slot is free: a fresh mode enters and compiles a good kernel.
  hipacm::Mode mode(config());
  hipacm::Future good = mode.submit(hipacm::Request(vadd_source("vadd")));
  const hipacm_kernel& k = good.result();
  EXPECT_TRUE(IsAmdgpuElf(k));
  EXPECT_STREQ(k.arch, kArch);
  EXPECT_NO_THROW(mode.exit());
}

TEST_F(HppTest, DedupAcrossThreadsRunsFinalizeOnce) {
  hipacm::Mode mode(config());
  std::atomic<int> finalized{0};
  auto token = std::make_shared<int>(0);
  std::weak_ptr<int> watch = token;
  std::vector<hipacm::Future> futures(8);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < futures.size(); ++i) {
    threads.emplace_back([&, i, token] {
      hipacm::Request req(vadd_source("dedup8"));
      req.key("dedup-8-threads").finalize([&finalized, token](const hipacm_kernel& k) {
        ++finalized;
        if (!IsAmdgpuElf(k)) throw std::runtime_error("not an AMDGPU ELF");
      });
      futures[i] = mode.submit(req);
    });
  }
  token.reset();
  for (auto& t : threads) t.join();
  for (auto& f : futures) EXPECT_TRUE(f == futures[0]) << "one key, one future";
  EXPECT_STREQ(futures[0].key(), "dedup-8-threads");
  // The seven dedup hits' copies are held until the mode exits.
  EXPECT_FALSE(watch.expired());
  mode.exit();
  EXPECT_EQ(finalized.load(), 1);
  EXPECT_TRUE(watch.expired()) << "every copy of the callables was destroyed";
  for (auto& f : futures) EXPECT_TRUE(IsAmdgpuElf(f.result()));
  EXPECT_EQ(finalized.load(), 1);
}

TEST_F(HppTest, CallablesRunAndAreDestroyedExactlyOnceAndDedupHitsNever) {
  hipacm::Mode mode(config());
  std::atomic<int> a_fin{0}, a_clean{0}, b_calls{0}, x_fin{0}, x_clean{0}, r_calls{0};
  auto a_token = std::make_shared<int>(0), b_token = std::make_shared<int>(0);
  auto x_token = std::make_shared<int>(0), r_token = std::make_shared<int>(0);
  std::weak_ptr<int> a_watch = a_token, b_watch = b_token, x_watch = x_token, r_watch = r_token;

  hipacm::Future first, second, failing;
  {
    hipacm::Request a(vadd_source("once"));
    a.key("once")
        .finalize([&a_fin, a_token](const hipacm_kernel&) { ++a_fin; })
        .cleanup([&a_clean, a_token](const hipacm::Error&) { ++a_clean; });
    hipacm::Request b(vadd_source("once"));
    b.key("once")
        .finalize([&b_calls, b_token](const hipacm_kernel&) { ++b_calls; })
        .cleanup([&b_calls, b_token](const hipacm::Error&) { ++b_calls; });
    hipacm::Request x(kStaticAssertSource);
    x.key("once-bad")
        .finalize([&x_fin, x_token](const hipacm_kernel&) { ++x_fin; })
        .cleanup([&x_clean, x_token](const hipacm::Error& e) {
          EXPECT_TRUE(IsStaticAssertFailure(e, "once-bad"));
          ++x_clean;
        });
    hipacm::Request rejected("");  // an empty source: the plugin rejects it
    rejected.cleanup([&r_calls, r_token](const hipacm::Error&) { ++r_calls; });
    a_token.reset();
    b_token.reset();
    x_token.reset();
    r_token.reset();

    first = mode.submit(a);
    second = mode.submit(b);
    EXPECT_TRUE(first == second) << "a dedup hit returns the same future";
    failing = mode.submit(x);
    try {
      mode.submit(rejected);
      ADD_FAILURE() << "an empty source must be rejected";
    } catch (const hipacm::Error& e) {
      EXPECT_EQ(e.status(), hipacm::Status::InvalidArgument);
      EXPECT_TRUE(contains(e.message(), "source")) << e.message();
    }
  }  // the Requests' own callables are gone; what is left are the submits' copies
  EXPECT_TRUE(r_watch.expired()) << "a rejected submit's copy is destroyed at once";
  EXPECT_EQ(r_calls.load(), 0);

  // Collecting runs a's finalize here, once, and destroys both of its callables.
  EXPECT_TRUE(IsAmdgpuElf(first.result()));
  EXPECT_TRUE(IsAmdgpuElf(second.result()));
  EXPECT_EQ(a_fin.load(), 1);
  EXPECT_EQ(a_clean.load(), 0);
  EXPECT_TRUE(a_watch.expired());
  EXPECT_FALSE(b_watch.expired()) << "dedup-hit copies are held until the mode exits";

  EXPECT_THROW(mode.exit(), hipacm::CompileError);
  EXPECT_EQ(b_calls.load(), 0) << "dedup-hit callables never run";
  EXPECT_TRUE(b_watch.expired()) << "and are destroyed at exit";
  EXPECT_EQ(x_fin.load(), 0);
  EXPECT_EQ(x_clean.load(), 1);
  EXPECT_TRUE(x_watch.expired());
  EXPECT_THROW(failing.result(), hipacm::Error);
  EXPECT_EQ(x_clean.load(), 1);
  EXPECT_EQ(a_fin.load(), 1);
}

TEST_F(HppTest, RaiiExitWhileAnExceptionUnwinds) {
  std::atomic<int> cleaned{0};
  try {
    hipacm::Mode mode(config());
    hipacm::Future f = mode.submit(
        hipacm::Request(kStaticAssertSource).key("unwind-bad").cleanup([&](const hipacm::Error&) {
          ++cleaned;
        }));
    EXPECT_TRUE(hipacm::active_mode_is_set());
    throw std::runtime_error("the host JIT failed mid-warmup");
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "the host JIT failed mid-warmup");
  }
  EXPECT_FALSE(hipacm::active_mode_is_set()) << "~Mode exited while unwinding";
  EXPECT_EQ(cleaned.load(), 1) << "~Mode collected the compile";

  hipacm::Mode mode(config());
  hipacm::Future f = mode.submit(hipacm::Request(vadd_source("after_unwind")));
  mode.exit();
  EXPECT_TRUE(IsAmdgpuElf(f.result()));
}

TEST_F(HppTest, FuturesOutliveTheMode) {
  hipacm::Future vadd, scale, copy;
  {
    hipacm::Mode mode(config());
    vadd = mode.submit(hipacm::Request(vadd_source("outlive")).key("outlive"));
    scale = mode.submit(hipacm::Request(kTemplatedSource)
                            .name("scale.hip")
                            .name_expression("scale<float>")
                            .name_expression("scale<double>"));
    copy = vadd;
  }  // ~Mode exits: nothing failed
  EXPECT_TRUE(vadd.wait_for(std::chrono::milliseconds(0)));
  EXPECT_TRUE(vadd.wait());
  EXPECT_EQ(vadd.status(), hipacm::Status::Success);
  EXPECT_TRUE(vadd.done());
  EXPECT_STREQ(vadd.key(), "outlive");
  vadd = hipacm::Future();  // the copy still holds a reference
  const hipacm_kernel& k = copy.result();
  EXPECT_TRUE(IsAmdgpuElf(k));
  EXPECT_STREQ(k.key, "outlive");
  hipacm::Future moved = std::move(copy);
  EXPECT_FALSE(copy);
  EXPECT_TRUE(IsAmdgpuElf(moved.result()));

  const auto names = hipacm::lowered_names(scale.result());
  ASSERT_EQ(names.size(), 2u);
  for (auto n : names)
    EXPECT_TRUE(n.substr(0, 2) == "_Z" && contains(std::string(n), "scale")) << n;
  EXPECT_NE(names[0], names[1]);
  std::thread t([f = scale] { EXPECT_TRUE(IsAmdgpuElf(f.result())); });
  t.join();
}

// Both headers are needed: without either, the extra kernel does not compile.
TEST_F(HppTest, ListSettersAppendHeadersAndNameExpressionsInOrder) {
  hipacm::Mode mode(config());
  hipacm::Future f = mode.submit(
      hipacm::Request(std::string("#include \"kind.h\"\n#include \"twice.h\"\n") +
                      kTemplatedSource +
                      "extern \"C\" __global__ void twice(KIND* p) { p[0] = TWICE(p[0]); }\n")
          .name("lists.hip")
          .headers(
              {{"kind.h", "#define KIND float\n"}, {"twice.h", "#define TWICE(x) (2 * (x))\n"}})
          .name_expression("scale<float>")
          .name_expressions({"scale<int>", "scale<double>"}));
  mode.exit();
  const auto names = hipacm::lowered_names(f.result());
  ASSERT_EQ(names.size(), 3u) << "one lowered name per name expression";
  EXPECT_TRUE(contains(std::string(names[0]), "scaleIf")) << names[0];
  EXPECT_TRUE(contains(std::string(names[1]), "scaleIi")) << names[1];
  EXPECT_TRUE(contains(std::string(names[2]), "scaleId")) << names[2];
}

TEST_F(HppTest, CompileErrorsCarryKeyLogAndStatus) {
  hipacm::Mode mode(config());
  std::atomic<int> finalize_failures{0};
  hipacm::Future bad = mode.submit(hipacm::Request(kStaticAssertSource).key("carry-bad"));
  hipacm::Future refused = mode.submit(
      hipacm::Request(vadd_source("refused"))
          .finalize([](const hipacm_kernel&) { throw std::runtime_error("cannot load it"); })
          .cleanup([&](const hipacm::Error& e) {
            EXPECT_EQ(e.status(), hipacm::Status::FinalizeFailed);
            EXPECT_TRUE(contains(e.message(), "cannot load it")) << e.message();
            ++finalize_failures;
          }));
  hipacm::Future cleanup_throws = mode.submit(
      hipacm::Request(kStaticAssertSource).key("cleanup-throws").cleanup([](const hipacm::Error&) {
        throw std::logic_error("cleanup went wrong");  // logged, never reaches C
      }));

  try {
    bad.result();
    FAIL() << "static_assert must fail";
  } catch (const hipacm::Error& e) {
    EXPECT_TRUE(IsStaticAssertFailure(e, "carry-bad"));
  }
  try {
    refused.result();
    FAIL() << "finalize threw";
  } catch (const hipacm::Error& e) {
    EXPECT_EQ(e.status(), hipacm::Status::FinalizeFailed);
    EXPECT_TRUE(contains(e.message(), "cannot load it")) << e.message();
  }
  EXPECT_EQ(finalize_failures.load(), 1);
  EXPECT_THROW(cleanup_throws.result(), hipacm::Error);

  try {
    hipacm::Mode second(config());
    FAIL() << "the slot is taken";
  } catch (const hipacm::Error& e) {
    EXPECT_EQ(e.status(), hipacm::Status::ModeAlreadyActive);
    EXPECT_FALSE(e.message().empty());
  }
  EXPECT_THROW(mode.exit(), hipacm::CompileError);
  EXPECT_THROW(mode.submit(hipacm::Request(vadd_source("late"))), hipacm::Error);

  try {
    hipacm::Mode unknown(hipacm::Config().arch("gfx9999"));
    FAIL() << "unknown arch";
  } catch (const hipacm::Error& e) {
    EXPECT_EQ(e.status(), hipacm::Status::InvalidArgument);
  }
}

TEST_F(HppTest, SynchronousCompile) {
  std::atomic<int> finalized{0}, cleaned{0}, never{0};
  hipacm::Request req(vadd_source("sync_vadd"));
  req.key("sync").finalize([&](const hipacm_kernel& k) {
    EXPECT_STREQ(k.key, "sync");
    ++finalized;
  });
  hipacm::Future f = hipacm::compile(req, kArch);
  EXPECT_EQ(f.status(), hipacm::Status::Success);
  EXPECT_EQ(finalized.load(), 0) << "callables run at result(), not at compile()";
  hipacm::Future other = f;
  EXPECT_TRUE(IsAmdgpuElf(f.result()));
  EXPECT_TRUE(IsAmdgpuElf(other.result()));
  EXPECT_EQ(finalized.load(), 1);

  hipacm::Future failed = hipacm::compile(
      hipacm::Request(kStaticAssertSource).key("sync-bad").cleanup([&](const hipacm::Error& e) {
        EXPECT_EQ(e.status(), hipacm::Status::Compilation);
        ++cleaned;
      }),
      std::string(kArch));
  try {
    failed.result();
    FAIL() << "static_assert must fail";
  } catch (const hipacm::Error& e) {
    EXPECT_TRUE(IsStaticAssertFailure(e, "sync-bad"));
  }
  EXPECT_EQ(cleaned.load(), 1);

  // Never collected: the copy of the callable goes with the last Future.
  auto token = std::make_shared<int>(0);
  std::weak_ptr<int> watch = token;
  {
    hipacm::Request uncollected(vadd_source("uncollected"));
    uncollected.finalize([&never, token](const hipacm_kernel&) { ++never; });
    token.reset();
    hipacm::Future g = hipacm::compile(uncollected, kArch);
    hipacm::Future h = g;
  }
  EXPECT_TRUE(watch.expired());
  EXPECT_EQ(never.load(), 0);

  EXPECT_THROW(hipacm::compile(hipacm::Request(vadd_source("x")), "gfx9999"), hipacm::Error);
  const hipacm::BackendInfo info = hipacm::backend_info();
  EXPECT_TRUE(info.available) << info.error;
  EXPECT_EQ(info.compiler, "hiprtc");
}

TEST_F(HppTest, ConfigOptionsAndMoves) {
  hipacm::Mode mode(
      config().isolation(hipacm::Isolation::Process).compile_timeout(std::chrono::minutes(2)));
  hipacm::Future f = mode.submit(
      hipacm::Request(
          "#include \"twice.h\"\nextern \"C\" __global__ void hdr(int* p) { p[0] = TWICE(21); }\n")
          .header("twice.h", "#define TWICE(x) ((x) * 2)\n")
          .option("-O2"));
  hipacm::Mode moved(std::move(mode));
  EXPECT_FALSE(mode.active());
  EXPECT_TRUE(moved.active());
  moved.exit();
  EXPECT_TRUE(IsAmdgpuElf(f.result()));

  // ignore_errors: exit succeeds; the future still reports the failure.
  hipacm::Mode lenient(config().ignore_errors().fail_fast());
  hipacm::Future bad = lenient.submit(hipacm::Request(kStaticAssertSource).key("ignored"));
  EXPECT_NO_THROW(lenient.exit());
  EXPECT_EQ(bad.status(), hipacm::Status::Compilation);
}

// The longest durations std::chrono has mean "forever", never "don't wait".
class Trust12_LongWaits : public HppTest {};

TEST_F(Trust12_LongWaits, MaxDurationsWaitForTheCompile) {
  hipacm::Mode mode(config());
  hipacm::Future hours = mode.submit(hipacm::Request(vadd_source("wait_hours_max")));
  hipacm::Future millis = mode.submit(hipacm::Request(vadd_source("wait_millis_max")));
  EXPECT_TRUE(hours.wait_for(std::chrono::hours::max()));
  EXPECT_EQ(hours.status(), hipacm::Status::Success);
  EXPECT_TRUE(millis.wait_for(std::chrono::milliseconds::max()));
  EXPECT_EQ(millis.status(), hipacm::Status::Success);
  mode.exit();
}

}  // namespace
