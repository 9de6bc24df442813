// SPDX-License-Identifier: MIT
// scoped_env.h - ScopedEnv: one environment variable set (or unset) for a scope, for every suite.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

namespace hipacm::test {

/// Sets (or, with nullopt, unsets) an environment variable for a scope and puts the old value
/// back. Only for moments when no other test thread runs: setenv is not thread-safe.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, std::optional<std::string> value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str())) old_ = old;
    if (value) {
      ::setenv(name_.c_str(), value->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace hipacm::test
