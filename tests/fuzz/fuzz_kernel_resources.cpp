// SPDX-License-Identifier: MIT
// fuzz_kernel_resources.cpp - fuzz target: the bounded MessagePack reader, the AMDGPU metadata
// note and CUBIN .nv.info readers behind `hipacm inspect`'s resource table, and the
// waves-per-SIMD figures they feed.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "hip_backend/codeobject/elf_reader.h"
#include "hip_backend/codeobject/resources/amdgpu_occupancy.h"
#include "hip_backend/codeobject/resources/kernel_resources.h"
#include "hip_backend/codeobject/resources/msgpack_reader.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

namespace be = hipacm::backend;
using hipacm::fuzz::invariant_broken;

constexpr const char* kProcessors[] = {"gfx803", "gfx900", "gfx90a", "gfx1030", "gfx1100"};

void check_metadata(const be::AmdgpuMetadata& metadata) {
  for (const be::AmdgpuKernelResources& kernel : metadata.kernels) {
    for (const char* processor : kProcessors) {
      const auto file = be::amdgpu_register_file(processor, kernel.wavefront_size.value_or(64));
      if (!file) continue;
      const be::WaveLimits limits = be::amdgpu_wave_limits(*file, kernel.vgpr_count.value_or(0),
                                                           kernel.sgpr_count.value_or(0));
      if (limits.waves < 1 || limits.waves > limits.max_waves || limits.by_vgprs < limits.waves)
        invariant_broken(std::string("wave limits out of range for ") + processor);
    }
  }
}

}  // namespace

// The whole input is tried as a MessagePack document, as an .nv.info section and as a code
// object, so real metadata notes and real CUBINs seed the corpus as they are.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (const auto value = be::read_msgpack(data, size); !value && value.failure().message.empty())
    invariant_broken("a MessagePack document was refused without a reason");
  if (const auto metadata = be::amdgpu_metadata_from_msgpack(data, size))
    check_metadata(metadata.value());
  if (const auto records = be::read_nv_info(data, size)) {
    std::size_t bytes = 0;
    for (const be::NvInfoRecord& r : records.value())
      bytes += r.format == 4 ? 4 + r.value.size() : 4;
    if (bytes != size) invariant_broken("the EIATTR records do not add up to the section");
  }
  const auto info = be::read_code_object(data, size);
  if (!info) return 0;
  const std::vector<std::uint8_t> image(data, data + size);
  if (const auto metadata = be::read_amdgpu_metadata(image, info.value())) {
    if (metadata->has_value()) check_metadata(*metadata.value());
  } else if (metadata.failure().message.empty()) {
    invariant_broken("a metadata note was refused without a reason");
  }
  std::string problem;
  const auto kernels = be::read_cuda_kernel_resources(image, info.value(), &problem);
  if (kernels.size() != info->cuda_kernels.size())
    invariant_broken("a CUBIN entry function is missing from the resources");
  return 0;
}
