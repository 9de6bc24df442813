// SPDX-License-Identifier: MIT
// amdgpu_arch_history.h - which checked ROCm releases know the newer AMDGPU processors, for
// messages about processors this comgr does not list.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "hip_backend/hiprtc/hiprtc_release.h"

namespace hipacm::backend {

/// What the releases checked showed about one processor or generic target.
struct ArchHistory {
  std::string_view name;                   ///< "gfx942", "gfx11-generic"
  std::string_view products;               ///< e.g. "Instinct MI300X, MI300A"; may be empty
  std::optional<RocmRelease> first_known;  ///< the oldest checked release whose comgr lists it
  std::string_view note;                   ///< what to do instead; may be empty
  std::string_view example;                ///< generic targets: a processor of the family
};

/// The releases checked, oldest first: "ROCm 5.2.3, 6.4.3, 7.2.4".
std::string_view checked_rocm_releases();

/// The newest release whose hipRTC was checked.
inline constexpr RocmRelease kNewestCheckedRelease{7, 2};

/// The row for `name`, or nullptr for names the table does not cover.
const ArchHistory* find_arch_history(std::string_view name);

/// "gfx9-generic", "gfx11-generic", ...: a generic target (a family's common subset).
bool is_generic_target(std::string_view name);

/// What the checked releases showed, for a name this comgr does not list: "of the releases
/// checked (ROCm 5.2.3, 6.4.3, 7.2.4), ROCm 6.4 is the first whose comgr lists it", then the note.
std::string arch_history_text(const ArchHistory& history);

/// "gfx942 (Instinct MI300X, MI300A)", or the name alone when no product is recorded.
std::string arch_with_products(const ArchHistory& history);

}  // namespace hipacm::backend
