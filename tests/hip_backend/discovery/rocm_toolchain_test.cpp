// SPDX-License-Identifier: MIT
// rocm_toolchain_test.cpp - the toolchain read from a real hipRTC: its comgr is the one hipRTC
// loaded, every code-generating library is named by build ID, and a mixed pair is refused.
#include "hip_backend/hiprtc/rocm_toolchain.h"

#include <gtest/gtest.h>
#include <math.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "hip_backend/dispatch/compiler_identity.h"
#include "support/libraries/dynamic_library.h"
#include "support/libraries/loaded_objects.h"
#include "tests/hip_backend/test_support.h"

namespace hipacm::backend {
namespace {

using testing::ScopedEnv;

const RocmToolchain& real_toolchain() {
  const Expected<const RocmToolchain*> loaded = rocm_toolchain();
  if (!loaded) ADD_FAILURE() << "hipRTC is needed: " << loaded.failure().message;
  const RocmToolchain* toolchain = loaded ? loaded.value() : nullptr;
  static const RocmToolchain none;
  return toolchain != nullptr ? *toolchain : none;
}

bool has_line_starting(const std::vector<std::string>& lines, const std::string& prefix) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& line) { return line.rfind(prefix, 0) == 0; });
}

TEST(RocmToolchain, NamesHiprtcItsComgrAndTheirLlvmByBuildId) {
  const RocmToolchain& toolchain = real_toolchain();
  ASSERT_FALSE(toolchain.components.empty());
  EXPECT_EQ(toolchain.components.size(), toolchain.files.size());
  EXPECT_EQ(toolchain.components.front().rfind(file_base_name(toolchain.hiprtc_path), 0), 0u)
      << toolchain.components.front();
  ASSERT_FALSE(toolchain.comgr_path.empty()) << "hipRTC loaded no comgr";
  EXPECT_EQ(file_base_name(toolchain.comgr_path).rfind("libamd_comgr.so", 0), 0u);
  EXPECT_TRUE(
      has_line_starting(toolchain.components, file_base_name(toolchain.comgr_path) + " build-id "));
  // Where comgr links LLVM as its own library (distribution builds), LLVM is named too: an LLVM
  // upgrade alone changes code.
  const auto mapped = loaded_objects();
  const auto comgr_object = std::find_if(mapped.begin(), mapped.end(), [&](const auto& object) {
    return object.path == toolchain.comgr_path;
  });
  ASSERT_NE(comgr_object, mapped.end());
  for (const std::string& needed : comgr_object->needed) {
    if (needed.rfind("libLLVM", 0) == 0) {
      EXPECT_TRUE(has_line_starting(toolchain.components, needed + " ")) << needed;
    }
  }
  EXPECT_EQ(toolchain.fingerprint.size(), 16u);
  EXPECT_EQ(toolchain.fingerprint.find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(RocmToolchain, TheCompilerIdentityIsTheToolchains) {
  ScopedEnv comgr("HIPACM_COMGR_LIBRARY", std::nullopt);
  const RocmToolchain& toolchain = real_toolchain();
  const std::string identity = toolchain_identity(toolchain);
  EXPECT_NE(identity.find(" comgr " + file_base_name(real_file_path(toolchain.comgr_path))),
            std::string::npos)
      << identity;
  EXPECT_EQ(identity.substr(identity.size() - 27), " toolchain " + toolchain.fingerprint);
  EXPECT_EQ(mixed_rocm_problem(toolchain), "");
  const CompilerIdentity compiler = compiler_identity("gfx90a");
  EXPECT_EQ(compiler.version, identity) << compiler.error;
}

TEST(RocmToolchain, AComgrOverrideThatIsNotHiprtcsIsAMix) {
  const RocmToolchain& toolchain = real_toolchain();
  ASSERT_FALSE(toolchain.comgr_path.empty());
  // Another library altogether stands for another release's comgr: another build ID.
  const auto libm = loaded_object_containing(
      reinterpret_cast<const void*>(static_cast<double (*)(double)>(&::cos)));
  ASSERT_TRUE(libm.has_value());
  {
    ScopedEnv comgr("HIPACM_COMGR_LIBRARY", libm->path);
    const std::string problem = mixed_rocm_problem(toolchain);
    EXPECT_NE(problem.find("mixed ROCm libraries"), std::string::npos) << problem;
    EXPECT_NE(problem.find("HIPACM_COMGR_LIBRARY"), std::string::npos) << problem;
    EXPECT_NE(problem.find(real_file_path(toolchain.comgr_path)), std::string::npos) << problem;
  }
  {
    // Its bare soname names the comgr the dynamic linker already mapped: the same one.
    ScopedEnv comgr("HIPACM_COMGR_LIBRARY", file_base_name(toolchain.comgr_path));
    EXPECT_EQ(mixed_rocm_problem(toolchain), "");
  }
  // A copy of the very comgr hipRTC uses is the same comgr.
  const std::string copy = ::testing::TempDir() + "/libamd_comgr-copy.so";
  std::filesystem::copy_file(real_file_path(toolchain.comgr_path), copy,
                             std::filesystem::copy_options::overwrite_existing);
  ScopedEnv comgr("HIPACM_COMGR_LIBRARY", copy);
  EXPECT_EQ(mixed_rocm_problem(toolchain), "");
  std::filesystem::remove(copy);
}

TEST(RocmToolchain, TwoInstallTreesAreAMixOneTreeOrTheSystemsIsNot) {
  ScopedEnv override_comgr("HIPACM_COMGR_LIBRARY", std::nullopt);
  RocmToolchain toolchain;
  toolchain.hiprtc_path = "/opt/rocm-6.4.0/lib/libhiprtc.so.6";
  toolchain.comgr_path = "/usr/lib/x86_64-linux-gnu/libamd_comgr.so.3";
  std::string problem = mixed_rocm_problem(toolchain);
  EXPECT_NE(problem.find("/opt/rocm-6.4.0"), std::string::npos) << problem;
  EXPECT_NE(problem.find("the system's"), std::string::npos) << problem;

  toolchain.comgr_path = "/opt/rocm-7.0.0/lib/libamd_comgr.so.3";
  problem = mixed_rocm_problem(toolchain);
  EXPECT_NE(problem.find("/opt/rocm-7.0.0"), std::string::npos) << problem;

  toolchain.comgr_path = "/opt/rocm-6.4.0/lib/libamd_comgr.so.3";
  EXPECT_EQ(mixed_rocm_problem(toolchain), "");
  toolchain.hiprtc_path = "/usr/lib/x86_64-linux-gnu/libhiprtc.so.6";
  toolchain.comgr_path = "/usr/lib/x86_64-linux-gnu/libamd_comgr.so.3";
  EXPECT_EQ(mixed_rocm_problem(toolchain), "");
}

}  // namespace
}  // namespace hipacm::backend
