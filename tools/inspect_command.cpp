// inspect_command.cpp - `hipacm inspect FILE`: machine, arch and kernels of a code object.
#include <fmt/core.h>

#include <memory>

#include "tools/code_object_summary.h"
#include "tools/commands.h"
#include "tools/exit_codes.h"
#include "tools/json_output.h"
#include "tools/kernel_directives.h"

namespace hipacm::cli {
namespace {

struct InspectOptions {
  std::string file;
  bool json = false;
};

void print_summary(const std::string& source, const CodeObjectSummary& summary) {
  fmt::print("{}\n", source);
  fmt::print("  machine  {} (e_machine {})\n", summary.machine_name, summary.machine);
  fmt::print("  arch     {}\n", summary.arch.empty() ? "unknown" : summary.arch);
  fmt::print("  type     {}, e_flags 0x{:x}\n", summary.elf_type, summary.flags);
  fmt::print("  size     {} bytes, {} symbols\n", summary.size, summary.symbol_count);
  fmt::print("  kernels  {}\n", summary.kernels.size());
  for (const std::string& kernel : summary.kernels) fmt::print("    {}\n", kernel);
}

// Bytes from any source (a file here; a cache entry or a compile result elsewhere) print alike.
int report_code_object(const std::string& source, const std::vector<std::uint8_t>& bytes,
                       bool json) {
  CodeObjectSummary summary;
  std::string error;
  if (!summarize_code_object(bytes, &summary, &error))
    throw InputError(fmt::format("{}: not a code object this tool can read: {}", source, error));
  if (json) {
    nlohmann::ordered_json document = {{"schema", "hipacm-inspect-1"}, {"source", source}};
    document.update(to_json(summary));
    write_json(document, "-");
  } else {
    print_summary(source, summary);
  }
  return kExitOk;
}

int run(const InspectOptions& options) {
  const std::string text = read_text_file(options.file);
  return report_code_object(options.file, {text.begin(), text.end()}, options.json);
}

}  // namespace

void add_inspect_command(CLI::App& app, AppContext& context) {
  auto options = std::make_shared<InspectOptions>();
  CLI::App* inspect =
      app.add_subcommand("inspect", "List the kernels, arch and machine of a code object (ELF)");
  inspect->add_option("file", options->file, "A code object: AMDGPU ELF (or NVIDIA CUBIN)")
      ->required();
  inspect->add_flag("--json", options->json, "Print a JSON document instead of text");
  inspect->footer(
      "Examples:\n"
      "  hipacm inspect saxpy.gfx90a.co\n"
      "  hipacm inspect saxpy.gfx90a.co --json | jq -r '.kernels[]'\n"
      "Exit status: 0 read, 2 missing file or not an ELF code object.");
  inspect->callback([options, &context] { context.exit_code = run(*options); });
}

}  // namespace hipacm::cli
