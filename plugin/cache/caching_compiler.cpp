// SPDX-License-Identifier: MIT
// caching_compiler.cpp - a compile step that serves code objects from the persistent cache.
#include "plugin/cache/caching_compiler.h"

#include <chrono>
#include <optional>

#include "hip_backend/dispatch/compiler_identity.h"
#include "hip_backend/raw_nvrtc.h"
#include "plugin/cache/compile_claim.h"
#include "plugin/cache/integrity.h"
#include "plugin/cache/key/external_inputs.h"
#include "plugin/cache/key/key.h"
#include "plugin/cache/library_fact_memo.h"
#include "plugin/cache/registry.h"
#include "plugin/cache/remote/remote_tier.h"
#include "plugin/cache/store/name_list.h"
#include "support/bytes/sha256.h"
#include "support/failure.h"
#include "support/log.h"
#include "support/pass_counts.h"
#include "support/settings.h"
#include "support/stats.h"

namespace hipacm::cache {
namespace {

using backend::LogLevel;

// How long a compile waits for another holder of its key's claim before it compiles as well. A
// holder that dies releases its claim at once, so this bounds only a holder that is still
// compiling (or a fork()ed child that inherited its claim and lives on).
constexpr std::chrono::milliseconds kMaxClaimWait{120000};

// What a compile that spent its whole limit waiting for another process's compile of the same
// kernel ends with: the same status it would have had, compiling that long itself.
backend::CompileResult timed_out_waiting(const backend::CompileRequest& request,
                                         const std::string& key, std::chrono::milliseconds limit) {
  backend::CompileResult result;
  result.status = HIPACM_ERROR_TIMEOUT;
  result.error_message =
      "compile of " + request.source_name + " timed out after " + std::to_string(limit.count()) +
      " ms waiting for another process's compile of the same kernel (key " + key + ") to finish";
  backend::count(backend::stats().timeouts);
  backend::log(LogLevel::kWarning, result.error_message);
  return result;
}

// The recorded error a compile after a miss ends in, or nullopt: success, and a cancellation,
// which is the host's choice rather than a failure.
std::optional<Counter> error_counter(hipacm_status status) {
  switch (status) {
    case HIPACM_SUCCESS:
    case HIPACM_ERROR_CANCELLED:
      return std::nullopt;
    case HIPACM_ERROR_COMPILATION:
      return Counter::kCompileErrors;
    case HIPACM_ERROR_COMPILER_CRASHED:
      return Counter::kCrashErrors;
    case HIPACM_ERROR_TIMEOUT:
      return Counter::kTimeoutErrors;
    default:
      return Counter::kOtherErrors;
  }
}

void warn_once(const std::string& topic, const std::string& message) noexcept {
  backend::log_once(LogLevel::kWarning, topic, message);
}

// Called from a catch block of a store: a cache that cannot be written is reported once per
// database, and the compile's own result stands.
void warn_store_failed(const std::string& user_db) {
  warn_once("cache-write:" + user_db,
            failure_from_current_exception("cannot store in the kernel cache " + user_db).message +
                "; the compile result is unaffected");
}

// The head of `text` in at most `limit` bytes, cut at a UTF-8 character
// boundary, with a note of how long it was.
std::string bounded(const std::string& text, std::size_t limit) {
  if (text.size() <= limit) return text;
  const std::string note =
      "\n[truncated by the kernel cache; " + std::to_string(text.size()) + " bytes in all]";
  std::size_t cut = limit > note.size() ? limit - note.size() : 0;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut) + note.substr(0, limit - cut);
}

std::string cached_failure_message(const std::string& stored) {
  return "cached failure: " + stored +
         " (an earlier compile of this same request failed and the kernel cache remembers it; "
         "run `hipacm cache clear`, or set hipacm_mode_config.cache_failures to 0, to compile "
         "it again)";
}

}  // namespace

std::shared_ptr<backend::Compiler> with_persistent_cache(
    const CacheSettings& settings, std::optional<remote::RemoteSettings> remote,
    std::shared_ptr<backend::Compiler> inner) {
  if (settings.policy == Policy::kOff) return inner;
  if (settings.user_db.empty() && settings.system_db.empty()) {
    warn_once("cache-no-location", std::string("no kernel cache directory (set ") +
                                       hipacm::settings::name(hipacm::settings::Id::kCacheDir) +
                                       ", XDG_CACHE_HOME or HOME); compiling without the cache");
    return inner;
  }
  return std::make_shared<CachingCompiler>(std::move(inner), settings, std::move(remote));
}

CachingCompiler::CachingCompiler(std::shared_ptr<backend::Compiler> inner, CacheSettings settings,
                                 std::optional<remote::RemoteSettings> remote)
    : inner_(std::move(inner)),
      settings_(std::move(settings)),
      fact_memo_(fact_memo_for(settings_)) {
  // Claims tell this cache's processes from other machines': the user layer names it.
  if (remote)
    remote_ = std::make_unique<remote::RemoteTier>(
        std::move(*remote), settings_.user_db.empty() ? settings_.system_db : settings_.user_db);
}

CachingCompiler::~CachingCompiler() {
  // The tier's end waits (bounded) for its queued writes and releases its claims.
  remote_.reset();
  if (settings_.policy != Policy::kReadWrite || settings_.user_db.empty()) return;
  try {
    if (auto layer = opened_store(settings_.user_db, CacheStore::Access::kReadWrite))
      layer->flush_hits();
  } catch (...) {
    // Hit counts are advisory; a mode's exit never fails because of them.
  }
}

std::optional<CachingCompiler::Keyed> CachingCompiler::key_for(
    const backend::CompileRequest& request, Counter* why_not) noexcept {
  Counter unused = Counter::kUncacheable;
  Counter& why = why_not != nullptr ? *why_not : unused;
  why = Counter::kUncacheable;
  try {
    // Files the compile reads from disk (-I, absolute includes) are part of
    // what it means; a request whose reads cannot be accounted for is never
    // cached, since a hit could be stale.
    const ExternalInputs inputs = scan_external_inputs(request);
    if (!inputs.cacheable) {
      backend::log_once(LogLevel::kWarning, "uncacheable:" + inputs.why_not,
                        "not caching " + request.source_name + ": " + inputs.why_not);
      return std::nullopt;
    }
    Keyed keyed;
    keyed.inputs_digest = inputs.digest;
    keyed.scanned = inputs;
    // A CUDA program's own compile (`hipacm run`) is made by the NVRTC file it names.
    const std::string raw_nvrtc = backend::raw_nvrtc_library(request.options);
    keyed.compiler = raw_nvrtc.empty() ? backend::compiler_identity(request.arch, fact_memo_.get())
                                       : backend::raw_nvrtc_identity(raw_nvrtc);
    // Without an exact compiler version a key could outlive the compiler.
    if (keyed.compiler.version.empty()) {
      why = Counter::kUnknownCompiler;
      return std::nullopt;
    }
    keyed.key = cache_key(request, keyed.compiler);
    if (!inputs.digest.empty()) {
      Sha256 sha;
      sha.add_field("hipacm-cache-key-with-files");
      sha.add_field(keyed.key);
      sha.add_field(inputs.digest);
      keyed.key = sha.hex();
    }
    return keyed;
  } catch (...) {
    return std::nullopt;
  }
}

// What look_up learned of a request it did not serve, for its compile: the key (nullopt: the
// request is not cached), and that the store was looked in for it.
struct CachingCompiler::KeyedRequest final : backend::CompilePlan {
  std::optional<Keyed> keyed;
  Counter why_not = Counter::kUncacheable;  ///< without a key: the passthrough it counts as
};

bool CachingCompiler::serve_ready(const backend::CompileRequest& request,
                                  backend::CompileResult* out, std::optional<Keyed>* keyed,
                                  Counter* why_not) noexcept {
  try {
    const auto start = std::chrono::steady_clock::now();
    *keyed = key_for(request, why_not);
    if (!*keyed || !serve_stored(**keyed, request, out)) return false;
    out->compile_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return true;
  } catch (...) {
    return false;
  }
}

bool CachingCompiler::try_ready(const backend::CompileRequest& request,
                                backend::CompileResult* out) noexcept {
  std::optional<Keyed> keyed;
  Counter why_not = Counter::kUncacheable;
  return serve_ready(request, out, &keyed, &why_not);
}

bool CachingCompiler::look_up(const backend::CompileRequest& request, backend::CompileResult* out,
                              std::shared_ptr<const backend::CompilePlan>* plan) noexcept {
  plan->reset();
  std::optional<Keyed> keyed;
  Counter why_not = Counter::kUncacheable;
  if (serve_ready(request, out, &keyed, &why_not)) return true;
  // A writer claims what it is about to compile as it is submitted, before its turn in the pool:
  // machines that start at the same moment then wait for its entry instead of racing it.
  if (keyed && remote_ && remote_->writes() && settings_.policy == Policy::kReadWrite)
    remote_->claim(keyed->key);
  try {
    auto known = std::make_shared<KeyedRequest>();
    known->keyed = std::move(keyed);
    known->why_not = why_not;
    *plan = std::move(known);
  } catch (...) {
    // Without a plan the compile keys the request itself.
  }
  return false;
}

backend::CompileResult CachingCompiler::compile_with_plan(const backend::CompileRequest& request,
                                                          const backend::CompilePlan* plan) {
  const auto start = std::chrono::steady_clock::now();
  // The key look_up made for this request, when it did: a request is keyed (and scanned) once.
  const auto* known = dynamic_cast<const KeyedRequest*>(plan);
  std::optional<Keyed> computed;
  Counter why_not = Counter::kUncacheable;
  if (known == nullptr) computed = key_for(request, &why_not);
  const std::optional<Keyed>& keyed = known != nullptr ? known->keyed : computed;
  if (!keyed) {
    // Compiled as if there were no cache: what `hipacm cache stats` counts as a passthrough.
    record(known != nullptr ? known->why_not : why_not);
    return inner_->compile(request);
  }

  backend::CompileResult result;
  const auto served = [&] {
    if (!serve_stored(*keyed, request, &result)) return false;
    result.compile_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return true;
  };
  // One compile per key on the machine: the claim's holder compiles and stores, while every other
  // thread or process that shares the cache waits for it and then finds the key stored. The
  // lookup is made after the claim is taken, and is this compile's only one (look_up's, made
  // before, cannot stand in for it: a request can wait in the pool's queue long after it, while
  // another process compiles, stores and lets its claim go), so the count is exact: whoever
  // claims first after a store finds the entry, however the claims and stores interleave.
  CompileClaim claim;
  if (settings_.policy == Policy::kReadWrite && !settings_.user_db.empty()) {
    const std::chrono::milliseconds limit(settings_.compile_timeout_ms);
    const bool limited = limit.count() > 0 && limit < kMaxClaimWait;
    claim = CompileClaim::acquire(settings_.user_db, keyed->key, limited ? limit : kMaxClaimWait);
    if (claim.waited().count() > 0)
      backend::log(LogLevel::kDebug, "waited " + std::to_string(claim.waited().count()) +
                                         " ms for another compile of " + request.source_name +
                                         " (key " + keyed->key + ")");
    if (served()) return result;
    if (limited && !claim.held() && claim.waited() >= limit) {
      record(Counter::kTimeoutErrors);
      return timed_out_waiting(request, keyed->key, limit);
    }
  } else if (known == nullptr && served()) {
    // No claim to take: the one lookup is look_up's, or this one.
    return result;
  }
  // Across machines: a writer claims the compile; anyone else waits (bounded) for a claimed
  // compile's entry from another machine.
  bool remote_claim = false;
  if (claim_or_await_remote(*keyed, request, &remote_claim, &result)) {
    result.compile_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
  }
  // The claim is let go whatever the compile ends in; publish() lets it go after its put.
  struct ClaimRelease {
    remote::RemoteTier* tier;
    const std::string* key;
    ~ClaimRelease() {
      if (tier != nullptr) tier->release(*key);
    }
  } release_claim{remote_claim ? remote_.get() : nullptr, &keyed->key};
  // The one place a miss is counted: a request is counted when the lookup that decides it finds
  // nothing, which may still hit if another process stored it meanwhile.
  record_miss(*keyed, request);
  result = inner_->compile(request);
  if (const std::optional<Counter> error = error_counter(result.status)) record(*error);
  const bool storable_failure =
      result.status == HIPACM_ERROR_COMPILATION && settings_.cache_failures;
  if (settings_.policy != Policy::kReadWrite ||
      (result.status != HIPACM_SUCCESS && !storable_failure))
    return result;
  // What the compile read beyond its key (its working directory's files) may be in the result.
  if (!result.not_cacheable_why.empty()) {
    backend::log(LogLevel::kInfo, "not storing " + request.source_name + " (key " + keyed->key +
                                      ") in the kernel cache: " + result.not_cacheable_why);
    return result;
  }
  // A header that changed while the compiler ran may be in the object under the old key: store
  // only what was compiled from the files the key names. Every path the key's scan looked at is
  // looked at again (a stat each); only where one changed does a new scan decide.
  if (!keyed->inputs_digest.empty() && !inputs_unchanged(keyed->scanned) &&
      scan_external_inputs(request).digest != keyed->inputs_digest)
    return result;
  if (result.status != HIPACM_SUCCESS) {
    store_failure(*keyed, request, result);
    return result;
  }
  if (std::optional<CacheEntry> stored = store(*keyed, request, result);
      stored && remote_ && remote_->writes()) {
    remote_->publish(*stored);
    release_claim.tier = nullptr;
  }
  return result;
}

bool CachingCompiler::serve_stored(const Keyed& keyed, const backend::CompileRequest& request,
                                   backend::CompileResult* out) {
  backend::count_pass(backend::pass_counts().store_lookups);
  return serve_hit(keyed, request, out) || serve_failure(keyed, request, out) ||
         serve_remote(keyed, request, out);
}

void CachingCompiler::record(Counter counter) noexcept {
  try {
    if (settings_.policy != Policy::kReadWrite || settings_.user_db.empty()) return;
    if (auto layer = shared_store(settings_.user_db, CacheStore::Access::kReadWrite))
      layer->record(counter);
  } catch (...) {
    // The recorded statistics are advisory; the compile goes on.
  }
}

void CachingCompiler::record_miss(const Keyed& keyed,
                                  const backend::CompileRequest& request) noexcept {
  backend::count(backend::stats().cache_misses);
  try {
    backend::log(LogLevel::kDebug,
                 "kernel cache miss for " + request.source_name + " (key " + keyed.key + ")");
    if (settings_.policy != Policy::kReadWrite || settings_.user_db.empty()) return;
    if (auto layer = shared_store(settings_.user_db, CacheStore::Access::kReadWrite))
      layer->record_miss();
  } catch (...) {
    // The recorded hit rate is advisory; the compile goes on.
  }
}

bool CachingCompiler::serve_hit(const Keyed& keyed, const backend::CompileRequest& request,
                                backend::CompileResult* out) {
  const std::string& key = keyed.key;
  const bool may_write = settings_.policy == Policy::kReadWrite;
  const std::pair<const std::string*, CacheStore::Access> layers[] = {
      {&settings_.user_db,
       may_write ? CacheStore::Access::kReadWrite : CacheStore::Access::kReadOnly},
      {&settings_.system_db, CacheStore::Access::kReadOnly},
  };
  for (const auto& [path, access] : layers) {
    if (path->empty()) continue;
    try {
      std::shared_ptr<CacheStore> layer = shared_store(*path, access);
      if (!layer) continue;
      std::optional<CacheEntry> entry = layer->find(key);
      if (!entry) continue;
      if (const Expected<void> usable =
              validate_entry_for_request(*entry, request, !keyed.inputs_digest.empty());
          !usable) {
        backend::log(LogLevel::kWarning, "kernel cache entry " + key + " in " + *path +
                                             " is unusable (" + usable.failure().message +
                                             "); recompiling");
        if (layer->writable()) layer->remove(key);
        continue;
      }
      if (layer->writable()) layer->touch(key);
      out->status = HIPACM_SUCCESS;
      out->error_message.clear();
      out->log = std::move(entry->log);
      out->code = std::move(entry->code);
      out->lowered_names = std::move(entry->lowered_names);
      out->from_cache = true;
      backend::count(backend::stats().cache_hits);
      backend::log(LogLevel::kDebug, "kernel cache hit for " + request.source_name + " (key " +
                                         key + ") in " + *path);
      return true;
    } catch (...) {
      warn_once(
          "cache-read:" + *path,
          failure_from_current_exception("kernel cache lookup in " + *path + " failed").message +
              "; compiling");
    }
  }
  return false;
}

bool CachingCompiler::serve_failure(const Keyed& keyed, const backend::CompileRequest& request,
                                    backend::CompileResult* out) {
  // Failures live in the user layer only: they are never exported, so a
  // system layer (an export) holds none.
  if (!settings_.cache_failures || settings_.user_db.empty()) return false;
  const std::string& path = settings_.user_db;
  try {
    std::shared_ptr<CacheStore> layer =
        shared_store(path, settings_.policy == Policy::kReadWrite ? CacheStore::Access::kReadWrite
                                                                  : CacheStore::Access::kReadOnly);
    if (!layer) return false;
    std::optional<StoredFailure> failure = layer->find_failure(keyed.key);
    if (!failure) return false;
    if (const Expected<void> usable = validate_failure(
            *failure, keyed.key, request.arch, keyed.compiler.backend, keyed.compiler.version);
        !usable) {
      backend::log(LogLevel::kWarning, "stored compile failure " + keyed.key + " in " + path +
                                           " is unusable (" + usable.failure().message +
                                           "); compiling");
      if (layer->writable()) layer->remove_failure(keyed.key);
      return false;
    }
    if (layer->writable()) layer->touch_failure(keyed.key);
    out->status = HIPACM_ERROR_COMPILATION;
    out->error_message = cached_failure_message(failure->error_message);
    out->log = std::move(failure->log);
    out->code.clear();
    out->lowered_names.clear();
    out->from_cache = true;
    backend::count(backend::stats().cached_failures);
    backend::log(LogLevel::kDebug, "kernel cache holds a compile failure for " +
                                       request.source_name + " (key " + keyed.key + ") in " + path +
                                       "; failing without compiling");
    return true;
  } catch (...) {
    warn_once("cache-read:" + path,
              failure_from_current_exception("kernel cache lookup in " + path + " failed").message +
                  "; compiling");
  }
  return false;
}

void CachingCompiler::store_failure(const Keyed& keyed, const backend::CompileRequest& request,
                                    const backend::CompileResult& result) {
  if (settings_.user_db.empty()) return;
  try {
    StoredFailure failure;
    failure.key = keyed.key;
    failure.arch = request.arch;
    failure.source_name = request.source_name;
    failure.backend = keyed.compiler.backend;
    failure.compiler_version = keyed.compiler.version;
    failure.plugin_version = HIPACM_VERSION_STRING;
    failure.error_message = bounded(result.error_message, kMaxFailureMessageBytes);
    failure.log = bounded(result.log, kMaxFailureLogBytes);
    failure.created_us = failure.last_used_us = now_us();
    failure.checksum = failure_checksum(failure);
    // Only what would pass the read-side check is worth storing.
    if (!validate_failure(failure, keyed.key, request.arch, keyed.compiler.backend,
                          keyed.compiler.version))
      return;
    std::shared_ptr<CacheStore> layer =
        shared_store(settings_.user_db, CacheStore::Access::kReadWrite);
    if (layer && layer->put_failure(failure))
      backend::log(LogLevel::kDebug, "stored the compile failure of " + request.source_name +
                                         " (key " + keyed.key + ") in " + settings_.user_db);
  } catch (...) {
    warn_store_failed(settings_.user_db);
  }
}

std::optional<CacheEntry> CachingCompiler::store(const Keyed& keyed,
                                                 const backend::CompileRequest& request,
                                                 const backend::CompileResult& result) {
  if (settings_.user_db.empty()) return std::nullopt;
  try {
    if (!names_joinable(result.lowered_names)) return std::nullopt;
    CacheEntry entry;
    entry.info.key = keyed.key;
    entry.info.arch = request.arch;
    entry.lowered_names = result.lowered_names;
    entry.log = result.log;
    entry.code = result.code;
    entry.checksum = entry_checksum(entry);
    // Only what would pass the read-side checks is worth storing. The compile step checked a
    // result it marks code_checked (the host's one check of a worker's reply, or the in-process
    // compile's own): those bytes are not checked twice.
    if (!validate_entry_for_request(entry, request, !keyed.inputs_digest.empty(),
                                    result.code_checked))
      return std::nullopt;
    if (!put_local(keyed, request, entry)) return std::nullopt;
    return entry;
  } catch (...) {
    warn_store_failed(settings_.user_db);
    return std::nullopt;
  }
}

bool CachingCompiler::put_local(const Keyed& keyed, const backend::CompileRequest& request,
                                CacheEntry& entry) {
  if (settings_.user_db.empty() || settings_.policy != Policy::kReadWrite) return false;
  try {
    std::shared_ptr<CacheStore> layer =
        shared_store(settings_.user_db, CacheStore::Access::kReadWrite);
    if (!layer) return false;
    entry.info.source_name = request.source_name;
    entry.info.backend = keyed.compiler.backend;
    entry.info.compiler_version = keyed.compiler.version;
    entry.info.plugin_version = HIPACM_VERSION_STRING;
    entry.info.size = payload_size(entry);
    entry.info.created_us = entry.info.last_used_us = now_us();
    entry.info.hits = 0;
    layer->put(entry);
    backend::count(backend::stats().cache_stores);
    backend::count(backend::stats().bytes_stored, entry.code.size());
    backend::log(LogLevel::kDebug, "stored " + request.source_name + " (key " + keyed.key + ", " +
                                       std::to_string(entry.code.size()) + " bytes of code) in " +
                                       settings_.user_db);
    layer->evict_to(settings_.max_bytes, keyed.key);
    return true;
  } catch (...) {
    warn_store_failed(settings_.user_db);
    return false;
  }
}

std::optional<std::string> CachingCompiler::cache_key_of(
    const backend::CompileRequest& request) noexcept {
  std::optional<Keyed> keyed = key_for(request);
  if (!keyed) return std::nullopt;
  return std::move(keyed->key);
}

}  // namespace hipacm::cache
