// SPDX-License-Identifier: MIT
// test_support.h - shared fixtures for the backend tests: sample sources, a real code object, env
// guards.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hip_backend/compiler.h"
#include "tests/scoped_env.h"

namespace hipacm::backend::testing {

/// An extern "C" vector add `vadd` and a template `scale<T>(T*, T)`.
extern const char* const kSampleSource;

/// A request to compile `source`, named `source_name`, for `arch`, with nothing else set.
CompileRequest source_request(std::string source, std::string source_name, const std::string& arch);

/// kSampleSource for `arch`, with the name expression "scale<float>".
CompileRequest sample_request(const std::string& arch);

/// The sample compiled once per process for gfx90a (fails the test if it
/// cannot be compiled).
const CompileResult& sample_gfx90a();

/// Whether `list` holds `item`.
bool contains(const std::vector<std::string>& list, const std::string& item);

/// The processors the loaded comgr lists, into `*out`; fails the test when the list cannot be
/// read or is empty (callers wrap it in ASSERT_NO_FATAL_FAILURE).
void read_supported_processors(std::vector<std::string>* out);

/// Expects `checked` to have passed (`passes`) or failed, and returns its failure message ("" when
/// it passed), for the test to look into.
std::string expect_verdict(const Expected<void>& checked, bool passes);

/// Checks that validate_amdgpu_arch accepts `arch` (`accepted`) or refuses it, and returns its
/// failure message ("" when it accepts), for the tests to look into.
std::string expect_arch_check(const std::string& arch, bool accepted);

/// Sets (or, with nullopt, unsets) an environment variable for one scope.
using ScopedEnv = test::ScopedEnv;

}  // namespace hipacm::backend::testing
