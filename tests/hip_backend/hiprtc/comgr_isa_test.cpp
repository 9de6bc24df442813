// SPDX-License-Identifier: MIT
// comgr_isa_test.cpp - comgr's target list and arch validation (no invalid arch ever reaches hipRTC
// here).
#include "hip_backend/hiprtc/comgr_isa.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <utility>

#include "hip_backend/hiprtc/comgr_isa_internal.h"
#include "tests/hip_backend/rocm_facts.h"
#include "tests/hip_backend/test_support.h"

namespace hipacm::backend {
namespace {

using testing::contains;
using testing::expect_arch_check;
using testing::ScopedEnv;

TEST(ComgrIsa, ListsProcessorNamesWithoutPrefixOrDuplicates) {
  std::vector<std::string> processors;
  ASSERT_NO_FATAL_FAILURE(testing::read_supported_processors(&processors));
  EXPECT_TRUE(contains(processors, "gfx90a"));
  EXPECT_TRUE(contains(processors, "gfx1030"));
  EXPECT_TRUE(contains(processors, "gfx908"));
  EXPECT_EQ(processors, rocm_facts::comgr().processors);  // the loaded comgr's own list
  const std::set<std::string> unique(processors.begin(), processors.end());
  EXPECT_EQ(unique.size(), processors.size());
  for (const std::string& name : processors) {
    EXPECT_EQ(name.rfind("gfx", 0), 0u) << name;
    EXPECT_EQ(name.find(':'), std::string::npos) << name;
  }
}

TEST(ComgrIsa, ReadsFeatureSupportFromMetadata) {
  auto table = load_amdgpu_isa_table_from(comgr_library_candidates());
  ASSERT_TRUE(table.has_value()) << table.failure().message;
  ASSERT_TRUE(table->features_known);
  auto find = [&](const std::string& name) {
    return *std::find_if(table->details.begin(), table->details.end(),
                         [&](const AmdgpuProcessor& p) { return p.name == name; });
  };
  EXPECT_TRUE(find("gfx90a").xnack);
  EXPECT_TRUE(find("gfx90a").sramecc);
  EXPECT_FALSE(find("gfx1030").xnack);
  EXPECT_FALSE(find("gfx1030").sramecc);
  EXPECT_TRUE(find("gfx900").xnack);
  EXPECT_FALSE(find("gfx900").sramecc);
}

TEST(ComgrIsa, AcceptsKnownArchesAndFeatures) {
  for (const char* arch :
       {"gfx90a", "gfx1030", "gfx908", "gfx90a:xnack-", "gfx90a:xnack+", "gfx90a:sramecc+:xnack-",
        "gfx90a:xnack-:sramecc+", "gfx908:xnack+", "gfx906:sramecc-", "gfx1010:xnack-"}) {
    expect_arch_check(arch, true);
  }
}

TEST(ComgrIsa, RejectsArchesThatWouldAbortHiprtc) {
  const std::vector<std::string> bad = {rocm_facts::unknown_processor(),
                                        "gfx_bogus",
                                        "",
                                        "gfx90a:xnack",
                                        "gfx90a:foo+",
                                        "gfx90a:xnack-:xnack+",
                                        "GFX90A",
                                        "gfx90A",
                                        "gfx90a ",
                                        " gfx90a",
                                        "gfx90a:",
                                        "gfx90a::xnack-",
                                        ":xnack-",
                                        "gfx90a:xnack-:",
                                        "gfx90a\n",
                                        "gfx90\xff",
                                        "gfx1030:xnack-",
                                        "gfx1030:sramecc+",
                                        "gfx900:sramecc+",
                                        "gfx90a:+",
                                        "gfx90a:xnack*",
                                        std::string("gfx90a\0", 7),
                                        std::string(100, 'x'),
                                        "gfx90a:sramecc+:sramecc+"};
  // Real archs that this comgr does not list abort hipRTC too (ROCm 5.2 lists no gfx942).
  std::vector<std::string> archs = rocm_facts::unlisted_real_processors();
  archs.insert(archs.end(), bad.begin(), bad.end());
  for (const std::string& arch : archs) {
    const std::string error = expect_arch_check(arch, false);
    EXPECT_NE(error.find("supported processors: "), std::string::npos) << error;
    EXPECT_NE(error.find("gfx90a"), std::string::npos) << error;
  }
}

TEST(ComgrIsa, ErrorNamesTheProblem) {
  const std::string unknown = rocm_facts::unknown_processor();
  const std::string error = expect_arch_check(unknown, false);
  EXPECT_NE(error.find("unknown processor '" + unknown + "'"), std::string::npos) << error;
  EXPECT_NE(error.find("gfx1030"), std::string::npos) << error;
  // Arch -> what the refusal of it must say.
  const std::pair<const char*, const char*> kProblems[] = {
      {"gfx90a:xnack-:xnack+", "more than once"},
      {"gfx1030:xnack-", "gfx1030 has no xnack"},
      {"gfx90a:foo+", "unknown feature 'foo'"},
      {"", "empty"},
      {"gfx\x01", "gfx\\x01"},
  };
  for (const auto& [arch, says] : kProblems) {
    const std::string refusal = expect_arch_check(arch, false);
    EXPECT_NE(refusal.find(says), std::string::npos) << refusal;
  }
}

TEST(ComgrIsa, WithoutFeatureMetadataOnlyPlainArchesPass) {
  AmdgpuIsaTable table;
  table.processors = {"gfx90a"};
  table.details = {AmdgpuProcessor{"gfx90a", true, true}};
  table.features_known = false;
  std::string error;
  Expected<void> checked;
  checked = validate_amdgpu_arch_with(table, "gfx90a");
  error = checked.failure().message;
  EXPECT_TRUE(checked) << error;
  checked = validate_amdgpu_arch_with(table, "gfx90a:xnack-");
  error = checked.failure().message;
  EXPECT_FALSE(checked);
  EXPECT_NE(error.find("cannot tell"), std::string::npos) << error;
}

TEST(ComgrIsa, LoaderErrorsDistinguishMissingFileFromMissingSymbol) {
  std::string error;
  Expected<AmdgpuIsaTable> table = load_amdgpu_isa_table_from({"/nonexistent/libamd_comgr.so.2"});
  EXPECT_FALSE(table);
  error = table ? std::string() : table.failure().message;
  EXPECT_NE(error.find("cannot open"), std::string::npos) << error;
  EXPECT_NE(error.find("HIPACM_COMGR_LIBRARY"), std::string::npos) << error;
  table = load_amdgpu_isa_table_from({"libm.so.6"});
  EXPECT_FALSE(table);
  error = table ? std::string() : table.failure().message;
  EXPECT_NE(error.find("missing symbol"), std::string::npos) << error;
}

TEST(ComgrIsa, EnvironmentOverrideReplacesTheDefaults) {
  {
    ScopedEnv env("HIPACM_COMGR_LIBRARY", std::string("/opt/x/libamd_comgr.so"));
    EXPECT_EQ(comgr_library_candidates(), std::vector<std::string>{"/opt/x/libamd_comgr.so"});
  }
  ScopedEnv env("HIPACM_COMGR_LIBRARY", std::nullopt);
  // For the linker's own search, newest ROCm first: 6 and 7 ship .so.3, 5 ships .so.2. Paths
  // inside install trees (rocm_paths.h) may come around them.
  std::vector<std::string> sonames;
  for (const std::string& candidate : comgr_library_candidates())
    if (candidate.find('/') == std::string::npos) sonames.push_back(candidate);
  EXPECT_EQ(sonames, (std::vector<std::string>{"libamd_comgr.so.3", "libamd_comgr.so.2",
                                               "libamd_comgr.so"}));
}

}  // namespace
}  // namespace hipacm::backend
