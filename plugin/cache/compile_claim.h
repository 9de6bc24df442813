// SPDX-License-Identifier: MIT
// compile_claim.h - one compile per kernel per machine: a claim on a cache key that every process
// sharing the cache honours, held while the compiler runs and the result is stored.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "support/files/file_lock.h"

namespace hipacm::cache {

/// A claim on one cache key among every thread and process that uses the same cache database.
/// It is an open-file-description lock (F_OFD_SETLK) on one byte of `<database>.claims`, at an
/// offset taken from the key, so:
///   - the kernel drops it when its holder dies, however it dies: a crashed or killed process
///     never keeps others waiting;
///   - no daemon, no lease rows, nothing to clean up;
///   - two threads of one process exclude each other too (each claim opens its own description).
/// Its holder compiles and stores the result; a process that finds the key claimed waits, then
/// looks the key up again and serves the stored result as a cache hit.
///
/// Claims only ever save work. Where one cannot be taken (a file system without OFD locks, an
/// unwritable directory, a wait past `max_wait`), the caller compiles as if it held it: the
/// result is the same, only the work is repeated.
class CompileClaim {
 public:
  /// Claims `key` (hex, as the cache writes keys) in the claim file beside `database`, waiting
  /// while another holder has it, for at most `max_wait`. Never throws.
  static CompileClaim acquire(const std::string& database, const std::string& key,
                              std::chrono::milliseconds max_wait) noexcept;

  CompileClaim() = default;
  CompileClaim(CompileClaim&&) noexcept = default;
  /// Moving over a held claim releases that one first.
  CompileClaim& operator=(CompileClaim&&) noexcept = default;
  CompileClaim(const CompileClaim&) = delete;
  CompileClaim& operator=(const CompileClaim&) = delete;
  /// Releases the claim: explicitly, so a fork()ed child that inherited the descriptor does not
  /// keep it (FileLock's unlock).
  ~CompileClaim() = default;

  /// True while this object holds the claim.
  bool held() const noexcept { return lock_.held(); }
  /// How long acquire() waited for another holder (zero when the key was free).
  std::chrono::milliseconds waited() const noexcept { return waited_; }

  /// The claim file of the cache database `database`.
  static std::string claim_file(const std::string& database);
  /// The byte that stands for `key` in the claim file.
  static std::int64_t offset_of(const std::string& key) noexcept;

 private:
  backend::FileLock lock_;  ///< owns its own descriptor: OFD locks belong to descriptions
  std::chrono::milliseconds waited_{0};
};

}  // namespace hipacm::cache
