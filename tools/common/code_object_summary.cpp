// SPDX-License-Identifier: MIT
// code_object_summary.cpp - summarises a code object through the backend's bounds-checked ELF,
// SPIR-V and offload-bundle readers.
#include "tools/common/code_object_summary.h"

#include <fmt/core.h>

#include <algorithm>
#include <utility>

#include "hip_backend/codeobject/amdgpu_target.h"
#include "hip_backend/codeobject/elf_reader.h"
#include "hip_backend/codeobject/offload_bundle.h"
#include "hip_backend/codeobject/spirv_code_object.h"

namespace hipacm::cli {
namespace {

constexpr std::uint8_t kSttFunc = 2;
constexpr std::uint8_t kStbLocal = 0;
constexpr std::uint32_t kCudaSmMask = 0xff;  // EF_CUDA_SM: the SM number in e_flags' low byte

// CUBINs of CUDA's newer ELF ABI (CUDA 13 writes it for every target) move the SM number to
// e_flags bits 8..15 and keep small flag values in the low byte; the old layout's low byte is
// always a real SM number (>= 20).
std::uint32_t cuda_sm_from_flags(std::uint32_t flags) {
  const std::uint32_t low = flags & kCudaSmMask;
  return low >= 20 ? low : (flags >> 8) & kCudaSmMask;
}

std::string machine_name(std::uint16_t machine) {
  if (machine == backend::kElfMachineAmdgpu) return "AMDGPU";
  if (machine == backend::kElfMachineCuda) return "CUDA";
  return fmt::format("EM_{}", machine);
}

std::string elf_type_name(std::uint16_t type) {
  switch (type) {
    case 1:
      return "REL";
    case 2:
      return "EXEC";
    case 3:
      return "DYN";
    default:
      return std::to_string(type);
  }
}

// Without kernel descriptors to go by, every global function is a candidate entry point.
std::vector<std::string> global_functions(const backend::CodeObjectInfo& info) {
  std::vector<std::string> names;
  for (const backend::ElfSymbol& symbol : info.symbols)
    if (symbol.type == kSttFunc && symbol.binding != kStbLocal && !symbol.name.empty())
      names.push_back(symbol.name);
  std::sort(names.begin(), names.end());
  return names;
}

Expected<CodeObjectSummary> summarize_spirv(const std::vector<std::uint8_t>& bytes) {
  auto read = backend::read_spirv_code_object(bytes);
  if (!read) return std::move(read).failure();
  const backend::SpirvCodeObject& spirv = read.value();
  CodeObjectSummary summary;
  CodeObjectSummary* out = &summary;
  out->format = spirv.bundled ? "offload bundle (SPIR-V)" : "SPIR-V";
  out->size = bytes.size();
  out->machine_name =
      fmt::format("SPIR-V {}.{}", spirv.module.version_major, spirv.module.version_minor);
  out->arch = backend::kSpirvArch;
  out->kernels = spirv.module.kernels;
  out->symbol_count = spirv.module.kernels.size() + spirv.module.exported.size();
  out->note = "SPIR-V (finalized by the HIP runtime at load)";
  return summary;
}

void summarize_amdgpu(const backend::CodeObjectInfo& info, const std::vector<std::uint8_t>& bytes,
                      CodeObjectSummary* out) {
  out->arch = backend::amdgpu_processor_from_flags(info.flags);
  out->kernels = info.amdgpu_kernels;
  out->code_object_version = backend::code_object_version(bytes).value_or(0);
  const auto target = backend::decode_amdgpu_target(info);
  if (!target) {
    out->note = "hipacm's check refuses this header: " + target.failure().message;
    return;
  }
  out->generic_version = target->generic_version;
  out->target_id = backend::target_id(target.value());
}

}  // namespace

Expected<CodeObjectSummary> summarize_code_object(const std::vector<std::uint8_t>& bytes) {
  if (backend::looks_like_spirv(bytes.data(), bytes.size()) ||
      backend::looks_like_offload_bundle(bytes.data(), bytes.size()))
    return summarize_spirv(bytes);
  auto read = backend::read_code_object(bytes.data(), bytes.size());
  if (!read) return std::move(read).failure();
  const backend::CodeObjectInfo& info = read.value();
  CodeObjectSummary summary;
  CodeObjectSummary* out = &summary;
  out->size = bytes.size();
  out->machine = info.machine;
  out->machine_name = machine_name(info.machine);
  out->elf_type = elf_type_name(info.type);
  out->flags = info.flags;
  out->symbol_count = info.symbols.size();
  if (info.machine == backend::kElfMachineAmdgpu) {
    summarize_amdgpu(info, bytes, out);
  } else {
    if (info.machine == backend::kElfMachineCuda)
      out->arch = fmt::format("sm_{}", cuda_sm_from_flags(info.flags));
    out->kernels = global_functions(info);
  }
  return summary;
}

nlohmann::ordered_json to_json(const CodeObjectSummary& summary) {
  return {{"size", summary.size},
          {"machine", summary.machine},
          {"machine_name", summary.machine_name},
          {"elf_type", summary.elf_type},
          {"flags", summary.flags},
          {"arch", summary.arch},
          {"kernels", summary.kernels},
          {"symbol_count", summary.symbol_count},
          {"format", summary.format},
          {"code_object_version", summary.code_object_version},
          {"generic_version", summary.generic_version},
          {"target_id", summary.target_id},
          {"note", summary.note}};
}

}  // namespace hipacm::cli
