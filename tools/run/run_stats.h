// SPDX-License-Identifier: MIT
// run_stats.h - `hipacm run --stats`: the private file the intercept library appends a line to for
// each compile, and the one summary line made from it.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

namespace hipacm::cli {

/// What the compiles of one `hipacm run` came to, from the intercept library's records: one JSON
/// object a line, {"pid":N,"event":"hit"|"compiled"|"failed"|"passthrough","reason":"..."}.
struct RunStats {
  std::size_t hits = 0;
  std::size_t compiled = 0;
  std::size_t failed = 0;
  std::size_t passed_through = 0;
  std::map<std::string, std::size_t> passthrough_reasons;  ///< reason -> count
  std::size_t unreadable = 0;  ///< lines that are not such a record (a write cut short)

  std::size_t compiles() const { return hits + compiled + failed + passed_through; }
};

/// Tallies the records in `text`, one a line.
RunStats tally_run_stats(std::string_view text);

/// "hipacm run: N compiles: H cache hits, C compiled, F failed, P passed through (reason xK, ...)",
/// the reasons most frequent first; without the parentheses when nothing passed through.
std::string summary_line(const RunStats& stats);

/// A file only this user can read, in a directory of its own under $TMPDIR (else /tmp), for the
/// intercept library's records; removed with its directory on destruction.
class StatsFile {
 public:
  /// Throws std::runtime_error when it cannot be made.
  StatsFile();
  ~StatsFile();
  StatsFile(const StatsFile&) = delete;
  StatsFile& operator=(const StatsFile&) = delete;

  const std::string& path() const { return path_; }
  /// What was written to it so far (at most a bounded amount: a runaway writer cannot fill memory).
  std::string read() const;

 private:
  std::string directory_;
  std::string path_;
};

}  // namespace hipacm::cli
