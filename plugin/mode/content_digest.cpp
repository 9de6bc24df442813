// content_digest.cpp - SHA-256 request digests through OpenSSL's EVP interface.
#include "plugin/mode/content_digest.h"

#include "support/sha256.h"

namespace hipacm {

std::string content_digest(const backend::CompileRequest& request) {
  Sha256 sha;
  sha.add_field("hipacm-request-v1");
  sha.add_field(request.source);
  sha.add_field(request.source_name);
  sha.add_count(request.options.size());
  for (const auto& option : request.options) sha.add_field(option);
  sha.add_count(request.headers.size());
  for (const auto& [name, contents] : request.headers) {
    sha.add_field(name);
    sha.add_field(contents);
  }
  sha.add_count(request.name_expressions.size());
  for (const auto& expression : request.name_expressions) sha.add_field(expression);
  sha.add_field(request.arch);
  return "sha256:" + sha.hex();
}

}  // namespace hipacm
