// SPDX-License-Identifier: MIT
// last_error.cpp - the thread-local message behind hipacm_last_error_message().
#include "plugin/abi/last_error.h"

#include <string>

namespace hipacm {
namespace {

// A pointer-sized flag tells whether the string below is usable: the
// fallback must survive a failed allocation without touching the string.
thread_local bool t_out_of_memory = false;

std::string& thread_message() {
  thread_local std::string message;
  return message;
}

}  // namespace

void set_last_error(std::string_view message) noexcept {
  try {
    thread_message().assign(message);
    t_out_of_memory = false;
  } catch (...) {
    t_out_of_memory = true;
  }
}

const char* last_error_message() noexcept {
  if (t_out_of_memory) return "out of memory while recording the error message";
  return thread_message().c_str();
}

}  // namespace hipacm
