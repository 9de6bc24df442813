// SPDX-License-Identifier: MIT
// comgr_isa_internal.h - backend-private: the uncached comgr ISA loader and table-driven arch
// validation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "support/libraries/lazy_library.h"

namespace hipacm::backend {

// Mirrors of comgr's C types, so the backend builds without ROCm headers.
using comgr_status = int;  // amd_comgr_status_t; 0 = AMD_COMGR_STATUS_SUCCESS
struct comgr_metadata_node {
  std::uint64_t handle;
};

// X-macros: (name, return type, parameter list). The ISA list is required; the metadata entry
// points (which processor takes which feature) and the version are not in every comgr.
#define HIPACM_COMGR_REQUIRED_SYMBOLS(X)                   \
  X(amd_comgr_get_isa_count, comgr_status, (std::size_t*)) \
  X(amd_comgr_get_isa_name, comgr_status, (std::size_t, const char**))
#define HIPACM_COMGR_OPTIONAL_SYMBOLS(X)                                           \
  X(amd_comgr_get_isa_metadata, comgr_status, (const char*, comgr_metadata_node*)) \
  X(amd_comgr_metadata_lookup, comgr_status,                                       \
    (comgr_metadata_node, const char*, comgr_metadata_node*))                      \
  X(amd_comgr_destroy_metadata, comgr_status, (comgr_metadata_node))               \
  X(amd_comgr_get_version, void, (std::size_t*, std::size_t*))

/// comgr's entry points; the optional ones are null when this comgr lacks them.
struct ComgrApi {
  HIPACM_COMGR_REQUIRED_SYMBOLS(HIPACM_LIBRARY_FIELD)
  HIPACM_COMGR_OPTIONAL_SYMBOLS(HIPACM_LIBRARY_FIELD)
  std::string library_path;  ///< the file that was opened
};
using LoadedComgr = BoundLibrary<ComgrApi>;

/// One processor that comgr knows, with the target features it accepts.
struct AmdgpuProcessor {
  std::string name;  ///< e.g. "gfx90a"
  bool xnack = false;
  bool sramecc = false;
};

/// What comgr reported. `features_known` is false when this comgr cannot tell
/// which processor takes which feature (no ISA metadata entry points); then no
/// feature is accepted, because a feature the processor lacks ("gfx1030:xnack-")
/// aborts the process inside hipRTC 5.2.3 just like an unknown processor does.
struct AmdgpuIsaTable {
  std::vector<std::string> processors;   ///< comgr's order, de-duplicated
  std::vector<AmdgpuProcessor> details;  ///< same order as `processors`
  bool features_known = false;
  std::string library_path;
};

/// $HIPACM_COMGR_LIBRARY alone when set and non-empty, else libamd_comgr.so.2, libamd_comgr.so.
std::vector<std::string> comgr_library_candidates();

/// Uncached: opens the first candidate that loads (pinned: comgr carries LLVM) and binds it.
Expected<LoadedComgr> find_comgr(const std::vector<std::string>& candidates);

/// Uncached: opens the first candidate that loads and reads its ISA list.
Expected<AmdgpuIsaTable> load_amdgpu_isa_table_from(const std::vector<std::string>& candidates);

/// The table as the text that the library-fact memo keeps: the library's path,
/// "features_known 0|1", then "<name> <xnack 0|1> <sramecc 0|1>" per processor.
std::string amdgpu_isa_table_payload(const AmdgpuIsaTable& table);

/// The inverse; nullopt for anything malformed (a damaged memo is re-read
/// from comgr, never trusted).
std::optional<AmdgpuIsaTable> parse_amdgpu_isa_table_payload(const std::string& payload);

/// validate_amdgpu_arch against an explicit table.
Expected<void> validate_amdgpu_arch_with(const AmdgpuIsaTable& table, const std::string& arch);

}  // namespace hipacm::backend
