// SPDX-License-Identifier: MIT
// fuzz_record_reader.cpp - fuzz target: the CLI's reader of $HIPACM_RECORD files (JSON Lines).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "plugin/record/request_recorder.h"
#include "tests/fuzz/fuzz_input.h"
#include "tools/common/exit_codes.h"
#include "tools/input/record_reader.h"

namespace {

using hipacm::cli::KernelInput;
using hipacm::fuzz::invariant_broken;

hipacm::backend::CompileRequest request_of(const KernelInput& kernel) {
  hipacm::backend::CompileRequest request;
  request.source = kernel.source;
  request.source_name = kernel.source_name;
  request.options = kernel.options;
  request.headers = kernel.headers;
  request.name_expressions = kernel.name_expressions;
  request.arch = kernel.arch;
  return request;
}

// What the reader accepted, the plugin's recorder writes again, and that line reads back as the
// same request: replaying a record compiles exactly what was recorded.
void check_round_trip(const KernelInput& kernel) {
  const std::string line = hipacm::record_line(request_of(kernel));
  std::vector<KernelInput> again;
  try {
    again = hipacm::cli::read_record_text(line, "again.jsonl");
  } catch (const hipacm::cli::InputError& e) {
    invariant_broken(std::string("a recorded line of an accepted record is refused: ") + e.what());
  }
  if (again.size() != 1 || !again.front().same_request(kernel) || again.front().arch != kernel.arch)
    invariant_broken("an accepted record does not survive being recorded again");
}

}  // namespace

// The whole input is the record file's text. A bad record must be an InputError (exit 2 with a
// message that names the file); any other exception reaching the caller is a crash.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const std::vector<KernelInput> kernels = hipacm::cli::read_record_text(text, "fuzz.jsonl");
    if (kernels.empty()) invariant_broken("a record file was read as no kernels without an error");
    for (const KernelInput& kernel : kernels) {
      if (kernel.path.rfind("fuzz.jsonl:", 0) != 0)
        invariant_broken("a recorded kernel's path does not name its file and line");
      if (kernel.source.find('\0') != std::string::npos ||
          kernel.source_name.find('\0') != std::string::npos)
        invariant_broken("a NUL character was accepted in a record");
      check_round_trip(kernel);
    }
  } catch (const hipacm::cli::InputError& e) {
    const std::string message = e.what();
    if (message.rfind("fuzz.jsonl", 0) != 0)
      invariant_broken("a refused record's message does not name the file: " + message);
  }
  return 0;
}
