// SPDX-License-Identifier: MIT
// runtime_header_pch_compile.cpp - a worker's compile through the runtime-header PCH store, with
// the checks and fallbacks that keep it equal to a plain compile, and the helper that emits a PCH.
#include "hip_backend/pch/runtime_header_pch_compile.h"

#include <fcntl.h>
#include <poll.h>
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
#include "hip_backend/pch/runtime_header_pch.h"
#include "hip_backend/pch/runtime_header_pch_store.h"
#include "hip_backend/process/child_descriptors.h"
#include "hip_backend/process/private_temp_dir.h"
#include "hip_backend/process/spawn_setup.h"
#include "hip_backend/protocol/worker_protocol.h"
#include "hip_backend/target_arch.h"
#include "support/c_strings.h"
#include "support/environment.h"
#include "support/failure.h"
#include "support/files/private_file.h"
#include "support/files/unique_fd.h"

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

/// The one way in to compile_for_target: the request compiled as it is, in the working
/// directory the caller chose (compile_in's, or the worker's own empty one for the plain compile).
CompileResult compile_here(const CompileRequest& request) { return compile_for_target(request); }

/// The compile with `dir` as the working directory; nullopt when it cannot be entered.
std::optional<CompileResult> compile_in(const std::string& dir, const CompileRequest& request) {
  const WorkingDirectory in(dir);
  if (!in.entered()) return std::nullopt;
  return compile_here(request);
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

/// Writes `bytes` to a new file `path` (never through a link).
Expected<void> write_new_file(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd.valid()) {
    return Failure{HIPACM_ERROR_INTERNAL, "cannot write " + path + ": " + std::strerror(errno)};
  }
  return wire::write_all(fd.get(), bytes.data(), bytes.size());
}

/// Reads the one frame in file `path` (bounded by the wire format's limits).
Expected<void> read_frame_file(const std::string& path, wire::FrameHeader* header,
                               std::vector<std::uint8_t>* payload) {
  UniqueFd fd = open_private_file(path, O_RDONLY);
  if (!fd.valid()) {
    return Failure{HIPACM_ERROR_INTERNAL, "cannot read " + path + ": " + std::strerror(errno)};
  }
  wire::ReadResult read = wire::read_frame(fd.get(), header, payload);
  if (read.status == wire::ReadStatus::kFrame) return {};
  if (read.error.empty()) read.error = path + " holds no frame";
  return Failure{HIPACM_ERROR_INTERNAL, std::move(read.error)};
}

/// Starts the helper on `dir` (which holds the request): its pid, or why it cannot start.
Expected<pid_t> start_helper(const std::string& dir) {
  const std::string temp_dir = dir + "/tmp";
  if (::mkdir(temp_dir.c_str(), 0700) != 0) {
    return Failure{HIPACM_ERROR_INTERNAL, "cannot make " + temp_dir + ": " + std::strerror(errno)};
  }
  std::error_code ec;
  std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) return Failure{HIPACM_ERROR_INTERNAL, "cannot find this executable: " + ec.message()};
  std::string flag = kEmitHeaderPchFlag, where = dir;
  char* argv[] = {self.data(), flag.data(), where.data(), nullptr};
  const std::vector<std::string> environment = helper_environment(temp_dir);
  std::vector<char*> envp = exec_strings(environment);
  SpawnSetup setup;
  posix_spawn_file_actions_t* actions = setup.actions();
  const bool ok =
      setup.ok() && posix_spawn_file_actions_addopen(actions, 0, "/dev/null", O_RDWR, 0) == 0 &&
      posix_spawn_file_actions_addchdir_np(actions, dir.c_str()) == 0 && setup.default_signals();
  pid_t pid = -1;
  const int rc =
      ok ? posix_spawn(&pid, self.c_str(), actions, setup.attr(), argv, envp.data()) : ENOMEM;
  if (rc != 0) {
    return Failure{HIPACM_ERROR_INTERNAL,
                   "cannot start the PCH helper: " + std::string(std::strerror(rc))};
  }
  return pid;
}

// The helper's exit codes.
constexpr int kHelperDone = 0;

/// What the helper's status says, for a refusal.
std::string helper_failure(int status) {
  if (WIFSIGNALED(status))
    return "the PCH helper died of signal " + std::to_string(WTERMSIG(status));
  return "the PCH helper failed (exit " + std::to_string(WEXITSTATUS(status)) + ")";
}

/// The decoy a compile must fail on when its hipRTC loads a PCH from the working directory. Not
/// a PCH's magic: clang stops at the first bytes instead of reading sizes out of garbage (ROCm
/// 6.4's LLVM aborted the process on a decoy that began like a PCH).
bool write_decoy(const std::string& path) {
  static constexpr char kDecoy[] = "hipacm: a decoy, not a PCH\n";
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  return fd.valid() &&
         ::write(fd.get(), kDecoy, sizeof kDecoy - 1) == static_cast<ssize_t>(sizeof kDecoy - 1);
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

/// The key of the PCH that may serve `request`; nullopt where none may (another arch, another
/// option, HIPACM_HIPRTC_PCH=off, a hipRTC without PCH support, a request the options cannot be
/// made for: its plain compile reports what was wrong with it).
std::optional<std::string> pch_key_for(const CompileRequest& request,
                                       RuntimeHeaderPchSetting setting) {
  if (!is_amdgpu_arch(request.arch) || setting == RuntimeHeaderPchSetting::kOff ||
      !runtime_header_pch_supported())
    return std::nullopt;
  std::vector<std::string> options;
  try {
    options = hiprtc_compile_options(request);
  } catch (...) {
    return std::nullopt;
  }
  if (!runtime_header_pch_applies(options) || shadows_runtime_header(request)) return std::nullopt;
  return runtime_header_pch_key(request.arch, options);
}

/// The compile of a request that the PCH of `key` may serve, by the rules of compile_in_worker.
CompileResult compile_with_store(const CompileRequest& request, const std::string& key,
                                 RuntimeHeaderPchSetting setting,
                                 std::optional<PendingPchBuild>* pending) {
  const RuntimeHeaderPchStore store = RuntimeHeaderPchStore::in_runtime_dir();
  if (const std::optional<std::string> dir = store.ready_dir(key)) {
    std::optional<CompileResult> with_pch = compile_in(*dir, request);
    const bool passed = with_pch && with_pch->status == HIPACM_SUCCESS;
    if (passed && setting != RuntimeHeaderPchSetting::kCheck) return std::move(*with_pch);
    CompileResult plain = compile_here(request);
    if (passed) {
      // check: every compile is also made plainly, and the plain result is what is returned.
      if (request.name_expressions.empty() && !same_outcome(plain, *with_pch)) {
        store.refuse(key, "a compile with the PCH differed from the plain compile");
        store.forget(key);
        say("refused for " + request.arch + ": its compile of " + request.source_name +
            " differed from the plain compile");
      }
      return plain;
    }
    if (with_pch && plain.status == HIPACM_SUCCESS) {
      store.forget(key);
      say("removed the PCH for " + request.arch + ": " + request.source_name +
          " failed with it and compiled without it");
    }
    return plain;
  }
  CompileResult plain = compile_here(request);
  // A kernel that does not compile proves nothing about a PCH.
  if (plain.status != HIPACM_SUCCESS || store.refused(key)) return plain;
  try {
    if (Expected<RuntimeHeaderPchStore::Claim> claim = store.claim(key)) {
      PendingPchBuild build{request, plain, std::move(claim).value()};
      if (!request.name_expressions.empty()) {
        // hipRTC 6.4 and 7.2 order the variables behind name expressions differently from one
        // compile to the next: the PCH is checked on the source alone, which the build compiles
        // plainly too. (The key is the arch and options: the names are no part of it.)
        build.request.name_expressions.clear();
        build.plain.reset();
      }
      pending->emplace(std::move(build));
    }
  } catch (...) {
    // No build this time: the compile is made, and a later one may claim the key.
  }
  return plain;
}

}  // namespace

CompileResult compile_in_worker(const CompileRequest& request,
                                std::optional<PendingPchBuild>* pending) {
  std::optional<std::string> key;
  RuntimeHeaderPchSetting setting = RuntimeHeaderPchSetting::kOff;
  try {
    setting = runtime_header_pch_setting(nullptr);
    key = pch_key_for(request, setting);
  } catch (...) {
    // Whatever failed around the PCH, the plain compile still decides.
  }
  if (key) {
    try {
      return compile_with_store(request, *key, setting, pending);
    } catch (...) {
      // As above: a PCH is an optimisation, never a reason for a compile to fail.
    }
  }
  try {
    return compile_here(request);
  } catch (...) {
    return failed_compile(failure_from_current_exception("hipacm-worker"));
  }
}

PchBuild::PchBuild(PendingPchBuild build) : build_(std::move(build)) {
  RuntimeHeaderPchStore::Claim& claim = build_.claim;
  if (Expected<void> staged = claim.make_staging_dir(); !staged) {
    say("not built for " + build_.request.arch + ": " + staged.failure().message);
    return;  // not a verdict on the PCH: the claim goes, and a later compile tries again
  }
  if (!build_.plain) {
    // In the staging directory while it is still empty: a plain compile's working directory.
    std::optional<CompileResult> plain = compile_in(claim.staging_dir(), build_.request);
    if (!plain || plain->status != HIPACM_SUCCESS) {
      if (plain)
        say("not built for " + build_.request.arch + ": " + build_.request.source_name +
            " does not compile without its name expressions");
      return;  // nothing to check the PCH on: the claim goes
    }
    build_.plain = std::move(plain);
  }
  // Does this hipRTC load a PCH from the working directory at all? With a decoy there, a kernel
  // that compiles must fail: quickly where it is loaded, so the check costs little where the
  // PCH will help. In this process, not the helper's: comgr keeping its files there changes what
  // it compiles on some releases.
  const std::string decoy_dir = claim.staging_dir() + "/decoy";
  if (::mkdir(decoy_dir.c_str(), 0700) != 0 ||
      !write_decoy(decoy_dir + "/" + kRuntimeHeaderPchName)) {
    say("not built for " + build_.request.arch + ": cannot write the decoy");
    return;
  }
  const std::optional<CompileResult> decoyed = compile_in(decoy_dir, build_.request);
  remove_directory_tree(decoy_dir);
  if (!decoyed) return;
  if (decoyed->status == HIPACM_SUCCESS) {
    claim.refuse("this hipRTC does not load a PCH from the working directory");
    return;
  }
  Expected<pid_t> started = [&]() -> Expected<pid_t> {
    Expected<std::vector<std::uint8_t>> frame = wire::encode_request_frame(0, build_.request);
    if (!frame) return std::move(frame).failure();
    Expected<void> written = write_new_file(claim.staging_dir() + "/request", frame.value());
    if (!written) return std::move(written).failure();
    return start_helper(claim.staging_dir());
  }();
  if (!started) {
    say("not built for " + build_.request.arch + ": " + started.failure().message);
    return;
  }
  pid_ = started.value();
}

PchBuild::~PchBuild() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

bool PchBuild::finished() noexcept {
  if (pid_ <= 0) return true;
  int status = 0;
  const pid_t done = ::waitpid(pid_, &status, WNOHANG);
  if (done == 0 || (done < 0 && errno == EINTR)) return false;
  pid_ = -1;
  if (done < 0) return true;
  try {
    conclude(status);
  } catch (...) {
    // A PCH is an optimisation: nothing here may end the worker.
  }
  return true;
}

void PchBuild::conclude(int status) {
  RuntimeHeaderPchStore::Claim& claim = build_.claim;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != kHelperDone) {
    claim.refuse(helper_failure(status));
    say("not used for " + build_.request.arch + ": " + helper_failure(status));
    return;
  }
  // The kernel again, here, with the PCH: the one compile a build costs this worker's time.
  const std::optional<CompileResult> with_pch = compile_in(claim.staging_dir(), build_.request);
  if (!with_pch) return;  // not a verdict on the PCH
  if (!same_outcome(*build_.plain, *with_pch)) {
    claim.refuse("a compile with the PCH differed from the plain compile");
    say("refused for " + build_.request.arch + ": its compile of " + build_.request.source_name +
        " differed from the plain compile");
    return;
  }
  if (Expected<void> published = claim.publish(); !published) say(published.failure().message);
}

int run_runtime_header_pch_helper(int argc, char** argv) {
  if (argc != 3 || argv[2][0] != '/') return 2;
  // Nothing of the worker's (its host's socket above all) stays open in here.
  close_from(3);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  ::alarm(kHelperSeconds);
  const std::string dir = argv[2], temp_dir = dir + "/tmp";
  const std::string pch = dir + "/" + kRuntimeHeaderPchName;
  if (environment_value(kSaveTemps) != "1" || environment_value("TMPDIR") != temp_dir) {
    std::fprintf(stderr, "hipacm-worker: %s runs only as a worker starts it\n", kEmitHeaderPchFlag);
    return 2;
  }
  try {
    wire::FrameHeader header;
    std::vector<std::uint8_t> payload;
    Expected<CompileRequest> decoded = [&]() -> Expected<CompileRequest> {
      Expected<void> read = read_frame_file(dir + "/request", &header, &payload);
      if (!read) return std::move(read).failure();
      // A frame of another type: said with no reason, as it always was.
      if (header.type != wire::FrameType::kCompileRequest)
        return Failure{HIPACM_ERROR_INTERNAL, ""};
      return wire::decode_request(payload.data(), payload.size());
    }();
    if (!decoded) {
      std::fprintf(stderr, "hipacm-worker: runtime-header PCH: the request: %s\n",
                   decoded.failure().message.c_str());
      return 1;
    }
    const CompileRequest& request = decoded.value();
    // hipRTC emits the PCH with the request's own options.
    if (const Expected<void> emitted = emit_runtime_header_pch(request, temp_dir, pch); !emitted) {
      std::fprintf(stderr, "hipacm-worker: runtime-header PCH: %s\n",
                   emitted.failure().message.c_str());
      return 1;
    }
    return kHelperDone;
  } catch (...) {
    std::fprintf(stderr, "hipacm-worker: runtime-header PCH: %s\n",
                 failure_from_current_exception("emit").message.c_str());
  }
  return 1;
}

}  // namespace hipacm::backend
