// SPDX-License-Identifier: MIT
// progress.cpp - draws warmup progress: count, rate and ETA, as a bar or as plain lines.
#include "tools/warmup/progress.h"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace hipacm::cli {
namespace {

constexpr auto kBarInterval = std::chrono::milliseconds(100);
constexpr auto kLineInterval = std::chrono::seconds(1);
constexpr std::size_t kBarWidth = 30;
constexpr std::size_t kLineStepPercent = 10;

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const long total = std::lround(seconds);
  if (total < 60) return fmt::format("{}s", total);
  return fmt::format("{}m{:02}s", total / 60, total % 60);
}

}  // namespace

ProgressStyle choose_progress_style(std::FILE* stream, bool quiet) {
  if (quiet) return ProgressStyle::kNone;
  return ::isatty(::fileno(stream)) ? ProgressStyle::kBar : ProgressStyle::kLines;
}

Progress::Progress(std::FILE* stream, ProgressStyle style, std::size_t total)
    : stream_(stream), style_(style), total_(total) {}

std::string Progress::status_text() const {
  const double elapsed = std::chrono::duration<double>(Clock::now() - started_).count();
  const double rate = elapsed > 0 ? static_cast<double>(done_) / elapsed : 0.0;
  const std::string eta =
      done_ >= total_ ? "done" : (rate > 0 ? format_duration((total_ - done_) / rate) : "?");
  std::string text = fmt::format("{}/{} kernels  {:.1f}/s  elapsed {}  ETA {}", done_, total_, rate,
                                 format_duration(elapsed), eta);
  if (failed_ > 0) text += fmt::format("  {} failed", failed_);
  if (!label_.empty()) text += "  [" + label_ + "]";
  return text;
}

void Progress::draw_bar() {
  const std::size_t filled = total_ == 0 ? kBarWidth : done_ * kBarWidth / total_;
  // \r and clear-to-end-of-line redraw in place; a shorter line leaves no residue.
  fmt::print(stream_, "\r[{}{}] {}\x1b[K", std::string(filled, '#'),
             std::string(kBarWidth - filled, '.'), status_text());
  std::fflush(stream_);
}

void Progress::draw_line() {
  fmt::print(stream_, "hipacm: warmup {}\n", status_text());
  std::fflush(stream_);
}

void Progress::update(std::size_t done, std::size_t failed, const std::string& label) {
  done_ = std::min(done, total_);
  failed_ = failed;
  label_ = label;
  if (style_ == ProgressStyle::kNone) return;
  const auto now = Clock::now();
  // A bar also ticks while nothing finishes, so its elapsed time and ETA stay live.
  const bool idle_tick = style_ == ProgressStyle::kBar && now - last_draw_ >= kLineInterval;
  if (done_ == last_drawn_done_ && !idle_tick) return;
  if (style_ == ProgressStyle::kBar) {
    if (now - last_draw_ < kBarInterval && done_ < total_) return;
    draw_bar();
  } else {
    const auto step = [&](std::size_t n) {
      return total_ == 0 ? 0 : n * 100 / total_ / kLineStepPercent;
    };
    const bool new_step =
        last_drawn_done_ == static_cast<std::size_t>(-1) || step(done_) != step(last_drawn_done_);
    if (now - last_draw_ < kLineInterval && !new_step) return;
    draw_line();
  }
  last_draw_ = now;
  last_drawn_done_ = done_;
}

void Progress::finish() {
  if (finished_ || style_ == ProgressStyle::kNone) return;
  finished_ = true;
  if (style_ == ProgressStyle::kBar) {
    draw_bar();
    fmt::print(stream_, "\n");
    std::fflush(stream_);
  } else if (last_drawn_done_ != done_) {
    draw_line();
  }
}

}  // namespace hipacm::cli
