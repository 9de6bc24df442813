// SPDX-License-Identifier: MIT
// amdgpu_arch_check_test.cpp - arch checks against synthetic comgr tables and hipRTC facts: the
// first-release messages, generic targets, amdgcnspirv, and reading a release from a file name.
#include "hip_backend/hiprtc/amdgpu_arch_check.h"

#include <gtest/gtest.h>

#include <initializer_list>

#include "hip_backend/hiprtc/amdgpu_arch_history.h"
#include "hip_backend/target_arch.h"

namespace hipacm::backend {
namespace {

AmdgpuIsaTable table_of(const std::string& library, std::initializer_list<AmdgpuProcessor> list) {
  AmdgpuIsaTable table;
  table.library_path = library;
  table.features_known = true;
  for (const AmdgpuProcessor& processor : list) {
    table.processors.push_back(processor.name);
    table.details.push_back(processor);
  }
  return table;
}

// Cut-down lists of what the comgr of ROCm 5.2.3 and of 6.4.3 report.
AmdgpuIsaTable rocm52_comgr() {
  return table_of("/usr/lib/x86_64-linux-gnu/libamd_comgr.so.2",
                  {{"gfx900", true, false}, {"gfx90a", true, true}, {"gfx1030", false, false}});
}
AmdgpuIsaTable rocm64_comgr() {
  return table_of("libamd_comgr.so.3", {{"gfx90a", true, true},
                                        {"gfx942", true, true},
                                        {"gfx1100", false, false},
                                        {"gfx9-generic", true, false},
                                        {"gfx11-generic", false, false}});
}

const HiprtcFacts kHiprtc52 = hiprtc_facts_from("libamdhip64.so.5.2.21153");
const HiprtcFacts kHiprtc64 = hiprtc_facts_from("libhiprtc.so.6.4.43484");
const HiprtcFacts kHiprtc72 = hiprtc_facts_from("/usr/lib/x86_64-linux-gnu/libhiprtc.so.7.2.53211");
const HiprtcFacts kHiprtc80 = hiprtc_facts_from("libhiprtc.so.8.0.10000");

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The message of a refused arch; fails the test when the arch is accepted.
std::string refusal(const AmdgpuIsaTable& table, const HiprtcFacts& hiprtc,
                    const std::string& arch) {
  std::string error;
  Expected<void> checked;
  checked = validate_amdgpu_arch_with(table, hiprtc, arch);
  error = checked.failure().message;
  EXPECT_FALSE(checked) << arch;
  EXPECT_TRUE(error.starts_with("invalid AMDGPU arch '")) << error;
  return error;
}

bool accepted(const AmdgpuIsaTable& table, const HiprtcFacts& hiprtc, const std::string& arch) {
  const Expected<void> ok = validate_amdgpu_arch_with(table, hiprtc, arch);
  EXPECT_TRUE(ok) << arch << ": " << ok.failure().message;
  return ok.has_value();
}

// The list a refusal ends with.
std::string supported_part(const std::string& error) {
  const std::size_t at = error.find("supported processors: ");
  EXPECT_NE(at, std::string::npos) << error;
  return at == std::string::npos ? "" : error.substr(at);
}

TEST(HiprtcRelease, ParsesTheReleaseThatRocmPathsName) {
  EXPECT_EQ(parse_rocm_release("ROCm 6.4"), (RocmRelease{6, 4}));
  EXPECT_EQ(parse_rocm_release("ROCm 6.4.1"), (RocmRelease{6, 4}));
  EXPECT_EQ(parse_rocm_release("ROCm 10.12"), (RocmRelease{10, 12}));
  for (const char* none : {"", "ROCm", "ROCm 6", "ROCm 6.", "ROCm x.1", "ROCm 6.4x", "6.4",
                           "ROCm 12345.1", " ROCm 6.4"}) {
    EXPECT_EQ(parse_rocm_release(none), std::nullopt) << none;
  }
  EXPECT_LT((RocmRelease{5, 2}), (RocmRelease{6, 4}));
  EXPECT_LT((RocmRelease{6, 4}), (RocmRelease{7, 0}));
  EXPECT_EQ(to_string(RocmRelease{7, 2}), "7.2");
}

TEST(HiprtcRelease, FactsComeFromTheWordThatNamesHiprtc) {
  EXPECT_EQ(kHiprtc52.library, "libamdhip64.so.5.2.21153");
  EXPECT_EQ(kHiprtc52.release, (RocmRelease{5, 2}));
  EXPECT_EQ(kHiprtc72.library, "libhiprtc.so.7.2.53211");
  EXPECT_EQ(kHiprtc72.release, (RocmRelease{7, 2}));
  const HiprtcFacts identity =
      hiprtc_facts_from("9.0 libhiprtc.so.6.4.43484 comgr libamd_comgr.so.3.0.0 3.0 toolchain 1a");
  EXPECT_EQ(identity.library, "libhiprtc.so.6.4.43484");
  EXPECT_EQ(identity.release, (RocmRelease{6, 4}));
  // An install tree names the release even where the file name does not.
  EXPECT_EQ(hiprtc_facts_from("/opt/rocm-7.0.1/lib/libhiprtc.so.7").release, (RocmRelease{7, 0}));
  for (const char* none : {"9.0 hipacm_backend_tests", "", "libhiprtc.so.6", "libhiprtc.so"}) {
    EXPECT_EQ(hiprtc_facts_from(none).release, std::nullopt) << none;
  }
  EXPECT_EQ(hiprtc_facts_from("9.0 hipacm_backend_tests").library, "");
  EXPECT_FALSE(kHiprtc80.emits_spirv);  // no library read ever claims SPIR-V
}

TEST(AmdgpuArchCheck, UnknownProcessorNamesTheFirstReleaseThatKnowsIt) {
  const std::string gfx942 = refusal(rocm52_comgr(), kHiprtc52, "gfx942");
  EXPECT_TRUE(contains(gfx942,
                       "gfx942 (Instinct MI300X, MI300A) is not known to this ROCm (hipRTC "
                       "libamdhip64.so.5.2.21153, comgr libamd_comgr.so.2); of the releases "
                       "checked (ROCm 5.2.3, 6.4.3, 7.2.4), ROCm 6.4 is the first whose comgr "
                       "lists it"))
      << gfx942;
  EXPECT_EQ(supported_part(gfx942),
            "supported processors: gfx900, gfx90a, gfx1030 (features: xnack+/-, sramecc+/- "
            "where the processor has them)");
  // The processor is what counts, with or without features.
  EXPECT_TRUE(contains(refusal(rocm52_comgr(), kHiprtc52, "gfx1100:xnack-"),
                       "gfx1100 (Radeon RX 7900 XTX, 7900 XT) is not known to this ROCm"));
  const std::string gfx1250 = refusal(rocm64_comgr(), kHiprtc64, "gfx1250");
  EXPECT_TRUE(contains(gfx1250, "ROCm 7.2 is the first whose comgr lists it")) << gfx1250;
  EXPECT_TRUE(contains(gfx1250, "(hipRTC libhiprtc.so.6.4.43484, comgr libamd_comgr.so.3)"))
      << gfx1250;
}

TEST(AmdgpuArchCheck, RemovedProcessorsPointAtTheirSuccessor) {
  for (const char* arch : {"gfx940", "gfx941"}) {
    const std::string error = refusal(rocm64_comgr(), kHiprtc72, arch);
    EXPECT_TRUE(contains(error, "none of the releases checked (ROCm 5.2.3, 6.4.3, 7.2.4) lists it"))
        << error;
    EXPECT_TRUE(contains(error, "compile for gfx942")) << error;
  }
}

TEST(AmdgpuArchCheck, NamesOutsideTheTableKeepTheUnknownProcessorMessage) {
  const std::string error = refusal(rocm52_comgr(), kHiprtc52, "gfx9999");
  EXPECT_TRUE(contains(error, "unknown processor 'gfx9999' (this hipRTC would abort on it)"))
      << error;
  EXPECT_FALSE(contains(error, "not known to this ROCm")) << error;
}

TEST(AmdgpuArchCheck, AProcessorANewerRocmKnowsSaysHowToUseThatRocm) {
  const std::string gfx942 = refusal(rocm52_comgr(), kHiprtc52, "gfx942");
  EXPECT_TRUE(contains(gfx942,
                       "ROCm 6.4 is the first whose comgr lists it; to compile for it, point "
                       "hipacm at ROCm 6.4 or newer: set HIPACM_HIPRTC_LIBRARY to its hipRTC "
                       "(e.g. /opt/rocm-6.4.0/lib/libhiprtc.so.6) or ROCM_PATH to its install "
                       "tree; supported processors: "))
      << gfx942;
  const std::string gfx1250 = refusal(rocm64_comgr(), kHiprtc64, "gfx1250");
  EXPECT_TRUE(contains(gfx1250, "point hipacm at ROCm 7.2 or newer")) << gfx1250;
  EXPECT_TRUE(contains(gfx1250, "libhiprtc.so.7)")) << gfx1250;
  EXPECT_FALSE(contains(gfx942, "did you mean")) << gfx942;
  // Removed processors and generic targets have their own advice: no newer ROCm helps.
  EXPECT_FALSE(contains(refusal(rocm64_comgr(), kHiprtc72, "gfx940"), "HIPACM_HIPRTC_LIBRARY"));
  EXPECT_FALSE(contains(refusal(rocm52_comgr(), kHiprtc52, "gfx11-generic"), "ROCM_PATH"));
}

TEST(AmdgpuArchCheck, ATypoGetsTheNearestProcessorsOfThisComgr) {
  const std::string gfx9a0 = refusal(rocm52_comgr(), kHiprtc52, "gfx9a0");
  EXPECT_TRUE(contains(gfx9a0,
                       "unknown processor 'gfx9a0' (this hipRTC would abort on it); did you mean "
                       "gfx90a?; supported processors: "))
      << gfx9a0;
  EXPECT_TRUE(
      contains(refusal(rocm52_comgr(), kHiprtc52, "gfx90"), "did you mean gfx900 or gfx90a?"));
  EXPECT_TRUE(contains(refusal(rocm52_comgr(), kHiprtc52, "gfx1300x"), "did you mean gfx1030?"));
  // The processor is what is matched, whatever features follow it.
  EXPECT_TRUE(contains(refusal(rocm52_comgr(), kHiprtc52, "gfx90:xnack+"),
                       "did you mean gfx900 or gfx90a?"));
  // Only this comgr's names are offered: gfx1100 is one edit from gfx1101 but not listed here.
  EXPECT_FALSE(contains(refusal(rocm52_comgr(), kHiprtc52, "gfx1109"), "did you mean"));
  EXPECT_FALSE(contains(refusal(rocm52_comgr(), kHiprtc52, "sm_80x"), "did you mean"));
}

TEST(AmdgpuArchCheck, WithoutHiprtcFactsTheMessageNamesComgrAlone) {
  const std::string error = refusal(rocm52_comgr(), HiprtcFacts{}, "gfx950");
  EXPECT_TRUE(contains(error,
                       "gfx950 (Instinct MI350X, MI355X) is not known to this ROCm (comgr "
                       "libamd_comgr.so.2); "))
      << error;
}

TEST(AmdgpuArchCheck, MessagesStayBoundedAndPrintable) {
  HiprtcFacts odd;
  odd.library = "libhiprtc.so.6.4." + std::string(500, '9') + "\x1b[31m\n";
  odd.release = RocmRelease{6, 4};
  AmdgpuIsaTable table = rocm52_comgr();
  table.library_path = std::string(300, 'c') + "\x01";
  for (const std::string& arch : {std::string("gfx942"), std::string("gfx9-generic"),
                                  std::string("amdgcnspirv"), std::string(1000, 'g')}) {
    const std::string error = refusal(table, odd, arch);
    EXPECT_LT(error.size(), 1000u) << error;
    for (char c : error) {
      const auto byte = static_cast<unsigned char>(c);
      EXPECT_TRUE(byte >= 0x20 && byte < 0x7f) << "byte " << int(byte) << " in " << error;
    }
  }
}

TEST(AmdgpuArchCheck, GenericTargetsAreRefusedWhereHiprtcCannotCompileThem) {
  for (const HiprtcFacts& hiprtc : {kHiprtc64, kHiprtc72}) {
    const std::string error = refusal(rocm64_comgr(), hiprtc, "gfx11-generic");
    EXPECT_TRUE(contains(error,
                         "gfx11-generic is a generic target, which hipRTC up to ROCm 7.2 "
                         "cannot compile (this one: " +
                             hiprtc.library + ")"))
        << error;
    EXPECT_TRUE(contains(error, "compile for a specific processor such as gfx1100")) << error;
    EXPECT_TRUE(contains(error, "device libraries")) << error;
    // The list shows what would be accepted: the processors, not the generic targets.
    EXPECT_EQ(supported_part(error),
              "supported processors: gfx90a, gfx942, gfx1100 (features: xnack+/-, sramecc+/- "
              "where the processor has them)");
    // A feature does not turn the refusal into a feature problem.
    EXPECT_TRUE(contains(refusal(rocm64_comgr(), hiprtc, "gfx9-generic:xnack+"),
                         "gfx9-generic is a generic target"));
  }
}

TEST(AmdgpuArchCheck, GenericTargetsPassWhereTheReleaseMayCompileThem) {
  // A newer release, or one hipacm cannot read, compiles them or fails cleanly: comgr lists them,
  // so hipRTC does not abort on them.
  for (const HiprtcFacts& hiprtc : {kHiprtc80, HiprtcFacts{}}) {
    EXPECT_TRUE(accepted(rocm64_comgr(), hiprtc, "gfx11-generic"));
    EXPECT_TRUE(accepted(rocm64_comgr(), hiprtc, "gfx9-generic:xnack-"));
    EXPECT_TRUE(contains(supported_part(refusal(rocm64_comgr(), hiprtc, "gfx_bogus")),
                         "gfx9-generic, gfx11-generic"));
  }
  EXPECT_FALSE(generic_targets_refused(kHiprtc80));
  EXPECT_TRUE(generic_targets_refused(kHiprtc52));
}

TEST(AmdgpuArchCheck, GenericTargetUnknownToThisComgrSaysBoth) {
  const std::string error = refusal(rocm52_comgr(), kHiprtc52, "gfx11-generic");
  EXPECT_TRUE(contains(error, "gfx11-generic is not known to this ROCm")) << error;
  EXPECT_TRUE(contains(error, "ROCm 6.4 is the first whose comgr lists it")) << error;
  EXPECT_TRUE(contains(error, "hipRTC up to ROCm 7.2 cannot compile generic targets")) << error;
  EXPECT_TRUE(contains(error, "such as gfx1100")) << error;
}

TEST(AmdgpuArchCheck, SpirvIsRefusedUnlessHiprtcEmitsIt) {
  for (const HiprtcFacts& hiprtc : {kHiprtc52, kHiprtc64, kHiprtc72, kHiprtc80, HiprtcFacts{}}) {
    const std::string error = refusal(rocm64_comgr(), hiprtc, "amdgcnspirv");
    EXPECT_TRUE(contains(error, "portable SPIR-V is not available")) << error;
    EXPECT_TRUE(contains(error, "no hipRTC release checked (ROCm 5.2.3, 6.4.3, 7.2.4) emits it"))
        << error;
    EXPECT_TRUE(contains(error, "compile for a specific processor")) << error;
    EXPECT_FALSE(contains(supported_part(error), "amdgcnspirv")) << error;
  }
  EXPECT_TRUE(contains(refusal(rocm64_comgr(), kHiprtc72, "amdgcnspirv"),
                       "(hipRTC libhiprtc.so.7.2.53211, comgr libamd_comgr.so.3)"));
}

TEST(AmdgpuArchCheck, SpirvIsAcceptedWithoutFeaturesWhereHiprtcEmitsIt) {
  HiprtcFacts spirv = kHiprtc80;
  spirv.emits_spirv = true;
  EXPECT_TRUE(accepted(rocm64_comgr(), spirv, "amdgcnspirv"));
  EXPECT_TRUE(contains(refusal(rocm64_comgr(), spirv, "amdgcnspirv:xnack-"),
                       "amdgcnspirv takes no target features"));
  EXPECT_TRUE(contains(refusal(rocm64_comgr(), spirv, "amdgcnspirv:"),
                       "amdgcnspirv takes no target features"));
  EXPECT_TRUE(contains(supported_part(refusal(rocm64_comgr(), spirv, "gfx_bogus")),
                       "gfx11-generic, amdgcnspirv"));
  // Only the exact name: anything else is an unknown processor.
  EXPECT_TRUE(contains(refusal(rocm64_comgr(), spirv, "amdgcnspirv64"), "unknown processor"));
}

TEST(AmdgpuArchCheck, TheOldEntryPointChecksWithoutHiprtcFacts) {
  std::string error;
  Expected<void> checked;
  checked = validate_amdgpu_arch_with(rocm64_comgr(), "gfx11-generic");
  error = checked.failure().message;
  EXPECT_TRUE(checked) << error;
  checked = validate_amdgpu_arch_with(rocm64_comgr(), "amdgcnspirv");
  error = checked.failure().message;
  EXPECT_FALSE(checked);
  EXPECT_TRUE(contains(error, "(comgr libamd_comgr.so.3)")) << error;
}

TEST(TargetArch, AmdgcnSpirvIsAnAmdArch) {
  for (const char* arch : {"amdgcnspirv", "amdgcnspirv:xnack+", "gfx90a", "gfx11-generic"}) {
    EXPECT_TRUE(is_amdgpu_arch(arch)) << arch;
    EXPECT_FALSE(is_nvidia_arch(arch)) << arch;
  }
  for (const char* arch : {"sm_90", "compute_90", "amdgcnspirv64", "spirv", "", "GFX90A"}) {
    EXPECT_FALSE(is_amdgpu_arch(arch)) << arch;
  }
}

TEST(AmdgpuArchHistory, CoversTheNewerProcessorsAndEveryGenericTarget) {
  for (const char* name :
       {"gfx940", "gfx941", "gfx942", "gfx950", "gfx1100", "gfx1101", "gfx1102", "gfx1103",
        "gfx1150", "gfx1151", "gfx1152", "gfx1153", "gfx1200", "gfx1201", "gfx1250"}) {
    const ArchHistory* row = find_arch_history(name);
    ASSERT_NE(row, nullptr) << name;
    EXPECT_FALSE(is_generic_target(name)) << name;
    EXPECT_TRUE(row->example.empty()) << name;
  }
  for (const char* name : {"gfx9-generic", "gfx9-4-generic", "gfx10-1-generic", "gfx10-3-generic",
                           "gfx11-generic", "gfx12-generic"}) {
    const ArchHistory* row = find_arch_history(name);
    ASSERT_NE(row, nullptr) << name;
    EXPECT_TRUE(is_generic_target(name)) << name;
    EXPECT_TRUE(find_arch_history(row->example) == nullptr || !is_generic_target(row->example))
        << name;
    EXPECT_TRUE(row->example.starts_with("gfx")) << name;
  }
  EXPECT_EQ(find_arch_history("gfx90a"), nullptr);
  EXPECT_TRUE(is_generic_target("gfx12-5-generic"));
  EXPECT_FALSE(is_generic_target("gfx-generic"));
  EXPECT_FALSE(is_generic_target("generic"));
}

}  // namespace
}  // namespace hipacm::backend
