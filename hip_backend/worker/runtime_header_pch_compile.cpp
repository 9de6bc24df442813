// SPDX-License-Identifier: MIT
// runtime_header_pch_compile.cpp - a worker's compile through the runtime-header PCH store, with
// the checks and fallbacks that keep it equal to a plain compile, and the helper that emits a PCH.
#include "hip_backend/worker/runtime_header_pch_compile.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hip_backend/dispatch/compile_dispatch.h"
#include "hip_backend/hiprtc/inprocess_compiler.h"
#include "hip_backend/hiprtc/runtime_header_pch.h"
#include "hip_backend/target_arch.h"
#include "hip_backend/worker/child_descriptors.h"
#include "hip_backend/worker/private_temp_dir.h"
#include "hip_backend/worker/runtime_header_pch_store.h"
#include "hip_backend/worker/spawn_setup.h"
#include "hip_backend/worker/worker_compiler.h"
#include "support/environment.h"
#include "support/failure.h"
#include "support/unique_fd.h"

extern char** environ;

namespace hipacm::backend {
namespace {

constexpr const char* kSaveTemps = "AMD_COMGR_SAVE_TEMPS";
/// Far beyond the half second the helper takes: only a hung compiler meets it.
constexpr unsigned kHelperSeconds = 300;

/// The process's working directory moved to `dir` for one scope, and back.
class WorkingDirectory {
 public:
  explicit WorkingDirectory(const std::string& dir)
      : previous_(::open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
    entered_ = previous_.valid() && ::chdir(dir.c_str()) == 0;
  }
  WorkingDirectory(const WorkingDirectory&) = delete;
  WorkingDirectory& operator=(const WorkingDirectory&) = delete;
  ~WorkingDirectory() {
    if (entered_ && ::fchdir(previous_.get()) != 0) {
      std::fprintf(stderr, "hipacm-worker: cannot return to the working directory\n");
    }
  }
  bool entered() const { return entered_; }

 private:
  UniqueFd previous_;
  bool entered_ = false;
};

/// The compile with `dir` as the working directory; nullopt when it cannot be entered.
std::optional<CompileResult> compile_in(const std::string& dir, const CompileRequest& request) {
  const WorkingDirectory in(dir);
  if (!in.entered()) return std::nullopt;
  return compile_for_target(request);
}

bool same_outcome(const CompileResult& a, const CompileResult& b) {
  return a.status == b.status && a.code == b.code && a.lowered_names == b.lowered_names &&
         a.log == b.log;
}

void say(const std::string& what) {
  std::fprintf(stderr, "hipacm-worker: runtime-header PCH: %s\n", what.c_str());
  std::fflush(stderr);
}

/// This process's environment with comgr told to keep its files in `temp_dir`.
std::vector<std::string> helper_environment(const std::string& temp_dir) {
  std::vector<std::string> out;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text = *entry;
    if (text.rfind("TMPDIR=", 0) == 0 || text.rfind(std::string(kSaveTemps) + "=", 0) == 0)
      continue;
    out.emplace_back(text);
  }
  out.push_back("TMPDIR=" + temp_dir);
  out.push_back(std::string(kSaveTemps) + "=1");
  return out;
}

/// Runs the helper for `request` into `dir` and waits for it. True when it wrote the PCH.
bool run_helper(const std::string& dir, const CompileRequest& request,
                const std::vector<std::string>& options, std::string* why) {
  const std::string temp_dir = dir + "/tmp";
  if (::mkdir(temp_dir.c_str(), 0700) != 0) {
    *why = "cannot make " + temp_dir + ": " + std::strerror(errno);
    return false;
  }
  std::error_code ec;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) {
    *why = "cannot find this executable: " + ec.message();
    return false;
  }
  std::vector<std::string> args = {self, kEmitHeaderPchFlag, dir, request.arch};
  args.insert(args.end(), options.begin(), options.end());
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const std::vector<std::string> environment = helper_environment(temp_dir);
  std::vector<char*> envp = spawn_environment(environment);

  SpawnSetup setup;
  posix_spawn_file_actions_t* actions = setup.actions();
  const bool ok =
      setup.ok() && posix_spawn_file_actions_addopen(actions, 0, "/dev/null", O_RDWR, 0) == 0 &&
      posix_spawn_file_actions_addchdir_np(actions, dir.c_str()) == 0 && setup.default_signals();
  pid_t pid = -1;
  const int rc =
      ok ? posix_spawn(&pid, self.c_str(), actions, setup.attr(), argv.data(), envp.data())
         : ENOMEM;
  if (rc != 0) {
    *why = "cannot start the PCH helper: " + std::string(std::strerror(rc));
    return false;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  remove_directory_tree(temp_dir);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return true;
  *why = WIFSIGNALED(status)
             ? "the PCH helper died of signal " + std::to_string(WTERMSIG(status))
             : "the PCH helper failed (exit " + std::to_string(WEXITSTATUS(status)) + ")";
  return false;
}

/// Whether this hipRTC's compiles load a PCH from the working directory at all: a compile of a
/// kernel that compiles fails in `dir` when it holds a file that only looks like a PCH. Some
/// releases' comgr runs the driver elsewhere; there a PCH would only cost its build. nullopt
/// when it cannot be told.
std::optional<bool> pch_is_read(const std::string& dir, const CompileRequest& request) {
  const std::string path = dir + "/" + kRuntimeHeaderPchName;
  std::string bytes(kPchMagic, sizeof kPchMagic);
  bytes += " hipacm: a decoy, not a PCH";
  {
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!fd.valid() ||
        ::write(fd.get(), bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size()))
      return std::nullopt;
  }
  const std::optional<CompileResult> decoyed = compile_in(dir, request);
  ::unlink(path.c_str());
  if (!decoyed) return std::nullopt;
  return decoyed->status != HIPACM_SUCCESS;
}

/// The first compile of a key: has the PCH emitted, checks it, publishes it. Returns the plain
/// result.
CompileResult build_and_check(const CompileRequest& request,
                              const std::vector<std::string>& options,
                              RuntimeHeaderPchStore::Claim claim) {
  CompileResult plain = compile_for_target(request);
  // A kernel that does not compile proves nothing about the PCH; the next one will.
  if (plain.status != HIPACM_SUCCESS) return plain;
  std::string why;
  if (!claim.make_staging_dir(&why)) {
    say("not used for " + request.arch + ": " + why);
    return plain;
  }
  const std::optional<bool> read = pch_is_read(claim.staging_dir(), request);
  if (!read) return plain;  // not a verdict on the PCH
  if (!*read) {
    claim.refuse("this hipRTC does not load a PCH from the working directory");
    return plain;
  }
  if (!run_helper(claim.staging_dir(), request, options, &why)) {
    claim.refuse(why);
    say("not used for " + request.arch + ": " + why);
    return plain;
  }
  const std::optional<CompileResult> with_pch = compile_in(claim.staging_dir(), request);
  if (!with_pch) return plain;  // not a verdict on the PCH
  if (!same_outcome(plain, *with_pch)) {
    claim.refuse("a compile with the PCH differed from the plain compile");
    say("refused for " + request.arch + ": its compile of " + request.source_name +
        " differed from the plain compile");
    return plain;
  }
  if (!claim.publish(&why)) say(why);
  return plain;
}

/// A virtual header of the runtime header's name lands where hipRTC's own does, and a plain
/// compile may include it instead: only the plain compile knows which.
bool shadows_runtime_header(const CompileRequest& request) {
  constexpr std::string_view kName = "hiprtc_runtime.h";
  for (const auto& header : request.headers) {
    const std::string_view name = header.first;
    if (name.size() >= kName.size() && name.substr(name.size() - kName.size()) == kName)
      return true;
  }
  return false;
}

CompileResult compile_with_store(const CompileRequest& request) {
  const RuntimeHeaderPchSetting setting = runtime_header_pch_setting(nullptr);
  if (!is_amdgpu_arch(request.arch) || setting == RuntimeHeaderPchSetting::kOff)
    return compile_for_target(request);
  std::vector<std::string> options;
  try {
    options = hiprtc_compile_options(request);
  } catch (...) {
    return compile_for_target(request);  // it reports what was wrong with the request
  }
  if (!runtime_header_pch_applies(options, nullptr) || shadows_runtime_header(request))
    return compile_for_target(request);
  const std::optional<std::string> key = runtime_header_pch_key(request.arch, options);
  if (!key) return compile_for_target(request);

  const RuntimeHeaderPchStore store = RuntimeHeaderPchStore::in_runtime_dir();
  if (const std::optional<std::string> dir = store.ready_dir(*key)) {
    std::optional<CompileResult> with_pch = compile_in(*dir, request);
    const bool passed = with_pch && with_pch->status == HIPACM_SUCCESS;
    if (passed && setting != RuntimeHeaderPchSetting::kCheck) return std::move(*with_pch);
    CompileResult plain = compile_for_target(request);
    if (passed) {
      // check: every compile is also made plainly, and the plain result is what is returned.
      if (request.name_expressions.empty() && !same_outcome(plain, *with_pch)) {
        store.refuse(*key, "a compile with the PCH differed from the plain compile");
        store.forget(*key);
        say("refused for " + request.arch + ": its compile of " + request.source_name +
            " differed from the plain compile");
      }
      return plain;
    }
    if (with_pch && plain.status == HIPACM_SUCCESS) {
      store.forget(*key);
      say("removed the PCH for " + request.arch + ": " + request.source_name +
          " failed with it and compiled without it");
    }
    return plain;
  }
  // hipRTC 6.4 and 7.2 order the variables behind name expressions differently from one compile
  // to the next, so such a kernel cannot show that a PCH changes nothing.
  if (!request.name_expressions.empty() || store.refused(*key)) return compile_for_target(request);
  std::optional<RuntimeHeaderPchStore::Claim> claim = store.claim(*key, nullptr);
  if (!claim) return compile_for_target(request);
  return build_and_check(request, options, std::move(*claim));
}

}  // namespace

CompileResult compile_in_worker(const CompileRequest& request) {
  try {
    return compile_with_store(request);
  } catch (...) {
    // Whatever failed around the PCH, the plain compile still decides.
  }
  try {
    return compile_for_target(request);
  } catch (...) {
    return failed_compile(failure_from_current_exception("hipacm-worker"));
  }
}

int run_runtime_header_pch_helper(int argc, char** argv) {
  if (argc < 4 || argv[2][0] != '/') return 2;
  // Nothing of the worker's (its host's socket above all) stays open in here.
  close_from(3);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  ::alarm(kHelperSeconds);
  const std::string dir = argv[2];
  if (environment_value(kSaveTemps) != "1" || environment_value("TMPDIR") != dir + "/tmp") {
    std::fprintf(stderr, "hipacm-worker: %s runs only as the worker starts it\n",
                 kEmitHeaderPchFlag);
    return 2;
  }
  try {
    CompileRequest request;
    request.arch = argv[3];
    request.options.assign(argv + 4, argv + argc);
    // The worker passes hipRTC's whole option list, its arch option included.
    std::string why;
    if (emit_runtime_header_pch(request, dir + "/tmp", dir + "/" + kRuntimeHeaderPchName, &why))
      return 0;
    std::fprintf(stderr, "hipacm-worker: runtime-header PCH: %s\n", why.c_str());
  } catch (...) {
    std::fprintf(stderr, "hipacm-worker: runtime-header PCH: %s\n",
                 failure_from_current_exception("emit").message.c_str());
  }
  return 1;
}

}  // namespace hipacm::backend
