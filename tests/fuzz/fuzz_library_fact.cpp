// SPDX-License-Identifier: MIT
// fuzz_library_fact.cpp - fuzz target: the payloads of remembered compiler-library facts that a
// cache database holds (comgr's ISA table, NVRTC's version and arch list).
#include <cstddef>
#include <cstdint>
#include <string>

#include "hip_backend/hiprtc/comgr_isa_internal.h"
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string payload(reinterpret_cast<const char*>(data), size);
  check_nvrtc(payload);
  check_comgr(payload);
  return 0;
}
