/* SPDX-License-Identifier: MIT */
/* status_probe.c - C helpers for header_cxx_test: pass out-of-range status values the C way. */
#include "status_probe.h"

/* In C an enum value outside the enumerators is fine (the type is an integer type); in C++ a
 * static_cast to hipacm_status of e.g. 1000 would be undefined, so the C++ test calls these. */
const char* hipacm_abi_probe_status_string(int value) {
  return hipacm_status_string((hipacm_status)value);
}
