// SPDX-License-Identifier: MIT
// cache_remote_pull.cpp - `hipacm cache remote pull`: what manifests, record files or kernel files
// need, fetched from the remote, verified against the key and each request, stored in this cache.
#include <fmt/core.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hip_backend/compiler.h"
#include "plugin/cache/cache_admin.h"
#include "plugin/cache/caching_compiler.h"
#include "plugin/cache/integrity.h"
#include "plugin/cache/key/external_inputs.h"
#include "plugin/cache/remote/remote_tier.h"
#include "plugin/cache/remote/signing_key.h"
#include "plugin/cache/store/location.h"
#include "support/settings.h"
#include "support/stats.h"
#include "tools/cache/cache_remote.h"
#include "tools/common/exit_codes.h"
#include "tools/common/json_output.h"
#include "tools/common/option_checks.h"
#include "tools/common/terminal_text.h"
#include "tools/input/kernel_input.h"

namespace hipacm::cli {
namespace {

using cache::remote::RemoteSettings;

// What the keys are made with: the cache never calls it, as nothing here compiles.
class NeverCompiles final : public backend::Compiler {
 public:
  backend::CompileResult compile(const backend::CompileRequest&) override {
    backend::CompileResult result;
    result.status = HIPACM_ERROR_INTERNAL;
    result.error_message = "a pull compiles nothing";
    return result;
  }
};

struct Outcome {
  std::string label;
  std::string arch;
  std::string key;
  const char* result = "";  ///< pulled, local, absent, refused, error, not-cached
  std::string reason;
};

void require_key(const RemoteSettings& remote) {
  // Without a key nothing from the remote can be trusted, so nothing would be pulled.
  if (remote.key_file.empty())
    throw InputError(
        fmt::format("no key: nothing from the remote cache is trusted, so nothing was pulled; pass "
                    "--key-file FILE or set {}",
                    settings::name(settings::Id::kRemoteCacheKeyFile)));
  if (Expected<cache::remote::SigningKey> key = cache::remote::SigningKey::load(remote.key_file);
      !key)
    throw InputError(fmt::format("{}: {}; nothing was pulled", printable(remote.key_file),
                                 key.failure().message));
}

// The archs each input is pulled for: --arch, else a recorded request's own.
std::vector<std::string> archs_for(const KernelInput& input,
                                   const std::vector<std::string>& given) {
  if (!given.empty()) return given;
  if (!input.arch.empty()) return {input.arch};
  throw InputError(fmt::format("{}: no arch to pull it for: pass --arch (e.g. --arch gfx90a)",
                               printable(input.label)));
}

}  // namespace

int run_remote_pull(const CacheOptions& cache_options, const RemoteCommandOptions& options) {
  const RemoteSettings remote = require_remote(options);
  require_key(remote);
  InputSettings input_settings;
  input_settings.allow_compiler_plugins = options.allow_compiler_plugins;
  const std::vector<KernelInput> inputs = collect_kernel_inputs(options.paths, input_settings);
  const std::vector<std::string> given_archs = split_archs(options.archs);
  for (const KernelInput& input : inputs) (void)archs_for(input, given_archs);

  // One connection first, so that a remote that is down is one message, not one per request.
  if (Expected<cache::remote::RedisConnection> probe = connect(remote); !probe) {
    fmt::print(stderr, "hipacm: error: {}; nothing was pulled\n",
               printable(probe.failure().message));
    return kExitFailures;
  }
  cache::CacheAdmin admin = open_cache(cache_options);
  cache::CacheSettings lookup;
  lookup.policy = cache::Policy::kRead;
  lookup.user_db = admin.path();
  cache::CachingCompiler keys(std::make_shared<NeverCompiles>(), lookup);
  cache::remote::RemoteTier tier(remote, admin.path());

  backend::StatsCounters& counters = backend::stats();
  std::vector<Outcome> outcomes;
  for (const KernelInput& input : inputs) {
    for (const std::string& arch : archs_for(input, given_archs)) {
      if (!input.compiles_for(arch) && given_archs.empty()) continue;
      const backend::CompileRequest request = compile_request(input, arch);
      Outcome outcome{input.label, arch, "", "", ""};
      const std::optional<std::string> key = keys.cache_key_of(request);
      if (!key) {
        outcome.result = "not-cached";
        outcome.reason = "the request is never cached (see the library's log with -v)";
        outcomes.push_back(std::move(outcome));
        continue;
      }
      outcome.key = *key;
      // A header on disk could rename a kernel by macro; the check then leaves that test out,
      // as the cache's own serve-time check does.
      const bool reads_disk_headers = !cache::scan_external_inputs(request).digest.empty();
      if (std::optional<cache::CacheEntry> local = admin.lookup(*key);
          local && cache::validate_entry_for_request(*local, request, reads_disk_headers)) {
        outcome.result = "local";
        outcomes.push_back(std::move(outcome));
        continue;
      }
      // fetch() tells a refused value and an absent one apart only in the counters; anything
      // else (a lost connection, or the breaker that stops asking after repeated failures) is
      // an unanswered request.
      const std::uint64_t refused_before = counters.remote_refused.load();
      const std::uint64_t misses_before = counters.remote_misses.load();
      std::optional<cache::CacheEntry> entry = tier.fetch(*key);
      if (!entry) {
        if (counters.remote_refused.load() != refused_before) {
          outcome.result = "refused";
          outcome.reason = "it failed verification (signature, key or bounds; see the log)";
        } else if (counters.remote_misses.load() != misses_before) {
          outcome.result = "absent";
        } else {
          outcome.result = "error";
          outcome.reason = "the remote did not answer";
        }
        outcomes.push_back(std::move(outcome));
        continue;
      }
      if (Expected<void> answers =
              cache::validate_entry_for_request(*entry, request, reads_disk_headers);
          !answers) {
        outcome.result = "refused";
        outcome.reason = answers.failure().message;
        outcomes.push_back(std::move(outcome));
        continue;
      }
      Expected<cache::CacheAdmin::Imported> stored = admin.import_entry(std::move(*entry), arch);
      if (!stored) {
        outcome.result = "refused";
        outcome.reason = stored.failure().message;
      } else {
        outcome.result =
            stored.value() == cache::CacheAdmin::Imported::kAccepted ? "pulled" : "local";
      }
      outcomes.push_back(std::move(outcome));
    }
  }

  std::size_t pulled = 0, local = 0, absent = 0, refused = 0, errors = 0, not_cached = 0;
  for (const Outcome& o : outcomes) {
    const std::string result = o.result;
    pulled += result == "pulled";
    local += result == "local";
    absent += result == "absent";
    refused += result == "refused";
    errors += result == "error";
    not_cached += result == "not-cached";
  }
  if (options.json) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const Outcome& o : outcomes)
      list.push_back(
          {{"label", o.label},
           {"arch", o.arch},
           {"key", o.key.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(o.key)},
           {"result", o.result},
           {"reason", o.reason.empty() ? nlohmann::ordered_json(nullptr)
                                       : nlohmann::ordered_json(o.reason)}});
    write_json({{"schema", "hipacm-cache-remote-pull-1"},
                {"path", admin.path()},
                {"remote", remote.address.display()},
                {"pulled", pulled},
                {"already_local", local},
                {"absent", absent},
                {"refused", refused},
                {"errors", errors},
                {"not_cached", not_cached},
                {"requests", list}},
               "-");
  } else {
    for (const Outcome& o : outcomes) {
      if (!cache_options.verbose && o.reason.empty()) continue;
      fmt::print("{:<10} {:<8} {}{}\n", o.result, printable(o.arch), printable(o.label),
                 o.reason.empty() ? "" : "  " + printable(o.reason));
    }
    fmt::print("pulled {} entries from {} into {} ({} already local, {} absent, {} refused{}{})\n",
               pulled, printable(remote.address.display()), printable(admin.path()), local, absent,
               refused, errors ? fmt::format(", {} unanswered", errors) : "",
               not_cached ? fmt::format(", {} never cached", not_cached) : "");
  }
  return refused == 0 && errors == 0 ? kExitOk : kExitFailures;
}

}  // namespace hipacm::cli
