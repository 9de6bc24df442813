// SPDX-License-Identifier: MIT
// run_stats.cpp - the `hipacm run --stats` records: their private file, their tally, the summary.
#include "tools/run/run_stats.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "support/environment.h"
#include "tools/common/exit_codes.h"
#include "tools/common/terminal_text.h"
#include "tools/input/bounded_json.h"

namespace hipacm::cli {
namespace {

// A record is about 80 bytes; 64 MiB is far more compiles than any program makes, and bounds
// what a writer gone wrong can make this process hold.
constexpr std::size_t kMaxStatsBytes = std::size_t{64} << 20;
// The records come from the program's processes, which hipacm does not control: a reason is
// counted by at most this many of its bytes, printed through printable(), and the summary lists
// the most frequent reasons up to this many, then how many others there were.
constexpr std::size_t kMaxReasonBytes = 64;
constexpr std::size_t kMaxReasonsListed = 8;

// One record, or false when the line is not one.
bool tally_line(std::string_view line, RunStats& stats) {
  nlohmann::json record;
  try {
    record = parse_bounded_json(line, "stats record", "not a JSON record");
  } catch (const InputError&) {
    return false;
  }
  if (!record.is_object() || !record.contains("event") || !record["event"].is_string())
    return false;
  const std::string event = record["event"].get<std::string>();
  if (event == "hit") {
    ++stats.hits;
  } else if (event == "compiled") {
    ++stats.compiled;
  } else if (event == "failed") {
    ++stats.failed;
  } else if (event == "passthrough") {
    ++stats.passed_through;
    const auto reason = record.find("reason");
    const bool named =
        reason != record.end() && reason->is_string() && !reason->get<std::string>().empty();
    ++stats.passthrough_reasons[named ? printable(std::string_view(reason->get<std::string>())
                                                      .substr(0, kMaxReasonBytes))
                                      : "unknown"];
  } else {
    return false;
  }
  return true;
}

std::string count(std::size_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

}  // namespace

RunStats tally_run_stats(std::string_view text) {
  RunStats stats;
  while (!text.empty()) {
    const std::size_t end = std::min(text.find('\n'), text.size());
    const std::string_view line = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    if (!tally_line(line, stats)) ++stats.unreadable;
  }
  return stats;
}

std::string summary_line(const RunStats& stats) {
  std::string line = fmt::format("hipacm run: {}: {}, {} compiled, {} failed, {} passed through",
                                 count(stats.compiles(), "compile", "compiles"),
                                 count(stats.hits, "cache hit", "cache hits"), stats.compiled,
                                 stats.failed, stats.passed_through);
  if (!stats.passthrough_reasons.empty()) {
    std::vector<std::pair<std::string, std::size_t>> reasons(stats.passthrough_reasons.begin(),
                                                             stats.passthrough_reasons.end());
    // Most frequent first; ties in name order, so the line is the same for the same records.
    std::stable_sort(reasons.begin(), reasons.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    // At most kMaxReasonsListed items: the most frequent, and the rest as one.
    const std::size_t listed =
        reasons.size() > kMaxReasonsListed ? kMaxReasonsListed - 1 : reasons.size();
    std::string list;
    for (std::size_t i = 0; i < listed; ++i)
      list += fmt::format("{}{} x{}", i == 0 ? "" : ", ", reasons[i].first, reasons[i].second);
    if (listed < reasons.size()) {
      std::size_t rest = 0;
      for (std::size_t i = listed; i < reasons.size(); ++i) rest += reasons[i].second;
      list += fmt::format(", {} other reasons x{}", reasons.size() - listed, rest);
    }
    line += " (" + list + ")";
  }
  if (stats.unreadable > 0)
    line += fmt::format("; {} unreadable", count(stats.unreadable, "record", "records"));
  return line;
}

StatsFile::StatsFile() {
  std::string base = backend::environment_value("TMPDIR").value_or("/tmp");
  if (base.empty() || base.front() != '/') base = "/tmp";
  std::string pattern = (std::filesystem::path(base) / "hipacm-run-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr)
    throw std::runtime_error(
        fmt::format("cannot make a directory in {} for --stats: {}", base, std::strerror(errno)));
  directory_ = pattern;
  path_ = directory_ + "/stats.jsonl";
  const int fd = open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int error = errno;
    rmdir(directory_.c_str());
    throw std::runtime_error(
        fmt::format("cannot create {} for --stats: {}", path_, std::strerror(error)));
  }
  close(fd);
}

StatsFile::~StatsFile() {
  std::error_code ec;
  std::filesystem::remove_all(directory_, ec);
}

std::string StatsFile::read() const {
  std::ifstream in(path_, std::ios::binary);
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path_, ec);
  std::string text(ec ? 0 : std::min<std::uintmax_t>(size, kMaxStatsBytes), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

}  // namespace hipacm::cli
