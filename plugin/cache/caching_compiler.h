// caching_compiler.h - a compile step that serves code objects from the persistent cache.
#pragma once

#include <memory>
#include <string>

#include "hip_backend/compiler.h"
#include "hip_backend/compiler_identity.h"
#include "hip_backend/library_facts.h"
#include "plugin/cache/store/location.h"
#include "plugin/mode/mode_settings.h"

namespace hipacm::cache {

/// Where and how a mode uses the cache; resolved once at mode enter.
struct CacheSettings {
  Policy policy = Policy::kOff;
  std::string user_db;    ///< read-write layer's database; empty: none
  std::string system_db;  ///< read-only layer's database; empty: none
  std::int64_t max_bytes = 0;
};

/// Resolves the mode's policy and locations. Throws hipacm::StatusError
/// (INVALID_ARGUMENT) for a bad cache_policy or $HIPACM_CACHE.
CacheSettings resolve_cache_settings(const ModeSettings& settings);

/// Wraps `inner`: a valid hit completes without calling it (from_cache set);
/// a miss compiles with it and, under READWRITE, stores the result. Every
/// cache failure degrades to compiling; none fails a compile.
class CachingCompiler final : public backend::Compiler {
 public:
  CachingCompiler(std::shared_ptr<backend::Compiler> inner, CacheSettings settings);
  /// Writes the hits this mode buffered (see CacheStore::touch).
  ~CachingCompiler() override;
  backend::CompileResult compile(const backend::CompileRequest& request) override;
  /// A lookup only: true with *out filled on a valid hit.
  bool try_ready(const backend::CompileRequest& request,
                 backend::CompileResult* out) noexcept override;

 private:
  /// The key for `request`, or "" when it must not be cached; *inputs_digest
  /// receives the digest of the files on disk the key covers ("" for none).
  std::string key_for(const backend::CompileRequest& request, backend::CompilerIdentity* identity,
                      std::string* inputs_digest);
  bool serve_hit(const std::string& key, const std::string& inputs_digest,
                 const backend::CompileRequest& request, backend::CompileResult* out);
  void store(const std::string& key, bool reads_disk_headers,
             const backend::CompileRequest& request, const std::string& compiler_backend,
             const std::string& compiler_version, const backend::CompileResult& result);

  const std::shared_ptr<backend::Compiler> inner_;
  const CacheSettings settings_;
  // Supplies the compiler identity in keys without loading the compiler.
  const std::shared_ptr<backend::LibraryFactMemo> fact_memo_;
};

/// `inner` itself when the resolved policy is OFF or no location exists,
/// else a CachingCompiler around it. Throws like resolve_cache_settings.
std::shared_ptr<backend::Compiler> with_persistent_cache(const ModeSettings& settings,
                                                         std::shared_ptr<backend::Compiler> inner);

}  // namespace hipacm::cache
