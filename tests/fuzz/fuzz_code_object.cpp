// SPDX-License-Identifier: MIT
// fuzz_code_object.cpp - fuzz target: the ELF, SPIR-V and offload-bundle readers and the
// code-object checks of every platform.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "hip_backend/codeobject/amdgpu_target.h"
#include "hip_backend/codeobject/code_object_check.h"
#include "hip_backend/codeobject/compile_result_check.h"
#include "hip_backend/codeobject/cuda_code_object.h"
#include "hip_backend/codeobject/elf_reader.h"
#include "hip_backend/codeobject/offload_bundle.h"
#include "hip_backend/codeobject/spirv_module.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

namespace be = hipacm::backend;
using hipacm::fuzz::invariant_broken;

// AMD processors (with and without target features), a generic target, SPIR-V, a CUBIN arch,
// a PTX arch.
constexpr const char* kArchs[] = {"gfx90a",        "gfx1030",     "gfx90a:sramecc+:xnack-",
                                  "gfx11-generic", "amdgcnspirv", "sm_80",
                                  "compute_80"};

}  // namespace

// The whole input is the code object, so real ELFs seed the corpus as they are.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::uint8_t> code(data, data + size);
  if (const auto info = be::read_code_object(data, size)) {
    (void)be::amdgpu_processor_from_flags(info->flags);
  } else if (info.failure().message.empty()) {
    invariant_broken("an unreadable code object was refused without a reason");
  }
  (void)be::ptx_entry_names(code);
  (void)be::code_object_version(code);
  if (const auto spirv = be::read_spirv_module(data, size);
      !spirv && spirv.failure().message.empty())
    invariant_broken("a SPIR-V module was refused without a reason");
  if (const auto entries = be::read_offload_bundle(data, size)) {
    for (const be::OffloadBundleEntry& entry : entries.value())
      if (entry.offset > size || entry.size > size - entry.offset)
        invariant_broken("an offload bundle entry leaves the image");
  } else if (entries.failure().message.empty()) {
    invariant_broken("an offload bundle was refused without a reason");
  }
  for (const char* arch : kArchs) {
    const std::vector<std::string> kernels = be::code_object_kernels(code, arch);
    const auto usable = be::check_code_object(code, arch, {});
    if (!usable && usable.failure().message.empty())
      invariant_broken(std::string("refused for ") + arch + " silently");
    // What the code object lists as its kernels, the check must find in it.
    if (usable) {
      if (const auto listed = be::check_code_object(code, arch, kernels); !listed)
        invariant_broken(std::string("the kernels listed for ") + arch +
                         " fail the check: " + listed.failure().message);
    }
    (void)be::check_code_object(code, arch, {"add_one", "_Z5scaleIfEvPT_S0_", ""});
    // The acceptance test of every compile, cache hit and worker reply.
    be::CompileRequest request;
    request.source = "template <typename T> __global__ void scale(T* x) {}\n";
    request.arch = arch;
    request.name_expressions = {"scale<float>"};
    if (const auto answers = be::check_compile_result(request, code, {"_Z5scaleIfEvPT_S0_"});
        !answers && answers.failure().message.empty())
      invariant_broken(std::string("a result for ") + arch + " was refused without a reason");
  }
  return 0;
}
