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
#include "hip_backend/codeobject/resources/kernel_resources.h"
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
  out->resources_note =
      "none recorded: registers and LDS are decided when the runtime finalizes it";
  return summary;
}

// Resources never make the summary fail: the header facts stand without them.
void amdgpu_resources(const backend::CodeObjectInfo& info, const std::vector<std::uint8_t>& bytes,
                      CodeObjectSummary* out) {
  auto metadata = backend::read_amdgpu_metadata(bytes, info);
  if (!metadata) {
    out->resources_note = "the metadata note cannot be read: " + metadata.failure().message;
    return;
  }
  if (!metadata->has_value()) {
    out->resources_note = "no AMDGPU metadata note (code object v3 or later carries one)";
    return;
  }
  for (backend::AmdgpuKernelResources& kernel : metadata.value()->kernels) {
    AmdgpuKernelRow row;
    const std::uint64_t wave = kernel.wavefront_size.value_or(0);
    const auto file = backend::amdgpu_register_file(out->arch, wave);
    if (file && (wave == 32 || wave == 64) && kernel.vgpr_count && kernel.sgpr_count)
      row.limits = backend::amdgpu_wave_limits(*file, *kernel.vgpr_count, *kernel.sgpr_count);
    row.resources = std::move(kernel);
    out->amdgpu_resources.push_back(std::move(row));
  }
}

void summarize_amdgpu(const backend::CodeObjectInfo& info, const std::vector<std::uint8_t>& bytes,
                      CodeObjectSummary* out) {
  out->arch = backend::amdgpu_processor_from_flags(info.flags);
  amdgpu_resources(info, bytes, out);
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
    if (info.machine == backend::kElfMachineCuda) {
      out->arch = fmt::format("sm_{}", cuda_sm_from_flags(info.flags));
      out->cuda_resources = backend::read_cuda_kernel_resources(bytes, info, &out->resources_note);
    }
    out->kernels = global_functions(info);
  }
  return summary;
}

namespace {

template <class T>
nlohmann::ordered_json optional_json(const std::optional<T>& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json to_json(const AmdgpuKernelRow& row) {
  const backend::AmdgpuKernelResources& k = row.resources;
  nlohmann::ordered_json out = {
      {"name", k.name},
      {"symbol", k.symbol},
      {"vgpr_count", optional_json(k.vgpr_count)},
      {"agpr_count", optional_json(k.agpr_count)},
      {"sgpr_count", optional_json(k.sgpr_count)},
      {"group_segment_fixed_size", optional_json(k.group_segment_fixed_size)},
      {"private_segment_fixed_size", optional_json(k.private_segment_fixed_size)},
      {"kernarg_segment_size", optional_json(k.kernarg_segment_size)},
      {"wavefront_size", optional_json(k.wavefront_size)},
      {"max_flat_workgroup_size", optional_json(k.max_flat_workgroup_size)},
      {"sgpr_spill_count", optional_json(k.sgpr_spill_count)},
      {"vgpr_spill_count", optional_json(k.vgpr_spill_count)},
      {"uses_dynamic_stack", optional_json(k.uses_dynamic_stack)},
      {"occupancy", nullptr}};
  if (row.limits)
    out["occupancy"] = {{"max_waves_per_simd", row.limits->max_waves},
                        {"waves_per_simd_by_vgprs", row.limits->by_vgprs},
                        {"waves_per_simd_by_sgprs", optional_json(row.limits->by_sgprs)},
                        {"waves_per_simd", row.limits->waves}};
  return out;
}

nlohmann::ordered_json to_json(const backend::CudaKernelResources& k) {
  return {{"name", k.name},
          {"registers", optional_json(k.registers)},
          {"shared_bytes", k.shared_bytes},
          {"local_bytes", k.local_bytes},
          {"constant0_bytes", k.constant0_bytes},
          {"stack_frame_bytes", optional_json(k.stack_frame_bytes)},
          {"min_stack_bytes", optional_json(k.min_stack_bytes)},
          {"max_stack_bytes", optional_json(k.max_stack_bytes)},
          {"param_bytes", optional_json(k.param_bytes)},
          {"max_registers", optional_json(k.max_registers)},
          {"max_threads", optional_json(k.max_threads)},
          {"required_threads", optional_json(k.required_threads)}};
}

}  // namespace

nlohmann::ordered_json to_json(const CodeObjectSummary& summary) {
  nlohmann::ordered_json resources = nlohmann::ordered_json::array();
  for (const AmdgpuKernelRow& row : summary.amdgpu_resources) resources.push_back(to_json(row));
  for (const backend::CudaKernelResources& k : summary.cuda_resources)
    resources.push_back(to_json(k));
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
          {"note", summary.note},
          {"kernel_resources", std::move(resources)},
          {"resources_note", summary.resources_note}};
}

}  // namespace hipacm::cli
