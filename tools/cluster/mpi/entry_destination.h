// SPDX-License-Identifier: MIT
// entry_destination.h - where received entries go: the rank's cache or --gather-to-root's.
#pragma once

#include <memory>
#include <string>

#include "plugin/cache/cache_admin.h"
#include "tools/cluster/cluster_messages.h"
#include "tools/warmup/warmup_job.h"

namespace hipacm::cli::cluster_steps {

/// --gather-to-root FILE, checked on rank 0 before anything compiles: FILE must not exist and its
/// directory must (InputError otherwise; nothing is created).
void check_gather_to_root_file(const std::string& file);

/// The directory that --gather-to-root FILE's parts are staged in before they become FILE: a new
/// one beside FILE, made by mkdtemp (a name no one could know in advance, created 0700, never an
/// existing directory), so nothing another user planted there can end up in the export. Removed
/// with everything in it when destroyed.
class StagingDir {
 public:
  explicit StagingDir(const std::string& file);
  ~StagingDir();
  StagingDir(const StagingDir&) = delete;
  StagingDir& operator=(const StagingDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// Where received entries go: this rank's cache, or with --gather-to-root rank 0's staging
/// cache, which becomes the export file.
class Destination {
 public:
  Destination(const WarmupJob& job, int rank);
  Destination(const Destination&) = delete;
  Destination& operator=(const Destination&) = delete;

  cache::CacheAdmin& admin() { return admin_; }

 private:
  std::unique_ptr<StagingDir> staging_;  // declared first: removed after the database is closed
  cache::CacheAdmin admin_;
};

/// Stores `got` through the cache's import path (validated as `hipacm cache import` is) and
/// counts it in `report` as received, a duplicate, or refused with the reason.
void store_received(RankReport* report, cache::CacheAdmin& admin, EntryForItem&& got,
                    const std::string& arch);

}  // namespace hipacm::cli::cluster_steps
