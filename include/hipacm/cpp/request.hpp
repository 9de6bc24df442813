// SPDX-License-Identifier: MIT
// request.hpp - hipacm::Request, one compile request and its C view.
#ifndef HIPACM_CPP_REQUEST_HPP
#define HIPACM_CPP_REQUEST_HPP

#include <hipacm/cpp/callbacks.hpp>
#include <hipacm/cpp/error.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hipacm {

class Future;
class Mode;

/// One compile request. Each submit copies the finalize/cleanup callables.
class Request {
 public:
  explicit Request(std::string source) : source_(std::move(source)) {}

  /// Dedup key (default: a SHA-256 content digest).
  Request& key(std::string k) { return set(key_, std::move(k)); }
  /// Source file name (default "kernel.hip").
  Request& name(std::string n) { return set(name_, std::move(n)); }
  Request& option(std::string o) { return append(options_, std::move(o)); }
  Request& options(std::vector<std::string> o) { return append(options_, std::move(o)); }
  /// A header the source can #include "name".
  Request& header(std::string name, std::string source) {
    header_names_.push_back(std::move(name));
    return append(header_sources_, std::move(source));
  }
  /// Each (name, source) pair as by header(), in order.
  Request& headers(std::vector<std::pair<std::string, std::string>> h) {
    for (auto& [name, source] : h) header(std::move(name), std::move(source));
    return *this;
  }
  /// e.g. "scale<float>"; see hipacm::lowered_names().
  Request& name_expression(std::string e) { return append(name_expressions_, std::move(e)); }
  Request& name_expressions(std::vector<std::string> e) {
    return append(name_expressions_, std::move(e));
  }
  /// Runs once on the collecting thread after a successful compile; throwing
  /// marks the future FINALIZE_FAILED (what() becomes the message) and runs cleanup.
  Request& finalize(std::function<void(const hipacm_kernel&)> f) {
    return set(finalize_, std::move(f));
  }
  /// Runs once on the collecting thread after a failed, cancelled or
  /// finalize-failed compile. Exceptions from it are logged and dropped.
  Request& cleanup(std::function<void(const Error&)> c) { return set(cleanup_, std::move(c)); }

 private:
  friend class Mode;
  friend Future compile(const Request&, const char*);

  template <class Field, class Value>
  Request& set(Field& field, Value&& value) {
    field = std::forward<Value>(value);
    return *this;
  }
  Request& append(std::vector<std::string>& list, std::string value) {
    list.push_back(std::move(value));
    return *this;
  }
  Request& append(std::vector<std::string>& list, std::vector<std::string> values) {
    for (auto& value : values) list.push_back(std::move(value));
    return *this;
  }

  /// The C view; every pointer points into this Request or into `ptrs`.
  hipacm_request to_c(std::vector<const char*>& ptrs) const {
    ptrs.clear();
    ptrs.reserve(options_.size() + 2 * header_names_.size() + name_expressions_.size());
    const size_t o = ptrs.size();
    for (auto& s : options_) ptrs.push_back(s.c_str());
    const size_t hs = ptrs.size();
    for (auto& s : header_sources_) ptrs.push_back(s.c_str());
    const size_t hn = ptrs.size();
    for (auto& s : header_names_) ptrs.push_back(s.c_str());
    const size_t ne = ptrs.size();
    for (auto& s : name_expressions_) ptrs.push_back(s.c_str());
    auto at = [&](size_t offset, size_t count) {
      return count == 0 ? nullptr : ptrs.data() + offset;
    };

    hipacm_request req{};
    req.struct_size = sizeof(hipacm_request);
    req.key = key_ ? key_->c_str() : nullptr;
    req.source = source_.c_str();
    req.source_name = name_ ? name_->c_str() : nullptr;
    req.options = at(o, options_.size());
    req.num_options = options_.size();
    req.header_sources = at(hs, header_sources_.size());
    req.header_names = at(hn, header_names_.size());
    req.num_headers = header_names_.size();
    req.name_expressions = at(ne, name_expressions_.size());
    req.num_name_expressions = name_expressions_.size();
    return req;
  }

  /// A fresh slot holding copies of the callables, or null without any.
  std::shared_ptr<detail::Slot> make_slot(std::shared_ptr<detail::FinalizeErrors> errors) const {
    if (!finalize_ && !cleanup_) return nullptr;
    auto slot = std::make_shared<detail::Slot>();
    slot->finalize = finalize_;
    slot->cleanup = cleanup_;
    slot->errors = std::move(errors);
    return slot;
  }

  std::string source_;
  std::optional<std::string> key_;
  std::optional<std::string> name_;
  std::vector<std::string> options_;
  std::vector<std::string> header_names_;
  std::vector<std::string> header_sources_;
  std::vector<std::string> name_expressions_;
  std::function<void(const hipacm_kernel&)> finalize_;
  std::function<void(const Error&)> cleanup_;
};

}  // namespace hipacm

#endif  // HIPACM_CPP_REQUEST_HPP
