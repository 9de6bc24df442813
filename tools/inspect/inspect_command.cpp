// SPDX-License-Identifier: MIT
// inspect_command.cpp - `hipacm inspect FILE`: format, machine, arch, code-object version and
// kernels of a code object.
#include <fmt/core.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>

#include "plugin/cache/cache_admin.h"
#include "tools/common/code_object_summary.h"
#include "tools/common/commands.h"
#include "tools/common/exit_codes.h"
#include "tools/common/json_output.h"
#include "tools/common/option_checks.h"
#include "tools/common/terminal_text.h"
#include "tools/input/input_files.h"

namespace hipacm::cli {
namespace {

struct InspectOptions {
  std::string file;  ///< a code object file, or a cache key (prefix)
  std::string db;    ///< the cache to look keys up in; empty = the user cache
  bool json = false;
};

// "AMDGPU code object v6 (generic version 1)", for the format line.
std::string version_text(const CodeObjectSummary& summary) {
  if (summary.code_object_version == 0) return "";
  std::string text = fmt::format(", code object v{}", summary.code_object_version);
  if (summary.generic_version != 0)
    text += fmt::format(" (generic version {})", summary.generic_version);
  return text;
}

template <class T>
std::string cell(const std::optional<T>& value) {
  return value ? fmt::format("{}", *value) : "-";
}

// One row a kernel, the name last so that long (mangled) names keep the columns aligned.
void print_amdgpu_resources(const CodeObjectSummary& summary) {
  fmt::print(
      "  resources (AMDGPU metadata note; waves/SIMD computed, see 'hipacm inspect' in "
      "docs/CLI.md)\n");
  fmt::print("    {:>5} {:>5} {:>5} {:>7} {:>8} {:>5} {:>6} {:>7} {:>7} {:>5} {:>5} {:>5}  {}\n",
             "VGPR", "AGPR", "SGPR", "LDS", "scratch", "wave", "max-WG", "spill-S", "spill-V",
             "waves", "byV", "byS", "kernel");
  for (const AmdgpuKernelRow& row : summary.amdgpu_resources) {
    const backend::AmdgpuKernelResources& k = row.resources;
    std::optional<unsigned> waves, by_vgprs, by_sgprs;
    if (row.limits) {
      waves = row.limits->waves;
      by_vgprs = row.limits->by_vgprs;
      by_sgprs = row.limits->by_sgprs;
    }
    fmt::print("    {:>5} {:>5} {:>5} {:>7} {:>8} {:>5} {:>6} {:>7} {:>7} {:>5} {:>5} {:>5}  {}\n",
               cell(k.vgpr_count), cell(k.agpr_count), cell(k.sgpr_count),
               cell(k.group_segment_fixed_size), cell(k.private_segment_fixed_size),
               cell(k.wavefront_size), cell(k.max_flat_workgroup_size), cell(k.sgpr_spill_count),
               cell(k.vgpr_spill_count), cell(waves), cell(by_vgprs), cell(by_sgprs),
               printable(k.name));
  }
}

void print_cuda_resources(const CodeObjectSummary& summary) {
  fmt::print("  resources (CUBIN sections and .nv.info attributes; sizes in bytes)\n");
  fmt::print("    {:>4} {:>7} {:>7} {:>7} {:>7} {:>7}  {}\n", "REG", "shared", "local", "stack",
             "cmem0", "threads", "kernel");
  for (const backend::CudaKernelResources& k : summary.cuda_resources)
    fmt::print("    {:>4} {:>7} {:>7} {:>7} {:>7} {:>7}  {}\n", cell(k.registers), k.shared_bytes,
               k.local_bytes, cell(k.stack_frame_bytes), k.constant0_bytes,
               cell(k.max_threads ? k.max_threads : k.required_threads), printable(k.name));
}

// The file name, the arch and every symbol name come from the file: each is escaped.
void print_summary(const std::string& source, const CodeObjectSummary& summary) {
  fmt::print("{}\n", printable(source));
  fmt::print("  format   {}{}\n", summary.format, version_text(summary));
  if (summary.format == "ELF")
    fmt::print("  machine  {} (e_machine {})\n", summary.machine_name, summary.machine);
  else
    fmt::print("  machine  {}\n", summary.machine_name);
  fmt::print("  arch     {}\n", summary.arch.empty() ? "unknown" : printable(summary.arch));
  if (!summary.target_id.empty() && summary.target_id != summary.arch)
    fmt::print("  target   {}\n", printable(summary.target_id));
  if (summary.format == "ELF")
    fmt::print("  type     {}, e_flags 0x{:x}\n", summary.elf_type, summary.flags);
  fmt::print("  size     {} bytes, {} symbols\n", summary.size, summary.symbol_count);
  if (!summary.note.empty()) fmt::print("  note     {}\n", printable(summary.note));
  fmt::print("  kernels  {}\n", summary.kernels.size());
  for (const std::string& kernel : summary.kernels) fmt::print("    {}\n", printable(kernel));
  if (!summary.amdgpu_resources.empty()) print_amdgpu_resources(summary);
  if (!summary.cuda_resources.empty()) print_cuda_resources(summary);
  if (!summary.resources_note.empty())
    fmt::print("  resource note  {}\n", printable(summary.resources_note));
}

// Bytes from any source (a file here; a cache entry or a compile result elsewhere) print alike.
int report_code_object(const std::string& source, const std::vector<std::uint8_t>& bytes,
                       bool json) {
  const Expected<CodeObjectSummary> read = summarize_code_object(bytes);
  if (!read)
    throw InputError(fmt::format("{}: not a code object this tool can read: {}", source,
                                 read.failure().message));
  const CodeObjectSummary& summary = read.value();
  if (json) {
    nlohmann::ordered_json document = {{"schema", "hipacm-inspect-1"}, {"source", source}};
    document.update(to_json(summary));
    write_json(document, "-");
  } else {
    print_summary(source, summary);
  }
  return kExitOk;
}

// A cache key, or a unique prefix of one (what 'hipacm cache list' shows), in the user cache or
// the --db file.
std::vector<std::uint8_t> code_from_cache(const InspectOptions& options) {
  std::string db = options.db.empty() ? cache::CacheAdmin::default_path() : options.db;
  std::error_code ec;
  if (!db.empty() && std::filesystem::is_directory(db, ec)) db = cache::CacheAdmin::path_in(db);
  if (db.empty() || !std::filesystem::exists(db, ec))
    throw InputError(fmt::format("{}: no such file, and no cache database at '{}' to look it up in",
                                 options.file, db));
  // Only looks: creates nothing, and reads a cache this user may not write (a system cache).
  cache::CacheAdmin admin = [&] {
    try {
      return cache::CacheAdmin::inspect(db);
    } catch (const std::runtime_error& e) {
      throw InputError(e.what());  // not a cache: the user named the wrong thing (exit 2)
    }
  }();
  std::vector<std::string> matches;
  for (const cache::EntryInfo& entry : admin.list())
    if (entry.key.rfind(options.file, 0) == 0) matches.push_back(entry.key);
  if (matches.empty())
    throw InputError(fmt::format("{}: no such file, and no cache entry in {} has that key",
                                 options.file, admin.path()));
  if (matches.size() > 1)
    throw InputError(fmt::format("{}: {} cache entries start with that prefix; give more digits",
                                 options.file, matches.size()));
  std::optional<cache::CacheEntry> entry = admin.lookup(matches.front());
  if (!entry) throw InputError(fmt::format("{}: the cache entry disappeared", options.file));
  return std::move(entry->code);
}

int run(const InspectOptions& options) {
  if (std::filesystem::exists(options.file) || options.file.find('/') != std::string::npos) {
    const std::string text = read_input_file(options.file, kMaxCodeObjectFileBytes);
    return report_code_object(options.file, {text.begin(), text.end()}, options.json);
  }
  return report_code_object("cache:" + options.file, code_from_cache(options), options.json);
}

}  // namespace

void add_inspect_command(CLI::App& app, AppContext& context) {
  auto options = std::make_shared<InspectOptions>();
  CLI::App* inspect =
      app.add_subcommand("inspect",
                         "List the kernels, arch, machine and code-object version of a "
                         "code object (ELF, SPIR-V or an offload bundle of SPIR-V), and each "
                         "kernel's registers, LDS/shared memory, scratch and occupancy limits");
  add_non_empty_option(inspect, "file", options->file,
                       "A code object file (AMDGPU ELF, amdgcnspirv SPIR-V or NVIDIA CUBIN), or a "
                       "cache key or key prefix as 'hipacm cache list' shows it")
      ->required();
  add_non_empty_option(inspect, "--db", options->db,
                       "The cache database (or its directory) to look keys up in");
  inspect->add_flag("--json", options->json, "Print a JSON document instead of text");
  finish_command(
      inspect, context, [options] { return run(*options); },
      {"hipacm inspect saxpy.gfx90a.co",
       "hipacm inspect saxpy.gfx90a.co --json | jq -r '.kernels[]'",
       "hipacm inspect 0421f6cf072c9f36      # a cache entry, by key prefix"},
      "0 read, 2 usage error, missing file or not a code object.");
}

}  // namespace hipacm::cli
