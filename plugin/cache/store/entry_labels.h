// SPDX-License-Identifier: MIT
// entry_labels.h - what a cached compile and a stored failure are both labelled with, and its
// bound.
#pragma once

#include <cstddef>
#include <string>

namespace hipacm::cache {

/// The most bytes of an arch, source name, backend or version string that an
/// entry or a stored failure may hold: short in every real one.
inline constexpr std::size_t kMaxLabelBytes = 4096;

/// The key and the labels an entry (EntryInfo) and a stored failure (StoredFailure) both carry,
/// in the column order both tables and both readers use: one definition, so the two cannot drift.
struct EntryLabels {
  std::string key;
  std::string arch;
  std::string source_name;
  std::string backend;
  std::string compiler_version;
  std::string plugin_version;
};

/// Calls `fn(name, label)` for each label of `labels` (an EntryLabels, const or not), in column
/// order, under the names the tables, `hipacm cache list --json` and the cluster messages use:
/// one list for every writer and reader of them.
template <typename Labels, typename Fn>
void for_each_label(Labels& labels, Fn&& fn) {
  fn("key", labels.key);
  fn("arch", labels.arch);
  fn("source_name", labels.source_name);
  fn("backend", labels.backend);
  fn("compiler_version", labels.compiler_version);
  fn("plugin_version", labels.plugin_version);
}

}  // namespace hipacm::cache
