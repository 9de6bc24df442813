// SPDX-License-Identifier: MIT
// comgr_release_facts_test.cpp - arch validation follows the target list of the comgr that is
// loaded, and each ROCm release in the test matrix lists the targets it is known to list.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "hip_backend/hiprtc/comgr_isa.h"
#include "tests/hip_backend/rocm_facts.h"
#include "tests/hip_backend/test_support.h"

namespace hipacm::backend {
namespace {

using testing::contains;

TEST(ComgrReleaseFacts, HipacmReadsTheListOfTheLoadedComgr) {
  std::vector<std::string> processors;
  ASSERT_NO_FATAL_FAILURE(testing::read_supported_processors(&processors));
  ASSERT_TRUE(rocm_facts::comgr_mapped()) << "reading the list loads comgr";
  const rocm_facts::ComgrFacts loaded = rocm_facts::comgr();
  ASSERT_TRUE(loaded.error.empty()) << loaded.error;
  EXPECT_EQ(processors, loaded.processors) << loaded.file;
}

TEST(ComgrReleaseFacts, LaterArchsPassExactlyWhereTheLoadedComgrListsThem) {
  for (const std::string& arch : rocm_facts::later_processors()) {
    const bool listed = rocm_facts::comgr_lists(arch);
    const Expected<void> checked = validate_amdgpu_arch(arch);
    const std::string& error = checked.failure().message;
    EXPECT_EQ(checked.has_value(), listed) << arch << ": " << error;
    if (!listed) {
      EXPECT_NE(error.find("'" + arch + "'"), std::string::npos) << error;
    }
  }
  const std::string fictional = rocm_facts::unknown_processor();
  const std::string error = testing::expect_arch_check(fictional, false);
  EXPECT_NE(error.find("unknown processor '" + fictional + "'"), std::string::npos) << error;
}

// What each release of the matrix lists, as read from its comgr; a release not named here only
// gets the checks every release shares.
struct ReleaseTargets {
  int major;
  int minor;
  std::vector<std::string> listed;
  std::vector<std::string> unlisted;
};

const ReleaseTargets kReleases[] = {
    {5, 2, {}, rocm_facts::later_processors()},
    {6,
     4,
     {"gfx942", "gfx950", "gfx1100", "gfx1151", "gfx1200", "gfx1201"},
     {"gfx940", "gfx941", "gfx1250"}},
    {7,
     2,
     {"gfx942", "gfx950", "gfx1100", "gfx1151", "gfx1200", "gfx1201", "gfx1250"},
     {"gfx940", "gfx941"}},
};

TEST(ComgrReleaseFacts, EachReleaseListsItsOwnTargets) {
  ASSERT_EQ(testing::sample_gfx90a().status, HIPACM_SUCCESS) << "hipRTC must be loaded";
  const rocm_facts::HiprtcFacts hiprtc = rocm_facts::mapped_hiprtc();
  ASSERT_FALSE(hiprtc.file.empty()) << "no mapped object defines hiprtcVersion";
  EXPECT_FALSE(hiprtc.version.empty());
  ASSERT_GT(hiprtc.release_major, 0) << hiprtc.file;
  const std::string name = std::filesystem::path(hiprtc.file).filename().string();
  // ROCm 5 keeps hipRTC inside the HIP runtime; ROCm 6 made it a library of its own.
  EXPECT_EQ(name.rfind(hiprtc.release_major >= 6 ? "libhiprtc.so." : "libamdhip64.so.", 0), 0u)
      << hiprtc.file;

  const std::vector<std::string> processors = rocm_facts::comgr().processors;
  for (const char* everywhere : {"gfx900", "gfx906", "gfx908", "gfx90a", "gfx1030"})
    EXPECT_TRUE(contains(processors, everywhere)) << everywhere;
  const auto release = std::find_if(std::begin(kReleases), std::end(kReleases), [&](auto& r) {
    return r.major == hiprtc.release_major && r.minor == hiprtc.release_minor;
  });
  if (release == std::end(kReleases))
    GTEST_SKIP() << "no targets recorded for ROCm " << hiprtc.release_major << "."
                 << hiprtc.release_minor;
  for (const std::string& arch : release->listed)
    EXPECT_TRUE(contains(processors, arch)) << arch << " in " << name;
  for (const std::string& arch : release->unlisted)
    EXPECT_FALSE(contains(processors, arch)) << arch << " in " << name;
}

}  // namespace
}  // namespace hipacm::backend
