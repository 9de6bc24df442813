// SPDX-License-Identifier: MIT
// program.cpp - the shim's program object, one for hipRTC and NVRTC: compiles served by hipacm
// (cache, workers), and the real library's program, made lazily with the same arguments, for
// everything hipacm does not serve.
#include "intercept/program.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "intercept/hipacm_link.h"
#include "intercept/rtc_options.h"
#include "support/c_strings.h"
#include "support/pid_lock.h"

namespace hipacm::intercept {
namespace {

// Marks the shim's objects: a handle without it is a real program (made by a path the shim does
// not see) and goes to the real library as it is.
constexpr std::uint64_t kMagic = 0x68697061636d5052;  // "hipacmPR"

enum class State {
  kKept,    // the arguments are kept, nothing compiled yet
  kServed,  // hipacm's result answers
  kReal,    // the real program answers everything
};

struct Program {
  std::uint64_t magic = kMagic;
  const RealRtc* api = nullptr;
  std::mutex mutex;
  std::string source;
  std::string name;
  std::vector<std::string> header_sources;
  std::vector<std::string> header_names;
  std::vector<std::string> expressions;
  std::vector<std::string> options;  // of the compile, once compiled
  bool compiled = false;
  State state = State::kKept;
  RtcResult served_result = kRtcSuccess;
  Output served_output = kHipCode;  // what `code` is (hipRTC's code, NVRTC's PTX or CUBIN)
  std::string code;
  std::string log;
  std::vector<std::string> lowered;  // per expression, when served_result is success
  RealProgram real = nullptr;
  std::string real_reason;  // why the real program answers (for the stats of its compile)
};

Program* ours(RealProgram prog) noexcept {
  auto* p = static_cast<Program*>(prog);
  return p != nullptr && p->magic == kMagic ? p : nullptr;
}

std::string library_name(const Program& p) {
  return p.api->rtc == Rtc::kHiprtc ? "hipRTC" : "NVRTC";
}

// Makes the real program from the kept arguments: created, its expressions added, and compiled
// when the program was. Returns the first failure, else the compile's result (or success).
RtcResult make_real(Program* p, std::string_view reason) {
  const std::vector<const char*> sources = c_strings(p->header_sources);
  const std::vector<const char*> names = c_strings(p->header_names);
  p->state = State::kReal;
  p->real_reason = reason;
  RtcResult r = p->api->create(
      &p->real, p->source.c_str(), p->name.c_str(), static_cast<int>(sources.size()),
      const_cast<const char**>(sources.data()), const_cast<const char**>(names.data()));
  if (r != kRtcSuccess) {
    p->real = nullptr;
    return r;
  }
  for (const std::string& expression : p->expressions) {
    r = p->api->add_name_expression(p->real, expression.c_str());
    if (r != kRtcSuccess) return r;
  }
  if (!p->compiled) return kRtcSuccess;
  const std::vector<const char*> options = c_strings(p->options);
  log_line(LogLevel::kDebug, "compiling " + p->name + " with " + library_name(*p) +
                                 " in this process: " + std::string(reason));
  record_stats("passthrough", reason);
  return p->api->compile(p->real, static_cast<int>(options.size()),
                         const_cast<const char**>(options.data()));
}

// The real program for a call hipacm's result cannot answer (made once): a real compile for a
// program that was served.
RtcResult to_real(Program* p, std::string_view reason) {
  if (p->state == State::kReal) return kRtcSuccess;
  return make_real(p, reason);
}

// Why the compile of `p` with these options must be the library's own, or "" (with *arch set).
std::string unservable(const Program& p, int num_options, const char** options, std::string* arch) {
  std::string why = unservable_options(p.api->rtc, num_options, options, arch);
  if (!why.empty()) return why;
  for (std::size_t i = 0; i < p.expressions.size(); ++i)
    for (std::size_t j = i + 1; j < p.expressions.size(); ++j)
      if (p.expressions[i] == p.expressions[j]) return "repeated name expression";
  if (p.api->rtc == Rtc::kNvrtc && arch->empty()) {
    // NVRTC's default is a virtual arch (compute_75 in NVRTC 13: the lowest it supports; its PTX
    // is byte for byte that of --gpu-architecture=compute_75). The compile keeps the program's
    // options as they are (no arch added); the arch only files the result.
    int count = 0;
    if (p.api->num_supported_archs(&count) != kRtcSuccess || count <= 0) return "no arch option";
    std::vector<int> archs(static_cast<std::size_t>(count));
    if (p.api->supported_archs(archs.data()) != kRtcSuccess) return "no arch option";
    *arch = "compute_" + std::to_string(archs.front());
  }
  return "";
}

// The file of the library that `p`'s calls reach ("" when unknown).
std::string library_file(const Program& p) {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(p.api->create), &info) == 0 || info.dli_fname == nullptr)
    return "";
  return info.dli_fname;
}

RtcResult pass_through(Program* p, std::string_view reason, std::string_view detail) {
  log_line(LogLevel::kDebug,
           library_name(*p) + " program " + p->name + " passes through (" + std::string(reason) +
               (detail.empty() ? std::string() : ": " + std::string(detail)) + ")");
  return make_real(p, reason);
}

// A compile hipacm served: its answer kept for the program's later calls.
RtcResult keep_served(Program* p, const hipacm_intercept_result& result) {
  p->state = State::kServed;
  p->served_result = result.rtc_result;
  p->code.assign(result.code, result.code_size);
  p->log.assign(result.log, result.log_size);
  for (std::size_t i = 0; i < result.num_lowered_names; ++i)
    p->lowered.emplace_back(result.lowered_names[i]);
  const char* event = result.outcome == HIPACM_INTERCEPT_HIT        ? "hit"
                      : result.outcome == HIPACM_INTERCEPT_COMPILED ? "compiled"
                                                                    : "failed";
  log_line(LogLevel::kDebug, library_name(*p) + " program " + p->name + ": " + event +
                                 " by hipacm" +
                                 (*result.detail != 0 ? std::string(": ") + result.detail : ""));
  record_stats(event, "");
  return result.rtc_result;
}

// The compiles inside libhipacm now, counted by process. A child forked while one of them ran
// inherits whatever locks that thread held in libhipacm and the libraries under it (the cache's
// SQLite, the compiler identity), and its thread is gone: such a child compiles with hipRTC
// itself for the rest of its life. One forked while none ran uses hipacm as usual (the worker
// pool and the compile service start afresh in a child: libhipacm's fork epoch).
class InFlight {
 public:
  /// Counts a compile in; false when this process must not enter libhipacm.
  bool enter() noexcept {
    std::lock_guard<PidLock> guard(lock_);
    const pid_t self = getpid();
    if (pid_ != self) {
      if (count_ > 0) forked_mid_compile_ = true;
      pid_ = self;
      count_ = 0;
    }
    if (forked_mid_compile_) return false;
    ++count_;
    return true;
  }
  void leave() noexcept {
    std::lock_guard<PidLock> guard(lock_);
    if (pid_ == getpid()) --count_;
  }

 private:
  PidLock lock_;
  pid_t pid_ = 0;
  int count_ = 0;
  bool forked_mid_compile_ = false;
};
constinit InFlight g_in_flight;

// Set when libhipacm said it cannot serve this process (no worker, in-process isolation, its
// settings): the process has had its one warning and compiles with the libraries without asking
// again.
constinit std::atomic<bool> g_unavailable{false};

RtcResult serve_compile(Program* p) {
  std::string arch;
  std::vector<const char*> option_ptrs = c_strings(p->options);
  const std::string reason =
      unservable(*p, static_cast<int>(option_ptrs.size()), option_ptrs.data(), &arch);
  if (!reason.empty()) return pass_through(p, reason, "");
  if (g_unavailable.load(std::memory_order_relaxed))
    return pass_through(p, "hipacm unavailable", "");
  // Counted from before libhipacm is loaded: a child forked while it loads must not use it.
  if (!g_in_flight.enter())
    return pass_through(p, "forked during a compile",
                        "this process was forked while another thread compiled through hipacm");
  std::string why;
  const HipacmEntry* entry = hipacm_entry(&why);
  if (entry == nullptr) {
    g_in_flight.leave();
    warn_unavailable_once(why);
    return pass_through(p, "hipacm unavailable", why);
  }
  const std::vector<const char*> sources = c_strings(p->header_sources);
  const std::vector<const char*> names = c_strings(p->header_names);
  const std::vector<const char*> expressions = c_strings(p->expressions);
  hipacm_intercept_request request{};
  request.struct_size = sizeof request;
  request.source = p->source.c_str();
  request.source_name = p->name.c_str();
  request.num_headers = sources.size();
  request.header_sources = sources.data();
  request.header_names = names.data();
  request.num_options = option_ptrs.size();
  request.options = option_ptrs.data();
  request.num_name_expressions = expressions.size();
  request.name_expressions = expressions.data();
  request.arch = arch.c_str();
  const std::string library = library_file(*p);
  if (!library.empty()) request.library = library.c_str();
  if (p->api->rtc == Rtc::kNvrtc) request.flags = HIPACM_INTERCEPT_RAW_NVRTC;
  // NVRTC makes PTX for a virtual arch (compute_XX), a CUBIN (and PTX) for a real one (sm_XX).
  p->served_output = p->api->rtc == Rtc::kHiprtc  ? kHipCode
                     : arch.substr(0, 3) == "sm_" ? kCubin
                                                  : kPtx;
  hipacm_intercept_result* result = entry->compile(&request);
  g_in_flight.leave();
  if (result == nullptr) return pass_through(p, "refused by hipacm", "out of memory");
  struct Release {
    const HipacmEntry* entry;
    hipacm_intercept_result* result;
    ~Release() { entry->release(result); }
  } const release{entry, result};
  switch (result->outcome) {
    case HIPACM_INTERCEPT_HIT:
    case HIPACM_INTERCEPT_COMPILED:
    case HIPACM_INTERCEPT_FAILED:
      if (result->num_lowered_names == p->expressions.size() ||
          result->outcome == HIPACM_INTERCEPT_FAILED)
        return keep_served(p, *result);
      return pass_through(p, "refused by hipacm", "lowered names missing");
    case HIPACM_INTERCEPT_UNAVAILABLE:
      g_unavailable.store(true, std::memory_order_relaxed);
      warn_unavailable_once(result->detail);
      return pass_through(p, "hipacm unavailable", result->detail);
    default:
      return pass_through(p, result->reason, result->detail);
  }
}

// Runs `body` on the program under its lock, turning the shim's own out of memory into hipRTC's
// result for it. Anything the real library throws passes through as it would without the shim.
template <class Body>
RtcResult locked(Program* p, Body&& body) {
  try {
    std::lock_guard<std::mutex> guard(p->mutex);
    return body();
  } catch (const std::bad_alloc&) {
    return kRtcOutOfMemory;
  }
}

// A call on a program: `served` answers from hipacm's result (nothing: it cannot), else the real
// program does through `real`, made first when needed; `reason` names the call for the stats.
template <class Served, class Real>
RtcResult answer(Rtc rtc, RealProgram prog, std::string_view reason, Served&& served, Real&& real) {
  Program* p = ours(prog);
  if (p == nullptr) {
    const RealRtc* api = any_real_rtc(rtc);
    return api != nullptr ? real(*api, prog) : kRtcInvalidProgram;
  }
  return locked(p, [&]() -> RtcResult {
    if (p->state == State::kServed) {
      const RtcResult answered = served(*p);
      if (answered >= 0) return answered;
    }
    if (p->state == State::kKept && !p->compiled) {
      // Before any compile the real program is only needed for what hipRTC must judge itself.
      const RtcResult made = to_real(p, "call before a compile");
      if (made != kRtcSuccess) return made;
    } else if (p->state != State::kReal) {
      const RtcResult made = to_real(p, reason);
      if (made != kRtcSuccess && p->real == nullptr) return made;
    }
    return real(*p->api, p->real);
  });
}

constexpr RtcResult kNotServed = -1;

}  // namespace

RtcResult create_program(const RealRtc* api, RealProgram* prog, const char* source,
                         const char* name, int num_headers, const char** headers,
                         const char** include_names) {
  if (api == nullptr) return kRtcInternalError;
  // NVRTC names a program without a name "default_program" (PyTorch's jiterator makes them so);
  // the served compile gives it that name too, so that its log reads as NVRTC's would.
  if (api->rtc == Rtc::kNvrtc && name == nullptr) name = "default_program";
  bool usual = prog != nullptr && source != nullptr && name != nullptr && num_headers >= 0 &&
               (num_headers == 0 || (headers != nullptr && include_names != nullptr));
  for (int i = 0; usual && i < num_headers; ++i)
    usual = headers[i] != nullptr && include_names[i] != nullptr;
  if (!usual) {
    // The library judges odd arguments itself; a program it makes is wrapped, so every later
    // call finds its library.
    RealProgram real = nullptr;
    const RtcResult r = api->create(prog != nullptr ? &real : nullptr, source, name, num_headers,
                                    headers, include_names);
    if (r != kRtcSuccess || prog == nullptr) return r;
    Program* p = new (std::nothrow) Program;
    if (p == nullptr) {
      api->destroy(&real);
      return kRtcOutOfMemory;
    }
    p->api = api;
    p->state = State::kReal;
    p->real = real;
    p->real_reason = "unusual arguments";
    *prog = p;
    return kRtcSuccess;
  }
  try {
    auto p = std::make_unique<Program>();
    p->api = api;
    p->source = source;
    p->name = name;
    for (int i = 0; i < num_headers; ++i) {
      p->header_sources.emplace_back(headers[i]);
      p->header_names.emplace_back(include_names[i]);
    }
    *prog = p.release();
    return kRtcSuccess;
  } catch (...) {
    return kRtcOutOfMemory;
  }
}

RtcResult add_name_expression(Rtc rtc, RealProgram prog, const char* expression) {
  Program* p = ours(prog);
  if (p != nullptr && expression != nullptr) {
    const RtcResult kept = locked(p, [&]() -> RtcResult {
      if (p->state != State::kKept || p->compiled) return kNotServed;
      p->expressions.emplace_back(expression);
      return kRtcSuccess;
    });
    if (kept != kNotServed) return kept;
  }
  return answer(
      rtc, prog, "call after a served compile", [](const Program&) { return kNotServed; },
      [&](const RealRtc& api, RealProgram real) {
        return api.add_name_expression(real, expression);
      });
}

RtcResult compile_program(Rtc rtc, RealProgram prog, int num_options, const char** options) {
  Program* p = ours(prog);
  if (p == nullptr) {
    const RealRtc* api = any_real_rtc(rtc);
    return api != nullptr ? api->compile(prog, num_options, options) : kRtcInvalidProgram;
  }
  return locked(p, [&]() -> RtcResult {
    if (p->state == State::kKept && !p->compiled &&
        (num_options >= 0 && (num_options == 0 || options != nullptr))) {
      bool strings = true;
      for (int i = 0; strings && i < num_options; ++i) strings = options[i] != nullptr;
      if (strings) {
        for (int i = 0; i < num_options; ++i) p->options.emplace_back(options[i]);
        p->compiled = true;
        return serve_compile(p);
      }
    }
    // A second compile, odd options, or a program the library already holds: its own.
    if (p->state != State::kReal) {
      const RtcResult made = to_real(p, p->compiled ? "second compile" : "unusual arguments");
      if (p->real == nullptr) return made;
    }
    record_stats("passthrough", p->real_reason);
    return p->api->compile(p->real, num_options, options);
  });
}

RtcResult get_output_size(Rtc rtc, RealProgram prog, Output output, std::size_t* size) {
  return answer(
      rtc, prog, "call after a served compile",
      [&](const Program& p) {
        if (p.served_result != kRtcSuccess || p.served_output != output || size == nullptr)
          return kNotServed;
        *size = p.code.size();
        return kRtcSuccess;
      },
      [&](const RealRtc& api, RealProgram real) {
        return api.output_size[output] != nullptr ? api.output_size[output](real, size)
                                                  : kRtcInvalidInput;
      });
}

RtcResult get_output(Rtc rtc, RealProgram prog, Output output, char* code) {
  return answer(
      rtc, prog, "call after a served compile",
      [&](const Program& p) {
        if (p.served_result != kRtcSuccess || p.served_output != output || code == nullptr)
          return kNotServed;
        std::memcpy(code, p.code.data(), p.code.size());
        return kRtcSuccess;
      },
      [&](const RealRtc& api, RealProgram real) {
        return api.output[output] != nullptr ? api.output[output](real, code) : kRtcInvalidInput;
      });
}

// hipRTC 5 counts the log without a terminating NUL and writes none (an empty log is size 0);
// NVRTC counts and writes one (an empty log is size 1). hipacm keeps the text without it.
RtcResult get_log_size(Rtc rtc, RealProgram prog, std::size_t* size) {
  return answer(
      rtc, prog, "call after a served compile",
      [&](const Program& p) {
        if (size == nullptr) return kNotServed;
        *size = p.log.size() + (p.api->rtc == Rtc::kNvrtc ? 1 : 0);
        return kRtcSuccess;
      },
      [&](const RealRtc& api, RealProgram real) { return api.log_size(real, size); });
}

RtcResult get_log(Rtc rtc, RealProgram prog, char* log) {
  return answer(
      rtc, prog, "call after a served compile",
      [&](const Program& p) {
        if (log == nullptr) return kNotServed;
        std::memcpy(log, p.log.data(), p.log.size());
        if (p.api->rtc == Rtc::kNvrtc) log[p.log.size()] = 0;
        return kRtcSuccess;
      },
      [&](const RealRtc& api, RealProgram real) { return api.log(real, log); });
}

RtcResult get_lowered_name(Rtc rtc, RealProgram prog, const char* expression,
                           const char** lowered) {
  return answer(
      rtc, prog, "call after a served compile",
      [&](const Program& p) {
        if (p.served_result != kRtcSuccess || expression == nullptr || lowered == nullptr)
          return kNotServed;
        for (std::size_t i = 0; i < p.expressions.size(); ++i) {
          if (p.expressions[i] == expression) {
            *lowered = p.lowered[i].c_str();
            return kRtcSuccess;
          }
        }
        return kNotServed;
      },
      [&](const RealRtc& api, RealProgram real) {
        return api.lowered_name(real, expression, lowered);
      });
}

RtcResult nvrtc_pch_create_status(RealProgram prog) {
  return answer(
      Rtc::kNvrtc, prog, "GetPCHCreateStatus", [](const Program&) { return kNotServed; },
      [&](const RealRtc& api, RealProgram real) {
        return api.pch_create_status != nullptr ? api.pch_create_status(real) : kRtcInvalidInput;
      });
}

RtcResult nvrtc_pch_heap_size_required(RealProgram prog, std::size_t* size) {
  return answer(
      Rtc::kNvrtc, prog, "GetPCHHeapSizeRequired", [](const Program&) { return kNotServed; },
      [&](const RealRtc& api, RealProgram real) {
        return api.pch_heap_size_required != nullptr ? api.pch_heap_size_required(real, size)
                                                     : kRtcInvalidInput;
      });
}

RtcResult nvrtc_set_flow_callback(RealProgram prog, int (*callback)(void*, void*), void* payload) {
  return answer(
      Rtc::kNvrtc, prog, "SetFlowCallback", [](const Program&) { return kNotServed; },
      [&](const RealRtc& api, RealProgram real) {
        return api.set_flow_callback != nullptr ? api.set_flow_callback(real, callback, payload)
                                                : kRtcInvalidInput;
      });
}

RtcResult destroy_program(Rtc rtc, RealProgram* prog) {
  Program* p = prog != nullptr ? ours(*prog) : nullptr;
  if (p == nullptr) {
    const RealRtc* api = any_real_rtc(rtc);
    return api != nullptr ? api->destroy(prog) : kRtcInvalidInput;
  }
  RtcResult result = kRtcSuccess;
  const bool clears = p->api->rtc == Rtc::kNvrtc;
  {
    std::lock_guard<std::mutex> guard(p->mutex);
    if (p->real != nullptr) result = p->api->destroy(&p->real);
    p->magic = 0;
  }
  delete p;
  // hipRTC leaves the caller's handle as it was, NVRTC sets it to NULL; so does the shim.
  if (clears) *prog = nullptr;
  return result;
}

}  // namespace hipacm::intercept
