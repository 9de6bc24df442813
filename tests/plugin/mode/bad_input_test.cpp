// SPDX-License-Identifier: MIT
// bad_input_test.cpp - every malformed call gets a clear status and message, never a crash.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "test_support.h"
#include "tests/hip_backend/rocm_facts.h"

namespace hipacm::test {
namespace {

std::string last_error() { return hipacm_last_error_message(); }

class BadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    hipacm_mode_config cfg = config(1);
    ASSERT_EQ(hipacm_mode_enter(&cfg, &mode_), HIPACM_SUCCESS) << last_error();
  }
  void TearDown() override {
    if (mode_ != nullptr) hipacm_mode_exit(mode_, nullptr);
    EXPECT_EQ(hipacm_active_mode(), nullptr);
  }
  hipacm_status submit(const hipacm_request* req) {
    hipacm_future* f = nullptr;
    const hipacm_status s = hipacm_submit(mode_, req, &f);
    if (f != nullptr) hipacm_future_release(f);
    return s;
  }
  hipacm_mode* mode_ = nullptr;
};

TEST_F(BadInput, DoubleEnterIsRefusedAndLeavesTheSlot) {
  hipacm_mode_config cfg = config(1);
  hipacm_mode* second = reinterpret_cast<hipacm_mode*>(0x1);
  EXPECT_EQ(hipacm_mode_enter(&cfg, &second), HIPACM_ERROR_MODE_ALREADY_ACTIVE);
  EXPECT_EQ(second, nullptr);
  EXPECT_NE(last_error().find("already active"), std::string::npos);
  EXPECT_EQ(hipacm_active_mode(), mode_);
}

TEST_F(BadInput, DoubleExit) {
  EXPECT_EQ(hipacm_mode_exit(mode_, nullptr), HIPACM_SUCCESS);
  EXPECT_EQ(hipacm_mode_exit(mode_, nullptr), HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("mode"), std::string::npos);
  mode_ = nullptr;
}

TEST_F(BadInput, NullAndGarbageHandles) {
  EXPECT_EQ(hipacm_mode_exit(nullptr, nullptr), HIPACM_ERROR_INVALID_ARGUMENT);
  int not_a_mode = 0;
  EXPECT_EQ(hipacm_mode_exit(reinterpret_cast<hipacm_mode*>(&not_a_mode), nullptr),
            HIPACM_ERROR_INVALID_ARGUMENT);
  Request r(vadd_source());
  hipacm_future* f = nullptr;
  EXPECT_EQ(hipacm_submit(nullptr, r.get(), &f), HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hipacm_submit(reinterpret_cast<hipacm_mode*>(&not_a_mode), r.get(), &f),
            HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hipacm_submit(mode_, nullptr, &f), HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hipacm_submit(mode_, r.get(), nullptr), HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hipacm_mode_enter(nullptr, nullptr), HIPACM_ERROR_INVALID_ARGUMENT);

  auto* garbage = reinterpret_cast<hipacm_future*>(&not_a_mode);
  EXPECT_EQ(hipacm_future_retain(nullptr), HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hipacm_future_release(garbage), HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hipacm_future_wait(garbage, 0), HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hipacm_future_status(garbage), HIPACM_ERROR_INVALID_ARGUMENT);
  const hipacm_kernel* k = reinterpret_cast<const hipacm_kernel*>(0x1);
  EXPECT_EQ(hipacm_future_result(garbage, &k), HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(k, nullptr);
  EXPECT_STREQ(hipacm_future_key(garbage), "");
  EXPECT_STREQ(hipacm_future_log(nullptr), "");
  EXPECT_STREQ(hipacm_future_error_message(garbage), "");
  EXPECT_NE(last_error().find("unknown future"), std::string::npos);
  EXPECT_EQ(hipacm_get_backend_info(nullptr), HIPACM_ERROR_INVALID_ARGUMENT);
}

TEST_F(BadInput, StructSizeTooSmall) {
  Request r(vadd_source());
  r.req.struct_size = sizeof(size_t);
  EXPECT_EQ(submit(r.get()), HIPACM_ERROR_ABI_MISMATCH);
  EXPECT_NE(last_error().find("struct_size"), std::string::npos);

  hipacm_mode_config small = config(1);
  small.struct_size = 4;
  hipacm_mode* m = nullptr;
  // The slot is busy, so refusal order matters less than never crashing;
  // exit first to see the ABI check itself.
  ASSERT_EQ(hipacm_mode_exit(mode_, nullptr), HIPACM_SUCCESS);
  mode_ = nullptr;
  EXPECT_EQ(hipacm_mode_enter(&small, &m), HIPACM_ERROR_ABI_MISMATCH);
  EXPECT_EQ(hipacm_active_mode(), nullptr);

  hipacm_backend_info info{};
  info.struct_size = 8;
  EXPECT_EQ(hipacm_get_backend_info(&info), HIPACM_ERROR_ABI_MISMATCH);
}

TEST_F(BadInput, LargerStructSizeIsAccepted) {
  struct Bigger {
    hipacm_request req;
    char future_fields[64];
  } bigger{};
  Request r(vadd_source());
  bigger.req = r.req;
  bigger.req.struct_size = sizeof(Bigger);
  EXPECT_EQ(submit(&bigger.req), HIPACM_SUCCESS) << last_error();
}

TEST_F(BadInput, NullOptionEntryEmptySourceAndNullArrays) {
  Request r(vadd_source());
  const char* options[] = {"-O3", nullptr};
  hipacm_request null_option = *r.get();
  null_option.options = options;
  null_option.num_options = 2;
  EXPECT_EQ(submit(&null_option), HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("options[1] is NULL"), std::string::npos) << last_error();

  Request empty("");
  EXPECT_EQ(submit(empty.get()), HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("source is empty"), std::string::npos);

  hipacm_request null_source = *r.get();
  null_source.source = nullptr;
  EXPECT_EQ(submit(&null_source), HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("source is NULL"), std::string::npos);

  hipacm_request null_array = *r.get();
  null_array.name_expressions = nullptr;
  null_array.num_name_expressions = 3;
  EXPECT_EQ(submit(&null_array), HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("name_expressions is NULL"), std::string::npos);

  hipacm_request headers = *r.get();
  const char* sources[] = {"int x;"};
  headers.header_sources = sources;
  headers.header_names = nullptr;
  headers.num_headers = 1;
  EXPECT_EQ(submit(&headers), HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("header_names"), std::string::npos);

  hipacm_request empty_key = *r.get();
  empty_key.key = "";
  EXPECT_EQ(submit(&empty_key), HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("key is empty"), std::string::npos);
}

TEST_F(BadInput, UnknownArchIsRejectedBeforeHipRtcSeesIt) {
  ASSERT_EQ(hipacm_mode_exit(mode_, nullptr), HIPACM_SUCCESS);
  mode_ = nullptr;
  // A real arch that this ROCm's comgr does not list (ROCm 5.2: gfx942, gfx1100) would abort it.
  std::vector<std::string> archs = rocm_facts::unlisted_real_processors();
  archs.insert(archs.end(),
               {rocm_facts::unknown_processor(), "gfx_bogus", "gfx90a:xnack", "gfx90a ", ""});
  for (const std::string& name : archs) {
    const char* arch = name.c_str();
    hipacm_mode_config cfg = config(1);
    cfg.arch = arch;
    hipacm_mode* m = nullptr;
    EXPECT_EQ(hipacm_mode_enter(&cfg, &m), HIPACM_ERROR_INVALID_ARGUMENT) << arch;
    EXPECT_EQ(m, nullptr);
    EXPECT_EQ(hipacm_active_mode(), nullptr);
    if (arch[0] != '\0') {
      EXPECT_NE(last_error().find("gfx90a"), std::string::npos) << last_error();
    }
    Request r(vadd_source());
    hipacm_future* f = nullptr;
    EXPECT_EQ(hipacm_compile(r.get(), arch, &f), HIPACM_ERROR_INVALID_ARGUMENT) << arch;
    EXPECT_EQ(f, nullptr);
  }
}

TEST_F(BadInput, NoArchAnywhereIsBackendUnavailableWithAHint) {
  ASSERT_EQ(hipacm_mode_exit(mode_, nullptr), HIPACM_SUCCESS);
  mode_ = nullptr;
  const char* saved = std::getenv("HIPACM_ARCH");
  std::string saved_value = saved ? saved : "";
  unsetenv("HIPACM_ARCH");
  hipacm_mode_config cfg = config(1);
  cfg.arch = nullptr;
  hipacm_mode* m = nullptr;
  const hipacm_status s = hipacm_mode_enter(&cfg, &m);
  if (saved) setenv("HIPACM_ARCH", saved_value.c_str(), 1);
  if (s == HIPACM_SUCCESS) {
    hipacm_mode_exit(m, nullptr);
    GTEST_SKIP() << "this machine has an AMD GPU, so the device's arch was used";
  }
  EXPECT_EQ(s, HIPACM_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_NE(last_error().find("HIPACM_ARCH"), std::string::npos) << last_error();

  setenv("HIPACM_ARCH", "gfx1030", 1);
  EXPECT_EQ(hipacm_mode_enter(&cfg, &m), HIPACM_SUCCESS) << last_error();
  if (saved) {
    setenv("HIPACM_ARCH", saved_value.c_str(), 1);
  } else {
    unsetenv("HIPACM_ARCH");
  }
  EXPECT_EQ(hipacm_mode_exit(m, nullptr), HIPACM_SUCCESS);
}

TEST_F(BadInput, FiveMegabyteSourceCompiles) {
  std::string big = vadd_source("big");
  big.reserve(5u << 20);
  while (big.size() < (5u << 20)) big += "// padding padding padding padding padding padding\n";
  Request r(big);
  FutureHandle f;
  ASSERT_EQ(hipacm_submit(mode_, r.get(), f.out()), HIPACM_SUCCESS);
  const hipacm_kernel* k = nullptr;
  ASSERT_EQ(hipacm_future_result(f.f, &k), HIPACM_SUCCESS) << hipacm_future_error_message(f.f);
  std::string error;
  EXPECT_TRUE(code_object_ok(k, {"big"}, &error)) << error;
}

TEST_F(BadInput, InvalidUtf8SourceFailsCleanly) {
  std::string bad = vadd_source("utf");
  bad += "\xff\xfe\xc3\x28 garbage \x80\x81\n";
  Request r(bad);
  FutureHandle f;
  ASSERT_EQ(hipacm_submit(mode_, r.get(), f.out()), HIPACM_SUCCESS);
  EXPECT_EQ(hipacm_future_result(f.f, nullptr), HIPACM_ERROR_COMPILATION);
  EXPECT_STRNE(hipacm_future_error_message(f.f), "");
  EXPECT_EQ(hipacm_mode_exit(mode_, nullptr), HIPACM_ERROR_COMPILATION);
  mode_ = nullptr;
}

TEST(StatusStrings, NeverNull) {
  EXPECT_STREQ(hipacm_status_string(HIPACM_ERROR_TIMEOUT), "HIPACM_ERROR_TIMEOUT");
  EXPECT_NE(hipacm_status_string(static_cast<hipacm_status>(-1)), nullptr);
  EXPECT_NE(hipacm_status_string(static_cast<hipacm_status>(999)), nullptr);
  EXPECT_NE(hipacm_last_error_message(), nullptr);
}

}  // namespace
}  // namespace hipacm::test
