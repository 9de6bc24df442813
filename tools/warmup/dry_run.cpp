// SPDX-License-Identifier: MIT
// dry_run.cpp - looks warmup's kernels up in the persistent cache without compiling any.
#include "tools/warmup/dry_run.h"

#include <fmt/core.h>
#include <algorithm>

#include <memory>

#include "hip_backend/compiler.h"
#include "plugin/cache/caching_compiler.h"
#include "plugin/cache/store/location.h"
#include "tools/common/terminal_text.h"

namespace hipacm::cli {
namespace {

inline constexpr const char* kDryRunSchema = "hipacm-warmup-dry-run-1";

// What a lookup wraps: the cache never calls it for a hit, and a dry run makes no other call.
class NeverCompiles final : public backend::Compiler {
 public:
  backend::CompileResult compile(const backend::CompileRequest&) override {
    backend::CompileResult result;
    result.status = HIPACM_ERROR_INTERNAL;
    result.error_message = "a dry run compiles nothing";
    return result;
  }
};

}  // namespace

std::vector<DryRunEntry> dry_run(const std::vector<KernelInput>& inputs,
                                 const WarmupSettings& settings) {
  std::shared_ptr<backend::Compiler> lookup;
  if (!settings.no_cache) {
    // Read-only whatever the run would be allowed: a lookup must not write hit counts either.
    lookup = cache::with_persistent_cache(
        cache::resolve_cache_settings(HIPACM_CACHE_READ, settings.cache_dir),
        std::make_shared<NeverCompiles>());
  }
  // The cache's own wrapper, for the keys (none where the policy turned the cache off).
  auto* caching = dynamic_cast<cache::CachingCompiler*>(lookup.get());
  std::vector<DryRunEntry> entries;
  for (const std::string& arch : settings.archs) {
    for (const KernelInput& input : inputs) {
      if (!input.compiles_for(arch)) continue;
      DryRunEntry entry{&input, arch, false, {}};
      if (lookup) {
        const backend::CompileRequest request = compile_request(input, arch);
        backend::CompileResult ready;
        entry.cached = lookup->try_ready(request, &ready);
        if (caching) entry.key = caching->cache_key_of(request).value_or("");
      }
      entries.push_back(entry);
    }
  }
  return entries;
}

void print_dry_run(std::FILE* out, const std::vector<DryRunEntry>& entries) {
  std::size_t cached = 0;
  std::size_t width = 8;
  for (const DryRunEntry& entry : entries) width = std::max(width, printable(entry.arch).size());
  for (const DryRunEntry& entry : entries) {
    cached += entry.cached ? 1 : 0;
    fmt::print(out, "{:<8} {:<{}} {}\n", entry.cached ? "cached" : "compile", printable(entry.arch),
               width, printable(entry.input->label));
  }
  fmt::print(out, "dry run: {} to compile, {} from the cache, {} in all; nothing was compiled\n",
             entries.size() - cached, cached, entries.size());
}

nlohmann::ordered_json dry_run_json(const std::vector<DryRunEntry>& entries,
                                    const WarmupSettings& settings) {
  nlohmann::ordered_json kernels = nlohmann::ordered_json::array();
  std::size_t cached = 0;
  for (const DryRunEntry& entry : entries) {
    cached += entry.cached ? 1 : 0;
    kernels.push_back({{"path", entry.input->path},
                       {"label", entry.input->label},
                       {"options", entry.input->options},
                       {"arch", entry.arch},
                       {"cached", entry.cached}});
  }
  return {
      {"schema", kDryRunSchema},
      {"archs", settings.archs},
      {"cache", settings.no_cache ? "off" : "default"},
      {"cache_dir", settings.cache_dir.empty() ? nlohmann::ordered_json(nullptr)
                                               : nlohmann::ordered_json(settings.cache_dir)},
      {"totals",
       {{"kernels", entries.size()}, {"cached", cached}, {"to_compile", entries.size() - cached}}},
      {"kernels", kernels}};
}

}  // namespace hipacm::cli
