// SPDX-License-Identifier: MIT
// fuzz_compile_log_paths.cpp - fuzz target: comgr's paths in a worker's log, rewritten both ways.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hip_backend/rtc/compile_log_paths.h"
#include "hip_backend/source_name_policy.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

using hipacm::backend::ComgrShape;
using hipacm::fuzz::invariant_broken;

// Headers a request may give: enough for a header longer than another and one named like the
// source.
constexpr std::uint8_t kMaxHeaders = 4;
// The shortest comgr path the forward rewrite replaces by the source's name:
// "/comgr-" + one id character + "/input/CompileSource".
constexpr std::size_t kShortestMainSourcePath = 28;
// The most a name put back grows: ROCm 5's source (at least one byte) becomes
// DIR + "/input/CompileSource"; ROCm 6's DIR + "/input/" + NAME, a header DIR + "/include/" + NAME.
constexpr std::size_t kMostAddedBeyondDirectory = 20;

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

// comgr's directory as program_comgr_directory documents it: ".../comgr-" then, for ROCm 7,
// "PID-N-", then six lowercase hex digits.
void check_directory(const std::string& dir, ComgrShape shape, unsigned counter) {
  const std::size_t comgr = dir.rfind("comgr-");
  if (comgr == std::string::npos || (comgr != 0 && dir[comgr - 1] != '/'))
    invariant_broken("a program's comgr directory is not named comgr-...: " + dir);
  std::string expected_id;
  if (shape == ComgrShape::kRocm7)
    expected_id = std::to_string(getpid()) + "-" + std::to_string(counter) + "-";
  const std::string id = dir.substr(comgr + 6);
  if (id.size() != expected_id.size() + 6 || id.compare(0, expected_id.size(), expected_id) != 0)
    invariant_broken("a program's comgr directory has the wrong id: " + dir);
  for (std::size_t i = expected_id.size(); i < id.size(); ++i)
    if (!is_hex(id[i])) invariant_broken("a comgr directory's random part is not hex: " + dir);
}

// Whether the forward rewrite reads a path starting at `dir` whole, as comgr's: absolute, with
// none of the characters that end a path in a diagnostic and no ':' (a TMPDIR of ours or the
// test's usually; an odd one makes no comgr path the forward rewrite could read back).
bool readable_directory(std::string_view dir) {
  return !dir.empty() && dir.front() == '/' && dir.find_first_of(" \t\n\r\"'(<`:") == dir.npos;
}

bool names_allowed(std::string_view source_name, const std::vector<std::string>& headers) {
  if (!hipacm::backend::source_name_allowed(source_name)) return false;
  for (const std::string& header : headers)
    if (!hipacm::backend::source_name_allowed(header)) return false;
  return true;
}

void check_shape(std::string_view log, const std::string& source_name,
                 const std::vector<std::string>& headers, ComgrShape shape, unsigned counter,
                 bool allowed) {
  const std::string dir = hipacm::backend::program_comgr_directory(shape, counter);
  check_directory(dir, shape, counter);
  const std::string back =
      hipacm::backend::with_comgr_file_names(log, source_name, headers, dir, shape);
  // Every name put back is at least one byte followed by ":LINE", so at most a third of the log's
  // bytes start one, and each grows by at most the directory and kMostAddedBeyondDirectory.
  if (back.size() > log.size() + (log.size() / 3) * (dir.size() + kMostAddedBeyondDirectory))
    invariant_broken("with_comgr_file_names grew a log beyond its bound");
  // The documented inverse: a log in which the forward rewrite finds no comgr path (what
  // hipacm's compile stack hands back) is given back by the forward rewrite of its comgr paths,
  // for names a request may have (source_name_allowed) and a directory read as one path.
  const std::string again = hipacm::backend::with_request_file_names(back, source_name);
  if (allowed && readable_directory(dir) &&
      hipacm::backend::with_request_file_names(log, source_name) == log && again != log)
    invariant_broken(
        "the request's names did not come back from the comgr paths put in their place");
}

}  // namespace

// Layout: the header count, ROCm 7's directory counter, a release string, the source name, the
// headers' names, then the log (the rest of the input).
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  hipacm::fuzz::FuzzInput in(data, size);
  const std::uint8_t header_count = in.u8() % (kMaxHeaders + 1);
  const unsigned counter = in.u32();
  const std::string release = in.str();
  const std::string source_name = in.str();
  std::vector<std::string> headers;
  for (std::uint8_t i = 0; i < header_count; ++i) headers.push_back(in.str());
  const std::vector<std::uint8_t> rest = in.rest();
  const std::string log(rest.begin(), rest.end());

  const std::string forward = hipacm::backend::with_request_file_names(log, source_name);
  // Each replacement takes out a comgr path of at least kShortestMainSourcePath bytes (or a
  // directory, kept name after it) and puts in at most the source's name.
  if (forward.size() > log.size() + (log.size() / kShortestMainSourcePath) * source_name.size())
    invariant_broken("with_request_file_names grew a log beyond its bound");

  ComgrShape released{};
  if (hipacm::backend::comgr_shape_of_release(release, &released)) {
    std::string_view major = release;
    if (major.substr(0, 5) == "ROCm ") major.remove_prefix(5);
    major = major.substr(0, major.find('.'));
    const char* expected = released == ComgrShape::kRocm5   ? "5"
                           : released == ComgrShape::kRocm6 ? "6"
                                                            : "7";
    if (major != expected) invariant_broken("a release was given another release's comgr shape");
  }

  const bool allowed = names_allowed(source_name, headers);
  for (const ComgrShape shape : {ComgrShape::kRocm5, ComgrShape::kRocm6, ComgrShape::kRocm7})
    check_shape(log, source_name, headers, shape, counter, allowed);
  return 0;
}
