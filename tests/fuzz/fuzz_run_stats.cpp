// SPDX-License-Identifier: MIT
// fuzz_run_stats.cpp - fuzz target: the `hipacm run --stats` file intercepted processes append to.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tests/fuzz/fuzz_input.h"
#include "tools/run/run_stats.h"

namespace {

using hipacm::fuzz::invariant_broken;

std::size_t lines_in(std::string_view text) {
  std::size_t lines = 0;
  for (std::size_t at = 0; at < text.size(); ++lines) {
    const std::size_t end = text.find('\n', at);
    at = end == std::string_view::npos ? text.size() : end + 1;
  }
  return lines;
}

bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

}  // namespace

// The whole input is the stats file's text, written by processes hipacm does not control.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const hipacm::cli::RunStats stats = hipacm::cli::tally_run_stats(text);
  // Each line is a record of one event or unreadable, or blank and not counted.
  if (stats.compiles() + stats.unreadable > lines_in(text))
    invariant_broken("the stats count more records than the file has lines");
  std::size_t reasons = 0;
  for (const auto& [reason, n] : stats.passthrough_reasons) {
    if (reason.empty() || n == 0) invariant_broken("a pass-through reason is empty or counted 0");
    reasons += n;
  }
  if (reasons != stats.passed_through)
    invariant_broken("the pass-through reasons do not add up to the passed-through compiles");

  const std::string line = hipacm::cli::summary_line(stats);
  // The summary is one printable line, whatever the program's processes wrote: the reasons are
  // cut to 64 bytes and escaped (at most 4 characters a byte), and at most 8 items are listed.
  if (line.rfind("hipacm run: ", 0) != 0)
    invariant_broken("the summary line does not start as documented: " + line);
  for (const char c : line)
    if (is_control(static_cast<unsigned char>(c)))
      invariant_broken("a control character in the summary line");
  if (line.size() > 300 + 8 * (4 * 64 + 48))
    invariant_broken("the summary line is longer than its bound");
  return 0;
}
