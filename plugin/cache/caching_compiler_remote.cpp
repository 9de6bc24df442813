// SPDX-License-Identifier: MIT
// caching_compiler_remote.cpp - how the caching compiler takes an entry from the remote tier: the
// tier's verified value, checked against the request, stored locally and served.
#include "plugin/cache/caching_compiler.h"

#include <chrono>
#include <optional>

#include "plugin/cache/integrity.h"
#include "plugin/cache/remote/remote_tier.h"
#include "support/log.h"
#include "support/stats.h"

namespace hipacm::cache {

namespace {

using backend::LogLevel;

// How long a compile waits for another machine's claimed compile of the same kernel through the
// remote tier. Shorter than a local claim's: the claim's holder is out of sight, and a claim in a
// shared server may be forged (the tier then waits for no more claims in this mode).
constexpr std::chrono::milliseconds kMaxRemoteClaimWait{60000};

}  // namespace

bool CachingCompiler::serve_remote(const Keyed& keyed, const backend::CompileRequest& request,
                                   backend::CompileResult* out) {
  if (!remote_ || !remote_->serves()) return false;
  std::optional<CacheEntry> entry = remote_->fetch(keyed.key);
  return entry && accept_remote(keyed, request, std::move(*entry), false, out);
}

bool CachingCompiler::accept_remote(const Keyed& keyed, const backend::CompileRequest& request,
                                    CacheEntry entry, bool waited, backend::CompileResult* out) {
  // The same serve-time checks as an imported entry's: nothing the value says of itself is
  // trusted beyond its signature; the request decides what it must hold.
  if (const Expected<void> usable =
          validate_entry_for_request(entry, request, !keyed.inputs_digest.empty());
      !usable) {
    remote_->refuse(keyed.key);
    backend::count(backend::stats().remote_refused);
    backend::log(LogLevel::kWarning, "the remote cache's entry " + keyed.key + " does not answer " +
                                         request.source_name + " (" + usable.failure().message +
                                         "); compiling instead");
    return false;
  }
  if (settings_.policy == Policy::kReadWrite) {
    CacheEntry local = entry;
    put_local(keyed, request, local);
  }
  out->status = HIPACM_SUCCESS;
  out->error_message.clear();
  out->log = std::move(entry.log);
  out->code = std::move(entry.code);
  out->lowered_names = std::move(entry.lowered_names);
  out->from_cache = true;
  backend::count(backend::stats().remote_hits);
  if (waited) backend::count(backend::stats().remote_waits);
  backend::log(LogLevel::kDebug, "remote cache hit for " + request.source_name + " (key " +
                                     keyed.key +
                                     (waited ? ", after waiting for its compile)" : ")"));
  return true;
}

bool CachingCompiler::claim_or_await_remote(const Keyed& keyed,
                                            const backend::CompileRequest& request, bool* claimed,
                                            backend::CompileResult* out) {
  *claimed = false;
  if (!remote_ || !remote_->serves()) return false;
  // A writer claims the compile (or already did, in look_up).
  *claimed = settings_.policy == Policy::kReadWrite && remote_->claim(keyed.key);
  if (*claimed) return false;
  const std::chrono::milliseconds limit(settings_.compile_timeout_ms);
  const auto wait = limit.count() > 0 && limit < kMaxRemoteClaimWait ? limit : kMaxRemoteClaimWait;
  std::optional<CacheEntry> entry = remote_->await_other_compile(keyed.key, wait);
  return entry && accept_remote(keyed, request, std::move(*entry), true, out);
}

}  // namespace hipacm::cache
