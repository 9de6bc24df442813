// SPDX-License-Identifier: MIT
// warmup_command.cpp - `hipacm warmup`: compiles .hip files, directories or a manifest for archs.
#include <fmt/core.h>
#include <hipacm/hipacm.hpp>

#include <memory>

#include "tools/common/commands.h"
#include "tools/common/exit_codes.h"
#include "tools/common/json_output.h"
#include "tools/common/option_checks.h"
#include "tools/input/kernel_input.h"
#include "tools/warmup/code_object_files.h"
#include "tools/warmup/progress.h"
#include "tools/warmup/warmup_report.h"
#include "tools/warmup/warmup_run.h"

namespace hipacm::cli {
namespace {

// Ten minutes: far longer than any real kernel's compile, short enough that CI notices a hang.
constexpr const char* kDefaultTimeoutSeconds = "600";
constexpr std::size_t kMaxLogLines = 1'000'000;

struct WarmupOptions {
  std::vector<std::string> paths;
  std::vector<std::string> archs;
  std::uint32_t jobs = 0;
  /// As given; a hung compiler must not hang the run, so there is always a default.
  std::string timeout_seconds = kDefaultTimeoutSeconds;
  std::string json_target;
  std::string cache_dir;
  std::string output_dir;
  bool no_cache = false;
  bool keep_going = false;
  bool quiet = false;
  bool verbose = false;
  std::size_t log_lines = 10;
};

std::vector<std::string> resolve_archs(const WarmupOptions& options) {
  std::vector<std::string> archs = split_archs(options.archs);
  if (archs.empty()) {
    // $HIPACM_ARCH or the device's, as the plugin resolves it.
    const std::string fallback = hipacm::backend_info().default_arch;
    if (fallback.empty())
      throw InputError("no arch: pass --arch (e.g. --arch gfx90a,gfx1030) or set HIPACM_ARCH");
    archs.push_back(fallback);
  }
  return archs;
}

int run(const WarmupOptions& options) {
  WarmupSettings settings;
  settings.archs = resolve_archs(options);
  settings.jobs = options.jobs;
  settings.timeout_ms = timeout_ms_from_seconds(options.timeout_seconds);
  settings.cache_dir = options.cache_dir;
  settings.no_cache = options.no_cache;

  // Everything that can be wrong with the input is found before anything compiles.
  const std::vector<KernelInput> inputs = collect_kernel_inputs(options.paths);
  check_request_names(inputs);
  check_archs(settings);

  // With the JSON report on stdout, the human-readable text goes to stderr.
  std::FILE* text = options.json_target == "-" ? stderr : stdout;
  Progress progress(stderr, choose_progress_style(stderr, options.quiet),
                    inputs.size() * settings.archs.size());
  const WarmupResult result = run_warmup(inputs, settings, progress);

  if (options.verbose) print_kernel_lines(text, result);
  print_failures(stderr, result, options.log_lines);
  print_summary(text, result);
  if (!options.output_dir.empty()) {
    const auto files = write_code_objects(result, options.output_dir);
    fmt::print(text, "wrote {} code objects to {}\n", files.size(), options.output_dir);
  }
  if (!options.json_target.empty())
    write_json(warmup_report_json(result, settings), options.json_target);
  const bool any_failed = totals_of(result).failed > 0;
  return any_failed && !options.keep_going ? kExitFailures : kExitOk;
}

}  // namespace

void add_warmup_command(CLI::App& app, AppContext& context) {
  auto options = std::make_shared<WarmupOptions>();
  CLI::App* warmup = app.add_subcommand(
      "warmup", "Compile kernels for one or more archs through hipacm (and fill its cache)");
  add_non_empty_option(warmup, "paths", options->paths,
                       ".hip files, directories (searched recursively for .hip files) or a JSON "
                       "manifest")
      ->required();
  warmup->add_option("-a,--arch", options->archs,
                     "Target archs, comma-separated or repeated (default: $HIPACM_ARCH, else the "
                     "GPU's)");
  warmup->add_option("-j,--jobs", options->jobs, "Parallel compiles (0 = one per core)")
      ->check(CLI::Range(0, 4096));
  warmup
      ->add_option("--timeout", options->timeout_seconds,
                   "Per-compile limit in seconds (0 = none); a compile past it fails")
      ->capture_default_str();
  add_non_empty_option(warmup, "--json", options->json_target,
                       "Write a JSON report to FILE, or to stdout for '-'");
  CLI::Option* cache_dir = add_non_empty_option(
      warmup, "--cache-dir", options->cache_dir,
      "Cache directory (default: $HIPACM_CACHE_DIR, $XDG_CACHE_HOME/hipacm, ~/.cache/hipacm)");
  warmup->add_flag("--no-cache", options->no_cache, "Neither read nor write the cache")
      ->excludes(cache_dir);
  add_non_empty_option(warmup, "-o,--output-dir", options->output_dir,
                       "Also write each code object to DIR as <name>.<arch>.co");
  warmup->add_flag("-k,--keep-going", options->keep_going,
                   "Exit 0 even when some kernels failed (failures are still reported)");
  warmup->add_flag("-q,--quiet", options->quiet, "No progress output");
  warmup->add_flag("-v,--verbose", options->verbose, "One line per compiled kernel");
  warmup
      ->add_option("--log-lines", options->log_lines,
                   "Lines kept from each end of a failed compile's log (0: none)")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{0}, kMaxLogLines));
  finish_command(
      warmup, context, [options] { return run(*options); },
      {"hipacm warmup examples/kernels --arch gfx90a,gfx1030",
       "hipacm warmup examples/kernels/manifest.json --arch gfx90a --jobs 8 --json report.json",
       "hipacm warmup kernels/ --arch gfx1030 --no-cache --keep-going --json - | jq .totals"},
      "0 all compiled, 1 some failed (0 with --keep-going), 2 usage or input error,\n"
      "3 no compiler backend.");
}

}  // namespace hipacm::cli
