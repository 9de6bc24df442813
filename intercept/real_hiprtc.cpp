// SPDX-License-Identifier: MIT
// real_hiprtc.cpp - finds the real hipRTC entry points (the linked library, and each library a
// program dlopens) and interposes dlsym, so a program that looks hipRTC up gets the shim's calls.
#include "intercept/real_hiprtc.h"

#include <dlfcn.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>
#include <mutex>
#include <string_view>
#include <type_traits>
#include <utility>

#include "intercept/pid_lock.h"
#include "intercept/program.h"

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

// Fills *t from `lookup(name)`; false unless every call hipRTC 5 has is there.
template <class Lookup>
bool resolve(RealHiprtc* t, Lookup&& lookup) noexcept {
  auto get = [&](auto* field, const char* name) {
    *field = reinterpret_cast<std::remove_reference_t<decltype(*field)>>(lookup(name));
    return *field != nullptr;
  };
  bool all = get(&t->create, "hiprtcCreateProgram");
  all = get(&t->destroy, "hiprtcDestroyProgram") && all;
  all = get(&t->add_name_expression, "hiprtcAddNameExpression") && all;
  all = get(&t->compile, "hiprtcCompileProgram") && all;
  all = get(&t->code_size, "hiprtcGetCodeSize") && all;
  all = get(&t->code, "hiprtcGetCode") && all;
  all = get(&t->log_size, "hiprtcGetProgramLogSize") && all;
  all = get(&t->log, "hiprtcGetProgramLog") && all;
  all = get(&t->lowered_name, "hiprtcGetLoweredName") && all;
  all = get(&t->error_string, "hiprtcGetErrorString") && all;
  all = get(&t->version, "hiprtcVersion") && all;
  get(&t->bitcode_size, "hiprtcGetBitcodeSize");
  get(&t->bitcode, "hiprtcGetBitcode");
  return all;
}

// Slot 0: the linked library (RTLD_NEXT); 1..: libraries that programs dlopen, by load address.
constexpr std::size_t kSlots = 8;
struct Slot {
  std::atomic<int> state{0};  // 0 empty, 1 ready
  const void* base = nullptr;
  RealHiprtc table{};
};
std::array<Slot, kSlots> g_slots;
PidLock g_slots_lock;

const RealHiprtc* slot_table(std::size_t i) noexcept {
  Slot& slot = g_slots[i];
  if (slot.state.load(std::memory_order_acquire) == 1) return &slot.table;
  if (i != 0) return nullptr;
  std::lock_guard<PidLock> guard(g_slots_lock);
  if (slot.state.load(std::memory_order_acquire) == 0) {
    const DlsymFn next = libc_dlsym();
    // RTLD_NEXT from here: the definition a linked program would have bound to without the shim.
    const bool found = next != nullptr && resolve(&slot.table, [&](const char* name) {
                         return next(RTLD_NEXT, name);
                       });
    // Not found stays untried: a program may load hipRTC globally later.
    if (found) slot.state.store(1, std::memory_order_release);
  }
  return slot.state.load(std::memory_order_acquire) == 1 ? &slot.table : nullptr;
}

// The slot of the library loaded at `base` (holding `file`), made on first sight; SIZE_MAX when
// every slot is taken or the library lacks hipRTC's calls.
std::size_t slot_of_library(const void* base, const char* file) noexcept {
  for (std::size_t i = 1; i < kSlots; ++i)
    if (g_slots[i].state.load(std::memory_order_acquire) == 1 && g_slots[i].base == base) return i;
  std::lock_guard<PidLock> guard(g_slots_lock);
  for (std::size_t i = 1; i < kSlots; ++i) {
    Slot& slot = g_slots[i];
    const int state = slot.state.load(std::memory_order_acquire);
    if (state == 1 && slot.base == base) return i;
    if (state != 0) continue;
    // A reference of our own keeps the library mapped while programs made from it live.
    void* handle = dlopen(file, RTLD_LAZY | RTLD_NOLOAD);
    if (handle == nullptr) return SIZE_MAX;
    const DlsymFn real = libc_dlsym();
    if (!resolve(&slot.table, [&](const char* name) { return real(handle, name); }))
      return SIZE_MAX;
    slot.base = base;
    slot.state.store(1, std::memory_order_release);
    return i;
  }
  return SIZE_MAX;
}

// The calls that name no program, one copy per slot, so each answers from its own library.
template <std::size_t I>
RtcResult create_in_slot(RealProgram* prog, const char* src, const char* name, int num_headers,
                         const char** headers, const char** include_names) {
  return create_program(slot_table(I), prog, src, name, num_headers, headers, include_names);
}
template <std::size_t I>
const char* error_string_in_slot(RtcResult result) {
  const RealHiprtc* api = slot_table(I);
  return api != nullptr ? api->error_string(result) : "HIPRTC_ERROR_INTERNAL_ERROR";
}
template <std::size_t I>
RtcResult version_in_slot(int* major, int* minor) {
  const RealHiprtc* api = slot_table(I);
  return api != nullptr ? api->version(major, minor) : kRtcInternalError;
}

template <std::size_t... I>
constexpr auto slot_calls(std::index_sequence<I...>) {
  struct Calls {
    void* create[kSlots];
    void* error_string[kSlots];
    void* version[kSlots];
  };
  return Calls{{reinterpret_cast<void*>(&create_in_slot<I>)...},
               {reinterpret_cast<void*>(&error_string_in_slot<I>)...},
               {reinterpret_cast<void*>(&version_in_slot<I>)...}};
}

// The shim's own definition of `name` for a library in slot `slot`, or null when the shim
// leaves the name alone (hiprtcLink*, anything newer): the program gets the library's own.
void* served_call(std::string_view name, std::size_t slot) noexcept {
  static const auto calls = slot_calls(std::make_index_sequence<kSlots>());
  if (name == "hiprtcCreateProgram") return calls.create[slot];
  if (name == "hiprtcGetErrorString") return calls.error_string[slot];
  if (name == "hiprtcVersion") return calls.version[slot];
  // The calls that take a program find its library in it: one definition for every slot.
  return shared_program_call(name);
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// A lookup by hipacm's own code (libhipacm compiles or identifies hipRTC itself) must get hipRTC.
bool looked_up_by_hipacm(const void* caller) noexcept {
  Dl_info info{};
  if (dladdr(caller, &info) == 0 || info.dli_fname == nullptr) return false;
  const char* slash = std::strrchr(info.dli_fname, '/');
  return starts_with(slash != nullptr ? slash + 1 : info.dli_fname, "libhipacm.so");
}

// For a dlsym(handle, name) of a hipRTC name: the shim's call, or null for libc's answer.
void* interposed(void* handle, const char* name, const void* caller, bool* no_symbol) noexcept {
  if (!starts_with(name, "hiprtc") || hipacm_process() || looked_up_by_hipacm(caller))
    return nullptr;
  if (served_call(name, 0) == nullptr) return nullptr;
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
    // The shim's own definition, found in the global scope: it stands for hipRTC only where
    // one is loaded (a program probing whether hipRTC is there must still hear no).
    if (linked_hiprtc() == nullptr) *no_symbol = true;
    return nullptr;
  }
  const std::size_t slot = slot_of_library(info.dli_fbase, info.dli_fname);
  return slot == SIZE_MAX ? nullptr : served_call(name, slot);
}

}  // namespace

const RealHiprtc* linked_hiprtc() noexcept { return slot_table(0); }

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

// The interposed dlsym. Only a hipRTC name the shim serves is answered here (RTLD_NEXT never);
// everything else goes to libc's dlsym by a tail call, so that libc still sees the program's return
// address (RTLD_NEXT and the caller's namespace depend on it).
extern "C" __attribute__((visibility("default"), optimize("optimize-sibling-calls"))) void* dlsym(
    void* handle, const char* name) {
  // glibc declares `name` non-null, but a program may still pass NULL: libc answers that one.
  const char* checked = name;
  asm("" : "+r"(checked));
  if (handle != RTLD_NEXT && checked != nullptr && checked[0] == 'h') {
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
