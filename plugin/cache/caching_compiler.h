// SPDX-License-Identifier: MIT
// caching_compiler.h - a compile step that serves code objects from the persistent cache.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "hip_backend/compiler.h"
#include "hip_backend/dispatch/compiler_identity.h"
#include "hip_backend/library_facts.h"
#include "plugin/cache/key/external_inputs.h"
#include "plugin/cache/remote/remote_settings.h"
#include "plugin/cache/store/counters.h"
#include "plugin/cache/store/entry.h"
#include "plugin/cache/store/location.h"

namespace hipacm::cache {

namespace remote {
class RemoteTier;
}

/// Wraps `inner`: a valid hit completes without calling it (from_cache set);
/// a miss compiles with it and, under READWRITE, stores the result. With
/// cache_failures, a compile that ends HIPACM_ERROR_COMPILATION is stored too
/// (READWRITE), and a later request under its key fails at once with the
/// stored log and message (READ or READWRITE). Every cache problem degrades
/// to compiling; none fails a compile.
///
/// With a remote tier (plugin/cache/remote), a local miss is looked up there too: a value that
/// verifies and answers the request is stored locally and served. A writer (read-write, with the
/// key) claims what it will compile, so that other machines wait for its entry rather than
/// compile it too, and publishes each entry it stores, in the background.
class CachingCompiler final : public backend::Compiler {
 public:
  CachingCompiler(std::shared_ptr<backend::Compiler> inner, CacheSettings settings,
                  std::optional<remote::RemoteSettings> remote = std::nullopt);
  /// Writes the hits this mode buffered (see CacheStore::touch), and lets the remote tier finish
  /// its queued writes (bounded).
  ~CachingCompiler() override;
  backend::CompileResult compile(const backend::CompileRequest& request) override {
    return compile_with_plan(request, nullptr);
  }
  /// A lookup only: true with *out filled on a valid hit.
  bool try_ready(const backend::CompileRequest& request,
                 backend::CompileResult* out) noexcept override;
  /// try_ready, leaving in *plan the request's key (or that it is not cached) and that it was
  /// looked up, so compile_with_plan neither keys nor scans it again.
  bool look_up(const backend::CompileRequest& request, backend::CompileResult* out,
               std::shared_ptr<const backend::CompilePlan>* plan) noexcept override;
  /// The miss path: with look_up's plan the request is keyed once; the store is looked in once
  /// more only where a claim is taken (see compile_with_plan in the .cpp).
  backend::CompileResult compile_with_plan(const backend::CompileRequest& request,
                                           const backend::CompilePlan* plan) override;
  void prestart(const std::string& arch, unsigned workers) noexcept override {
    inner_->prestart(arch, workers);
  }
  /// The key `request` has in the cache, or nullopt when it is not cached at all: what a tool
  /// that copies entries between caches checks an entry against.
  std::optional<std::string> cache_key_of(const backend::CompileRequest& request) noexcept;

 private:
  /// What names a cacheable request in the cache.
  struct Keyed {
    std::string key;
    backend::CompilerIdentity compiler;
    /// The digest of the files on disk the key covers; empty when it reads none.
    std::string inputs_digest;
    /// The scan that made it: what the compile's result is checked against before it is stored.
    ExternalInputs scanned;
  };
  /// look_up's plan: the key of one request, made once for its whole miss.
  struct KeyedRequest;
  /// nullopt when `request` must not be cached, with the counter that says why in *why_not.
  std::optional<Keyed> key_for(const backend::CompileRequest& request,
                               Counter* why_not = nullptr) noexcept;
  /// Keys `request` into *keyed (why not into *why_not), then serves what the store holds for
  /// it: true with *out filled.
  bool serve_ready(const backend::CompileRequest& request, backend::CompileResult* out,
                   std::optional<Keyed>* keyed, Counter* why_not) noexcept;
  /// A valid hit, else (with cache_failures) a valid stored failure: true with *out filled.
  bool serve_stored(const Keyed& keyed, const backend::CompileRequest& request,
                    backend::CompileResult* out);
  bool serve_hit(const Keyed& keyed, const backend::CompileRequest& request,
                 backend::CompileResult* out);
  bool serve_failure(const Keyed& keyed, const backend::CompileRequest& request,
                     backend::CompileResult* out);
  /// The remote tier's verified entry for the request (caching_compiler_remote.cpp), checked
  /// against it, stored locally (READWRITE) and served: true with *out filled. `waited`: it came
  /// after waiting for another machine's compile.
  bool serve_remote(const Keyed& keyed, const backend::CompileRequest& request,
                    backend::CompileResult* out);
  bool accept_remote(const Keyed& keyed, const backend::CompileRequest& request, CacheEntry entry,
                     bool waited, backend::CompileResult* out);
  /// Before a miss compiles: a writer claims the key in the remote tier (*claimed), anyone else
  /// waits, bounded, for another machine's claimed compile. True with *out filled when that
  /// compile's entry came and answers the request.
  bool claim_or_await_remote(const Keyed& keyed, const backend::CompileRequest& request,
                             bool* claimed, backend::CompileResult* out);
  /// Counts, logs and (READWRITE) records a lookup that found nothing usable.
  void record_miss(const Keyed& keyed, const backend::CompileRequest& request) noexcept;
  /// Records `counter` in the user layer's statistics (READWRITE only; advisory).
  void record(Counter counter) noexcept;
  /// Stores a compile's result in the user layer: the entry stored, else nullopt.
  std::optional<CacheEntry> store(const Keyed& keyed, const backend::CompileRequest& request,
                                  const backend::CompileResult& result);
  /// Puts a checked entry in the user layer (with its labels and times); false when it could not.
  bool put_local(const Keyed& keyed, const backend::CompileRequest& request, CacheEntry& entry);
  void store_failure(const Keyed& keyed, const backend::CompileRequest& request,
                     const backend::CompileResult& result);

  const std::shared_ptr<backend::Compiler> inner_;
  const CacheSettings settings_;
  // Supplies the compiler identity in keys without loading the compiler.
  const std::shared_ptr<backend::LibraryFactMemo> fact_memo_;
  /// The remote tier, when the mode has one.
  std::unique_ptr<remote::RemoteTier> remote_;
};

/// `inner` itself when the policy is OFF or no location exists, else a CachingCompiler around
/// it. A location that cannot be used is found out (and logged) at the first compile.
/// `remote`, when set, adds the remote tier beneath the local layers.
std::shared_ptr<backend::Compiler> with_persistent_cache(
    const CacheSettings& settings, std::optional<remote::RemoteSettings> remote,
    std::shared_ptr<backend::Compiler> inner);
/// The same without a remote tier.
inline std::shared_ptr<backend::Compiler> with_persistent_cache(
    const CacheSettings& settings, std::shared_ptr<backend::Compiler> inner) {
  return with_persistent_cache(settings, std::nullopt, std::move(inner));
}

}  // namespace hipacm::cache
