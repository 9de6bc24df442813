// SPDX-License-Identifier: MIT
// worker_faults.cpp - parses and matches hipacm-worker's test-only fault specs.
#include "worker/session/worker_faults.h"

#include <charconv>
#include <string_view>
#include <utility>

namespace hipacm::backend {
namespace {

struct KindName {
  std::string_view name;
  WorkerFault::Kind kind;
  bool needs_value;
};

constexpr KindName kKinds[] = {
    {"crash-segv", WorkerFault::Kind::kCrashSegv, false},
    {"abort", WorkerFault::Kind::kAbort, false},
    {"hang", WorkerFault::Kind::kHang, false},
    {"garbage", WorkerFault::Kind::kGarbage, false},
    {"exit", WorkerFault::Kind::kExit, true},
    {"slow-start", WorkerFault::Kind::kSlowStart, true},
    {"echo", WorkerFault::Kind::kEcho, false},
    {"spam", WorkerFault::Kind::kSpam, true},
    {"slow-exit", WorkerFault::Kind::kSlowExit, true},
};

/// A spec that cannot be honoured: a test's mistake, refused rather than half applied.
Failure bad_spec(std::string why) { return Failure{HIPACM_ERROR_INVALID_ARGUMENT, std::move(why)}; }

Expected<void> parse_one(std::string_view item, WorkerFault* fault) {
  constexpr std::string_view kWhen = ":when=";
  if (const auto at = item.find(kWhen); at != std::string_view::npos) {
    fault->when = std::string(item.substr(at + kWhen.size()));
    item = item.substr(0, at);
    if (fault->when.empty()) {
      return bad_spec("empty when= in fault spec");
    }
  }
  std::string_view name = item, value;
  if (const auto eq = item.find('='); eq != std::string_view::npos) {
    name = item.substr(0, eq);
    value = item.substr(eq + 1);
  }
  for (const KindName& k : kKinds) {
    if (k.name != name) continue;
    fault->kind = k.kind;
    if (value.empty()) {
      if (!k.needs_value) return {};
      return bad_spec("fault '" + std::string(name) + "' needs a value");
    }
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), fault->value);
    if (ec != std::errc() || end != value.data() + value.size() || fault->value < 0) {
      return bad_spec("bad value '" + std::string(value) + "' for fault '" + std::string(name) +
                      "'");
    }
    return {};
  }
  return bad_spec("unknown fault '" + std::string(name) + "'");
}

}  // namespace

Expected<std::vector<WorkerFault>> parse_worker_faults(const std::string& spec) {
  std::vector<WorkerFault> faults;
  std::string_view rest = spec;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (item.empty()) continue;
    WorkerFault fault;
    if (Expected<void> parsed = parse_one(item, &fault); !parsed)
      return std::move(parsed).failure();
    faults.push_back(std::move(fault));
  }
  return faults;
}

const WorkerFault* match_worker_fault(const std::vector<WorkerFault>& faults,
                                      const CompileRequest& request) {
  for (const WorkerFault& f : faults) {
    if (f.whole_session()) continue;
    if (f.when.empty() || request.source.find(f.when) != std::string::npos) return &f;
  }
  return nullptr;
}

}  // namespace hipacm::backend
