// SPDX-License-Identifier: MIT
// warmup_command.cpp - `hipacm warmup`: compiles .hip files, directories or a manifest for archs.
#include <fmt/core.h>
#include <hipacm/hipacm.hpp>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "support/settings.h"
#include "tools/common/commands.h"
#include "tools/common/exit_codes.h"
#include "tools/common/json_output.h"
#include "tools/common/option_checks.h"
#include "tools/common/remote_cache_option.h"
#include "tools/common/terminal_text.h"
#include "tools/input/kernel_input.h"
#include "tools/input/run_options.h"
#include "tools/warmup/code_object_files.h"
#include "tools/warmup/dry_run.h"
#include "tools/warmup/progress.h"
#include "tools/warmup/warmup_job.h"
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
  std::string remote_cache;  ///< --remote-cache: never with a password
  std::string output_dir;
  std::vector<std::string> include_dirs;
  std::vector<std::string> defines;
  std::vector<std::string> extra_options;
  std::vector<std::string> extensions;
  bool allow_compiler_plugins = false;
  bool no_cache = false;
  bool cache_failures = false;
  bool compare_serial = false;
  bool dry_run = false;
  bool keep_going = false;
  bool quiet = false;
  bool verbose = false;
  std::size_t log_lines = 10;
  bool mpi = false;
  bool keep_services = false;
  std::string gather_to_root;
  std::string costs_file;
};

constexpr const char* kMpiHelper = "hipacm-mpi";

// Where an install puts the helper, relative to the tool's directory (BINDIR to
// LIBEXECDIR/hipacm/hipacm-mpi); CMake derives it from GNUInstallDirs.
#ifndef HIPACM_MPI_INSTALL_RELPATH
#define HIPACM_MPI_INSTALL_RELPATH "../libexec/hipacm/hipacm-mpi"
#endif

// The helper beside the tool (the build tree) or where an install puts it; empty when neither.
std::filesystem::path find_mpi_helper() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  for (const std::filesystem::path& helper :
       {self.parent_path() / kMpiHelper,
        (self.parent_path() / HIPACM_MPI_INSTALL_RELPATH).lexically_normal()})
    if (::access(helper.c_str(), X_OK) == 0) return helper;
  return {};
}

// The plain tool never links MPI (a machine without Open MPI must still run it), so `--mpi`
// becomes the MPI helper of the same build or install, given the same command line. exec keeps
// the process, and with it what the launcher set up for this rank.
[[noreturn]] void hand_to_mpi_helper(const std::vector<std::string>& arguments) {
  const std::filesystem::path helper = find_mpi_helper();
  if (helper.empty())
    throw InputError(fmt::format(
        "--mpi needs {}, which this build of hipacm does not have (looked beside hipacm and at "
        "{} from it; it is built when Open MPI is found, or with -DHIPACM_WITH_MPI=ON; install "
        "openmpi-bin and libopenmpi-dev)",
        kMpiHelper, HIPACM_MPI_INSTALL_RELPATH));
  std::vector<std::string> args = arguments;
  args.at(0) = helper.string();
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::fflush(nullptr);
  ::execv(helper.c_str(), argv.data());
  throw std::runtime_error(
      fmt::format("cannot run {}: {}", printable(helper.string()), std::strerror(errno)));
}

// --arch compiles every input for the archs it names, recorded requests included. Without it, a
// recorded request compiles for the arch it was recorded with, and every other input for
// $HIPACM_ARCH or the device's.
std::vector<std::string> resolve_archs(const WarmupOptions& options,
                                       std::vector<KernelInput>& inputs) {
  std::vector<std::string> archs = split_archs(options.archs);
  if (!archs.empty()) {
    for (KernelInput& input : inputs) input.arch.clear();
    return archs;
  }
  bool any_without_arch = false;
  for (const KernelInput& input : inputs) {
    any_without_arch = any_without_arch || input.arch.empty();
    if (!input.arch.empty() && std::find(archs.begin(), archs.end(), input.arch) == archs.end())
      archs.push_back(input.arch);
  }
  if (any_without_arch) {
    // $HIPACM_ARCH or the device's, as the plugin resolves it.
    const std::string fallback = hipacm::backend_info().default_arch;
    if (fallback.empty())
      throw InputError(fmt::format("no arch: pass --arch (e.g. --arch gfx90a,gfx1030) or set {}",
                                   settings::name(settings::Id::kArch)));
    if (std::find(archs.begin(), archs.end(), fallback) == archs.end()) archs.push_back(fallback);
  }
  return archs;
}

// The same kernels again, one compile at a time and without the cache, so that the parallel
// run's wall time has a measured serial one beside it.
WarmupResult run_serial(const std::vector<KernelInput>& inputs, const WarmupSettings& settings,
                        const ProgressLook& look) {
  WarmupSettings serial = settings;
  serial.jobs = 1;
  serial.no_cache = true;
  serial.cache_dir.clear();
  serial.cache_failures = false;
  Progress progress(stderr, look, compile_count(inputs, serial.archs));
  return run_warmup(inputs, serial, progress);
}

int run(const WarmupOptions& options, const AppContext& context, const ClusterRunner* cluster) {
  refuse_password_in_argv("--remote-cache", options.remote_cache);
  if (options.mpi && cluster == nullptr) hand_to_mpi_helper(context.arguments);
  if (!options.mpi && (!options.gather_to_root.empty() || !options.costs_file.empty()))
    throw InputError("--gather-to-root and --costs belong to a distributed run: add --mpi");
  if (!options.mpi && options.keep_services)
    throw InputError("--keep-services belongs to a distributed run: add --mpi");
  WarmupSettings settings;
  settings.jobs = options.jobs;
  settings.timeout_ms = timeout_ms_from_seconds(options.timeout_seconds);
  settings.cache_dir =
      options.mpi ? with_rank(options.cache_dir, cluster->rank) : options.cache_dir;
  settings.no_cache = options.no_cache;
  settings.cache_failures = options.cache_failures;
  // The modes read the remote cache from the environment when their config names none (the C++
  // Config has no field for it), and so does every rank of a distributed run, which runs this
  // same command line.
  if (!options.remote_cache.empty() &&
      ::setenv(settings::name(settings::Id::kRemoteCache), options.remote_cache.c_str(), 1) != 0)
    throw std::runtime_error(fmt::format(
        "cannot set {}: {}", settings::name(settings::Id::kRemoteCache), std::strerror(errno)));
  if (!options.no_cache) settings.remote_cache = remote_cache_display(options.remote_cache);

  // Everything that can be wrong with the input is found before anything compiles.
  InputSettings input_settings;
  input_settings.extensions = kernel_extensions(options.extensions);
  input_settings.allow_compiler_plugins = options.allow_compiler_plugins;
  input_settings.common_options =
      common_compiler_options(options.include_dirs, options.defines, options.extra_options);
  std::vector<KernelInput> inputs = collect_kernel_inputs(options.paths, input_settings);
  settings.archs = resolve_archs(options, inputs);
  check_request_names(inputs);
  // Before check_archs, whose modes would open the named cache and fall back quietly. A
  // distributed run checks each rank's own in the job, where one rank's error stops them all.
  if (!options.mpi && !options.dry_run) check_named_cache(settings);
  check_archs(settings);

  if (options.mpi) {
    WarmupJob job;
    job.inputs = &inputs;
    job.settings = settings;
    job.common_options = input_settings.common_options;
    job.json_target = options.json_target;
    job.gather_to_root = options.gather_to_root;
    job.costs_file = options.costs_file;
    job.quiet = options.quiet;
    job.verbose = options.verbose;
    job.keep_going = options.keep_going;
    job.keep_services = options.keep_services;
    job.log_lines = options.log_lines;
    return cluster->run(job);
  }

  // With the JSON report on stdout, the human-readable text goes to stderr.
  std::FILE* text = options.json_target == "-" ? stderr : stdout;
  if (options.dry_run) {
    const std::vector<DryRunEntry> entries = dry_run(inputs, settings);
    print_dry_run(text, entries);
    if (!options.json_target.empty())
      write_json(dry_run_json(entries, settings), options.json_target);
    return kExitOk;
  }
  const ProgressLook look = choose_progress_look(stderr, options.quiet);
  Progress progress(stderr, look, compile_count(inputs, settings.archs));
  const WarmupResult result = run_warmup(inputs, settings, progress);
  std::optional<WarmupResult> serial;
  if (options.compare_serial) serial = run_serial(inputs, settings, look);

  RunFacts facts;
  facts.settings = &settings;
  facts.common_options = input_settings.common_options;
  facts.serial = serial ? &*serial : nullptr;
  if (options.verbose) print_kernel_lines(text, result);
  print_failures(stderr, result, options.log_lines);
  print_summary(text, result, facts);
  if (!options.output_dir.empty()) {
    const auto files = write_code_objects(result, options.output_dir);
    fmt::print(text, "wrote {} code objects to {}\n", files.size(), options.output_dir);
  }
  if (!options.json_target.empty())
    write_json(warmup_report_json(result, facts), options.json_target);
  const bool any_failed = totals_of(result).failed > 0;
  return any_failed && !options.keep_going ? kExitFailures : kExitOk;
}

// A repeatable option takes one value each time it is given, so that in
// `hipacm warmup --arch gfx90a kernels/` the path stays a path.
CLI::Option* one_value_each(CLI::Option* option) { return option->allow_extra_args(false); }

}  // namespace

std::string with_rank(const std::string& dir, int rank) {
  std::string out;
  for (std::size_t i = 0; i < dir.size(); ++i) {
    if (dir[i] == '%' && i + 1 < dir.size() && (dir[i + 1] == 'r' || dir[i + 1] == '%')) {
      out += dir[i + 1] == 'r' ? std::to_string(rank) : "%";
      ++i;
    } else {
      out += dir[i];
    }
  }
  return out;
}

void add_warmup_command(CLI::App& app, AppContext& context, const ClusterRunner* cluster) {
  auto options = std::make_shared<WarmupOptions>();
  CLI::App* warmup = app.add_subcommand(
      "warmup", "Compile kernels for one or more archs through hipacm (and fill its cache)");
  add_non_empty_option(warmup, "paths", options->paths,
                       fmt::format("Kernel files, directories (searched recursively for --ext "
                                   "files, .hip by default), a JSON manifest or a record file "
                                   "(${})",
                                   settings::name(settings::Id::kRecord)))
      ->required();
  one_value_each(
      warmup->add_option("-a,--arch", options->archs,
                         fmt::format("Target archs, comma-separated or repeated (default: a "
                                     "recorded request's own arch, else ${}, else the GPU's)",
                                     settings::name(settings::Id::kArch))));
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
      fmt::format("Cache directory (default: ${}, $XDG_CACHE_HOME/hipacm, ~/.cache/hipacm)",
                  settings::name(settings::Id::kCacheDir)));
  CLI::Option* no_cache =
      warmup->add_flag("--no-cache", options->no_cache, "Neither read nor write the cache")
          ->excludes(cache_dir);
  add_non_empty_option(
      warmup, "--remote-cache", options->remote_cache,
      fmt::format("The shared remote cache below the local one, redis://[USER@]HOST[:PORT][/DB] "
                  "(default: ${}; off for none); never with a password, which any user could "
                  "read in the command line: give it in ${} or ${}",
                  settings::name(settings::Id::kRemoteCache),
                  settings::name(settings::Id::kRemoteCachePasswordFile),
                  settings::name(settings::Id::kRemoteCache)))
      ->excludes(no_cache);
  warmup
      ->add_flag("--cache-failures", options->cache_failures,
                 "Store failed compiles in the cache, and fail a kernel whose failure is stored "
                 "at once, without compiling it again")
      ->excludes(no_cache);
  one_value_each(warmup->add_option("-I,--include-dir", options->include_dirs,
                                    "Add DIR to every kernel's include path (repeatable)"));
  one_value_each(warmup->add_option("-D,--define", options->defines,
                                    "Define NAME (or NAME=VALUE) for every kernel (repeatable)"));
  one_value_each(warmup->add_option(
      "--option", options->extra_options,
      "Pass OPT to the compiler for every kernel (repeatable; --option=-O2 for a value "
      "that starts with a dash)"));
  one_value_each(warmup->add_option("--ext", options->extensions,
                                    "File name endings a directory contributes, comma-separated "
                                    "or repeated (default .hip; e.g. --ext .hip,.cpp,.cu)"));
  warmup->add_flag("--allow-compiler-plugins", options->allow_compiler_plugins,
                   "Let options read from record files, manifests and directives load code into "
                   "the compiler (-Xclang -load, -fplugin=, -fpass-plugin=, -mllvm -load, @FILE, "
                   "-B ...); without it they are an input error");
  warmup->add_flag("--compare-serial", options->compare_serial,
                   "After the run, compile the same kernels again one at a time without the "
                   "cache, and print the measured wall-time ratio");
  warmup
      ->add_flag("--dry-run", options->dry_run,
                 "List what would compile and what the cache already holds; compile nothing")
      ->excludes("--compare-serial");
  add_non_empty_option(warmup, "-o,--output-dir", options->output_dir,
                       "Also write each code object to DIR as <name>.<arch>.co");
  warmup->add_flag("-k,--keep-going", options->keep_going,
                   "Exit 0 even when some kernels failed (failures are still reported)");
  CLI::Option* mpi = warmup->add_flag(
      "--mpi", options->mpi,
      "Run as one rank of an MPI job (mpirun/srun, the same arguments on every rank): the "
      "kernels are shared out over the ranks and every rank's cache gets every code object. "
      "In --cache-dir, %r stands for the rank");
  mpi->excludes("--dry-run")
      ->excludes("--compare-serial")
      ->excludes(no_cache)
      ->excludes("--output-dir");
  add_non_empty_option(warmup, "--gather-to-root", options->gather_to_root,
                       "With --mpi: send the code objects to rank 0 only, which writes them to "
                       "FILE as an export file ('hipacm cache import' reads it)");
  add_non_empty_option(warmup, "--costs", options->costs_file,
                       "With --mpi: an earlier --json report, whose compile times weigh the "
                       "kernels when they are shared out (else their source size does)");
  warmup->add_flag("--keep-services", options->keep_services,
                   "With --mpi and HIPACM_ISOLATION=service=on: leave running the compile "
                   "service each rank started (by default it is stopped when the rank ends), "
                   "for a job that warms and then compiles more");
  warmup->add_flag("-q,--quiet", options->quiet, "No progress output");
  warmup->add_flag("-v,--verbose", options->verbose, "One line per compiled kernel");
  warmup
      ->add_option("--log-lines", options->log_lines,
                   "Lines kept from each end of a failed compile's log (0: none)")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{0}, kMaxLogLines));
  finish_command(
      warmup, context, [options, &context, cluster] { return run(*options, context, cluster); },
      {"hipacm warmup examples/kernels --arch gfx90a,gfx1030",
       "hipacm warmup kernels/ --ext .cpp,.cu -I include -D BLOCK=256 --arch gfx90a",
       "hipacm warmup kernels/ --arch gfx90a --dry-run",
       "hipacm warmup kernels/ --arch gfx90a --no-cache --compare-serial",
       "hipacm warmup examples/kernels/manifest.json --arch gfx90a --jobs 8 --json report.json",
       "hipacm warmup kernels/ --arch gfx1030 --no-cache --keep-going --json - | jq .totals",
       "srun hipacm warmup --mpi manifest.json --arch gfx90a --cache-dir /tmp/hipacm-cache"},
      "0 all compiled, 1 some failed (0 with --keep-going), 2 usage or input error,\n"
      "3 no compiler backend.");
}

}  // namespace hipacm::cli
