// SPDX-License-Identifier: MIT
// runtime_fact_memo.h - library facts remembered in the user's runtime directory, for processes
// that run without the kernel cache and so have no database to keep them in.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "hip_backend/library_facts.h"

namespace hipacm::backend {

/// The backend of the facts store (LibraryFactMemo) of one small file per fact in `<runtime
/// dir>/facts/`, named by the SHA-256 of the fact's key. Why: a process with the cache off still
/// validates its arch at mode enter, and without a memo that loads the compiler library into the
/// host (15-30 ms here) even when only workers will compile.
///
/// Nothing read back is trusted: the directory must pass make_runtime_directory, a file must be
/// a regular file of this user no larger than kMaxFactFileBytes, and its header must name the
/// whole key it was written for. What a file says is checked again by recall_library_fact and by
/// each fact's own parser. Writes go to a temporary file renamed into place, so a reader sees a
/// whole record or none. Failures are swallowed (FactMemoBackend): a fact not recalled is read
/// from the library.
class RuntimeFactMemo final : public FactMemoBackend {
 public:
  static constexpr std::size_t kMaxFactFileBytes = 1 << 20;

  explicit RuntimeFactMemo(std::string runtime_dir);

  /// The file that holds `key`'s fact.
  std::string path_for(const std::string& key) const;

 protected:
  std::optional<std::string> load(const std::string& key) override;
  void store(const std::string& key, const std::string& value) override;

 private:
  std::string runtime_dir_;
  std::string facts_dir_;
};

/// A fact file's bytes: "hipacm-fact-1 <key bytes>\n<key><value>". The key is stored whole, so a
/// file is only ever read back for the key it was written for.
std::string encode_runtime_fact(const std::string& key, const std::string& value);
/// The value of a fact file written for `key`; nullopt for anything else (another key, a torn or
/// malformed record).
std::optional<std::string> decode_runtime_fact(std::string_view record, const std::string& key);

/// A RuntimeFactMemo in runtime_dir_from_environment(): the backend for processes without a
/// cache database to keep facts in (see plugin/cache/library_fact_memo.h, fact_memo_for).
std::shared_ptr<LibraryFactMemo> runtime_fact_memo();

}  // namespace hipacm::backend
