// cuda_code_object.h - backend-private helpers for NVIDIA code objects (PTX entry names).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hipacm::backend {

/// The names after every `.entry` directive in PTX text, sorted and unique.
std::vector<std::string> ptx_entry_names(const std::vector<std::uint8_t>& ptx);

}  // namespace hipacm::backend
