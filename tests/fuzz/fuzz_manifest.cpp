// SPDX-License-Identifier: MIT
// fuzz_manifest.cpp - fuzz target: the hipacm CLI's JSON manifest reader.
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/scratch_dir.h"
#include "tools/common/exit_codes.h"
#include "tools/input/manifest_reader.h"

namespace {

namespace fs = std::filesystem;
using hipacm::fuzz::invariant_broken;

void write_file(const fs::path& path, const std::uint8_t* data, std::size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) invariant_broken("cannot write " + path.string());
}

// A manifest directory with a kernel and a header that valid manifests name.
const hipacm::fuzz::ScratchDir& manifest_dir() {
  static const hipacm::fuzz::ScratchDir dir;
  static const bool ready = [] {
    const std::string kernel = "extern \"C\" __global__ void k(float* x) { x[0] = 1; }\n";
    const std::string header = "#define SCALE 2\n";
    fs::create_directories(dir.path() / "include");
    write_file(dir.path() / "k.hip", reinterpret_cast<const std::uint8_t*>(kernel.data()),
               kernel.size());
    write_file(dir.path() / "include" / "scale.h",
               reinterpret_cast<const std::uint8_t*>(header.data()), header.size());
    return true;
  }();
  (void)ready;
  return dir;
}

}  // namespace

// The whole input is the manifest text. A bad manifest must be an InputError
// (exit 2 with a message); any other exception reaching the caller is a crash.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const std::vector<hipacm::cli::KernelInput> kernels =
        hipacm::cli::read_manifest_text(text, manifest_dir().path(), "manifest.json");
    for (const hipacm::cli::KernelInput& kernel : kernels)
      if (kernel.source_name.empty()) invariant_broken("a kernel was read without a source name");
  } catch (const hipacm::cli::InputError& e) {
    if (std::string(e.what()).empty()) invariant_broken("a bad manifest got no message");
  }
  return 0;
}
