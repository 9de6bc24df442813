// SPDX-License-Identifier: MIT
// progress.h - warmup progress on stderr: a redrawn bar on a terminal, periodic lines otherwise.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>

namespace hipacm::cli {

enum class ProgressStyle { kBar, kLines, kNone };

/// kBar when `stream` is a terminal, else kLines; kNone when `quiet`.
ProgressStyle choose_progress_style(std::FILE* stream, bool quiet);

class Progress {
 public:
  Progress(std::FILE* stream, ProgressStyle style, std::size_t total);
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// `done` of `total` have finished, `failed` of them unsuccessfully; `label`
  /// names the current step (the arch). Draws at most every 100 ms (bar) or
  /// once a second or every 10% (lines), so it may be called often.
  void update(std::size_t done, std::size_t failed, const std::string& label);
  /// The final state, always drawn; ends the bar's line.
  void finish();

 private:
  using Clock = std::chrono::steady_clock;
  std::string status_text() const;
  void draw_bar();
  void draw_line();

  std::FILE* stream_;
  ProgressStyle style_;
  std::size_t total_;
  std::size_t done_ = 0;
  std::size_t failed_ = 0;
  std::string label_;
  Clock::time_point started_ = Clock::now();
  Clock::time_point last_draw_{};
  std::size_t last_drawn_done_ = static_cast<std::size_t>(-1);
  bool finished_ = false;
};

}  // namespace hipacm::cli
