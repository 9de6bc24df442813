// SPDX-License-Identifier: MIT
// progress.cpp - draws warmup progress: count, rate and ETA, as a bar or as plain lines.
#include "tools/warmup/progress.h"

#include "support/environment.h"

#include <fmt/core.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace hipacm::cli {
namespace {

constexpr auto kBarInterval = std::chrono::milliseconds(100);
constexpr auto kLineInterval = std::chrono::seconds(1);
constexpr std::size_t kMaxBarWidth = 30;
constexpr std::size_t kMinBarWidth = 5;
constexpr std::size_t kLineStepPercent = 10;
constexpr std::size_t kDefaultColumns = 80;
// Past this a width is not a terminal's: a broken $COLUMNS must not make huge lines.
constexpr std::size_t kMaxColumns = 1000;
constexpr const char* kRed = "\x1b[31m";
constexpr const char* kReset = "\x1b[0m";

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const long total = std::lround(seconds);
  if (total < 60) return fmt::format("{}s", total);
  return fmt::format("{}m{:02}s", total / 60, total % 60);
}

std::size_t columns_of(int fd) {
  winsize size{};
  if (::ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 0)
    return std::min<std::size_t>(size.ws_col, kMaxColumns);
  if (const auto text = backend::environment_value("COLUMNS")) {
    std::size_t columns = 0;
    const char* end = text->data() + text->size();
    const auto [ptr, ec] = std::from_chars(text->data(), end, columns);
    if (ec == std::errc() && ptr == end && columns > 0) return std::min(columns, kMaxColumns);
  }
  return kDefaultColumns;
}

bool env_set(const char* name) { return backend::environment_value(name).has_value(); }

}  // namespace

ProgressLook choose_progress_look(std::FILE* stream, bool quiet) {
  ProgressLook look;
  if (quiet) {
    look.style = ProgressStyle::kNone;
    return look;
  }
  const int fd = ::fileno(stream);
  const bool dumb = backend::environment_value("TERM") == std::optional<std::string>("dumb");
  look.style = ::isatty(fd) && !dumb ? ProgressStyle::kBar : ProgressStyle::kLines;
  // no-color.org: set and not empty turns colour off.
  look.color = look.style == ProgressStyle::kBar && !env_set("NO_COLOR");
  look.columns = columns_of(fd);
  return look;
}

Progress::Progress(std::FILE* stream, ProgressLook look, std::size_t total)
    : stream_(stream), look_(look), total_(total) {}

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
  // One column fewer than the terminal's: writing the last column wraps on many terminals, and a
  // wrapped line cannot be redrawn with \r.
  const std::size_t room = std::max<std::size_t>(look_.columns, 2) - 1;
  std::string status = status_text();
  std::string line;
  if (status.size() + 3 + kMinBarWidth <= room) {
    const std::size_t width = std::min(kMaxBarWidth, room - status.size() - 3);
    const std::size_t filled = total_ == 0 ? width : done_ * width / total_;
    line = fmt::format("[{}{}] {}", std::string(filled, '#'), std::string(width - filled, '.'),
                       status);
  } else {
    line = status.substr(0, room);
  }
  const std::size_t visible = line.size();
  // Spaces over what the last, longer line left, rather than a terminal control sequence.
  if (visible < last_bar_chars_) line.append(last_bar_chars_ - visible, ' ');
  last_bar_chars_ = visible;
  if (look_.color && failed_ > 0) {
    const std::string failed = fmt::format("{} failed", failed_);
    if (const auto at = line.find("  " + failed); at != std::string::npos)
      line.replace(at + 2, failed.size(), kRed + failed + kReset);
  }
  fmt::print(stream_, "\r{}", line);
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
  if (listener_) listener_(done_, failed_);
  if (look_.style == ProgressStyle::kNone) return;
  const auto now = Clock::now();
  // A bar also ticks while nothing finishes, so its elapsed time and ETA stay live.
  const bool idle_tick = look_.style == ProgressStyle::kBar && now - last_draw_ >= kLineInterval;
  if (done_ == last_drawn_done_ && !idle_tick) return;
  if (look_.style == ProgressStyle::kBar) {
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
  if (finished_ || look_.style == ProgressStyle::kNone) return;
  finished_ = true;
  if (look_.style == ProgressStyle::kBar) {
    draw_bar();
    fmt::print(stream_, "\n");
    std::fflush(stream_);
  } else if (last_drawn_done_ != done_) {
    draw_line();
  }
}

}  // namespace hipacm::cli
