// SPDX-License-Identifier: MIT
// main.cpp - the hipacm command-line tool: global options, --version, and subcommand dispatch.
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <exception>

#include "tools/common/commands.h"
#include "tools/common/exit_codes.h"
#include "tools/common/terminal_text.h"
#include "tools/doctor/backend_probe.h"

namespace {

std::string version_text() {
  using namespace hipacm::cli;
  const PluginProbe plugin = probe_plugin();
  const LibraryProbe hiprtc = probe_hiprtc();
  const LibraryProbe comgr = probe_comgr(nullptr);
  auto library_line = [](const char* name, const LibraryProbe& probe) {
    return probe.found ? fmt::format("{} {} ({})", name,
                                     probe.version.empty() ? "?" : probe.version, probe.path)
                       : fmt::format("{} not found", name);
  };
  return fmt::format("hipacm {} (ABI {}, {})\n{}\n{}", plugin.version, plugin.abi_version,
                     plugin.path, library_line("hipRTC", hiprtc), library_line("comgr", comgr));
}

}  // namespace

int main(int argc, char** argv) {
  using namespace hipacm::cli;
  CLI::App app{"hipacm: warm, inspect and diagnose hipacm's asynchronous HIP kernel compiles",
               "hipacm"};
  app.set_version_flag("--version", version_text);
  app.require_subcommand(1);
  app.footer(examples_footer({"hipacm warmup examples/kernels --arch gfx90a,gfx1030",
                              "hipacm inspect kernel.co", "hipacm cache stats", "hipacm doctor"},
                             "0 ok, 1 failures, 2 usage or input error, 3 no compiler backend."));

  AppContext context;
  add_warmup_command(app, context);
  add_inspect_command(app, context);
  add_doctor_command(app, context);
  add_cache_command(app, context);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help, the version, or the parse error
    return code == 0 ? kExitOk : kExitUsage;
  } catch (const InputError& e) {
    fmt::print(stderr, "hipacm: error: {}\n", printable(e.what()));
    return kExitUsage;
  } catch (const BackendUnavailable& e) {
    fmt::print(stderr, "hipacm: error: {}\n(run 'hipacm doctor' for what is missing)\n",
               printable(e.what()));
    return kExitNoBackend;
  } catch (const std::exception& e) {
    fmt::print(stderr, "hipacm: error: {}\n", printable(e.what()));
    return kExitFailures;
  }
  return context.exit_code;
}
