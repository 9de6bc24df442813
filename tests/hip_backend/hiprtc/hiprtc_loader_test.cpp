// SPDX-License-Identifier: MIT
// hiprtc_loader_test.cpp - finding hipRTC: the cached loader, the uncached one, and its error
// texts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "hip_backend/hiprtc/hiprtc_api.h"
#include "hip_backend/hiprtc/hiprtc_internal.h"
#include "tests/hip_backend/test_support.h"

namespace hipacm::backend {
namespace {

using testing::ScopedEnv;

bool looks_like_version(const std::string& version) {
  const auto dot = version.find('.');
  return dot != std::string::npos && dot > 0 && dot + 1 < version.size() &&
         std::all_of(version.begin(), version.end(), [](char c) {
           return c == '.' || std::isdigit(static_cast<unsigned char>(c));
         });
}

TEST(HiprtcLoader, LoadsOnceWithEveryEntryPoint) {
  const Expected<const HiprtcApi*> loaded = load_hiprtc();
  ASSERT_TRUE(loaded) << loaded.failure().message;
  const HiprtcApi* api = loaded.value();
  ASSERT_NE(api, nullptr);
  EXPECT_EQ(load_hiprtc().value(), api);
#define HIPACM_EXPECT_FIELD(name, ret, params) EXPECT_NE(api->name, nullptr) << #name;
  HIPACM_HIPRTC_SYMBOLS(HIPACM_EXPECT_FIELD)
#undef HIPACM_EXPECT_FIELD
  EXPECT_TRUE(looks_like_version(api->version)) << api->version;
  EXPECT_EQ(api->library_path.front(), '/') << api->library_path;
}

TEST(HiprtcLoader, ReusesTheLibraryAlreadyLoaded) {
  const Expected<const HiprtcApi*> loaded = load_hiprtc();
  ASSERT_TRUE(loaded) << loaded.failure().message;
  const HiprtcApi* cached = loaded.value();
  auto again = load_hiprtc_from(hiprtc_library_candidates());
  ASSERT_TRUE(again.has_value()) << again.failure().message;
  EXPECT_EQ(again->api.library_path, cached->library_path);
  EXPECT_EQ(again->api.hiprtcCompileProgram, cached->hiprtcCompileProgram);
}

// The error of loading hipRTC from `candidates`, which must fail.
std::string failed_load_error(const std::vector<std::string>& candidates) {
  const auto loaded = load_hiprtc_from(candidates);
  EXPECT_FALSE(loaded.has_value());
  return loaded ? std::string() : loaded.failure().message;
}

TEST(HiprtcLoader, NonexistentLibrarySaysCannotOpen) {
  const std::string error = failed_load_error({"/nonexistent/dir/libhiprtc.so"});
  for (const char* part : {"cannot open", "/nonexistent/dir/libhiprtc.so", "HIPACM_HIPRTC_LIBRARY"})
    EXPECT_NE(error.find(part), std::string::npos) << part << " not in: " << error;
}

TEST(HiprtcLoader, LibraryWithoutHiprtcSaysMissingSymbol) {
  const std::string error = failed_load_error({"libm.so.6"});
  EXPECT_NE(error.find("missing symbol"), std::string::npos) << error;
  EXPECT_NE(error.find("hiprtcGetErrorString"), std::string::npos) << error;
  EXPECT_EQ(error.find("cannot open"), std::string::npos) << error;
}

TEST(HiprtcLoader, StopsAtTheFirstLibraryThatOpens) {
  // libm is the first that opens, so libanl after it is never tried. (An
  // already-loaded real hipRTC would be preferred, so it is not in the list.)
  const std::string error =
      failed_load_error({"/nonexistent/libhiprtc.so", "libm.so.6", "libanl.so.1"});
  EXPECT_NE(error.find("missing symbol"), std::string::npos) << error;
  EXPECT_NE(error.find("libm"), std::string::npos) << error;
  EXPECT_EQ(error.find("libanl"), std::string::npos) << error;
}

TEST(HiprtcLoader, EnvironmentOverrideReplacesTheDefaults) {
  {
    ScopedEnv env("HIPACM_HIPRTC_LIBRARY", std::string("/opt/custom/libhiprtc.so"));
    EXPECT_EQ(hiprtc_library_candidates(), std::vector<std::string>{"/opt/custom/libhiprtc.so"});
  }
  ScopedEnv env("HIPACM_HIPRTC_LIBRARY", std::string(""));
  ScopedEnv rocm("ROCM_PATH", std::nullopt);
  ScopedEnv hip("HIP_PATH", std::nullopt);
  const auto defaults = hiprtc_library_candidates();
  // Newest release first, then ROCm 5's hipRTC inside the HIP runtime; never libamdhip64.so.6 or
  // .7, which open but carry no hipRTC and would end the search. Install-tree paths (/opt/rocm*)
  // follow the bare names when this machine has such trees.
  const std::vector<std::string> bare = {"libhiprtc.so.7", "libhiprtc.so.6",   "libhiprtc.so.5",
                                         "libhiprtc.so",   "libamdhip64.so.5", "libamdhip64.so"};
  ASSERT_GE(defaults.size(), bare.size());
  EXPECT_EQ(std::vector<std::string>(defaults.begin(), defaults.begin() + bare.size()), bare);
  for (const char* absent : {"libamdhip64.so.6", "libamdhip64.so.7"})
    EXPECT_EQ(std::find(defaults.begin(), defaults.end(), absent), defaults.end()) << absent;
}

TEST(HiprtcLoader, NamesResultsWithoutTheLibrary) {
  EXPECT_EQ(hiprtc_result_name(0), "HIPRTC_SUCCESS");
  EXPECT_EQ(hiprtc_result_name(6), "HIPRTC_ERROR_COMPILATION");
  EXPECT_EQ(hiprtc_result_name(11), "HIPRTC_ERROR_INTERNAL_ERROR");
  EXPECT_NE(hiprtc_result_name(99).find("99"), std::string::npos);
  EXPECT_NE(hiprtc_result_name(-3).find("-3"), std::string::npos);
}

}  // namespace
}  // namespace hipacm::backend
