// SPDX-License-Identifier: MIT
// device_check_main.cpp - warms every example kernel through hipacm for an NVIDIA arch, launches
// each through the CUDA driver and compares it with a CPU reference.
#include <hipacm/hipacm.hpp>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>

#include "cuda_driver.h"
#include "kernel_checks.h"
#include "warm_set.h"

namespace hipacm::device {
namespace {

/// ctest's SKIP_RETURN_CODE: no GPU or no NVIDIA compiler here, nothing was launched.
constexpr int kExitSkipped = 77;

struct Tally {
  int passed = 0, failed = 0, skipped = 0;
  void pass(const std::string& what) { ++passed, std::printf("PASS %s\n", what.c_str()); }
  void fail(const std::string& what) { ++failed, std::printf("FAIL %s\n", what.c_str()); }
  void skip(const std::string& what) { ++skipped, std::printf("SKIP %s\n", what.c_str()); }
};

bool has_module_fields(const hipacm_kernel* k) {
  return k->struct_size >= offsetof(hipacm_kernel, num_functions) + sizeof(k->num_functions);
}

/// Modules this program loaded itself from a code object that hipacm returned without loading it.
class SelfLoadedModules {
 public:
  explicit SelfLoadedModules(const CudaDriver& cu) : cu_(cu) {}
  ~SelfLoadedModules() {
    for (auto& [file, module] : modules_) cu_.unload_module(module);
  }
  SelfLoadedModules(const SelfLoadedModules&) = delete;
  SelfLoadedModules& operator=(const SelfLoadedModules&) = delete;

  CuFunction get(const std::string& file, const hipacm_kernel* k, const std::string& symbol) {
    auto it = modules_.find(file);
    if (it == modules_.end()) {
      // cuModuleLoadData wants PTX NUL-terminated; a CUBIN is unaffected by the extra byte.
      std::string image(static_cast<const char*>(k->code), k->code_size);
      CuModule m = nullptr;
      if (CuResult r = cu_.load_module(&m, image.c_str()); r != 0)
        throw std::runtime_error("cuModuleLoadData on hipacm's code object: " + cu_.describe(r));
      it = modules_.emplace(file, m).first;
    }
    CuFunction f = nullptr;
    if (CuResult r = cu_.get_function(&f, it->second, symbol.c_str()); r != 0)
      throw std::runtime_error("cuModuleGetFunction(" + symbol + "): " + cu_.describe(r));
    return f;
  }

 private:
  const CudaDriver& cu_;
  std::map<std::string, CuModule> modules_;
};

void print_warm(const std::vector<ExampleSource>& set, const WarmReport& warm, bool loading,
                Tally& tally) {
  for (const auto& example : set) {
    const WarmedExample& w = warm.by_file.at(example.file);
    std::string line = "warm " + example.file;
    if (w.status != hipacm::Status::Success) {
      tally.fail(line + ": " + hipacm::status_string(w.status) + ": " + w.message);
      continue;
    }
    const hipacm_kernel* k = w.kernel;
    line += ": " + std::to_string(k->code_size) + " bytes for " + (k->arch ? k->arch : "?");
    if (!has_module_fields(k)) {
      tally.fail(line + "; the plugin's hipacm_kernel predates ABI 1.2 (no module fields)");
      continue;
    }
    std::string names;
    std::size_t resolved = 0;
    for (std::size_t i = 0; i < k->num_functions; ++i) {
      names += std::string(i ? "," : "") + k->function_names[i];
      if (k->functions != nullptr && k->functions[i] != nullptr) ++resolved;
    }
    line += ", " + std::to_string(k->num_functions) + " functions [" + names + "]";
    if (!loading) {
      tally.pass(line + " (compile only)");
    } else if (k->module == nullptr || resolved != k->num_functions || k->num_functions == 0) {
      tally.fail(line + "; load_device=0 but module=" + (k->module ? "set" : "NULL") + ", " +
                 std::to_string(resolved) + " functions resolved");
    } else {
      tally.pass(line + ", module loaded, all resolved");
    }
  }
}

int run(const std::string& kernels_dir, const std::string& arch, const std::string& isolation_name,
        int ordinal) {
  const std::map<std::string, hipacm::Isolation> isolations = {
      {"auto", hipacm::Isolation::Auto},
      {"in-process", hipacm::Isolation::InProcess},
      {"process", hipacm::Isolation::Process}};
  std::vector<ExampleSource> set;
  try {
    set = bench::load_example_manifest(kernels_dir);
  } catch (const std::exception& e) {
    std::printf("ERROR reading the examples: %s\n", e.what());
    return 2;
  }

  CudaDriver cu(ordinal);
  if (cu.ok()) {
    std::printf("GPU: device %d, %s\n", ordinal, cu.device_name().c_str());
  } else {
    std::printf("GPU: none usable (%s); warming with load_device=-1 (compile only)\n",
                cu.why().c_str());
  }
  const hipacm::BackendInfo info = hipacm::backend_info();
  std::printf("hipacm backend: %s %s (%s), default arch '%s'; target arch %s, isolation %s\n",
              info.compiler.c_str(), info.version.c_str(), info.library_path.c_str(),
              info.default_arch.c_str(), arch.c_str(), isolation_name.c_str());

  const int32_t load_device = cu.ok() ? ordinal : HIPACM_LOAD_NONE;
  const WarmReport warm = warm_examples(set, arch, load_device, isolations.at(isolation_name));
  if (warm.enter_status != hipacm::Status::Success) {
    std::printf("FAIL hipacm_mode_enter(arch=%s): %s: %s\n", arch.c_str(),
                hipacm::status_string(warm.enter_status), warm.enter_message.c_str());
    std::printf("0 passed, 1 failed, %zu skipped\n", all_kernel_checks().size());
    return cu.ok() ? 1 : kExitSkipped;
  }
  std::printf("warmed %zu examples in %.2f s; mode exit: %s %s\n", set.size(), warm.seconds,
              hipacm::status_string(warm.exit_status), warm.exit_message.c_str());
  if (cu.ok() && cu.make_current() != 0) std::printf("note: cannot make the context current\n");

  Tally tally;
  print_warm(set, warm, cu.ok(), tally);

  const auto checks = all_kernel_checks();
  if (!cu.ok()) {
    for (const auto& check : checks) tally.skip(check.name + ": no GPU, not launched");
  } else {
    SelfLoadedModules self_loaded(cu);
    for (const auto& check : checks) {
      const WarmedExample& w = warm.by_file.at(check.file);
      if (w.kernel == nullptr) {
        tally.skip(check.name + ": " + check.file + " did not compile (see its warm line)");
        continue;
      }
      std::string via = "hipacm's CUfunction";
      const FunctionLookup lookup = [&](const std::string& file, const std::string& name,
                                        bool is_expression) -> CuFunction {
        const auto& example = *std::find_if(set.begin(), set.end(),
                                            [&](const ExampleSource& e) { return e.file == file; });
        const hipacm_kernel* k = warm.by_file.at(file).kernel;
        std::string symbol = name;
        if (is_expression) {
          const auto& exprs = example.name_expressions;
          const auto at = std::find(exprs.begin(), exprs.end(), name) - exprs.begin();
          if (static_cast<std::size_t>(at) >= k->num_lowered_names)
            throw std::runtime_error("no lowered name for " + name);
          symbol = k->lowered_names[at];
        }
        if (has_module_fields(k) && k->functions != nullptr)
          for (std::size_t i = 0; i < k->num_functions; ++i)
            if (symbol == k->function_names[i] && k->functions[i] != nullptr)
              return static_cast<CuFunction>(k->functions[i]);
        via = "self-loaded module (hipacm gave no CUfunction for " + symbol + ")";
        return self_loaded.get(file, k, symbol);
      };
      try {
        const std::string diff = check.run(cu, lookup);
        if (diff.empty()) {
          tally.pass(check.name + " [" + via + "]");
        } else {
          tally.fail(check.name + " [" + via + "]: " + diff);
        }
      } catch (const std::exception& e) {
        tally.fail(check.name + " [" + via + "]: " + e.what());
      }
    }
  }
  std::printf("%d passed, %d failed, %d skipped\n", tally.passed, tally.failed, tally.skipped);
  if (tally.failed > 0) return 1;
  return cu.ok() ? 0 : kExitSkipped;
}

}  // namespace
}  // namespace hipacm::device

int main(int argc, char** argv) {
  CLI::App app{
      "Warms every example kernel through hipacm for an NVIDIA arch and checks each "
      "one's output on the GPU against a CPU reference. Exit 0: all passed; 1: a check "
      "failed; 77: no GPU (warm-up only) or no NVIDIA compiler and no GPU."};
  std::string kernels_dir = HIPACM_EXAMPLES_DIR, arch = "sm_90", isolation = "auto";
  int device = 0;
  app.add_option("--kernels", kernels_dir, "examples directory with manifest.json");
  app.add_option("--arch", arch, "target arch");
  app.add_option("--isolation", isolation, "auto, in-process or process")
      ->check(CLI::IsMember({"auto", "in-process", "process"}));
  app.add_option("--device", device, "CUDA device ordinal");
  CLI11_PARSE(app, argc, argv);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  return hipacm::device::run(kernels_dir, arch, isolation, device);
}
