// bench_args.h - walks a benchmark's "--option [value]" arguments one at a time.
#pragma once

#include <stdexcept>
#include <string>

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

 private:
  int argc_;
  char** argv_;
  int at_ = 0;
  std::string option_;
};

}  // namespace hipacm::bench
