// SPDX-License-Identifier: MIT
// rocm_toolchain.cpp - reads hipRTC's whole compile chain from the process's mapped objects.
#include "hip_backend/hiprtc/rocm_toolchain.h"

#include <algorithm>
#include <mutex>
#include <optional>
#include <string_view>

#include "hip_backend/hiprtc/backend_lock.h"
#include "hip_backend/hiprtc/comgr_isa_internal.h"
#include "hip_backend/hiprtc/hiprtc_api.h"
#include "hip_backend/hiprtc/hiprtc_internal.h"
#include "hip_backend/rocm_paths.h"
#include "support/bytes/sha256.h"
#include "support/failure.h"
#include "support/libraries/dynamic_library.h"
#include "support/libraries/loaded_objects.h"
#include "support/no_destructor.h"
#include "support/settings.h"

namespace hipacm::backend {
namespace {

constexpr std::string_view kComgrStem = "libamd_comgr.so";
// Dependencies of hipRTC and comgr that take part in code generation. Others (the C++ runtime,
// zlib, libnuma) cannot change a code object, and naming them would only cost cache hits.
constexpr std::string_view kCodegenStems[] = {"libLLVM", "libclang", "liblld", "libamd_comgr",
                                              "libhiprtc"};

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

bool is_comgr(const LoadedObject& object) {
  return starts_with(file_base_name(object.path), kComgrStem);
}

// hipRTC 6 and 7 dlopen comgr on their first program; ROCm 5's hipRTC does the same inside
// libamdhip64. Creating one program (never compiled) is the cheapest way to make it happen.
void make_hiprtc_load_comgr(const HiprtcApi& api) {
  static constexpr const char kSource[] = "extern \"C\" __global__ void hipacm_probe() {}\n";
  const RocmBackendLock lock;
  hiprtc_program program = nullptr;
  if (api.hiprtcCreateProgram(&program, kSource, "hipacm_probe.hip", 0, nullptr, nullptr) ==
          kHiprtcSuccess &&
      program != nullptr)
    api.hiprtcDestroyProgram(&program);
}

std::string component_line(const LoadedObject& object) {
  const std::string name = file_base_name(object.path);
  if (!object.build_id.empty()) return name + " build-id " + object.build_id;
  // No build ID: the file's real name still tells releases apart.
  return name + " file " + file_base_name(real_file_path(object.path));
}

const LoadedObject* find_by_name(const std::vector<LoadedObject>& objects,
                                 const std::string& name) {
  for (const LoadedObject& object : objects)
    if (file_base_name(object.path) == name) return &object;
  return nullptr;
}

// The comgr hipRTC uses: the one that appeared while hipRTC created its program, else the only
// one mapped. Two different ones mapped with none new is a mix that mixed_rocm_problem reports.
const LoadedObject* hiprtc_comgr(const std::vector<LoadedObject>& before,
                                 const std::vector<LoadedObject>& after) {
  const LoadedObject* only = nullptr;
  for (const LoadedObject& object : after) {
    if (!is_comgr(object)) continue;
    const bool is_new = std::none_of(before.begin(), before.end(), [&](const LoadedObject& old) {
      return old.path == object.path;
    });
    if (is_new) return &object;
    if (only == nullptr) only = &object;
  }
  return only;
}

void add_component(RocmToolchain* toolchain, const LoadedObject& object) {
  if (std::find(toolchain->files.begin(), toolchain->files.end(), object.path) !=
      toolchain->files.end())
    return;
  toolchain->files.push_back(object.path);
  toolchain->components.push_back(component_line(object));
}

void add_codegen_dependencies(RocmToolchain* toolchain, const LoadedObject& object,
                              const std::vector<LoadedObject>& mapped) {
  for (const std::string& needed : object.needed) {
    const bool codegen =
        std::any_of(std::begin(kCodegenStems), std::end(kCodegenStems),
                    [&](std::string_view stem) { return starts_with(needed, stem); });
    if (!codegen) continue;
    if (const LoadedObject* dependency = find_by_name(mapped, needed))
      add_component(toolchain, *dependency);
  }
}

std::string comgr_version_of(const std::string& comgr_path) {
  const auto comgr = find_comgr({comgr_path});
  if (!comgr || comgr->api.amd_comgr_get_version == nullptr) return {};
  std::size_t major = 0;
  std::size_t minor = 0;
  comgr->api.amd_comgr_get_version(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

Expected<RocmToolchain> read_toolchain() {
  const Expected<const HiprtcApi*> loaded = load_hiprtc();
  if (!loaded) return loaded.failure();
  const HiprtcApi* api = loaded.value();
  const std::vector<LoadedObject> before = loaded_objects();
  make_hiprtc_load_comgr(*api);
  const std::vector<LoadedObject> mapped = loaded_objects();

  RocmToolchain toolchain;
  toolchain.hiprtc_version = api->version;
  const auto hiprtc = loaded_object_containing(reinterpret_cast<const void*>(api->hiprtcVersion));
  toolchain.hiprtc_path = hiprtc ? hiprtc->path : api->library_path;
  if (hiprtc) add_component(&toolchain, *hiprtc);
  if (const LoadedObject* comgr = hiprtc_comgr(before, mapped)) {
    toolchain.comgr_path = comgr->path;
    toolchain.comgr_version = comgr_version_of(comgr->path);
    add_component(&toolchain, *comgr);
    add_codegen_dependencies(&toolchain, *comgr, mapped);
  }
  if (hiprtc) add_codegen_dependencies(&toolchain, *hiprtc, mapped);
  // ROCm 5's hipRTC loads its builtins header archive the same way it loads comgr.
  for (const LoadedObject& object : mapped)
    if (starts_with(file_base_name(object.path), "libhiprtc-builtins"))
      add_component(&toolchain, object);
  toolchain.release = rocm_release_of(real_file_path(toolchain.hiprtc_path));
  if (toolchain.release.empty()) toolchain.release = rocm_release_of(toolchain.hiprtc_path);
  std::string all;
  for (const std::string& line : toolchain.components) all += line + '\n';
  toolchain.fingerprint = sha256_hex(all.data(), all.size()).substr(0, 16);
  return toolchain;
}

std::string real_or_given(const std::string& path) {
  std::string real = real_file_path(path);
  return real.empty() ? path : real;
}

// Settled once per process: the libraries cannot change under a running process.
struct SettledToolchain {
  std::once_flag once;
  std::optional<Expected<RocmToolchain>> result;
};

}  // namespace

Expected<const RocmToolchain*> rocm_toolchain() {
  static NoDestructor<SettledToolchain> settled;
  std::call_once(settled->once, [] {
    try {
      settled->result.emplace(read_toolchain());
    } catch (...) {
      settled->result.emplace(failure_from_current_exception("cannot read hipRTC's toolchain"));
    }
  });
  if (settled->result->has_value()) return &settled->result->value();
  return settled->result->failure();
}

std::string mapped_comgr_path() {
  for (const LoadedObject& object : loaded_objects())
    if (is_comgr(object)) return object.path;
  return {};
}

// A bare soname ("libamd_comgr.so.3") names whatever the dynamic linker would give: the object
// already mapped under that soname, if any. Paths are resolved to their real file.
std::string library_file(const std::string& name) {
  if (name.find('/') == std::string::npos)
    if (const auto mapped = DynamicLibrary::open_if_loaded(name))
      return real_or_given(mapped->path());
  return real_or_given(name);
}

bool same_library(const std::string& a, const std::string& b) {
  const std::string a_file = library_file(a);
  const std::string b_file = library_file(b);
  const std::string a_id = file_build_id(a_file);
  const std::string b_id = file_build_id(b_file);
  return !a_id.empty() && !b_id.empty() ? a_id == b_id : a_file == b_file;
}

std::string mixed_rocm_problem(const RocmToolchain& toolchain) {
  if (toolchain.comgr_path.empty()) return {};
  const std::string comgr_file = real_or_given(toolchain.comgr_path);
  const std::string hiprtc_file = real_or_given(toolchain.hiprtc_path);
  const std::string comgr_variable = settings::name(settings::Id::kComgrLibrary);
  const std::string hiprtc_variable = settings::name(settings::Id::kHiprtcLibrary);
  if (const auto named = settings::comgr_library()) {
    const std::string named_file = library_file(*named);
    const bool same = same_library(named_file, comgr_file);
    if (!same)
      return "mixed ROCm libraries: hipRTC " + hiprtc_file + " compiles with comgr " + comgr_file +
             ", but " + comgr_variable + " names another comgr (" + named_file +
             "), so archs would be checked against a target list that is not the compiler's; "
             "unset " +
             comgr_variable + ", or set " + hiprtc_variable + " to the hipRTC of the same ROCm";
  }
  const std::string hiprtc_tree = rocm_tree_of(hiprtc_file);
  const std::string comgr_tree = rocm_tree_of(comgr_file);
  if (hiprtc_tree != comgr_tree && (!hiprtc_tree.empty() || !comgr_tree.empty()))
    return "mixed ROCm libraries: hipRTC " + hiprtc_file + " loaded comgr " + comgr_file +
           " from another ROCm install (" + (hiprtc_tree.empty() ? "the system's" : hiprtc_tree) +
           " against " + (comgr_tree.empty() ? "the system's" : comgr_tree) +
           "); put the hipRTC's own lib/ folder first on LD_LIBRARY_PATH, or set " +
           hiprtc_variable + " to a hipRTC whose ROCm has its comgr";
  return {};
}

std::vector<std::string> toolchain_memo_candidates() {
  std::vector<std::string> candidates = hiprtc_library_candidates();
  for (std::string& comgr : comgr_library_candidates()) candidates.push_back(std::move(comgr));
  return candidates;
}

std::vector<std::string> toolchain_memo_files(const RocmToolchain& toolchain) {
  std::vector<std::string> files = toolchain.files;
  if (const auto named = settings::comgr_library())
    if (std::find(files.begin(), files.end(), *named) == files.end()) files.push_back(*named);
  return files;
}

std::string toolchain_identity(const RocmToolchain& toolchain) {
  std::string identity =
      toolchain.hiprtc_version + " " + file_base_name(real_or_given(toolchain.hiprtc_path));
  if (!toolchain.comgr_path.empty()) {
    identity += " comgr " + file_base_name(real_or_given(toolchain.comgr_path));
    if (!toolchain.comgr_version.empty()) identity += " " + toolchain.comgr_version;
  }
  return identity + " toolchain " + toolchain.fingerprint;
}

}  // namespace hipacm::backend
