// comgr_isa.cpp - reads comgr's ISA list (dlopen'd) and validates arch strings against it.
#include "hip_backend/hiprtc/comgr_isa.h"

#include <boost/thread/lock_guard.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <sstream>
#include <string_view>

#include "hip_backend/hiprtc/comgr_isa_internal.h"
#include "support/dynamic_library.h"
#include "support/environment.h"
#include "hip_backend/hiprtc/hiprtc_internal.h"
#include "hip_backend/library_facts.h"
#include "support/no_destructor.h"

namespace hipacm::backend {

namespace {

// Mirrors of comgr's C types, so the backend builds without ROCm headers.
using comgr_status = int;  // amd_comgr_status_t; 0 = AMD_COMGR_STATUS_SUCCESS
struct comgr_metadata_node {
  std::uint64_t handle;
};
using GetIsaCountFn = comgr_status (*)(std::size_t*);
using GetIsaNameFn = comgr_status (*)(std::size_t, const char**);
using GetIsaMetadataFn = comgr_status (*)(const char*, comgr_metadata_node*);
using MetadataLookupFn = comgr_status (*)(comgr_metadata_node, const char*, comgr_metadata_node*);
using DestroyMetadataFn = comgr_status (*)(comgr_metadata_node);

constexpr std::string_view kIsaPrefix = "amdgcn-amd-amdhsa--";
constexpr std::size_t kMaxArchLength = 64;

struct ComgrMetadataApi {
  GetIsaMetadataFn get_isa_metadata = nullptr;
  MetadataLookupFn lookup = nullptr;
  DestroyMetadataFn destroy = nullptr;
};

// A metadata node that is destroyed with its scope.
class MetadataNode {
 public:
  explicit MetadataNode(const ComgrMetadataApi& api) : api_(api) {}
  MetadataNode(const MetadataNode&) = delete;
  MetadataNode& operator=(const MetadataNode&) = delete;
  ~MetadataNode() {
    if (valid_) api_.destroy(node_);
  }
  comgr_metadata_node* out() { return &node_; }
  void mark_valid() { valid_ = true; }
  bool valid() const { return valid_; }
  comgr_metadata_node node() const { return node_; }

 private:
  const ComgrMetadataApi& api_;
  comgr_metadata_node node_{0};
  bool valid_ = false;
};

// Reads Features from the ISA's metadata, e.g. {sramecc=any, xnack=any} for gfx90a.
bool read_features(const ComgrMetadataApi& api, const std::string& isa_name,
                   AmdgpuProcessor* processor) {
  MetadataNode isa(api);
  if (api.get_isa_metadata(isa_name.c_str(), isa.out()) != 0) return false;
  isa.mark_valid();
  MetadataNode features(api);
  if (api.lookup(isa.node(), "Features", features.out()) != 0) return false;
  features.mark_valid();
  for (const char* feature : {"xnack", "sramecc"}) {
    MetadataNode value(api);
    if (api.lookup(features.node(), feature, value.out()) == 0) {
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

std::optional<AmdgpuIsaTable> read_table(const DynamicLibrary& library, std::string* error) {
  std::string dl_error;
  auto get_count =
      reinterpret_cast<GetIsaCountFn>(library.symbol("amd_comgr_get_isa_count", &dl_error));
  auto get_name =
      reinterpret_cast<GetIsaNameFn>(library.symbol("amd_comgr_get_isa_name", &dl_error));
  if (get_count == nullptr || get_name == nullptr) {
    *error = "comgr library " + library.path() + " is missing symbol: " + dl_error;
    return std::nullopt;
  }
  ComgrMetadataApi metadata;
  metadata.get_isa_metadata =
      reinterpret_cast<GetIsaMetadataFn>(library.symbol("amd_comgr_get_isa_metadata", nullptr));
  metadata.lookup =
      reinterpret_cast<MetadataLookupFn>(library.symbol("amd_comgr_metadata_lookup", nullptr));
  metadata.destroy =
      reinterpret_cast<DestroyMetadataFn>(library.symbol("amd_comgr_destroy_metadata", nullptr));
  const bool have_metadata = metadata.get_isa_metadata != nullptr && metadata.lookup != nullptr &&
                             metadata.destroy != nullptr;

  AmdgpuIsaTable table;
  table.library_path = library.path();
  table.features_known = have_metadata;
  // comgr is hipRTC's compiler engine; keep it off other threads' compiles.
  boost::lock_guard<boost::mutex> lock(hiprtc_mutex());
  std::size_t count = 0;
  if (get_count(&count) != 0) {
    *error = "amd_comgr_get_isa_count failed in " + library.path();
    return std::nullopt;
  }
  for (std::size_t i = 0; i < count; ++i) {
    const char* raw_name = nullptr;
    if (get_name(i, &raw_name) != 0 || raw_name == nullptr) continue;
    const std::string isa_name(raw_name);
    if (isa_name.compare(0, kIsaPrefix.size(), kIsaPrefix) != 0) continue;
    std::string rest = isa_name.substr(kIsaPrefix.size());
    AmdgpuProcessor processor;
    processor.name = rest.substr(0, rest.find(':'));
    if (processor.name.empty()) continue;
    // Newer comgr may list feature variants ("gfx90a:xnack+") as names too.
    processor.xnack = rest.find(":xnack") != std::string::npos;
    processor.sramecc = rest.find(":sramecc") != std::string::npos;
    if (have_metadata && !read_features(metadata, isa_name, &processor)) {
      table.features_known = false;
    }
    add_processor(&table, std::move(processor));
  }
  if (table.processors.empty()) {
    *error = "comgr library " + library.path() + " lists no amdgcn-amd-amdhsa targets";
    return std::nullopt;
  }
  return table;
}

// The memo's name for the table; its text is amdgpu_isa_table_payload's.
constexpr std::string_view kIsaTableFact = "comgr-isa-table 1";

// The table, settled once per process: from the memo when it provably
// describes the comgr that dlopen would load, else read from comgr (and then
// remembered). Immutable once settled.
struct TableState {
  boost::mutex mutex;
  bool settled = false;
  std::optional<AmdgpuIsaTable> table;
  std::vector<std::string> no_processors;
  std::string error;
};

void load_into(TableState* state, const std::vector<std::string>& candidates) {
  try {
    state->table = load_amdgpu_isa_table_from(candidates, &state->error);
  } catch (const std::bad_alloc&) {
    state->error = "out of memory while reading comgr's target list";
  } catch (const std::exception& e) {
    state->error = std::string("cannot read comgr's target list: ") + e.what();
  }
}

const TableState& settled_table(LibraryFactMemo* memo) {
  static NoDestructor<TableState> instance;
  TableState& state = *instance;
  boost::lock_guard<boost::mutex> lock(state.mutex);
  if (state.settled) return state;
  std::vector<std::string> candidates;
  try {
    candidates = comgr_library_candidates();
    if (const auto record = recall_library_fact(memo, kIsaTableFact, candidates))
      state.table = parse_amdgpu_isa_table_payload(*record);
  } catch (...) {
    state.table.reset();  // out of memory: read comgr itself instead
  }
  if (!state.table) {
    load_into(&state, candidates);
    try {
      if (state.table)
        remember_library_fact(memo, kIsaTableFact, candidates, state.table->library_path,
                              amdgpu_isa_table_payload(*state.table));
    } catch (...) {
      // Remembering is an optimisation only.
    }
  }
  state.settled = true;
  return state;
}

// Arch strings come from hosts and environment variables; show them safely.
std::string printable(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size() && i < kMaxArchLength; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      out += escaped;
    }
  }
  if (text.size() > kMaxArchLength) out += "...";
  return out;
}

std::string supported_list(const AmdgpuIsaTable& table) {
  std::string list;
  for (const std::string& name : table.processors) list += (list.empty() ? "" : ", ") + name;
  return list;
}

bool fail(std::string* error, const AmdgpuIsaTable& table, const std::string& arch,
          const std::string& problem) {
  if (error != nullptr) {
    *error = "invalid AMDGPU arch '" + printable(arch) + "': " + problem +
             "; supported processors: " + supported_list(table) +
             " (features: xnack+/-, sramecc+/- where the processor has them)";
  }
  return false;
}

const AmdgpuProcessor* find_processor(const AmdgpuIsaTable& table, std::string_view name) {
  for (const AmdgpuProcessor& processor : table.details) {
    if (processor.name == name) return &processor;
  }
  return nullptr;
}

}  // namespace

std::vector<std::string> comgr_library_candidates() {
  if (auto override_path = environment_value("HIPACM_COMGR_LIBRARY")) return {*override_path};
  return {"libamd_comgr.so.2", "libamd_comgr.so"};
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
    if (p.name.rfind("gfx", 0) != 0 || p.name.size() > kMaxArchLength) return std::nullopt;
    p.xnack = xnack != 0;
    p.sramecc = sramecc != 0;
    add_processor(&table, p);
  }
  if (!in.eof() || table.processors.empty()) return std::nullopt;
  return table;
}

std::optional<AmdgpuIsaTable> load_amdgpu_isa_table_from(const std::vector<std::string>& candidates,
                                                         std::string* error) {
  std::string tried;
  for (const std::string& name : candidates) {
    std::string open_error;
    // Pinned: comgr carries LLVM, whose static state does not survive an unload.
    auto library = DynamicLibrary::open(name, &open_error, DynamicLibrary::Lifetime::kPinned);
    if (!library) {
      tried += (tried.empty() ? "" : "; ") + open_error;
      continue;
    }
    return read_table(*library, error);
  }
  *error = "cannot open comgr (tried: " + tried + "); set HIPACM_COMGR_LIBRARY to its path";
  return std::nullopt;
}

bool validate_amdgpu_arch_with(const AmdgpuIsaTable& table, const std::string& arch,
                               std::string* error) {
  if (arch.empty()) return fail(error, table, arch, "the arch is empty");
  if (arch.size() > kMaxArchLength) return fail(error, table, arch, "the arch is too long");
  for (char c : arch) {
    const auto byte = static_cast<unsigned char>(c);
    const bool allowed = (byte >= '0' && byte <= '9') || (byte >= 'a' && byte <= 'z') ||
                         (byte >= 'A' && byte <= 'Z') || c == ':' || c == '+' || c == '-' ||
                         c == '_';
    if (!allowed) return fail(error, table, arch, "it contains whitespace or other characters");
  }
  const std::string_view text(arch);
  const std::size_t colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  const AmdgpuProcessor* processor = find_processor(table, name);
  if (processor == nullptr) {
    return fail(error, table, arch,
                "unknown processor '" + std::string(name) + "' (this hipRTC would abort on it)");
  }
  bool seen_xnack = false;
  bool seen_sramecc = false;
  std::string_view rest = colon == std::string_view::npos ? "" : text.substr(colon + 1);
  if (colon != std::string_view::npos && rest.empty()) {
    return fail(error, table, arch, "an empty feature after ':'");
  }
  while (!rest.empty()) {
    const std::size_t next = rest.find(':');
    const std::string_view feature = rest.substr(0, next);
    rest = next == std::string_view::npos ? "" : rest.substr(next + 1);
    if (next != std::string_view::npos && rest.empty()) {
      return fail(error, table, arch, "an empty feature after ':'");
    }
    if (feature.size() < 2 || (feature.back() != '+' && feature.back() != '-')) {
      return fail(error, table, arch,
                  "feature '" + std::string(feature) + "' needs a trailing + or -");
    }
    const std::string_view feature_name = feature.substr(0, feature.size() - 1);
    bool* seen = feature_name == "xnack"     ? &seen_xnack
                 : feature_name == "sramecc" ? &seen_sramecc
                                             : nullptr;
    if (seen == nullptr) {
      return fail(error, table, arch,
                  "unknown feature '" + std::string(feature_name) + "' (only xnack and sramecc)");
    }
    if (*seen) {
      return fail(error, table, arch,
                  "feature '" + std::string(feature_name) + "' is given more than once");
    }
    *seen = true;
    if (!table.features_known) {
      return fail(error, table, arch,
                  "this comgr cannot tell which processors take features, so none are accepted");
    }
    const bool supported = feature_name == "xnack" ? processor->xnack : processor->sramecc;
    if (!supported) {
      return fail(error, table, arch,
                  std::string(name) + " has no " + std::string(feature_name) +
                      " feature (this hipRTC would abort on it)");
    }
  }
  return true;
}

const std::vector<std::string>& supported_amdgpu_processors(std::string* error,
                                                            LibraryFactMemo* memo) {
  const TableState& cached = settled_table(memo);
  if (cached.table) return cached.table->processors;
  if (error != nullptr) *error = cached.error;
  return cached.no_processors;
}

bool validate_amdgpu_arch(const std::string& arch, std::string* error, LibraryFactMemo* memo) {
  const TableState& cached = settled_table(memo);
  if (!cached.table) {
    if (error != nullptr) {
      *error = "cannot check arch '" + printable(arch) + "': " + cached.error;
    }
    return false;
  }
  return validate_amdgpu_arch_with(*cached.table, arch, error);
}

}  // namespace hipacm::backend
