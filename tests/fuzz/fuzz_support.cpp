// SPDX-License-Identifier: MIT
// fuzz_support.cpp - what every fuzz target shares: reporting a broken invariant, a private temp
// dir.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/scratch_dir.h"

namespace hipacm::fuzz {

void invariant_broken(const std::string& what) {
  std::fprintf(stderr, "fuzz invariant broken: %s\n", what.c_str());
  std::abort();
}

ScratchDir::ScratchDir() {
  namespace fs = std::filesystem;
  std::string pattern = (fs::temp_directory_path() / "hipacm-fuzz-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) invariant_broken("mkdtemp failed for " + pattern);
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

void ScratchDir::empty() const {
  namespace fs = std::filesystem;
  std::error_code ignored;
  for (const fs::directory_entry& e : fs::directory_iterator(path_, ignored))
    fs::remove_all(e.path(), ignored);
}

}  // namespace hipacm::fuzz
