// SPDX-License-Identifier: MIT
// fuzz_request_reader.cpp - fuzz target: the C ABI's validation of a caller's hipacm_request.
#include <hipacm/hipacm.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "plugin/abi/request_reader.h"
#include "support/status_error.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

using hipacm::fuzz::FuzzInput;
using hipacm::fuzz::invariant_broken;

constexpr std::size_t kListLimit = 65536;  // the reader's documented entry limit
constexpr std::size_t kMaxEntriesBuilt = 64;

// A caller's struct followed by room for fields of later versions, so that
// any struct_size up to sizeof(RequestBuffer) describes memory that exists.
struct RequestBuffer {
  hipacm_request request{};
  unsigned char later_fields[512]{};
};

// One string array as a caller passes it. The pointers always point at live
// memory: a count that lies is always above the reader's limit, so the reader
// must refuse it before reading any entry past the real ones.
struct StringList {
  std::vector<std::string> storage;
  std::vector<const char*> pointers;
  std::size_t declared = 0;
  bool null_array = false;

  void read(FuzzInput& in, std::size_t entries) {
    const std::uint8_t flags = in.u8();
    storage.clear();
    for (std::size_t i = 0; i < entries; ++i) storage.push_back(in.str());
    pointers.clear();
    for (const std::string& s : storage) pointers.push_back(s.c_str());
    if ((flags & 1) != 0 && !pointers.empty()) pointers[in.u8() % pointers.size()] = nullptr;
    null_array = (flags & 2) != 0;
    declared = pointers.size();
    if ((flags & 4) != 0) declared = kListLimit + 1 + (in.u64() >> 1);
  }
  const char* const* array() const { return null_array ? nullptr : pointers.data(); }
};

const char* optional_string(bool present, const std::string& s) {
  return present ? s.c_str() : nullptr;
}

// A name that the compiler writes below its temp directory must stay there.
bool stays_inside(std::string_view name) {
  if (name.empty() || name.front() == '/') return false;
  std::size_t start = 0;
  while (start <= name.size()) {
    const std::size_t end = std::min(name.find('/', start), name.size());
    if (name.substr(start, end - start) == "..") return false;
    start = end + 1;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzInput in(data, size);
  RequestBuffer buffer;
  hipacm_request& req = buffer.request;
  const std::uint16_t size_choice = in.u16();
  req.struct_size = size_choice == 0 ? sizeof(hipacm_request) : size_choice % sizeof(buffer);

  const std::uint8_t present = in.u8();
  const std::string key = in.str(), source = in.str(), source_name = in.str();
  req.key = optional_string(present & 1, key);
  req.source = optional_string(present & 2, source);
  req.source_name = optional_string(present & 4, source_name);

  const std::size_t num_options = in.u8() % kMaxEntriesBuilt;
  const std::size_t num_headers = in.u8() % kMaxEntriesBuilt;
  const std::size_t num_names = in.u8() % kMaxEntriesBuilt;
  StringList options, header_sources, header_names, name_expressions;
  options.read(in, num_options);
  header_sources.read(in, num_headers);
  header_names.read(in, num_headers);
  name_expressions.read(in, num_names);

  req.options = options.array();
  req.num_options = options.declared;
  req.header_sources = header_sources.array();
  req.header_names = header_names.array();
  // Both header arrays have num_headers live entries; one count covers both.
  req.num_headers = std::max(header_sources.declared, header_names.declared);
  req.name_expressions = name_expressions.array();
  req.num_name_expressions = name_expressions.declared;

  hipacm::Submission submission;
  try {
    submission = hipacm::read_request(&req, "gfx90a");
  } catch (const hipacm::StatusError& e) {
    if (e.status() != HIPACM_ERROR_INVALID_ARGUMENT && e.status() != HIPACM_ERROR_ABI_MISMATCH)
      invariant_broken(std::string("a bad request got an unexpected status: ") + e.what());
    if (std::string_view(e.what()).empty()) invariant_broken("a bad request got no message");
    return 0;
  }

  const hipacm::backend::CompileRequest& r = submission.request;
  if (r.source.empty() || submission.key.empty())
    invariant_broken("a request without source or key was accepted");
  if (r.options.size() != req.num_options || r.headers.size() != req.num_headers ||
      r.name_expressions.size() != req.num_name_expressions)
    invariant_broken("an accepted request lost or invented list entries");
  for (const auto& [name, contents] : r.headers)
    if (!stays_inside(name)) invariant_broken("header name '" + name + "' was accepted");
  if (req.source_name != nullptr && !stays_inside(r.source_name))
    invariant_broken("source name '" + r.source_name + "' was accepted");
  return 0;
}
