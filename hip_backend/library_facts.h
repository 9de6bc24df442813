// SPDX-License-Identifier: MIT
// library_facts.h - facts read from a shared library (a version, a target list), remembered
// across processes while nothing that decides which library file dlopen picks has changed.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hipacm::backend {

/// Durable key/value storage for remembered facts. The plugin keeps them in the
/// kernel cache's database. Implementations swallow their own failures: a fact
/// that cannot be recalled is read from the library again.
class LibraryFactMemo {
 public:
  virtual ~LibraryFactMemo() = default;
  virtual std::optional<std::string> recall(const std::string& key) noexcept = 0;
  virtual void remember(const std::string& key, const std::string& value) noexcept = 0;
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
///    inode and modification time, /etc/ld.so.cache's identity, and this
///    code's own file;
///  - each recorded library's path still resolving to the recorded file, with
///    the same device, inode, size and modification time.
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
