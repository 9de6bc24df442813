// SPDX-License-Identifier: MIT
// bench_args.h - walks a benchmark's "--option [value]" arguments one at a time.
#pragma once

#include <stdexcept>
#include <string>
#include <type_traits>

namespace hipacm::bench {

class ArgReader {
 public:
  ArgReader(int argc, char** argv) : argc_(argc), argv_(argv) {}

  /// Moves to the next argument; false past the last one.
  bool next() {
    if (++at_ >= argc_) return false;
    option_ = argv_[at_];
    return true;
  }
  /// The argument `next` moved to.
  const std::string& option() const { return option_; }
  /// Consumes the argument after option(). Throws std::runtime_error("<option> needs a value")
  /// when there is none.
  std::string value() {
    if (at_ + 1 >= argc_) throw std::runtime_error(option_ + " needs a value");
    return argv_[++at_];
  }

  /// When option() is `name`: consumes its value into *out (a std::string as it is, an int
  /// through std::stoi, another integer through std::stoul) and returns true.
  template <class T>
  bool take(const char* name, T* out) {
    if (option_ != name) return false;
    const std::string text = value();
    if constexpr (std::is_same_v<T, std::string>)
      *out = text;
    else if constexpr (std::is_same_v<T, int>)
      *out = std::stoi(text);
    else
      *out = static_cast<T>(std::stoul(text));
    return true;
  }
  /// When option() is `name`: sets *out to `to` and returns true.
  bool flag(const char* name, bool* out, bool to = true) {
    if (option_ != name) return false;
    *out = to;
    return true;
  }

 private:
  int argc_;
  char** argv_;
  int at_ = 0;
  std::string option_;
};

}  // namespace hipacm::bench
