// content_digest.cpp - SHA-256 request digests through OpenSSL's EVP interface.
#include "plugin/content_digest.h"

#include <openssl/evp.h>

#include <cstdint>
#include <memory>

#include "plugin/error.h"

namespace hipacm {
namespace {

struct EvpContextDeleter {
  void operator()(EVP_MD_CTX* ctx) const noexcept { EVP_MD_CTX_free(ctx); }
};

class Sha256 {
 public:
  Sha256() : ctx_(EVP_MD_CTX_new()) {
    if (!ctx_ || EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) != 1)
      throw Error(HIPACM_ERROR_INTERNAL, "cannot initialise SHA-256");
  }

  void add_bytes(const void* data, std::size_t size) {
    if (EVP_DigestUpdate(ctx_.get(), data, size) != 1)
      throw Error(HIPACM_ERROR_INTERNAL, "SHA-256 update failed");
  }

  // Length-prefixing makes the encoding injective: ("ab","c") != ("a","bc").
  void add_field(const std::string& s) {
    const std::uint64_t n = s.size();
    add_bytes(&n, sizeof n);
    add_bytes(s.data(), s.size());
  }

  void add_count(std::uint64_t n) { add_bytes(&n, sizeof n); }

  std::string hex() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (EVP_DigestFinal_ex(ctx_.get(), digest, &length) != 1)
      throw Error(HIPACM_ERROR_INTERNAL, "SHA-256 finalisation failed");
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    out.reserve(2 * length);
    for (unsigned int i = 0; i < length; ++i) {
      out.push_back(kHex[digest[i] >> 4]);
      out.push_back(kHex[digest[i] & 0xf]);
    }
    return out;
  }

 private:
  std::unique_ptr<EVP_MD_CTX, EvpContextDeleter> ctx_;
};

}  // namespace

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
