// SPDX-License-Identifier: MIT
// fuzz_library_fact.cpp - fuzz target: remembered compiler-library facts, as a cache database
// holds their payloads (comgr's ISA table, NVRTC's version and arch list) and as the runtime
// directory holds whole fact files.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "hip_backend/hiprtc/comgr_isa_internal.h"
#include "hip_backend/machine/runtime_fact_memo.h"
#include "hip_backend/nvrtc/nvrtc_facts.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

using hipacm::fuzz::invariant_broken;
namespace be = hipacm::backend;

// An accepted payload means what it says: written out again, it reads back the same.
void check_nvrtc(const std::string& payload) {
  const auto facts = be::decode_nvrtc_facts(payload);
  if (!facts) return;
  if (facts->archs.empty()) invariant_broken("NVRTC facts without archs were accepted");
  const auto again = be::decode_nvrtc_facts(be::encode_nvrtc_facts(*facts));
  if (!again || again->identity != facts->identity || again->archs != facts->archs)
    invariant_broken("NVRTC facts do not survive their own encoding");
}

void check_comgr(const std::string& payload) {
  const auto table = be::parse_amdgpu_isa_table_payload(payload);
  if (!table) return;
  if (table->details.size() != table->processors.size())
    invariant_broken("an ISA table whose details and processors differ in length");
  const auto again = be::parse_amdgpu_isa_table_payload(be::amdgpu_isa_table_payload(*table));
  if (!again || again->processors != table->processors ||
      again->library_path != table->library_path ||
      again->features_known != table->features_known ||
      again->details.size() != table->details.size())
    invariant_broken("an ISA table does not survive its own encoding");
  for (std::size_t i = 0; i < table->details.size(); ++i) {
    if (again->details[i].name != table->details[i].name ||
        again->details[i].xnack != table->details[i].xnack ||
        again->details[i].sramecc != table->details[i].sramecc)
      invariant_broken("an ISA table's processor changed through its encoding");
  }
}

// A fact file is read back only for the one key it was written with, and spells its record one
// way: an accepted file is exactly what writing its value under that key produces.
void check_runtime_record(const std::string& record) {
  constexpr std::string_view kMagic = "hipacm-fact-1 ";
  if (record.rfind(kMagic, 0) != 0) {
    if (be::decode_runtime_fact(record, "k")) invariant_broken("a fact file without its header");
    return;
  }
  const std::size_t newline = record.find('\n', kMagic.size());
  const std::string digits = record.substr(kMagic.size(), newline - kMagic.size());
  if (newline == std::string::npos || digits.empty() || digits.size() > 8 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    return;
  const std::string key = record.substr(newline + 1, std::stoul(digits));
  const auto value = be::decode_runtime_fact(record, key);
  if (!value) return;
  if (be::encode_runtime_fact(key, *value) != record)
    invariant_broken("an accepted fact file is not how its own value would be written");
  if (be::decode_runtime_fact(record, key + "x") ||
      (!key.empty() && be::decode_runtime_fact(record, key.substr(1))))
    invariant_broken("a fact file was read back for another key");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string payload(reinterpret_cast<const char*>(data), size);
  check_nvrtc(payload);
  check_comgr(payload);
  check_runtime_record(payload);
  return 0;
}
