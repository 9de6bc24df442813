// SPDX-License-Identifier: MIT
// intercept_entry.cpp - the private synchronous compile that libhipacm_intercept.so calls
// (plugin/abi/intercept_abi.h): one hipRTC program's compile through the cache and the workers.
#include "plugin/abi/intercept_abi.h"

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <climits>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hip_backend/compiler_environment.h"
#include "hip_backend/dispatch/compiler_identity.h"
#include "hip_backend/dispatch/compiler_inventory.h"
#include "hip_backend/raw_nvrtc.h"
#include "hip_backend/rocm_paths.h"
#include "hip_backend/rtc/compile_log_paths.h"
#include "hip_backend/rtc/rtc_shared.h"
#include "hip_backend/source_name_policy.h"
#include "hip_backend/target_arch.h"
#include "plugin/abi/nvrtc_program_name.h"
#include "plugin/cache/key/external_inputs.h"
#include "plugin/cache/key/include_directives.h"
#include "plugin/cache/key/path_options.h"
#include "plugin/mode/compiler_factory.h"
#include "plugin/mode/mode_settings.h"
#include "plugin/record/request_recorder.h"
#include "support/failure.h"
#include "support/no_destructor.h"
#include "support/pid_lock.h"
#include "support/settings.h"
#include "support/status_error.h"

namespace hipacm {
namespace {

using backend::CompileRequest;
using backend::CompileResult;

// HIPRTC_ERROR_COMPILATION (NVRTC_ERROR_COMPILATION too).
constexpr int kHiprtcErrorCompilation = 6;

// The result and the storage its pointers point into; `pub` first, so the caller's pointer is
// this object's.
struct Answer {
  hipacm_intercept_result pub{};
  std::string code;
  std::string log;
  std::vector<std::string> lowered;
  std::vector<const char*> lowered_ptrs;
  std::string reason;
  std::string detail;

  hipacm_intercept_result* publish() {
    pub.struct_size = sizeof pub;
    pub.code = code.c_str();
    pub.code_size = code.size();
    pub.log = log.c_str();
    pub.log_size = log.size();
    for (const std::string& name : lowered) lowered_ptrs.push_back(name.c_str());
    pub.lowered_names = lowered_ptrs.data();
    pub.num_lowered_names = lowered_ptrs.size();
    pub.reason = reason.c_str();
    pub.detail = detail.c_str();
    return &pub;
  }
};
static_assert(std::is_standard_layout_v<Answer>);

// Not served: the caller compiles with hipRTC itself, and logs `detail` at debug level.
struct NotServed {
  hipacm_intercept_outcome outcome;
  std::string reason;
  std::string detail;
};

std::vector<std::string> read_list(const char* const* items, std::size_t count, const char* what) {
  std::vector<std::string> out;
  if (count == 0) return out;
  if (items == nullptr)
    throw NotServed{HIPACM_INTERCEPT_PASSTHROUGH, "unusual arguments",
                    std::string(what) + " is NULL"};
  for (std::size_t i = 0; i < count; ++i) {
    if (items[i] == nullptr)
      throw NotServed{HIPACM_INTERCEPT_PASSTHROUGH, "unusual arguments",
                      std::string(what) + "[" + std::to_string(i) + "] is NULL"};
    out.emplace_back(items[i]);
  }
  return out;
}

// The file a path names, symbolic links resolved ("" when it names none).
std::string resolved(const std::string& path) {
  char buffer[PATH_MAX];
  return realpath(path.c_str(), buffer) != nullptr ? std::string(buffer) : std::string();
}

// A raw NVRTC program is compiled by the NVRTC file the program called (another release makes
// other bytes, and a pip wheel's NVRTC is not the system's): served only where that file is one
// hipacm may load (raw_nvrtc_identity), which it then is, here for the cache key's identity and
// in the worker for the compile. Returns that file, resolved.
std::string require_programs_nvrtc(const hipacm_intercept_request& in, const std::string& arch) {
  if (!backend::is_nvidia_arch(arch))
    throw NotServed{HIPACM_INTERCEPT_PASSTHROUGH, "unusual arguments",
                    "an NVRTC program for '" + arch + "'"};
  const std::string program_nvrtc = in.library != nullptr ? resolved(in.library) : "";
  if (program_nvrtc.empty())
    throw NotServed{HIPACM_INTERCEPT_PASSTHROUGH, "another NVRTC",
                    "the program's NVRTC (" +
                        std::string(in.library != nullptr ? in.library : "?") +
                        ") is not a file hipacm can find"};
  if (const backend::CompilerIdentity nvrtc = backend::raw_nvrtc_identity(program_nvrtc);
      nvrtc.version.empty())
    throw NotServed{HIPACM_INTERCEPT_PASSTHROUGH, "another NVRTC", nvrtc.error};
  return program_nvrtc;
}

// A hipRTC program is compiled by the hipRTC hipacm loads (its workers' and its cache key's): a
// program that calls another file (another ROCm install beside it) would get another release's
// bytes and log, so its compiles are its own. Unknown (a shim that does not say): served.
void require_hipacms_hiprtc(const hipacm_intercept_request& in, const std::string& arch) {
  if (in.struct_size < sizeof(hipacm_intercept_request) || in.library == nullptr) return;
  const backend::CompilerDescription hipacms = backend::describe_compiler_for(arch);
  // No hipRTC of hipacm's own: the compile step says so, as for any program.
  if (!hipacms.available) return;
  struct stat program {
  }, own{};
  if (::stat(in.library, &program) == 0 && ::stat(hipacms.library_path.c_str(), &own) == 0 &&
      program.st_dev == own.st_dev && program.st_ino == own.st_ino)
    return;
  throw NotServed{HIPACM_INTERCEPT_PASSTHROUGH, "another hipRTC",
                  "the program calls hipRTC in " + std::string(in.library) +
                      ", hipacm compiles with " + hipacms.library_path + " (set " +
                      settings::name(settings::Id::kHiprtcLibrary) +
                      " to the program's file to serve it)"};
}

// NVRTC looks a quoted #include of the source up beside the program's name (a relative name: in
// the working directory) before the -I directories, and a worker compiles elsewhere: a program
// that includes such a file is NVRTC's own. (The cache's include scan follows -I only.)
void require_no_working_directory_include(const CompileRequest& r) {
  const std::size_t slash = r.source_name.rfind('/');
  const std::string beside =
      slash == std::string::npos ? std::string(".") : r.source_name.substr(0, slash);
  auto check = [&](const std::string& text) {
    for (const cache::input_scan::IncludeName& include : cache::input_scan::include_names(text)) {
      if (include.computed || include.name.empty() || include.name.front() == '/') continue;
      bool given = false;
      for (const auto& header : r.headers) given = given || header.first == include.name;
      if (given) continue;
      for (const std::string& dir : {beside, std::string(".")}) {
        struct stat st {};
        if (::stat((dir + "/" + include.name).c_str(), &st) == 0)
          throw NotServed{HIPACM_INTERCEPT_PASSTHROUGH, "working directory include",
                          "'" + include.name + "' is found in " + dir};
      }
    }
  };
  check(r.source);
  for (const auto& header : r.headers) check(header.second);
}

// The program as a CompileRequest, or NotServed when hipacm would not compile it as hipRTC (or,
// for a raw NVRTC program, NVRTC) does.
CompileRequest read_program(const hipacm_intercept_request& in, bool raw_nvrtc) {
  CompileRequest r;
  if (in.source == nullptr || in.source_name == nullptr || in.arch == nullptr || *in.arch == 0)
    throw NotServed{HIPACM_INTERCEPT_PASSTHROUGH, "unusual arguments",
                    "no source, program name or arch"};
  r.source = in.source;
  r.source_name = in.source_name;
  r.arch = in.arch;
  r.options = read_list(in.options, in.num_options, "options");
  const auto sources = read_list(in.header_sources, in.num_headers, "header_sources");
  const auto names = read_list(in.header_names, in.num_headers, "header_names");
  for (std::size_t i = 0; i < names.size(); ++i) r.headers.emplace_back(names[i], sources[i]);
  r.name_expressions = read_list(in.name_expressions, in.num_name_expressions, "name_expressions");
  if (raw_nvrtc) {
    const std::string program_nvrtc = require_programs_nvrtc(in, r.arch);
    require_no_working_directory_include(r);
    // CuPy names each program by a fresh temporary file: keyed by that name, no two processes
    // would share an entry (the log gets the program's name back, compile_into).
    if (std::string file = name_without_directory(r); !file.empty())
      r.source_name = std::move(file);
    r.options.insert(r.options.begin(), backend::raw_nvrtc_option(program_nvrtc));
  } else if (backend::is_raw_nvrtc(r.options)) {
    throw NotServed{HIPACM_INTERCEPT_PASSTHROUGH, "unusual arguments",
                    "an option spelled as hipacm's raw NVRTC marker"};
  }
  // Names that would leave comgr's directory are refused by hipacm, and hipRTC takes them.
  if (const Expected<void> allowed = backend::request_names_allowed(r); !allowed)
    throw NotServed{HIPACM_INTERCEPT_PASSTHROUGH, "file name", allowed.failure().message};
  // A worker compiles in a directory of its own: relative paths mean what they meant here.
  const std::vector<std::string> given = r.options;
  if (const Expected<void> anchored = cache::anchor_relative_paths(&r.options); !anchored)
    throw NotServed{HIPACM_INTERCEPT_PASSTHROUGH, "relative path", anchored.failure().message};
  // NVRTC's log names a header by the path it was found through: a raw program keeps its own.
  if (raw_nvrtc && r.options != given)
    throw NotServed{HIPACM_INTERCEPT_PASSTHROUGH, "relative path",
                    "an NVRTC program's option names a relative path"};
  r.environment = backend::capture_compiler_environment();
  // The cache's trust rules: a request whose reads hipacm cannot account for (computed
  // includes, options that name plugins, PCHs, response files) is not hipacm's to serve.
  const cache::ExternalInputs inputs = cache::scan_external_inputs(r);
  if (!inputs.cacheable)
    throw NotServed{HIPACM_INTERCEPT_PASSTHROUGH, "not keyable", inputs.why_not};
  return r;
}

struct CompilerSlot {
  std::string arch;
  std::shared_ptr<backend::Compiler> compiler;
};

struct Compilers {
  PidLock lock;    // the slots
  PidLock making;  // held while one thread makes a compiler, which the others then share
  std::vector<CompilerSlot> slots;

  std::shared_ptr<backend::Compiler> find(const std::string& arch) {
    std::lock_guard<PidLock> guard(lock);
    for (const CompilerSlot& slot : slots)
      if (slot.arch == arch) return slot.compiler;
    return nullptr;
  }
};

// The compile step for `arch`, made once per arch and process like a mode's: the persistent
// cache (as the settings say) over the workers. Never in process: a host that cannot have
// workers compiles with its own hipRTC (UNAVAILABLE).
std::shared_ptr<backend::Compiler> compiler_for(const std::string& arch) {
  static backend::NoDestructor<Compilers> compilers;
  if (auto found = compilers->find(arch)) return found;
  // One maker: a program's threads often start compiling at once, and each would otherwise open
  // the cache and order workers of its own, only for all but one to be dropped (16 threads
  // meeting on a fresh cache took 20 times one thread's time for their first compiles).
  std::lock_guard<PidLock> one_maker(compilers->making);
  if (auto found = compilers->find(arch)) return found;
  ModeConfig config;
  config.arch = arch;
  // Every NVIDIA request here is a program's own NVRTC compile, made with that program's NVRTC.
  config.nvidia_arch_judged_by_program = true;
  std::shared_ptr<backend::Compiler> made;
  try {
    config.isolation = resolve_isolation(HIPACM_ISOLATION_AUTO);
    if (config.isolation == HIPACM_ISOLATION_IN_PROCESS)
      throw NotServed{HIPACM_INTERCEPT_UNAVAILABLE, "hipacm unavailable",
                      std::string(settings::name(settings::Id::kIsolation)) + " is in-process"};
    config.isolation = HIPACM_ISOLATION_PROCESS;
    made = make_compiler(resolve_mode_settings(config));
  } catch (const StatusError&) {
    const Failure failure = failure_from_current_exception();
    // An arch hipacm does not know is the request's business (hipRTC answers it), anything
    // else means hipacm cannot work here.
    if (failure.status == HIPACM_ERROR_INVALID_ARGUMENT)
      throw NotServed{HIPACM_INTERCEPT_PASSTHROUGH, "refused by hipacm", failure.message};
    throw NotServed{HIPACM_INTERCEPT_UNAVAILABLE, "hipacm unavailable", failure.message};
  }
  std::lock_guard<PidLock> guard(compilers->lock);
  compilers->slots.push_back({arch, made});
  return made;
}

// The hiprtcResult (nvrtcResult) a failed compile's message names ("hiprtcCompileProgram failed:
// HIPRTC_ERROR_COMPILATION (see log)", "nvrtcCompileProgram failed: NVRTC_ERROR_COMPILATION"),
// or -1 when the compile itself did not fail that way.
int compile_program_result(const std::string& message) {
  std::string_view rest;
  for (const std::string_view marker : {std::string_view("hiprtcCompileProgram failed: HIPRTC_"),
                                        std::string_view("nvrtcCompileProgram failed: NVRTC_")}) {
    const std::size_t at = message.find(marker);
    if (at != std::string::npos) {
      rest = std::string_view(message).substr(at + marker.size());
      break;
    }
  }
  if (rest.empty()) return -1;
  // hiprtcResult's names (hipRTC 5.2.3 to 7.x), which are nvrtcResult's first ones too.
  for (std::size_t i = 1; i < backend::kHiprtcResultCount; ++i) {
    const std::string_view name = backend::kRtcResultSuffixes[i];
    if (rest.substr(0, name.size()) == name &&
        (rest.size() == name.size() || rest[name.size()] == ' '))
      return static_cast<int>(i);
  }
  return -1;
}

void fill_served(CompileResult&& result, Answer* answer) {
  switch (result.status) {
    case HIPACM_SUCCESS:
      answer->pub.outcome = result.from_cache ? HIPACM_INTERCEPT_HIT : HIPACM_INTERCEPT_COMPILED;
      answer->pub.rtc_result = 0;
      answer->code.assign(result.code.begin(), result.code.end());
      answer->log = std::move(result.log);
      answer->lowered = std::move(result.lowered_names);
      return;
    case HIPACM_ERROR_COMPILATION:
      if (const int rtc = compile_program_result(result.error_message); rtc > 0) {
        answer->pub.outcome = HIPACM_INTERCEPT_FAILED;
        answer->pub.rtc_result = rtc;
        answer->log = std::move(result.log);
        answer->detail = std::move(result.error_message);
        return;
      }
      // hipacm's own check refused what hipRTC made, or another hipRTC call failed: hipRTC in
      // the program's process gives the answer the program would have had.
      throw NotServed{HIPACM_INTERCEPT_PASSTHROUGH, "refused by hipacm",
                      std::move(result.error_message)};
    case HIPACM_ERROR_COMPILER_CRASHED:
    case HIPACM_ERROR_TIMEOUT:
      // The one intended difference from hipRTC: a compiler that dies or hangs fails this
      // compile instead of the program.
      answer->pub.outcome = HIPACM_INTERCEPT_FAILED;
      answer->pub.rtc_result = kHiprtcErrorCompilation;
      answer->log = std::move(result.log);
      if (!answer->log.empty() && answer->log.back() != '\n') answer->log += '\n';
      answer->log += "hipacm: the compiler " +
                     std::string(result.status == HIPACM_ERROR_TIMEOUT ? "timed out" : "crashed") +
                     " in a hipacm worker process: " + result.error_message + "\n";
      answer->detail = std::move(result.error_message);
      return;
    case HIPACM_ERROR_BACKEND_UNAVAILABLE:
      throw NotServed{HIPACM_INTERCEPT_UNAVAILABLE, "hipacm unavailable",
                      std::move(result.error_message)};
    default:
      throw NotServed{HIPACM_INTERCEPT_PASSTHROUGH, "refused by hipacm",
                      std::move(result.error_message)};
  }
}

// hipRTC's log names the program's files as its comgr wrote them, in a fresh directory of the
// program's process; hipacm's compile stack gives them the request's names (so a log, cached or
// not, is the same everywhere). A served log names them as the program's hipRTC would have: the
// hipRTC hipacm loaded, whose release says how its comgr names them.
std::string as_programs_hiprtc_log(std::string log, const CompileRequest& r, bool failed) {
  // ROCm 7's comgr numbers its directories in the process (comgr-PID-N-XXXXXX): hipRTC 7.2 takes
  // two for a compile that succeeds (source to bitcode, bitcode to code), one for one that fails.
  static std::atomic<unsigned> comgr_directories{0};
  const unsigned directory = comgr_directories.fetch_add(failed ? 1 : 2);
  backend::ComgrShape shape{};
  if (log.empty() ||
      !backend::comgr_shape_of_release(
          backend::rocm_release_of(resolved(backend::describe_compiler_for(r.arch).library_path)),
          &shape))
    return log;
  std::vector<std::string> header_names;
  for (const auto& header : r.headers) header_names.push_back(header.first);
  return backend::with_comgr_file_names(log, r.source_name, header_names,
                                        backend::program_comgr_directory(shape, directory), shape);
}

void compile_into(const hipacm_intercept_request* request, Answer* answer) {
  try {
    // The first layout ends at `arch`; `flags` and `library` came later.
    if (request == nullptr ||
        request->struct_size < offsetof(hipacm_intercept_request, arch) + sizeof(const char*))
      throw NotServed{HIPACM_INTERCEPT_PASSTHROUGH, "unusual arguments",
                      "request from another build"};
    const bool raw_nvrtc = request->struct_size >= sizeof(hipacm_intercept_request) &&
                           (request->flags & HIPACM_INTERCEPT_RAW_NVRTC) != 0;
    const CompileRequest compile_request = read_program(*request, raw_nvrtc);
    if (!raw_nvrtc) require_hipacms_hiprtc(*request, compile_request.arch);
    std::shared_ptr<backend::Compiler> compiler = compiler_for(compile_request.arch);
    record_request(compile_request);
    fill_served(compiler->compile(compile_request), answer);
    // NVRTC's log already names the files as the program did, but for a name compiled without
    // its directory.
    if (raw_nvrtc && compile_request.source_name != request->source_name)
      answer->log =
          with_program_name(answer->log, compile_request.source_name, request->source_name);
    if (!raw_nvrtc)
      answer->log = as_programs_hiprtc_log(std::move(answer->log), compile_request,
                                           answer->pub.outcome == HIPACM_INTERCEPT_FAILED);
  } catch (NotServed& not_served) {
    answer->pub.outcome = not_served.outcome;
    answer->reason = std::move(not_served.reason);
    answer->detail = std::move(not_served.detail);
  } catch (...) {
    answer->pub.outcome = HIPACM_INTERCEPT_PASSTHROUGH;
    answer->reason = "refused by hipacm";
    answer->detail = failure_from_current_exception().message;
  }
}

}  // namespace
}  // namespace hipacm

extern "C" {

HIPACM_PRIVATE_API hipacm_intercept_result* hipacm_intercept_compile_v1(
    const hipacm_intercept_request* request) {
  try {
    auto answer = std::make_unique<hipacm::Answer>();
    hipacm::compile_into(request, answer.get());
    hipacm_intercept_result* published = answer->publish();
    answer.release();
    return published;
  } catch (...) {
    return nullptr;  // out of memory: the caller compiles with hipRTC
  }
}

HIPACM_PRIVATE_API void hipacm_intercept_release_v1(hipacm_intercept_result* result) {
  delete reinterpret_cast<hipacm::Answer*>(result);
}

}  // extern "C"
