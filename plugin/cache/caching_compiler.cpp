// caching_compiler.cpp - a compile step that serves code objects from the persistent cache.
#include "plugin/cache/caching_compiler.h"

#include <chrono>

#include "hip_backend/compiler_identity.h"
#include "hip_backend/log.h"
#include "plugin/cache/integrity.h"
#include "plugin/cache/key.h"
#include "plugin/cache/library_fact_memo.h"
#include "plugin/cache/name_list.h"
#include "plugin/cache/registry.h"

namespace hipacm::cache {
namespace {

using backend::LogLevel;

void warn_once(const std::string& topic, const std::string& message) noexcept {
  backend::log_once(LogLevel::kWarning, topic, message);
}

}  // namespace

CacheSettings resolve_cache_settings(const ModeSettings& settings) {
  CacheSettings out;
  out.policy = resolve_policy(settings.cache_policy);
  if (out.policy == Policy::kOff) return out;
  const std::string dir = user_cache_dir(settings.cache_dir);
  if (!dir.empty()) out.user_db = database_in(dir);
  out.system_db = system_cache_path();
  out.max_bytes = max_cache_bytes();
  return out;
}

std::shared_ptr<backend::Compiler> with_persistent_cache(const ModeSettings& settings,
                                                         std::shared_ptr<backend::Compiler> inner) {
  CacheSettings resolved = resolve_cache_settings(settings);
  if (resolved.policy == Policy::kOff) return inner;
  if (resolved.user_db.empty() && resolved.system_db.empty()) {
    warn_once("cache-no-location",
              "no kernel cache directory (set HIPACM_CACHE_DIR, XDG_CACHE_HOME or HOME); "
              "compiling without the cache");
    return inner;
  }
  return std::make_shared<CachingCompiler>(std::move(inner), std::move(resolved));
}

CachingCompiler::CachingCompiler(std::shared_ptr<backend::Compiler> inner, CacheSettings settings)
    : inner_(std::move(inner)),
      settings_(std::move(settings)),
      fact_memo_(library_fact_memo(settings_)) {}

CachingCompiler::~CachingCompiler() {
  if (settings_.policy != Policy::kReadWrite || settings_.user_db.empty()) return;
  try {
    if (auto layer = opened_store(settings_.user_db, CacheStore::Access::kReadWrite))
      layer->flush_hits();
  } catch (...) {
    // Hit counts are advisory; a mode's exit never fails because of them.
  }
}

std::string CachingCompiler::key_for(const backend::CompileRequest& request,
                                     backend::CompilerIdentity* identity) {
  try {
    *identity = backend::compiler_identity(request.arch, fact_memo_.get());
    // Without an exact compiler version a key could outlive the compiler.
    if (identity->version.empty()) return std::string();
    return cache_key(request, *identity);
  } catch (...) {
    return std::string();
  }
}

bool CachingCompiler::try_ready(const backend::CompileRequest& request,
                                backend::CompileResult* out) noexcept {
  try {
    const auto start = std::chrono::steady_clock::now();
    backend::CompilerIdentity identity;
    const std::string key = key_for(request, &identity);
    if (key.empty() || !serve_hit(key, request, out)) return false;
    out->compile_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return true;
  } catch (...) {
    return false;
  }
}

backend::CompileResult CachingCompiler::compile(const backend::CompileRequest& request) {
  const auto start = std::chrono::steady_clock::now();
  backend::CompilerIdentity identity;
  const std::string key = key_for(request, &identity);
  if (key.empty()) return inner_->compile(request);

  backend::CompileResult result;
  if (serve_hit(key, request, &result)) {
    result.compile_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
  }
  result = inner_->compile(request);
  if (settings_.policy == Policy::kReadWrite && result.status == HIPACM_SUCCESS)
    store(key, request, identity.backend, identity.version, result);
  return result;
}

bool CachingCompiler::serve_hit(const std::string& key, const backend::CompileRequest& request,
                                backend::CompileResult* out) {
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
      std::string why;
      if (!validate_entry(*entry, request.arch, &why)) {
        backend::log(LogLevel::kWarning, "kernel cache entry " + key + " in " + *path +
                                             " is unusable (" + why + "); recompiling");
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
      return true;
    } catch (const std::exception& e) {
      warn_once("cache-read:" + *path,
                "kernel cache lookup in " + *path + " failed (" + e.what() + "); compiling");
    } catch (...) {
      warn_once("cache-read:" + *path, "kernel cache lookup in " + *path + " failed; compiling");
    }
  }
  return false;
}

void CachingCompiler::store(const std::string& key, const backend::CompileRequest& request,
                            const std::string& compiler_backend,
                            const std::string& compiler_version,
                            const backend::CompileResult& result) {
  if (settings_.user_db.empty()) return;
  try {
    CacheEntry entry;
    entry.expected_kernels =
        expected_kernel_names(request.source, result.lowered_names, result.code);
    if (!names_joinable(result.lowered_names) || !names_joinable(entry.expected_kernels)) return;
    std::string why;
    // Only what would pass the read-side checks is worth storing.
    if (!validate_cached_code_object(result.code, request.arch, entry.expected_kernels, &why))
      return;
    std::shared_ptr<CacheStore> layer =
        shared_store(settings_.user_db, CacheStore::Access::kReadWrite);
    if (!layer) return;
    entry.info.key = key;
    entry.info.arch = request.arch;
    entry.info.source_name = request.source_name;
    entry.info.backend = compiler_backend;
    entry.info.compiler_version = compiler_version;
    entry.info.plugin_version = HIPACM_VERSION_STRING;
    entry.lowered_names = result.lowered_names;
    entry.log = result.log;
    entry.code = result.code;
    entry.info.size = payload_size(entry);
    entry.info.created_us = entry.info.last_used_us = now_us();
    entry.checksum = entry_checksum(entry);
    layer->put(entry);
    layer->evict_to(settings_.max_bytes, key);
  } catch (const std::exception& e) {
    warn_once("cache-write:" + settings_.user_db, "cannot store in the kernel cache " +
                                                      settings_.user_db + " (" + e.what() +
                                                      "); the compile result is unaffected");
  } catch (...) {
    warn_once("cache-write:" + settings_.user_db,
              "cannot store in the kernel cache " + settings_.user_db);
  }
}

}  // namespace hipacm::cache
