// SPDX-License-Identifier: MIT
// key.cpp - the content digest and the persistent-cache key: one walk over a request's fields.
#include "plugin/cache/key/key.h"

#include "plugin/cache/store/schema.h"
#include "support/bytes/sha256.h"
#include "support/pass_counts.h"

namespace hipacm {
namespace {

// Where the options enter the walk. Each digest fixed its order when it was defined, and both
// are kept: content digests are the keys hosts see, cache keys name entries already stored.
enum class OptionsAt { kAfterSourceName, kAfterNameExpressions };

void add_list(Sha256& sha, const std::vector<std::string>& items) {
  sha.add_count(items.size());
  for (const auto& item : items) sha.add_field(item);
}

// Every field of the request that decides its code object. Options are hashed exactly as the
// compiler receives them: whitespace and empty options can change its outcome (" -DX=1" is not
// "-DX=1" to hipRTC).
void add_request(Sha256& sha, const backend::CompileRequest& request, OptionsAt options_at) {
  sha.add_field(request.source);
  sha.add_field(request.source_name);
  if (options_at == OptionsAt::kAfterSourceName) add_list(sha, request.options);
  sha.add_count(request.headers.size());
  for (const auto& [name, contents] : request.headers) {
    sha.add_field(name);
    sha.add_field(contents);
  }
  add_list(sha, request.name_expressions);
  if (options_at == OptionsAt::kAfterNameExpressions) add_list(sha, request.options);
  sha.add_field(request.arch);
}

}  // namespace

std::string content_digest(const backend::CompileRequest& request) {
  Sha256 sha;
  sha.add_field("hipacm-request-v1");
  add_request(sha, request, OptionsAt::kAfterSourceName);
  // The compiler variables that are set (CPATH, ...): under other values the same text is another
  // request. With none set, the digest is the one it always was.
  std::vector<std::string> set;
  for (const std::string& entry : request.environment)
    if (entry.find('=') != std::string::npos) set.push_back(entry);
  if (!set.empty()) {
    sha.add_field("compiler-environment");
    add_list(sha, set);
  }
  return "sha256:" + sha.hex();
}

namespace cache {

std::string cache_key(const backend::CompileRequest& request,
                      const backend::CompilerIdentity& compiler) {
  return cache_key(request, compiler, kSchemaVersion);
}

std::string cache_key(const backend::CompileRequest& request,
                      const backend::CompilerIdentity& compiler, int schema_version) {
  backend::count_pass(backend::pass_counts().cache_keys);
  Sha256 sha;
  sha.add_field("hipacm-cache-key");
  sha.add_count(static_cast<std::uint64_t>(schema_version));
  add_request(sha, request, OptionsAt::kAfterNameExpressions);
  sha.add_field(compiler.backend);
  sha.add_field(compiler.version);
  return sha.hex();
}

}  // namespace cache
}  // namespace hipacm
