// SPDX-License-Identifier: MIT
// nvrtc_facts.cpp - NVRTC's version and arch list, remembered across processes so that a warm-up
// whose kernels are all cached never loads NVRTC.
#include "hip_backend/nvrtc/nvrtc_facts.h"

#include <charconv>
#include <string_view>

#include "hip_backend/nvrtc/nvrtc_api.h"

namespace hipacm::backend {
namespace {

// The memo's name for these facts; the payload is "<arch>,<arch>,...\n<identity>".
constexpr std::string_view kNvrtcFacts = "nvrtc-facts 1";
constexpr std::size_t kMaxArchs = 4096;
constexpr std::size_t kMaxIdentity = 4096;

}  // namespace

std::string encode_nvrtc_facts(const NvrtcFacts& facts) {
  std::string payload;
  for (std::size_t i = 0; i < facts.archs.size(); ++i) {
    if (i > 0) payload += ',';
    payload += std::to_string(facts.archs[i]);
  }
  return payload + '\n' + facts.identity;
}

std::optional<NvrtcFacts> decode_nvrtc_facts(const std::string& payload) {
  const std::size_t newline = payload.find('\n');
  if (newline == std::string::npos) return std::nullopt;
  NvrtcFacts facts;
  facts.identity = payload.substr(newline + 1);
  if (facts.identity.rfind("nvrtc ", 0) != 0 || facts.identity.size() > kMaxIdentity ||
      facts.identity.find('\n') != std::string::npos)
    return std::nullopt;
  std::string_view list(payload.data(), newline);
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    const std::string_view item = list.substr(0, comma);
    int arch = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), arch);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size() || arch <= 0 ||
        facts.archs.size() >= kMaxArchs)
      return std::nullopt;
    facts.archs.push_back(arch);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    if (comma != std::string_view::npos && list.empty()) return std::nullopt;  // a trailing comma
  }
  if (facts.archs.empty()) return std::nullopt;
  return facts;
}

Expected<NvrtcFacts> nvrtc_facts(LibraryFactMemo* memo) {
  const std::vector<std::string> candidates = nvrtc_library_candidates();
  if (const auto recalled = recall_library_fact(memo, kNvrtcFacts, candidates)) {
    if (auto facts = decode_nvrtc_facts(*recalled)) {
      facts->from_memo = true;
      return std::move(*facts);
    }
  }
  const Expected<const NvrtcApi*> loaded = load_nvrtc();
  if (!loaded) return loaded.failure();
  const NvrtcApi* api = loaded.value();
  NvrtcFacts facts;
  facts.identity = nvrtc_version_string();
  facts.archs = api->supported_archs;
  // An NVRTC that listed no archs is asked again next time rather than remembered so.
  if (!facts.archs.empty() && !api->version.empty())
    remember_library_fact(memo, kNvrtcFacts, candidates, api->library_path,
                          encode_nvrtc_facts(facts));
  return facts;
}

}  // namespace hipacm::backend
