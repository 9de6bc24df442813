// SPDX-License-Identifier: MIT
// hiprtc_arch_options_test.cpp - the target option hipRTC gets, and the requests refused before it
// runs (no hipRTC needed: the arch check is a stand-in).
#include "hip_backend/hiprtc/hiprtc_arch_options.h"

#include <gtest/gtest.h>

#include "support/status_error.h"

namespace hipacm::backend {
namespace {

// Accepts what a hipRTC that emits SPIR-V would: gfx90a with its features, and amdgcnspirv.
Expected<void> spirv_capable(const std::string& arch) {
  if (arch == "amdgcnspirv" || arch.rfind("gfx90a", 0) == 0) return {};
  return Failure{HIPACM_ERROR_INVALID_ARGUMENT, "invalid AMDGPU arch '" + arch + "'"};
}

CompileRequest request_for(const std::string& arch, std::vector<std::string> options = {}) {
  CompileRequest request;
  request.source = "extern \"C\" __global__ void k() {}";
  request.arch = arch;
  request.options = std::move(options);
  return request;
}

// The INVALID_ARGUMENT message of a refused request; fails the test when it is not refused.
std::string refusal(const CompileRequest& request) {
  try {
    const std::vector<std::string> options = hiprtc_arch_options(request, spirv_capable);
    ADD_FAILURE() << "accepted; options: " << (options.empty() ? "" : options[0]);
  } catch (const StatusError& e) {
    EXPECT_EQ(e.status(), HIPACM_ERROR_INVALID_ARGUMENT) << e.what();
    return e.what();
  }
  return "";
}

TEST(HiprtcArchOptions, NamesTheProcessorWithGpuArchitecture) {
  EXPECT_EQ(hiprtc_arch_options(request_for("gfx90a:xnack-"), spirv_capable),
            std::vector<std::string>{"--gpu-architecture=gfx90a:xnack-"});
}

TEST(HiprtcArchOptions, AddsNothingWhenTheCallerNamesTheArch) {
  EXPECT_TRUE(hiprtc_arch_options(request_for("gfx90a", {"-O3", "--gpu-architecture=gfx90a"}),
                                  spirv_capable)
                  .empty());
  EXPECT_TRUE(hiprtc_arch_options(request_for("gfx90a:xnack-", {"--offload-arch=gfx90a:xnack-"}),
                                  spirv_capable)
                  .empty());
  // The same features in another order name the same target.
  EXPECT_TRUE(hiprtc_arch_options(
                  request_for("gfx90a:sramecc+:xnack-", {"--offload-arch=gfx90a:xnack-:sramecc+"}),
                  spirv_capable)
                  .empty());
}

TEST(HiprtcArchOptions, RefusesOptionsWithOtherFeatures) {
  // The result is checked and cached as the request's arch, so it must be what hipRTC builds.
  for (const auto& [arch, option] : {std::pair{"gfx90a", "--gpu-architecture=gfx90a:xnack-"},
                                     std::pair{"gfx90a:xnack-", "--offload-arch=gfx90a"},
                                     std::pair{"gfx90a:xnack-", "--offload-arch=gfx90a:xnack+"}}) {
    const std::string error = refusal(request_for(arch, {option}));
    EXPECT_NE(error.find("conflicts with the arch '" + std::string(arch) +
                         "' of the request: its features differ"),
              std::string::npos)
        << error;
  }
}

TEST(HiprtcArchOptions, SpirvIsAskedForWithOffloadArch) {
  EXPECT_EQ(hiprtc_arch_options(request_for("amdgcnspirv", {"-O3"}), spirv_capable),
            std::vector<std::string>{"--offload-arch=amdgcnspirv"});
  EXPECT_TRUE(
      hiprtc_arch_options(request_for("amdgcnspirv", {"--offload-arch=amdgcnspirv"}), spirv_capable)
          .empty());
}

TEST(HiprtcArchOptions, SpirvRefusesNameExpressionsAndSeparateDeviceCode) {
  CompileRequest named = request_for("amdgcnspirv");
  named.name_expressions = {"scale<float>"};
  const std::string names = refusal(named);
  EXPECT_NE(names.find("amdgcnspirv takes no name expressions"), std::string::npos) << names;
  EXPECT_NE(names.find("extern \"C\""), std::string::npos) << names;

  const std::string rdc = refusal(request_for("amdgcnspirv", {"-fgpu-rdc"}));
  EXPECT_NE(rdc.find("option '-fgpu-rdc'"), std::string::npos) << rdc;

  // The same request for a processor is not affected.
  CompileRequest gfx = request_for("gfx90a", {"-fgpu-rdc"});
  gfx.name_expressions = {"scale<float>"};
  EXPECT_EQ(hiprtc_arch_options(gfx, spirv_capable).size(), 1u);
}

TEST(HiprtcArchOptions, RefusesArchsTheCheckRefuses) {
  const std::string own = refusal(request_for("gfx942"));
  EXPECT_EQ(own, "invalid AMDGPU arch 'gfx942'");
  const std::string in_option = refusal(request_for("gfx90a", {"--offload-arch=gfx942"}));
  EXPECT_EQ(in_option, "option '--offload-arch=gfx942': invalid AMDGPU arch 'gfx942'");
}

TEST(HiprtcArchOptions, RefusesOptionsThatNameAnotherTarget) {
  const std::string spirv = refusal(request_for("gfx90a", {"--offload-arch=amdgcnspirv"}));
  EXPECT_NE(spirv.find("conflicts with the arch 'gfx90a'"), std::string::npos) << spirv;
  const std::string processor = refusal(request_for("amdgcnspirv", {"--gpu-architecture=gfx90a"}));
  EXPECT_NE(processor.find("conflicts with the arch 'amdgcnspirv'"), std::string::npos)
      << processor;
  const std::string bare = refusal(request_for("gfx90a", {"--offload-arch"}));
  EXPECT_NE(bare.find("needs its value"), std::string::npos) << bare;
}

}  // namespace
}  // namespace hipacm::backend
