// SPDX-License-Identifier: MIT
// kernel_resources.h - what each kernel of a code object uses (registers, LDS or shared memory,
// scratch or stack), as its compiler recorded it: the AMDGPU metadata note and a CUBIN's
// .nv.info attributes and per-kernel sections.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hip_backend/codeobject/elf_reader.h"
#include "support/failure.h"

namespace hipacm::backend {

/// One `.kernels` entry of the AMDGPU metadata (code object v3 and later). A field the entry
/// lacks, or holds with the wrong type, stays empty.
struct AmdgpuKernelResources {
  std::string name;                         ///< .name
  std::string symbol;                       ///< .symbol ("<name>.kd")
  std::optional<std::uint64_t> vgpr_count;  ///< gfx90a and later: VGPRs and AGPRs together
  std::optional<std::uint64_t> sgpr_count;
  std::optional<std::uint64_t> agpr_count;
  std::optional<std::uint64_t> group_segment_fixed_size;    ///< LDS bytes
  std::optional<std::uint64_t> private_segment_fixed_size;  ///< scratch bytes per work-item
  std::optional<std::uint64_t> kernarg_segment_size;
  std::optional<std::uint64_t> wavefront_size;
  std::optional<std::uint64_t> max_flat_workgroup_size;
  std::optional<std::uint64_t> sgpr_spill_count;
  std::optional<std::uint64_t> vgpr_spill_count;
  std::optional<bool> uses_dynamic_stack;
};

struct AmdgpuMetadata {
  std::optional<std::uint64_t> version_major;  ///< amdhsa.version[0]
  std::optional<std::uint64_t> version_minor;  ///< amdhsa.version[1]
  std::string target;                          ///< amdhsa.target
  std::vector<AmdgpuKernelResources> kernels;  ///< in note order
};

/// The metadata note's MessagePack document. Fails only when the bytes are not one bounded
/// MessagePack map; unknown keys and entries of the wrong shape are skipped.
Expected<AmdgpuMetadata> amdgpu_metadata_from_msgpack(const std::uint8_t* data, std::size_t size);

/// Finds the NT_AMDGPU_METADATA note ("AMDGPU", type 32) in the image's SHT_NOTE sections and
/// decodes it. nullopt when there is none (code object v2, which keeps YAML, or a stripped file).
Expected<std::optional<AmdgpuMetadata>> read_amdgpu_metadata(const std::vector<std::uint8_t>& image,
                                                             const CodeObjectInfo& info);

/// One CUBIN entry function, as its sections and .nv.info attributes (EIATTR records) say.
struct CudaKernelResources {
  std::string name;
  std::optional<std::uint64_t> registers;          ///< .text.<name> sh_info bits 24-31
  std::uint64_t shared_bytes = 0;                  ///< .nv.shared.<name> size (static shared)
  std::uint64_t local_bytes = 0;                   ///< .nv.local.<name> size
  std::uint64_t constant0_bytes = 0;               ///< .nv.constant0.<name> size (params, cmem[0])
  std::optional<std::uint64_t> stack_frame_bytes;  ///< EIATTR_FRAME_SIZE
  std::optional<std::uint64_t> min_stack_bytes;    ///< EIATTR_MIN_STACK_SIZE
  std::optional<std::uint64_t> max_stack_bytes;    ///< EIATTR_MAX_STACK_SIZE
  std::optional<std::uint64_t> param_bytes;        ///< EIATTR_CBANK_PARAM_SIZE
  std::optional<std::uint64_t> max_registers;      ///< EIATTR_MAXREG_COUNT
  std::optional<std::uint64_t> max_threads;        ///< EIATTR_MAX_THREADS (x*y*z)
  std::optional<std::uint64_t> required_threads;   ///< EIATTR_REQNTID (x*y*z)
};

/// One EIATTR record: its format byte (1 none, 2 byte, 3 half-word, 4 sized), its attribute
/// code, and its value bytes (two for formats 1-3; the sized payload for format 4).
struct NvInfoRecord {
  std::uint8_t format = 0;
  std::uint8_t attribute = 0;
  std::vector<std::uint8_t> value;
};

/// Splits an .nv.info section into records; a record that runs past the end, or a format byte
/// outside 1-4, fails with its offset.
Expected<std::vector<NvInfoRecord>> read_nv_info(const std::uint8_t* data, std::size_t size);

/// Every entry function (STO_CUDA_ENTRY) of a CUBIN, sorted by name. Sections that lie outside
/// the image or cannot be split are skipped: what is read is still right, and the summary's
/// note says when something was left out.
std::vector<CudaKernelResources> read_cuda_kernel_resources(const std::vector<std::uint8_t>& image,
                                                            const CodeObjectInfo& info,
                                                            std::string* problem = nullptr);

}  // namespace hipacm::backend
