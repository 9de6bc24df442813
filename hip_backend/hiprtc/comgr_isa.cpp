// SPDX-License-Identifier: MIT
// comgr_isa.cpp - reads comgr's ISA list (dlopen'd) and validates arch strings against it.
#include "hip_backend/hiprtc/comgr_isa.h"

#include <boost/thread/lock_guard.hpp>

#include <algorithm>
#include <sstream>
#include <string_view>

#include "hip_backend/hiprtc/amdgpu_arch_check.h"
#include "hip_backend/hiprtc/backend_lock.h"
#include "hip_backend/hiprtc/comgr_isa_internal.h"
#include "hip_backend/hiprtc/rocm_toolchain.h"
#include "hip_backend/library_facts.h"
#include "hip_backend/rocm_paths.h"
#include "support/no_destructor.h"
#include "support/settings.h"
#include "support/status_error.h"

namespace hipacm::backend {

namespace {

constexpr std::string_view kIsaPrefix = "amdgcn-amd-amdhsa--";

// Pinned (the default): comgr carries LLVM, whose static state does not survive an unload.
// Only used when hipRTC itself cannot be loaded: otherwise the comgr hipRTC loads is read.
LibrarySearch comgr_search() {
  return {.name = "comgr",
          .override_variable = settings::name(settings::Id::kComgrLibrary),
          .defaults = rocm_library_candidates(
              {"libamd_comgr.so.3", "libamd_comgr.so.2", "libamd_comgr.so"})};
}

// The ISA list is required; without the metadata entry points no feature is known.
void bind_comgr(SymbolBinder& binder, ComgrApi* api) {
  HIPACM_COMGR_REQUIRED_SYMBOLS(HIPACM_LIBRARY_REQUIRE)
  HIPACM_COMGR_OPTIONAL_SYMBOLS(HIPACM_LIBRARY_OPTIONAL)
}

constexpr LibrarySpec<ComgrApi> kComgr = {&comgr_search, &bind_comgr};

// A metadata node that is destroyed with its scope.
class MetadataNode {
 public:
  explicit MetadataNode(const ComgrApi& api) : api_(api) {}
  MetadataNode(const MetadataNode&) = delete;
  MetadataNode& operator=(const MetadataNode&) = delete;
  ~MetadataNode() {
    if (valid_) api_.amd_comgr_destroy_metadata(node_);
  }
  comgr_metadata_node* out() { return &node_; }
  void mark_valid() { valid_ = true; }
  bool valid() const { return valid_; }
  comgr_metadata_node node() const { return node_; }

 private:
  const ComgrApi& api_;
  comgr_metadata_node node_{0};
  bool valid_ = false;
};

// Reads Features from the ISA's metadata, e.g. {sramecc=any, xnack=any} for gfx90a.
bool read_features(const ComgrApi& api, const std::string& isa_name, AmdgpuProcessor* processor) {
  MetadataNode isa(api);
  if (api.amd_comgr_get_isa_metadata(isa_name.c_str(), isa.out()) != 0) return false;
  isa.mark_valid();
  MetadataNode features(api);
  if (api.amd_comgr_metadata_lookup(isa.node(), "Features", features.out()) != 0) return false;
  features.mark_valid();
  for (const char* feature : {"xnack", "sramecc"}) {
    MetadataNode value(api);
    if (api.amd_comgr_metadata_lookup(features.node(), feature, value.out()) == 0) {
      value.mark_valid();
      (std::string_view(feature) == "xnack" ? processor->xnack : processor->sramecc) = true;
    }
  }
  return true;
}

void add_processor(AmdgpuIsaTable* table, AmdgpuProcessor processor) {
  for (AmdgpuProcessor& known : table->details) {
    if (known.name == processor.name) {
      known.xnack = known.xnack || processor.xnack;
      known.sramecc = known.sramecc || processor.sramecc;
      return;
    }
  }
  table->processors.push_back(processor.name);
  table->details.push_back(std::move(processor));
}

Expected<AmdgpuIsaTable> read_table(const ComgrApi& api) {
  const bool have_metadata = api.amd_comgr_get_isa_metadata != nullptr &&
                             api.amd_comgr_metadata_lookup != nullptr &&
                             api.amd_comgr_destroy_metadata != nullptr;
  AmdgpuIsaTable table;
  table.library_path = api.library_path;
  table.features_known = have_metadata;
  // comgr is hipRTC's compiler engine; keep it off other threads' compiles.
  RocmBackendLock lock;
  std::size_t count = 0;
  if (api.amd_comgr_get_isa_count(&count) != 0)
    return Failure{HIPACM_ERROR_BACKEND_UNAVAILABLE,
                   "amd_comgr_get_isa_count failed in " + api.library_path};
  for (std::size_t i = 0; i < count; ++i) {
    const char* raw_name = nullptr;
    if (api.amd_comgr_get_isa_name(i, &raw_name) != 0 || raw_name == nullptr) continue;
    const std::string isa_name(raw_name);
    if (isa_name.compare(0, kIsaPrefix.size(), kIsaPrefix) != 0) continue;
    std::string rest = isa_name.substr(kIsaPrefix.size());
    AmdgpuProcessor processor;
    processor.name = rest.substr(0, rest.find(':'));
    if (processor.name.empty()) continue;
    // Newer comgr may list feature variants ("gfx90a:xnack+") as names too.
    processor.xnack = rest.find(":xnack") != std::string::npos;
    processor.sramecc = rest.find(":sramecc") != std::string::npos;
    if (have_metadata && !read_features(api, isa_name, &processor)) {
      table.features_known = false;
    }
    add_processor(&table, std::move(processor));
  }
  if (table.processors.empty())
    return Failure{HIPACM_ERROR_BACKEND_UNAVAILABLE,
                   "comgr library " + api.library_path + " lists no amdgcn-amd-amdhsa targets"};
  return table;
}

// What a failure to read the table is about.
constexpr std::string_view kTableContext = "cannot read comgr's target list";

// The memo's name for the table; its text is amdgpu_isa_table_payload's.
constexpr std::string_view kIsaTableFact = "comgr-isa-table 2";

// The table, settled once per process: from the memo when it provably
// describes the comgr that dlopen would load, else read from comgr (and then
// remembered). Immutable once settled.
struct TableState {
  boost::mutex mutex;
  bool settled = false;
  std::optional<AmdgpuIsaTable> table;
  std::string error;
};

// A remembered table when the memo provably describes this comgr; nullopt on any doubt,
// running out of memory while checking included (comgr is then read instead).
std::optional<AmdgpuIsaTable> recalled_table(LibraryFactMemo* memo,
                                             const std::vector<std::string>& candidates) noexcept {
  try {
    if (const auto record = recall_library_fact(memo, kIsaTableFact, candidates))
      return parse_amdgpu_isa_table_payload(*record);
  } catch (...) {
  }
  return std::nullopt;
}

// The comgr whose list is read: $HIPACM_COMGR_LIBRARY when set (mixed_rocm_problem refuses a
// comgr that is not hipRTC's), otherwise the one hipRTC loads, never the first on the search
// path: a leftover comgr of an older ROCm would refuse archs that hipRTC compiles. The search
// list is read only when hipRTC cannot be loaded, so that doctor can still list archs.
std::vector<std::string> table_sources(std::vector<std::string>* toolchain_files) {
  if (const auto named = settings::comgr_library()) {
    toolchain_files->push_back(*named);
    // hipRTC loads its own comgr first, so that the named one is compared with what hipRTC
    // picks by itself: loaded first, the named one would be reused under its soname and hide a
    // mix. Mapping a second comgr next to hipRTC's registers LLVM's options twice, and LLVM
    // aborts the process; so the same library (a copy: same build ID) is read where it is
    // mapped, and another one is a mixed pair, refused without loading it.
    const Expected<const RocmToolchain*> toolchain = rocm_toolchain();
    const std::string mapped = toolchain && !toolchain.value()->comgr_path.empty()
                                   ? toolchain.value()->comgr_path
                                   : mapped_comgr_path();
    if (mapped.empty()) return comgr_library_candidates();
    if (same_library(mapped, *named)) return {mapped};
    const std::string variable = settings::name(settings::Id::kComgrLibrary);
    throw StatusError(HIPACM_ERROR_BACKEND_UNAVAILABLE,
                      "mixed ROCm libraries: hipRTC loads comgr " + mapped + ", but " + variable +
                          " names another comgr (" + *named + "); unset " + variable +
                          ", or point it at the comgr of hipRTC's own ROCm");
  }
  const Expected<const RocmToolchain*> toolchain = rocm_toolchain();
  if (!toolchain || toolchain.value()->comgr_path.empty()) return comgr_library_candidates();
  *toolchain_files = toolchain.value()->files;
  return {toolchain.value()->comgr_path};
}

const TableState& settled_table(LibraryFactMemo* memo) {
  static NoDestructor<TableState> instance;
  TableState& state = *instance;
  boost::lock_guard<boost::mutex> lock(state.mutex);
  if (state.settled) return state;
  try {
    const std::vector<std::string> memo_candidates = toolchain_memo_candidates();
    state.table = recalled_table(memo, memo_candidates);
    if (!state.table) {
      std::vector<std::string> files;
      Expected<AmdgpuIsaTable> loaded = load_amdgpu_isa_table_from(table_sources(&files));
      if (loaded)
        state.table = std::move(loaded).value();
      else
        state.error = loaded.failure().message;
      // Remembering is an optimisation only, and swallows its own failures.
      if (state.table) {
        if (std::find(files.begin(), files.end(), state.table->library_path) == files.end())
          files.push_back(state.table->library_path);
        remember_library_fact(memo, kIsaTableFact, memo_candidates, files,
                              amdgpu_isa_table_payload(*state.table));
      }
    }
  } catch (...) {
    if (!state.table) state.error = failure_from_current_exception(kTableContext).message;
  }
  state.settled = true;
  return state;
}

}  // namespace

std::vector<std::string> comgr_library_candidates() { return kComgr.candidates(); }

Expected<LoadedComgr> find_comgr(const std::vector<std::string>& candidates) {
  return kComgr.find(candidates);
}

std::string amdgpu_isa_table_payload(const AmdgpuIsaTable& table) {
  std::string out = table.library_path + '\n';
  out += std::string("features_known ") + (table.features_known ? "1" : "0") + '\n';
  for (const AmdgpuProcessor& p : table.details)
    out += p.name + (p.xnack ? " 1" : " 0") + (p.sramecc ? " 1" : " 0") + '\n';
  return out;
}

std::optional<AmdgpuIsaTable> parse_amdgpu_isa_table_payload(const std::string& payload) {
  std::istringstream in(payload);
  AmdgpuIsaTable table;
  if (!std::getline(in, table.library_path) || table.library_path.empty()) return std::nullopt;
  std::string word;
  int features_known = -1;
  if (!(in >> word >> features_known) || word != "features_known" || features_known < 0 ||
      features_known > 1)
    return std::nullopt;
  table.features_known = features_known == 1;
  AmdgpuProcessor p;
  int xnack = 0, sramecc = 0;
  while (in >> p.name >> xnack >> sramecc) {
    if (p.name.rfind("gfx", 0) != 0 || p.name.size() > kMaxAmdgpuArchLength) return std::nullopt;
    p.xnack = xnack != 0;
    p.sramecc = sramecc != 0;
    add_processor(&table, p);
  }
  if (!in.eof() || table.processors.empty()) return std::nullopt;
  return table;
}

Expected<AmdgpuIsaTable> load_amdgpu_isa_table_from(const std::vector<std::string>& candidates) {
  const auto comgr = find_comgr(candidates);
  if (!comgr) return comgr.failure();
  return read_table(comgr->api);
}

Expected<ComgrReport> report_comgr(const std::vector<std::string>& library_paths) {
  const auto comgr = find_comgr(library_paths.empty() ? comgr_library_candidates() : library_paths);
  if (!comgr) return comgr.failure();
  const auto table = read_table(comgr->api);
  if (!table) return table.failure();
  ComgrReport report;
  report.library_path = table->library_path;
  report.processors = table->processors;
  if (comgr->api.amd_comgr_get_version != nullptr) {
    std::size_t major = 0, minor = 0;
    comgr->api.amd_comgr_get_version(&major, &minor);
    report.version = std::to_string(major) + "." + std::to_string(minor);
  }
  return report;
}

Expected<const std::vector<std::string>*> supported_amdgpu_processors(LibraryFactMemo* memo) {
  const TableState& cached = settled_table(memo);
  if (cached.table) return &cached.table->processors;
  return Failure{HIPACM_ERROR_BACKEND_UNAVAILABLE, cached.error};
}

Expected<void> validate_amdgpu_arch(const std::string& arch, LibraryFactMemo* memo,
                                    const HiprtcFacts* hiprtc) {
  const TableState& cached = settled_table(memo);
  if (!cached.table) {
    return Failure{HIPACM_ERROR_BACKEND_UNAVAILABLE,
                   "cannot check arch '" + printable_arch(arch) + "': " + cached.error};
  }
  return validate_amdgpu_arch_with(*cached.table, hiprtc != nullptr ? *hiprtc : HiprtcFacts{},
                                   arch);
}

}  // namespace hipacm::backend
