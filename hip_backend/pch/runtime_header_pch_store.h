// SPDX-License-Identifier: MIT
// runtime_header_pch_store.h - the runtime-header PCHs of this user's machine, one checked
// directory per key in the runtime directory, built by one process at a time.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "support/failure.h"
#include "support/files/unique_fd.h"
#include "support/settings.h"

namespace hipacm::backend {

/// `<runtime dir>/pch/`: `<key>/hiprtc_runtime.h.pch` for each PCH that was checked against a
/// plain compile, `<key>.refused` for each key whose PCH failed that check (never retried while
/// the runtime directory lives), and `<key>.lock`, which the one process that builds `<key>`
/// holds. Every process of the user shares it, so a PCH is built once per machine.
///
/// Nothing found here is trusted: the directories must pass make_runtime_directory, and a PCH is
/// used only as a regular file of this user (never a link) of at most kMaxRuntimeHeaderPchBytes
/// that begins like a PCH. Keys are 64 lowercase hex digits; anything else is refused.
class RuntimeHeaderPchStore {
 public:
  /// At most this many keys keep a PCH (about 2.2 MiB each); publishing one more removes the
  /// oldest.
  static constexpr std::size_t kMaxEntries = 32;

  explicit RuntimeHeaderPchStore(std::string root);

  /// `<runtime dir>/pch`.
  static RuntimeHeaderPchStore in_runtime_dir();

  /// The directory holding key's PCH, when it holds one that passes the checks.
  std::optional<std::string> ready_dir(const std::string& key) const;
  /// Whether key's PCH was refused.
  bool refused(const std::string& key) const;
  /// Removes key's PCH: it failed a compile that then passed without it.
  void forget(const std::string& key) const;
  /// Marks the key refused, with the reason in the marker for whoever looks.
  void refuse(const std::string& key, const std::string& reason) const;

  /// The right to build one key's PCH, held until destroyed; what it staged and did not publish
  /// goes with it.
  class Claim {
   public:
    Claim(Claim&& other) noexcept;
    Claim& operator=(Claim&&) = delete;
    Claim(const Claim&) = delete;
    ~Claim();

    /// Makes the claim's private staging directory (once), where the builder writes
    /// kRuntimeHeaderPchName and tries it; or why it cannot.
    Expected<void> make_staging_dir();
    const std::string& staging_dir() const { return staging_; }
    /// Moves the staged PCH, when it is plausible, into place for every process; a Failure says
    /// why it is not there.
    Expected<void> publish();
    /// Marks the key refused, with the reason in the marker for whoever looks.
    void refuse(const std::string& reason);

   private:
    friend class RuntimeHeaderPchStore;
    Claim(const RuntimeHeaderPchStore& store, std::string key, UniqueFd lock);

    /// A copy: a claim outlives the store object it came from.
    std::unique_ptr<const RuntimeHeaderPchStore> store_;
    std::string key_;
    UniqueFd lock_;
    std::string staging_;
  };

  /// The claim on `key`, or a Failure saying that another process holds it (it is building that
  /// PCH now) or that the store is unusable.
  Expected<Claim> claim(const std::string& key) const;

  const std::string& root() const { return root_; }

  /// What the store holds now, for `hipacm doctor`.
  struct Counts {
    std::size_t ready = 0;    ///< keys with a PCH that passes the checks
    std::size_t refused = 0;  ///< keys refused for good
  };
  Counts counts() const;

 private:
  /// Whether the runtime directory and the store's own directory are private to this user.
  Expected<void> usable() const;
  void evict_oldest_beyond(std::size_t keep) const;
  /// Removes staging directories that a killed builder left behind.
  void remove_stale_staging() const;

  std::string runtime_dir_;
  std::string root_;
};

/// HIPACM_HIPRTC_PCH: `on` (default), `off`, or `check` (every compile with a PCH is made
/// plainly too and the plain result returned; a difference refuses the key). The settings' own
/// type, so that the value needs no translation.
using RuntimeHeaderPchSetting = settings::HiprtcPch;
/// The setting; an unknown value reads as `on`, with *problem (may be null) saying so.
RuntimeHeaderPchSetting runtime_header_pch_setting(std::string* problem);

/// Whether `key` is 64 lowercase hex digits.
bool valid_runtime_header_pch_key(const std::string& key);

}  // namespace hipacm::backend
