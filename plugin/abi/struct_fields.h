// SPDX-License-Identifier: MIT
// struct_fields.h - reads caller-filled ABI structs whose struct_size may be older or newer.
#pragma once

#include <cstddef>
#include <string>

#include "support/status_error.h"

namespace hipacm {

/// A caller's struct must be at least version 1 of it; larger is fine.
template <class Struct>
void require_struct_size(const Struct* s, std::size_t v1_size, const char* what) {
  if (s->struct_size < v1_size)
    throw StatusError(HIPACM_ERROR_ABI_MISMATCH,
                      std::string(what) + ".struct_size is " + std::to_string(s->struct_size) +
                          ", smaller than version 1 of the struct (" + std::to_string(v1_size) +
                          " bytes); rebuild the host against a current hipacm.h");
}

/// True when `field` lies inside the caller's struct_size: fields appended
/// after the caller was built take their defaults.
template <class Struct, class Field>
bool has_field(const Struct* s, Field Struct::*field) {
  const auto* base = reinterpret_cast<const char*>(s);
  const auto* member = reinterpret_cast<const char*>(&(s->*field));
  return static_cast<std::size_t>(member - base) + sizeof(Field) <= s->struct_size;
}

template <class Struct, class Field>
Field field_or(const Struct* s, Field Struct::*field, Field fallback) {
  return has_field(s, field) ? s->*field : fallback;
}

}  // namespace hipacm
