// SPDX-License-Identifier: MIT
// request_reader.cpp - validates a caller's hipacm_request and copies it into owned C++ form.
#include "plugin/abi/request_reader.h"

#include <cstring>

#include "hip_backend/compiler_environment.h"
#include "hip_backend/source_name_policy.h"
#include "plugin/abi/struct_fields.h"
#include "plugin/abi/struct_versions.h"
#include "plugin/cache/key/key.h"
#include "plugin/cache/key/path_options.h"
#include "support/status_error.h"

namespace hipacm {
namespace {

constexpr std::size_t kMaxListEntries = 65536;

[[noreturn]] void invalid(const std::string& message) {
  throw StatusError(HIPACM_ERROR_INVALID_ARGUMENT, message);
}

std::string bounded_string(const char* s, const std::string& what) {
  // strnlen stops a missing terminator from running off into the heap.
  const std::size_t n = strnlen(s, kMaxSourceBytes + 1);
  if (n > kMaxSourceBytes)
    invalid(what + " is larger than " + std::to_string(kMaxSourceBytes >> 20) + " MiB");
  return std::string(s, n);
}

/// Refuses a name that could escape the directory the compiler writes it to.
void require_safe_name(const std::string& name, const std::string& what) {
  if (const auto allowed = backend::source_name_allowed(name); !allowed)
    invalid(what + " " + allowed.failure().message);
}

std::vector<std::string> read_list(const char* const* items, std::size_t count, const char* what) {
  std::vector<std::string> out;
  if (count == 0) return out;
  if (count > kMaxListEntries)
    invalid(std::string(what) + ": " + std::to_string(count) + " entries exceed the limit of " +
            std::to_string(kMaxListEntries));
  if (items == nullptr)
    invalid(std::string(what) + " is NULL but its count is " + std::to_string(count));
  out.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    if (items[i] == nullptr) invalid(std::string(what) + "[" + std::to_string(i) + "] is NULL");
    out.push_back(bounded_string(items[i], std::string(what) + "[" + std::to_string(i) + "]"));
  }
  return out;
}

}  // namespace

Submission read_request(const hipacm_request* req, const std::string& arch) {
  if (req == nullptr) invalid("request is NULL");
  require_struct_size(req, kRequestV1Size, "hipacm_request");
  if (req->source == nullptr) invalid("request.source is NULL");

  Submission s;
  backend::CompileRequest& r = s.request;
  r.source = bounded_string(req->source, "request.source");
  if (r.source.empty()) invalid("request.source is empty");
  if (req->source_name != nullptr) {
    r.source_name = bounded_string(req->source_name, "request.source_name");
    if (r.source_name.empty()) invalid("request.source_name is empty (pass NULL for the default)");
    require_safe_name(r.source_name, "request.source_name");
  }
  r.options = read_list(req->options, req->num_options, "request.options");
  // Compiles run in a directory of their own (a worker's private one), so a relative path in an
  // option is made absolute here, against the host's working directory, where it meant what it
  // means: the key and the compiler see the same options, whichever process compiles.
  if (const Expected<void> anchored = cache::anchor_relative_paths(&r.options); !anchored)
    invalid("request.options: " + anchored.failure().message);
  // The variables the compiler reads on its own, as they are now: keyed with the request and set
  // in whichever worker compiles it.
  r.environment = backend::capture_compiler_environment();
  const auto header_sources =
      read_list(req->header_sources, req->num_headers, "request.header_sources");
  const auto header_names = read_list(req->header_names, req->num_headers, "request.header_names");
  for (std::size_t i = 0; i < header_names.size(); ++i) {
    require_safe_name(header_names[i], "request.header_names[" + std::to_string(i) + "]");
    r.headers.emplace_back(header_names[i], header_sources[i]);
  }
  r.name_expressions =
      read_list(req->name_expressions, req->num_name_expressions, "request.name_expressions");
  for (std::size_t i = 0; i < r.name_expressions.size(); ++i)
    if (r.name_expressions[i].empty())
      invalid("request.name_expressions[" + std::to_string(i) + "] is empty");
  r.arch = arch;

  if (req->key != nullptr) {
    s.key = bounded_string(req->key, "request.key");
    if (s.key.empty()) invalid("request.key is empty (pass NULL for a content digest)");
  } else {
    s.key = content_digest(r);
  }
  s.callbacks = Callbacks{req->finalize, req->cleanup, req->user_data};
  return s;
}

}  // namespace hipacm
