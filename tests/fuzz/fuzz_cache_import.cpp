// SPDX-License-Identifier: MIT
// fuzz_cache_import.cpp - fuzz target: a whole cache database file, imported and opened as a cache.
#include <cstddef>
#include <cstdint>
#include <fstream>

#include "tests/fuzz/cache_checks.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/scratch_dir.h"

// The whole input is the database file, so real exports seed the corpus as they are.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const hipacm::fuzz::ScratchDir scratch;
  scratch.empty();
  const std::string file = (scratch.path() / "import.sqlite3").string();
  {
    std::ofstream out(file, std::ios::binary);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!out) hipacm::fuzz::invariant_broken("cannot write " + file);
  }
  hipacm::fuzz::exercise_cache_file(file, (scratch.path() / "cache" / "kernels.sqlite3").string(),
                                    (scratch.path() / "user.sqlite3").string());
  return 0;
}
