// SPDX-License-Identifier: MIT
// real_rtc.cpp - finds the real hipRTC and NVRTC entry points (the linked library, and each library
// a program dlopens) and interposes dlsym, so a program that looks them up gets the shim's calls.
#include "intercept/real_rtc.h"

#include <dlfcn.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string_view>
#include <type_traits>
#include <utility>

#include "intercept/program.h"
#include "support/pid_lock.h"

namespace hipacm::intercept {
namespace {

std::atomic<DlsymFn> g_real_dlsym{nullptr};

}  // namespace

DlsymFn libc_dlsym() noexcept {
  DlsymFn fn = g_real_dlsym.load(std::memory_order_acquire);
  if (fn != nullptr) return fn;
  // dlvsym is not interposed: it finds libc's dlsym after this library (glibc 2.34 moved dlsym
  // into libc under a new version; older ones have only the first).
  for (const char* version : {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17", "GLIBC_2.0"}) {
    fn = reinterpret_cast<DlsymFn>(dlvsym(RTLD_NEXT, "dlsym", version));
    if (fn != nullptr) break;
  }
  g_real_dlsym.store(fn, std::memory_order_release);
  return fn;
}

namespace {

// Fills *t from `lookup(name)` with `rtc`'s names; false unless every call the shim needs is
// there (the oldest release's: hipRTC 5, NVRTC 12).
template <class Lookup>
bool resolve(Rtc rtc, RealRtc* t, Lookup&& lookup) noexcept {
  const bool hip = rtc == Rtc::kHiprtc;
  const char* const prefix = hip ? "hiprtc" : "nvrtc";
  auto get = [&](auto* field, const char* name) {
    char full[64];
    std::snprintf(full, sizeof full, "%s%s", prefix, name);
    *field = reinterpret_cast<std::remove_reference_t<decltype(*field)>>(lookup(full));
    return *field != nullptr;
  };
  *t = RealRtc{};
  t->rtc = rtc;
  bool all = get(&t->create, "CreateProgram");
  all = get(&t->destroy, "DestroyProgram") && all;
  all = get(&t->add_name_expression, "AddNameExpression") && all;
  all = get(&t->compile, "CompileProgram") && all;
  all = get(&t->log_size, "GetProgramLogSize") && all;
  all = get(&t->log, "GetProgramLog") && all;
  all = get(&t->lowered_name, "GetLoweredName") && all;
  all = get(&t->error_string, "GetErrorString") && all;
  all = get(&t->version, "Version") && all;
  if (hip) {
    all = get(&t->output_size[kHipCode], "GetCodeSize") && all;
    all = get(&t->output[kHipCode], "GetCode") && all;
    get(&t->output_size[kHipBitcode], "GetBitcodeSize");
    get(&t->output[kHipBitcode], "GetBitcode");
    return all;
  }
  all = get(&t->output_size[kPtx], "GetPTXSize") && all;
  all = get(&t->output[kPtx], "GetPTX") && all;
  all = get(&t->output_size[kCubin], "GetCUBINSize") && all;
  all = get(&t->output[kCubin], "GetCUBIN") && all;
  all = get(&t->num_supported_archs, "GetNumSupportedArchs") && all;
  all = get(&t->supported_archs, "GetSupportedArchs") && all;
  get(&t->output_size[kLtoir], "GetLTOIRSize");
  get(&t->output[kLtoir], "GetLTOIR");
  get(&t->output_size[kOptixir], "GetOptiXIRSize");
  get(&t->output[kOptixir], "GetOptiXIR");
  get(&t->output_size[kNvvm], "GetNVVMSize");
  get(&t->output[kNvvm], "GetNVVM");
  get(&t->pch_create_status, "GetPCHCreateStatus");
  get(&t->pch_heap_size_required, "GetPCHHeapSizeRequired");
  get(&t->set_flow_callback, "SetFlowCallback");
  return all;
}

// Per compiler, slot 0: the linked library (RTLD_NEXT); 1..: libraries that programs dlopen, by
// load address.
constexpr std::size_t kSlots = 8;
struct Slot {
  std::atomic<int> state{0};  // 0 empty, 1 ready
  const void* base = nullptr;
  RealRtc table{};
};
std::array<std::array<Slot, kSlots>, kRtcCount> g_slots;
PidLock g_slots_lock;

const RealRtc* slot_table(Rtc rtc, std::size_t i) noexcept {
  Slot& slot = g_slots[static_cast<std::size_t>(rtc)][i];
  if (slot.state.load(std::memory_order_acquire) == 1) return &slot.table;
  if (i != 0) return nullptr;
  std::lock_guard<PidLock> guard(g_slots_lock);
  if (slot.state.load(std::memory_order_acquire) == 0) {
    const DlsymFn next = libc_dlsym();
    // RTLD_NEXT from here: the definition a linked program would have bound to without the shim.
    const bool found = next != nullptr && resolve(rtc, &slot.table, [&](const char* name) {
                         return next(RTLD_NEXT, name);
                       });
    // Not found stays untried: a program may load the library globally later.
    if (found) slot.state.store(1, std::memory_order_release);
  }
  return slot.state.load(std::memory_order_acquire) == 1 ? &slot.table : nullptr;
}

// The slot of `rtc`'s library loaded at `base` (holding `file`), made on first sight; SIZE_MAX
// when every slot is taken or the library lacks the calls.
std::size_t slot_of_library(Rtc rtc, const void* base, const char* file) noexcept {
  auto& slots = g_slots[static_cast<std::size_t>(rtc)];
  for (std::size_t i = 1; i < kSlots; ++i)
    if (slots[i].state.load(std::memory_order_acquire) == 1 && slots[i].base == base) return i;
  std::lock_guard<PidLock> guard(g_slots_lock);
  for (std::size_t i = 1; i < kSlots; ++i) {
    Slot& slot = slots[i];
    const int state = slot.state.load(std::memory_order_acquire);
    if (state == 1 && slot.base == base) return i;
    if (state != 0) continue;
    // A reference of our own keeps the library mapped while programs made from it live.
    void* handle = dlopen(file, RTLD_LAZY | RTLD_NOLOAD);
    if (handle == nullptr) return SIZE_MAX;
    const DlsymFn real = libc_dlsym();
    if (!resolve(rtc, &slot.table, [&](const char* name) { return real(handle, name); }))
      return SIZE_MAX;
    slot.base = base;
    slot.state.store(1, std::memory_order_release);
    return i;
  }
  return SIZE_MAX;
}

// The calls that name no program, one copy per slot, so each answers from its own library.
template <Rtc R, std::size_t I>
RtcResult create_in_slot(RealProgram* prog, const char* src, const char* name, int num_headers,
                         const char** headers, const char** include_names) {
  return create_program(slot_table(R, I), prog, src, name, num_headers, headers, include_names);
}
template <std::size_t I>
const char* error_string_in_slot(RtcResult result) {
  const RealRtc* api = slot_table(Rtc::kHiprtc, I);
  return api != nullptr ? api->error_string(result) : "HIPRTC_ERROR_INTERNAL_ERROR";
}
template <std::size_t I>
RtcResult version_in_slot(int* major, int* minor) {
  const RealRtc* api = slot_table(Rtc::kHiprtc, I);
  return api != nullptr ? api->version(major, minor) : kRtcInternalError;
}

template <std::size_t... I>
constexpr auto slot_calls(std::index_sequence<I...>) {
  struct Calls {
    void* create[kSlots];
    void* error_string[kSlots];
    void* version[kSlots];
    void* nvrtc_create[kSlots];
  };
  return Calls{{reinterpret_cast<void*>(&create_in_slot<Rtc::kHiprtc, I>)...},
               {reinterpret_cast<void*>(&error_string_in_slot<I>)...},
               {reinterpret_cast<void*>(&version_in_slot<I>)...},
               {reinterpret_cast<void*>(&create_in_slot<Rtc::kNvrtc, I>)...}};
}

// The shim's own definition of `name` for `rtc`'s library in slot `slot`, or null when the shim
// leaves the name alone (hiprtcLink*, nvrtcVersion, anything newer): the program gets the
// library's own.
void* served_call(Rtc rtc, std::string_view name, std::size_t slot) noexcept {
  static const auto calls = slot_calls(std::make_index_sequence<kSlots>());
  if (rtc == Rtc::kNvrtc) {
    if (name == "nvrtcCreateProgram") return calls.nvrtc_create[slot];
    return nvrtc_program_call(name);
  }
  if (name == "hiprtcCreateProgram") return calls.create[slot];
  if (name == "hiprtcGetErrorString") return calls.error_string[slot];
  if (name == "hiprtcVersion") return calls.version[slot];
  // The calls that take a program find its library in it: one definition for every slot.
  return hiprtc_program_call(name);
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// A lookup by hipacm's own code (libhipacm compiles with or identifies hipRTC or NVRTC itself)
// must get the library's own.
bool looked_up_by_hipacm(const void* caller) noexcept {
  Dl_info info{};
  if (dladdr(caller, &info) == 0 || info.dli_fname == nullptr) return false;
  const char* slash = std::strrchr(info.dli_fname, '/');
  return starts_with(slash != nullptr ? slash + 1 : info.dli_fname, "libhipacm.so");
}

// For a dlsym(handle, name) of a hipRTC or NVRTC name: the shim's call, or null for libc's answer.
void* interposed(void* handle, const char* name, const void* caller, bool* no_symbol) noexcept {
  const Rtc rtc = name[0] == 'h' ? Rtc::kHiprtc : Rtc::kNvrtc;
  if (!starts_with(name, rtc == Rtc::kHiprtc ? "hiprtc" : "nvrtc") || hipacm_process() ||
      looked_up_by_hipacm(caller))
    return nullptr;
  if (served_call(rtc, name, 0) == nullptr) return nullptr;
  const DlsymFn real = libc_dlsym();
  if (real == nullptr) return nullptr;
  void* found = real(handle, name);
  if (found == nullptr) return nullptr;
  Dl_info info{};
  Dl_info self{};
  if (dladdr(found, &info) == 0 || info.dli_fname == nullptr ||
      dladdr(reinterpret_cast<const void*>(&interposed), &self) == 0)
    return nullptr;
  if (info.dli_fbase == self.dli_fbase) {
    // The shim's own definition, found in the global scope: it stands for the library only
    // where one is loaded that has the call (a program probing whether it is there, or whether
    // this release has nvrtcGetNVVM or hiprtcGetBitcode, must still hear no).
    if (linked_rtc(rtc) == nullptr || real(RTLD_NEXT, name) == nullptr) *no_symbol = true;
    return nullptr;
  }
  const std::size_t slot = slot_of_library(rtc, info.dli_fbase, info.dli_fname);
  return slot == SIZE_MAX ? nullptr : served_call(rtc, name, slot);
}

}  // namespace

const RealRtc* linked_rtc(Rtc rtc) noexcept { return slot_table(rtc, 0); }

const RealRtc* any_real_rtc(Rtc rtc) noexcept {
  for (std::size_t i = 0; i < kSlots; ++i)
    if (const RealRtc* api = slot_table(rtc, i)) return api;
  return nullptr;
}

void* real_dlsym(void* handle, const char* name) noexcept {
  const DlsymFn fn = libc_dlsym();
  return fn != nullptr ? fn(handle, name) : nullptr;
}

bool hipacm_process() noexcept {
  static std::atomic<int> known{0};  // 0 not yet, 1 no, 2 yes; a race computes it twice
  int state = known.load(std::memory_order_relaxed);
  if (state == 0) {
    char path[4096];
    const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    std::string_view exe(path, n > 0 ? static_cast<std::size_t>(n) : 0);
    exe = exe.substr(exe.rfind('/') == std::string_view::npos ? 0 : exe.rfind('/') + 1);
    state = exe == "hipacm-worker" ? 2 : 1;
    known.store(state, std::memory_order_relaxed);
  }
  return state == 2;
}

}  // namespace hipacm::intercept

// The interposed dlsym. Only a hipRTC or NVRTC name the shim serves is answered here (RTLD_NEXT
// never); everything else goes to libc's dlsym by a tail call, so that libc still sees the
// program's return address (RTLD_NEXT and the caller's namespace depend on it).
extern "C" __attribute__((visibility("default"), optimize("optimize-sibling-calls"))) void* dlsym(
    void* handle, const char* name) {
  // glibc declares `name` non-null, but a program may still pass NULL: libc answers that one.
  const char* checked = name;
  asm("" : "+r"(checked));
  if (handle != RTLD_NEXT && checked != nullptr && (checked[0] == 'h' || checked[0] == 'n')) {
    bool no_symbol = false;
    if (void* ours =
            hipacm::intercept::interposed(handle, checked, __builtin_return_address(0), &no_symbol))
      return ours;
    if (no_symbol) return nullptr;
  }
  const hipacm::intercept::DlsymFn libc = hipacm::intercept::libc_dlsym();
  if (libc == nullptr) return nullptr;
  return libc(handle, name);
}
