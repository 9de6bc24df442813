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

/// kSampleSource for `arch`, with the name expression "scale<float>".
CompileRequest sample_request(const std::string& arch);

/// The sample compiled once per process for gfx90a (fails the test if it
/// cannot be compiled).
const CompileResult& sample_gfx90a();

/// Sets (or, with nullopt, unsets) an environment variable for one scope.
using ScopedEnv = test::ScopedEnv;

}  // namespace hipacm::backend::testing
