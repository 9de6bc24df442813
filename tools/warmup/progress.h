// SPDX-License-Identifier: MIT
// progress.h - warmup progress on stderr: a redrawn bar on a terminal, periodic lines otherwise.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>

namespace hipacm::cli {

enum class ProgressStyle { kBar, kLines, kNone };

/// How progress is drawn on a stream.
struct ProgressLook {
  ProgressStyle style = ProgressStyle::kLines;
  bool color = false;        ///< ANSI colours (a bar only, and never with $NO_COLOR set)
  std::size_t columns = 80;  ///< the terminal's width: a bar's line stays shorter
};

/// kNone when `quiet`; kBar when `stream` is a terminal whose $TERM is not "dumb", else kLines
/// (a dumb terminal cannot redraw a line in place). The width comes from the terminal
/// (TIOCGWINSZ), else $COLUMNS, else 80; colour is on for a bar unless $NO_COLOR is set.
ProgressLook choose_progress_look(std::FILE* stream, bool quiet);

class Progress {
 public:
  Progress(std::FILE* stream, ProgressLook look, std::size_t total);
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// `done` of `total` have finished, `failed` of them unsuccessfully; `label`
  /// names the current step (the arch). Draws at most every 100 ms (bar) or
  /// once a second or every 10% (lines), so it may be called often.
  void update(std::size_t done, std::size_t failed, const std::string& label);
  /// The final state, always drawn; ends the bar's line.
  void finish();
  /// Called with every update's counts, drawn or not: a distributed run forwards this run's
  /// counts to the rank that draws the whole job's.
  void set_listener(std::function<void(std::size_t done, std::size_t failed)> listener) {
    listener_ = std::move(listener);
  }

 private:
  using Clock = std::chrono::steady_clock;
  std::string status_text() const;
  void draw_bar();
  void draw_line();

  std::FILE* stream_;
  ProgressLook look_;
  std::size_t total_;
  std::size_t done_ = 0;
  std::size_t failed_ = 0;
  std::string label_;
  Clock::time_point started_ = Clock::now();
  Clock::time_point last_draw_{};
  std::size_t last_drawn_done_ = static_cast<std::size_t>(-1);
  std::size_t last_bar_chars_ = 0;
  bool finished_ = false;
  std::function<void(std::size_t, std::size_t)> listener_;
};

}  // namespace hipacm::cli
