// SPDX-License-Identifier: MIT
// loaded_objects.h - what the dynamic linker has mapped into this process: each object's file,
// GNU build ID and DT_NEEDED names, read from memory without opening any file.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace hipacm::backend {

/// One shared object mapped into this process.
struct LoadedObject {
  std::string path;                 ///< as the dynamic linker found it (dlpi_name)
  std::string build_id;             ///< lower-case hex of NT_GNU_BUILD_ID; empty when it has none
  std::vector<std::string> needed;  ///< its DT_NEEDED sonames, in order
};

/// Every object with a file name (the main program and the vDSO are left out), in load order.
std::vector<LoadedObject> loaded_objects();

/// The loaded object whose code contains `address`; nullopt when none does.
std::optional<LoadedObject> loaded_object_containing(const void* address);

/// The GNU build ID of the ELF file at `path`, read from its program headers without loading it;
/// empty when the file cannot be read, is not a 64-bit little-endian ELF file, or has none. Reads
/// only bounded headers and notes: the file is not trusted.
std::string file_build_id(const std::string& path);

/// The file name after the last '/'.
std::string file_base_name(const std::string& path);

}  // namespace hipacm::backend
