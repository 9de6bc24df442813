// key.cpp - the persistent-cache key: SHA-256 over everything that determines a code object.
#include "plugin/cache/key/key.h"

#include "plugin/cache/store/schema.h"
#include "support/sha256.h"

namespace hipacm::cache {

std::string cache_key(const backend::CompileRequest& request,
                      const backend::CompilerIdentity& compiler) {
  return cache_key(request, compiler, kSchemaVersion);
}

std::string cache_key(const backend::CompileRequest& request,
                      const backend::CompilerIdentity& compiler, int schema_version) {
  Sha256 sha;
  sha.add_field("hipacm-cache-key");
  sha.add_count(static_cast<std::uint64_t>(schema_version));
  sha.add_field(request.source);
  sha.add_field(request.source_name);
  sha.add_count(request.headers.size());
  for (const auto& [name, contents] : request.headers) {
    sha.add_field(name);
    sha.add_field(contents);
  }
  sha.add_count(request.name_expressions.size());
  for (const auto& expression : request.name_expressions) sha.add_field(expression);
  // Exactly what the compiler receives: whitespace and empty options can
  // change its outcome (" -DX=1" is not "-DX=1" to hipRTC).
  sha.add_count(request.options.size());
  for (const auto& option : request.options) sha.add_field(option);
  sha.add_field(request.arch);
  sha.add_field(compiler.backend);
  sha.add_field(compiler.version);
  return sha.hex();
}

}  // namespace hipacm::cache
