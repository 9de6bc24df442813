// SPDX-License-Identifier: MIT
// amdgpu_arch_history.cpp - the table of newer AMDGPU processors and the releases that know them.
#include "hip_backend/hiprtc/amdgpu_arch_history.h"

#include <array>

namespace hipacm::backend {

namespace {

constexpr RocmRelease kRocm64{6, 4};
constexpr RocmRelease kRocm72{7, 2};

// The releases were checked by listing each one's comgr targets: ROCm 5.2.3 (comgr 2.4),
// 6.4.3 (comgr 7.0.2 on LLVM 21) and 7.2.4 (comgr 7.2.4 on LLVM 22), as Debian packages them.
// Products are from LLVM's AMDGPUUsage processor table. docs/ARCHS.md lists the sources.
constexpr std::string_view kChecked = "ROCm 5.2.3, 6.4.3, 7.2.4";

constexpr std::string_view kGone =
    "gfx940 and gfx941 were removed from LLVM in 2025; compile for gfx942";
constexpr std::string_view kGenericNote =
    "hipRTC up to ROCm 7.2 cannot compile generic targets; compile for a specific processor";

constexpr std::array<ArchHistory, 22> kHistory = {{
    {"gfx940", "", std::nullopt, kGone, ""},
    {"gfx941", "", std::nullopt, kGone, ""},
    {"gfx942", "Instinct MI300X, MI300A", kRocm64, "", ""},
    {"gfx950", "Instinct MI350X, MI355X", kRocm64, "", ""},
    {"gfx1100", "Radeon RX 7900 XTX, 7900 XT", kRocm64, "", ""},
    {"gfx1101", "Radeon RX 7800 XT, 7700 XT", kRocm64, "", ""},
    {"gfx1102", "Radeon RX 7600 XT, 7600", kRocm64, "", ""},
    {"gfx1103", "Radeon 780M", kRocm64, "", ""},
    {"gfx1150", "Radeon 890M", kRocm64, "", ""},
    {"gfx1151", "Radeon 8060S", kRocm64, "", ""},
    {"gfx1152", "Radeon 860M", kRocm64, "", ""},
    {"gfx1153", "", kRocm64, "", ""},
    {"gfx1200", "Radeon RX 9060 XT, 9060", kRocm64, "", ""},
    {"gfx1201", "Radeon RX 9070 XT, 9070", kRocm64, "", ""},
    {"gfx1250", "", kRocm72, "", ""},
    {"gfx1251", "", kRocm72, "", ""},
    {"gfx9-generic", "", kRocm64, kGenericNote, "gfx900"},
    {"gfx9-4-generic", "", kRocm64, kGenericNote, "gfx942"},
    {"gfx10-1-generic", "", kRocm64, kGenericNote, "gfx1010"},
    {"gfx10-3-generic", "", kRocm64, kGenericNote, "gfx1030"},
    {"gfx11-generic", "", kRocm64, kGenericNote, "gfx1100"},
    {"gfx12-generic", "", kRocm64, kGenericNote, "gfx1200"},
}};

constexpr std::string_view kGenericSuffix = "-generic";

}  // namespace

std::string_view checked_rocm_releases() { return kChecked; }

const ArchHistory* find_arch_history(std::string_view name) {
  for (const ArchHistory& row : kHistory) {
    if (row.name == name) return &row;
  }
  return nullptr;
}

bool is_generic_target(std::string_view name) {
  return name.starts_with("gfx") && name.size() > kGenericSuffix.size() + 3 &&
         name.ends_with(kGenericSuffix);
}

std::string arch_history_text(const ArchHistory& history) {
  std::string text;
  if (history.first_known) {
    text = "of the releases checked (" + std::string(kChecked) + "), ROCm " +
           to_string(*history.first_known) + " is the first whose comgr lists it";
  } else {
    text = "none of the releases checked (" + std::string(kChecked) + ") lists it";
  }
  if (!history.note.empty()) text += "; " + std::string(history.note);
  if (!history.example.empty()) text += " such as " + std::string(history.example);
  return text;
}

std::string arch_with_products(const ArchHistory& history) {
  std::string text(history.name);
  if (!history.products.empty()) text += " (" + std::string(history.products) + ")";
  return text;
}

}  // namespace hipacm::backend
