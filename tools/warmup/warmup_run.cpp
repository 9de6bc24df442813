// warmup_run.cpp - submits every kernel to one mode per arch, tracks progress, collects outcomes.
#include "tools/warmup/warmup_run.h"

#include <fmt/core.h>

#include <chrono>
#include <cstddef>
#include <stdexcept>

#include "hip_backend/source_name_policy.h"
#include "tools/code_object_summary.h"
#include "tools/exit_codes.h"
#include "tools/input/terminal_text.h"

namespace hipacm::cli {
namespace {

constexpr std::chrono::milliseconds kPoll{100};

// Leaves the mode on every path; exit frees the slot even when compiles failed. A mode with a
// cache directory or policy cannot be a hipacm::Mode (hipacm::Config has neither), so this one is
// entered through the C ABI.
class ModeScope {
 public:
  explicit ModeScope(hipacm_mode* mode) : mode_(mode) {}
  ModeScope(const ModeScope&) = delete;
  ModeScope& operator=(const ModeScope&) = delete;
  ~ModeScope() { exit(); }
  hipacm_mode* get() const { return mode_; }
  void exit() {
    if (mode_ != nullptr) hipacm_mode_exit(mode_, nullptr);
    mode_ = nullptr;
  }

 private:
  hipacm_mode* mode_;
};

hipacm_mode* enter_mode(const WarmupSettings& settings, const std::string& arch) {
  hipacm_mode_config config = hipacm::Config()
                                  .arch(arch)
                                  .max_workers(settings.jobs)
                                  .ignore_errors()  // every outcome is read from its future
                                  .isolation(hipacm::Isolation::Auto)
                                  .compile_timeout(std::chrono::milliseconds(settings.timeout_ms))
                                  .to_c();
  config.cache_dir = settings.cache_dir.empty() ? nullptr : settings.cache_dir.c_str();
  config.cache_policy = settings.no_cache ? HIPACM_CACHE_OFF : HIPACM_CACHE_DEFAULT;
  hipacm_mode* mode = nullptr;
  const hipacm_status status = hipacm_mode_enter(&config, &mode);
  if (status == HIPACM_SUCCESS) return mode;
  const std::string message = hipacm_last_error_message();
  if (status == HIPACM_ERROR_INVALID_ARGUMENT)
    throw InputError(fmt::format("arch '{}': {}", arch, message));
  if (status == HIPACM_ERROR_BACKEND_UNAVAILABLE) throw BackendUnavailable(message);
  throw std::runtime_error(fmt::format("cannot enter a mode for {}: {}: {}", arch,
                                       hipacm_status_string(status), message));
}

// The pointer arrays a hipacm_request borrows, kept alive beside it.
struct RequestView {
  std::vector<const char*> options, header_names, header_sources, name_expressions;
  hipacm_request request{};

  explicit RequestView(const KernelInput& input) {
    for (const auto& option : input.options) options.push_back(option.c_str());
    for (const auto& [name, contents] : input.headers) {
      header_names.push_back(name.c_str());
      header_sources.push_back(contents.c_str());
    }
    for (const auto& expression : input.name_expressions)
      name_expressions.push_back(expression.c_str());
    request.struct_size = sizeof request;
    request.source = input.source.c_str();
    request.source_name = input.source_name.c_str();
    request.options = options.data();
    request.num_options = options.size();
    request.header_names = header_names.data();
    request.header_sources = header_sources.data();
    request.num_headers = header_names.size();
    request.name_expressions = name_expressions.data();
    request.num_name_expressions = name_expressions.size();
  }
};

bool kernel_has_from_cache(const hipacm_kernel& kernel) {
  return kernel.struct_size >= offsetof(hipacm_kernel, from_cache) + sizeof kernel.from_cache;
}

void read_outcome(const hipacm::Future& future, KernelOutcome* outcome) {
  outcome->key = future.key();
  outcome->log = future.log();
  const hipacm_kernel* kernel = nullptr;
  try {
    kernel = &future.result();
  } catch (const hipacm::Error& e) {
    outcome->status = static_cast<hipacm_status>(e.status());
    outcome->error = e.message().empty() ? hipacm::status_string(e.status()) : e.message();
    return;
  }
  outcome->status = HIPACM_SUCCESS;
  outcome->code_size = kernel->code_size;
  outcome->compile_seconds = kernel->compile_seconds;
  outcome->from_cache = kernel_has_from_cache(*kernel) && kernel->from_cache != 0;
  const auto* bytes = static_cast<const std::uint8_t*>(kernel->code);
  outcome->code.assign(bytes, bytes + kernel->code_size);
  CodeObjectSummary summary;
  std::string error;
  if (summarize_code_object(outcome->code, &summary, &error)) outcome->kernels = summary.kernels;
}

}  // namespace

void check_request_names(const std::vector<KernelInput>& inputs) {
  for (const KernelInput& input : inputs) {
    std::string why;
    if (!backend::source_name_allowed(input.source_name, &why))
      throw InputError(
          fmt::format("{}: source name refused: {}", printable(input.label), printable(why)));
    for (const auto& header : input.headers)
      if (!backend::source_name_allowed(header.first, &why))
        throw InputError(
            fmt::format("{}: header name refused: {}", printable(input.label), printable(why)));
  }
}

void check_archs(const WarmupSettings& settings) {
  // Entering a mode checks the arch and that its compiler loads (from the
  // cache's remembered facts when it can); without this, every compile would
  // fail one by one with BACKEND_UNAVAILABLE.
  for (const std::string& arch : settings.archs) ModeScope mode(enter_mode(settings, arch));
}

WarmupResult run_warmup(const std::vector<KernelInput>& inputs, const WarmupSettings& settings,
                        Progress& progress) {
  using Clock = std::chrono::steady_clock;
  WarmupResult result;
  const auto started = Clock::now();
  std::size_t done_before = 0, failed = 0;
  for (const std::string& arch : settings.archs) {
    const auto arch_started = Clock::now();
    ModeScope mode(enter_mode(settings, arch));
    std::vector<hipacm::Future> futures;
    std::vector<KernelOutcome> outcomes(inputs.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      outcomes[i].input = &inputs[i];
      outcomes[i].arch = arch;
      RequestView view(inputs[i]);
      hipacm_future* future = nullptr;
      const hipacm_status status = hipacm_submit(mode.get(), &view.request, &future);
      futures.emplace_back(status == HIPACM_SUCCESS ? future : nullptr);  // adopts the reference
      if (status == HIPACM_ERROR_INVALID_ARGUMENT)
        throw InputError(fmt::format("{}: refused by hipacm: {}", printable(inputs[i].label),
                                     printable(hipacm_last_error_message())));
      if (status != HIPACM_SUCCESS) {
        outcomes[i].status = status;
        outcomes[i].error = fmt::format("submit failed: {}", hipacm_last_error_message());
        ++failed;
      }
    }
    // Poll in submission order: wait on the first unfinished future, then sweep.
    std::vector<std::size_t> pending;
    for (std::size_t i = 0; i < futures.size(); ++i)
      if (futures[i]) pending.push_back(i);
    std::size_t done = inputs.size() - pending.size();
    progress.update(done_before + done, failed, arch);
    while (!pending.empty()) {
      futures[pending.front()].wait_for(kPoll);
      std::erase_if(pending, [&](std::size_t i) {
        const hipacm::Status status = futures[i].status();
        if (status == hipacm::Status::NotReady) return false;
        ++done;
        if (status != hipacm::Status::Success) ++failed;
        return true;
      });
      progress.update(done_before + done, failed, arch);
    }
    mode.exit();  // collects: every future is complete and its callbacks (none) have run
    for (std::size_t i = 0; i < futures.size(); ++i)
      if (futures[i]) read_outcome(futures[i], &outcomes[i]);
    result.arch_wall_seconds.emplace_back(
        arch, std::chrono::duration<double>(Clock::now() - arch_started).count());
    done_before += inputs.size();
    for (KernelOutcome& outcome : outcomes) result.outcomes.push_back(std::move(outcome));
  }
  progress.finish();
  result.wall_seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return result;
}

}  // namespace hipacm::cli
