// SPDX-License-Identifier: MIT
// intercept_entry_support.h - what the private entry's tests against plain hipRTC and plain NVRTC
// share: the library's calls they use, a plain compile with them, and a request to the entry.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "plugin/abi/intercept_abi.h"

namespace hipacm::test {

using Program = void*;

/// The calls of hipRTC or NVRTC (the same parameters in both) that a plain compile makes.
struct RtcCalls {
  int (*create)(Program*, const char*, const char*, int, const char**, const char**);
  int (*add_name)(Program, const char*);
  int (*compile)(Program, int, const char**);
  int (*log_size)(Program, std::size_t*);
  int (*log)(Program, char*);
  int (*code_size)(Program, std::size_t*);  // hiprtcGetCodeSize, nvrtcGetCUBINSize
  int (*code)(Program, char*);
  int (*lowered)(Program, const char*, const char**);
  int (*destroy)(Program*);
  // NVRTC's log size counts the terminating NUL; hipRTC's does not.
  bool log_size_counts_nul = false;
};

/// The calls `prefix` ("hiprtc", "nvrtc") names in `lib`, the code's as <prefix>Get<code>.
inline RtcCalls rtc_calls(void* lib, const std::string& prefix, const std::string& code) {
  RtcCalls t;
  auto get = [&](auto* field, const std::string& name) {
    *field = reinterpret_cast<std::remove_reference_t<decltype(*field)>>(
        dlsym(lib, (prefix + name).c_str()));
  };
  get(&t.create, "CreateProgram");
  get(&t.add_name, "AddNameExpression");
  get(&t.compile, "CompileProgram");
  get(&t.log_size, "GetProgramLogSize");
  get(&t.log, "GetProgramLog");
  get(&t.code_size, "Get" + code + "Size");
  get(&t.code, "Get" + code);
  get(&t.lowered, "GetLoweredName");
  get(&t.destroy, "DestroyProgram");
  return t;
}

/// What the plain library made of one program.
struct Plain {
  int result = -1;
  std::string code;
  std::string log;  // without NVRTC's terminating NUL, as hipacm keeps it
  std::vector<std::string> lowered;
};

inline Plain compile_plainly(const RtcCalls& api, const char* source, const char* name,
                             std::vector<const char*> options,
                             const std::vector<const char*>& expressions) {
  Plain plain;
  Program program = nullptr;
  EXPECT_EQ(api.create(&program, source, name, 0, nullptr, nullptr), 0);
  for (const char* expression : expressions) EXPECT_EQ(api.add_name(program, expression), 0);
  plain.result = api.compile(program, static_cast<int>(options.size()), options.data());
  std::size_t size = 0;
  if (api.log_size(program, &size) == 0 && size > 0) {
    if (api.log_size_counts_nul) {
      plain.log.assign(size, '\0');
      api.log(program, plain.log.data());
      plain.log.resize(plain.log.find('\0'));
    } else {
      plain.log.assign(size + 1, '\0');
      api.log(program, plain.log.data());
      plain.log.resize(size);
    }
  }
  if (plain.result == 0) {
    EXPECT_EQ(api.code_size(program, &size), 0);
    plain.code.assign(size, '\0');
    EXPECT_EQ(api.code(program, plain.code.data()), 0);
    for (const char* expression : expressions) {
      const char* lowered = nullptr;
      EXPECT_EQ(api.lowered(program, expression, &lowered), 0);
      plain.lowered.emplace_back(lowered != nullptr ? lowered : "");
    }
  }
  api.destroy(&program);
  return plain;
}

struct Released {
  void operator()(hipacm_intercept_result* r) const { hipacm_intercept_release_v1(r); }
};
using Result = std::unique_ptr<hipacm_intercept_result, Released>;

/// A request for one program; `options` and `expressions` must outlive it.
inline hipacm_intercept_request intercept_request(const char* source, const char* name,
                                                  const std::vector<const char*>& options,
                                                  const std::vector<const char*>& expressions,
                                                  const char* arch) {
  hipacm_intercept_request request{};
  request.struct_size = sizeof request;
  request.source = source;
  request.source_name = name;
  request.num_options = options.size();
  request.options = options.data();
  request.num_name_expressions = expressions.size();
  request.name_expressions = expressions.data();
  request.arch = arch;
  return request;
}

}  // namespace hipacm::test
