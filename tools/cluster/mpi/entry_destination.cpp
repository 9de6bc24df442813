// SPDX-License-Identifier: MIT
// entry_destination.cpp - --gather-to-root's checks and staging, and storing one entry.
#include "tools/cluster/mpi/entry_destination.h"

#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "tools/cluster/mpi/cluster_steps.h"
#include "tools/common/exit_codes.h"
#include "tools/common/terminal_text.h"

namespace hipacm::cli::cluster_steps {

void check_gather_to_root_file(const std::string& file) {
  std::error_code ec;
  if (std::filesystem::symlink_status(file, ec).type() != std::filesystem::file_type::not_found)
    throw InputError(
        fmt::format("--gather-to-root {}: already exists; it names a new file", printable(file)));
  // The file's directory must be there already: a typo must not quietly make a directory
  // tree (nor a staging directory in it) somewhere unexpected.
  const std::filesystem::path parent = std::filesystem::path(file).parent_path();
  if (!parent.empty() && !std::filesystem::is_directory(parent, ec))
    throw InputError(
        fmt::format("--gather-to-root {}: {} is not an existing directory (it is "
                    "not created; make it first)",
                    printable(file), printable(parent.string())));
}

StagingDir::StagingDir(const std::string& file) {
  const std::filesystem::path target(file);
  const std::filesystem::path parent =
      target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
  std::string name = (parent / fmt::format(".{}.parts-XXXXXX", target.filename().string()));
  if (::mkdtemp(name.data()) == nullptr)
    throw std::runtime_error(
        fmt::format("--gather-to-root {}: cannot create a staging "
                    "directory in {}: {}",
                    printable(file), printable(parent.string()), std::strerror(errno)));
  path_ = name;
}

StagingDir::~StagingDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

Destination::Destination(const WarmupJob& job, int rank)
    : staging_(job.gather_to_root.empty() || rank != 0
                   ? nullptr
                   : std::make_unique<StagingDir>(job.gather_to_root)),
      admin_(cache::CacheAdmin::open(staging_ ? cache::CacheAdmin::path_in(staging_->path())
                                              : database_of(job.settings))) {}

void store_received(RankReport* report, cache::CacheAdmin& admin, EntryForItem&& got,
                    const std::string& arch) {
  const std::string key = got.entry.info.key;
  const Expected<cache::CacheAdmin::Imported> imported =
      admin.import_entry(std::move(got.entry), arch);
  if (!imported) {
    ++report->rejected_received;
    report->rejections.push_back(fmt::format("{}: {}", key, imported.failure().message));
    return;
  }
  switch (imported.value()) {
    case cache::CacheAdmin::Imported::kAccepted:
      ++report->entries_received;
      break;
    case cache::CacheAdmin::Imported::kDuplicate:
      ++report->duplicates_received;
      break;
  }
}

}  // namespace hipacm::cli::cluster_steps
