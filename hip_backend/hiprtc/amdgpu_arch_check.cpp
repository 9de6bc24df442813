// SPDX-License-Identifier: MIT
// amdgpu_arch_check.cpp - arch strings checked before hipRTC sees them, with messages that say
// what would work instead.
#include "hip_backend/hiprtc/amdgpu_arch_check.h"

#include <cstdio>
#include <string_view>
#include <vector>

#include "hip_backend/hiprtc/amdgpu_arch_history.h"
#include "hip_backend/target_arch.h"
#include "support/nearest_name.h"
#include "support/settings.h"

namespace hipacm::backend {

namespace {

std::string file_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// "(hipRTC libhiprtc.so.6.4.43484, comgr libamd_comgr.so.3)": which ROCm answered.
std::string this_rocm(const AmdgpuIsaTable& table, const HiprtcFacts& hiprtc) {
  std::string text = "(";
  if (!hiprtc.library.empty()) text += "hipRTC " + printable_arch(hiprtc.library) + ", ";
  return text + "comgr " + printable_arch(file_name(table.library_path)) + ")";
}

// What validation accepts, for the message: comgr's list less what hipRTC cannot compile.
std::string supported_list(const AmdgpuIsaTable& table, const HiprtcFacts& hiprtc) {
  std::string list;
  const bool skip_generic = generic_targets_refused(hiprtc);
  for (const std::string& name : table.processors) {
    if (skip_generic && is_generic_target(name)) continue;
    list += (list.empty() ? "" : ", ") + name;
  }
  if (hiprtc.emits_spirv) list += ", " + std::string(kAmdgcnSpirvArch);
  return list;
}

// One check's tables and the arch it is about; every refusal goes through fail().
struct Check {
  const AmdgpuIsaTable& table;
  const HiprtcFacts& hiprtc;
  const std::string& arch;
  /// The refusal, once fail() ran.
  mutable std::string error;

  bool fail(const std::string& problem) const {
    error = "invalid AMDGPU arch '" + printable_arch(arch) + "': " + problem +
            "; supported processors: " + supported_list(table, hiprtc) +
            " (features: xnack+/-, sramecc+/- where the processor has them)";
    return false;
  }
};

const AmdgpuProcessor* find_processor(const AmdgpuIsaTable& table, std::string_view name) {
  for (const AmdgpuProcessor& processor : table.details) {
    if (processor.name == name) return &processor;
  }
  return nullptr;
}

bool allowed_byte(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return (byte >= '0' && byte <= '9') || (byte >= 'a' && byte <= 'z') ||
         (byte >= 'A' && byte <= 'Z') || c == ':' || c == '+' || c == '-' || c == '_';
}

// A real processor that a newer ROCm knows: how to compile with that ROCm instead.
std::string newer_rocm_hint(const ArchHistory& history) {
  if (!history.first_known || !history.note.empty()) return "";
  const RocmRelease release = *history.first_known;
  return "; to compile for it, point hipacm at ROCm " + to_string(release) + " or newer: set " +
         settings::name(settings::Id::kHiprtcLibrary) + " to its hipRTC (e.g. /opt/rocm-" +
         to_string(release) + ".0/lib/libhiprtc.so." + std::to_string(release.major) +
         ") or ROCM_PATH to its install tree";
}

bool unknown_processor(const Check& check, std::string_view name) {
  const ArchHistory* history = find_arch_history(name);
  if (history == nullptr) {
    const std::vector<std::string> near = nearest_names(name, check.table.processors);
    return check.fail("unknown processor '" + printable_arch(std::string(name)) +
                      "' (this hipRTC would abort on it)" +
                      (near.empty() ? "" : "; did you mean " + one_of(near) + "?"));
  }
  return check.fail(arch_with_products(*history) + " is not known to this ROCm " +
                    this_rocm(check.table, check.hiprtc) + "; " + arch_history_text(*history) +
                    newer_rocm_hint(*history));
}

// What hipRTC was checked to do with amdgcnspirv.
bool spirv_unavailable(const Check& check) {
  return check.fail("portable SPIR-V is not available " + this_rocm(check.table, check.hiprtc) +
                    ": no hipRTC release checked (" + std::string(checked_rocm_releases()) +
                    ") emits it from a runtime compile (5.2 and 6.4 abort the process on it, 7.2 "
                    "fails), and hipacm does not read SPIR-V output yet; compile for a specific "
                    "processor");
}

bool generic_target(const Check& check, std::string_view name) {
  const ArchHistory* history = find_arch_history(name);
  std::string instead = "compile for a specific processor";
  if (history != nullptr && !history->example.empty())
    instead += " such as " + std::string(history->example);
  return check.fail(std::string(name) +
                    " is a generic target, which hipRTC up to ROCm 7.2 cannot compile (this "
                    "one: " +
                    printable_arch(check.hiprtc.library) + "); " + instead +
                    ": generic code objects need device libraries this hipRTC does not find");
}

// The features after the processor: xnack and sramecc, each once, each with + or -, and only
// where this comgr says the processor has them.
bool check_features(const Check& check, const AmdgpuProcessor& processor, std::string_view rest) {
  bool seen_xnack = false;
  bool seen_sramecc = false;
  while (!rest.empty()) {
    const std::size_t next = rest.find(':');
    const std::string_view feature = rest.substr(0, next);
    rest = next == std::string_view::npos ? "" : rest.substr(next + 1);
    if (next != std::string_view::npos && rest.empty()) {
      return check.fail("an empty feature after ':'");
    }
    if (feature.size() < 2 || (feature.back() != '+' && feature.back() != '-')) {
      return check.fail("feature '" + std::string(feature) + "' needs a trailing + or -");
    }
    const std::string_view feature_name = feature.substr(0, feature.size() - 1);
    bool* seen = feature_name == "xnack"     ? &seen_xnack
                 : feature_name == "sramecc" ? &seen_sramecc
                                             : nullptr;
    if (seen == nullptr) {
      return check.fail("unknown feature '" + std::string(feature_name) +
                        "' (only xnack and sramecc)");
    }
    if (*seen) {
      return check.fail("feature '" + std::string(feature_name) + "' is given more than once");
    }
    *seen = true;
    if (!check.table.features_known) {
      return check.fail(
          "this comgr cannot tell which processors take features, so none are accepted");
    }
    const bool supported = feature_name == "xnack" ? processor.xnack : processor.sramecc;
    if (!supported) {
      return check.fail(processor.name + " has no " + std::string(feature_name) +
                        " feature (this hipRTC would abort on it)");
    }
  }
  return true;
}

}  // namespace

std::string printable_arch(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size() && i < kMaxAmdgpuArchLength; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      out += escaped;
    }
  }
  if (text.size() > kMaxAmdgpuArchLength) out += "...";
  return out;
}

bool generic_targets_refused(const HiprtcFacts& hiprtc) {
  return hiprtc.release && *hiprtc.release <= kNewestCheckedRelease;
}

namespace {

bool arch_valid(const Check& check) {
  const AmdgpuIsaTable& table = check.table;
  const HiprtcFacts& hiprtc = check.hiprtc;
  const std::string& arch = check.arch;
  if (arch.empty()) return check.fail("the arch is empty");
  if (arch.size() > kMaxAmdgpuArchLength) return check.fail("the arch is too long");
  for (char c : arch) {
    if (!allowed_byte(c)) return check.fail("it contains whitespace or other characters");
  }
  const std::string_view text(arch);
  const std::size_t colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  if (name == kAmdgcnSpirvArch) {
    if (colon != std::string_view::npos) return check.fail("amdgcnspirv takes no target features");
    return hiprtc.emits_spirv || spirv_unavailable(check);
  }
  const AmdgpuProcessor* processor = find_processor(table, name);
  if (processor == nullptr) return unknown_processor(check, name);
  if (is_generic_target(name) && generic_targets_refused(hiprtc)) {
    return generic_target(check, name);
  }
  if (colon == std::string_view::npos) return true;
  const std::string_view rest = text.substr(colon + 1);
  if (rest.empty()) return check.fail("an empty feature after ':'");
  return check_features(check, *processor, rest);
}

}  // namespace

Expected<void> validate_amdgpu_arch_with(const AmdgpuIsaTable& table, const HiprtcFacts& hiprtc,
                                         const std::string& arch) {
  const Check check{table, hiprtc, arch, {}};
  if (arch_valid(check)) return {};
  return Failure{HIPACM_ERROR_INVALID_ARGUMENT, std::move(check.error)};
}

Expected<void> validate_amdgpu_arch_with(const AmdgpuIsaTable& table, const std::string& arch) {
  return validate_amdgpu_arch_with(table, HiprtcFacts{}, arch);
}

}  // namespace hipacm::backend
