// SPDX-License-Identifier: MIT
// library_facts.h - facts read from a shared library (a version, a target list), remembered
// across processes while nothing that decides which library file dlopen picks has changed.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hipacm::backend {

/// The one store of remembered compiler facts: durable key/value storage that
/// recall_library_fact and remember_library_fact below read and write, whatever
/// keeps the values. Two backends serve processes, and one function picks which
/// (plugin/cache/library_fact_memo.h, fact_memo_for): the kernel cache's user
/// database (its library_facts table) when the cache reads it, else one file per
/// fact in the runtime directory (hip_backend/machine/runtime_fact_memo.h).
/// Neither fails anyone: a fact that cannot be recalled is read from the library
/// again, and one that cannot be remembered is read again next time.
class LibraryFactMemo {
 public:
  virtual ~LibraryFactMemo() = default;
  virtual std::optional<std::string> recall(const std::string& key) noexcept = 0;
  virtual void remember(const std::string& key, const std::string& value) noexcept = 0;
};

/// What every backend shares: its failures (an exception of any kind, out of
/// memory included) become "not remembered", and a store that may not be written
/// remembers nothing. A backend says only how it keeps a value.
class FactMemoBackend : public LibraryFactMemo {
 public:
  std::optional<std::string> recall(const std::string& key) noexcept final;
  void remember(const std::string& key, const std::string& value) noexcept final;

 protected:
  /// The value kept under `key`, nullopt when there is none (or none to trust); may throw.
  virtual std::optional<std::string> load(const std::string& key) = 0;
  /// Keeps `value` under `key`, or nothing where it cannot; may throw.
  virtual void store(const std::string& key, const std::string& value) = 0;
  /// Whether remember() stores at all (a read-only cache does not).
  virtual bool writable() const noexcept { return true; }
};

/// Why this exists: loading comgr (it carries LLVM) costs 50-100 ms, and
/// hipRTC's HIP runtime another 20 ms, in every process that needs only their
/// target list and version, such as a warm-up whose kernels are all cached.
///
/// Returns the payload of `fact` that an earlier process read from the library
/// dlopen picks among `candidates`, when that is provably the same file now:
///  - the same candidate names;
///  - the same search inputs: every directory dlopen would search from here
///    (LD_LIBRARY_PATH, RUNPATH, the system directories) with its device,
///    inode, modification and change time, /etc/ld.so.cache's identity, and this
///    code's own file;
///  - each recorded library's path still resolving to the recorded file, with
///    the same device, inode, size, modification and change time.
/// nullopt otherwise, with a null memo, or when a candidate is already loaded
/// in this process: dlopen would return that one, and reading it is cheap.
std::optional<std::string> recall_library_fact(LibraryFactMemo* memo, std::string_view fact,
                                               const std::vector<std::string>& candidates);

/// Records `payload`, read from the loaded libraries whose dlopen paths (from
/// dlinfo or the dynamic linker) are `library_paths`, for recall_library_fact,
/// which then checks every one of them. A null memo, no paths, or a file that
/// cannot be identified records nothing.
void remember_library_fact(LibraryFactMemo* memo, std::string_view fact,
                           const std::vector<std::string>& candidates,
                           const std::vector<std::string>& library_paths,
                           const std::string& payload);

/// The same for a fact read from one library.
inline void remember_library_fact(LibraryFactMemo* memo, std::string_view fact,
                                  const std::vector<std::string>& candidates,
                                  const std::string& library_path, const std::string& payload) {
  remember_library_fact(memo, fact, candidates, std::vector<std::string>{library_path}, payload);
}

}  // namespace hipacm::backend
