// SPDX-License-Identifier: MIT
// cuda_resource_usage.cpp - a CUBIN's per-kernel registers, shared, local and constant memory and
// stack sizes, from its section headers and the EIATTR records of its .nv.info sections.
#include <algorithm>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include "hip_backend/codeobject/resources/kernel_resources.h"
#include "support/bytes/byte_reader.h"

namespace hipacm::backend {
namespace {

// EIATTR record formats and the attribute codes read here. The layout (a format byte, an
// attribute byte, then two value bytes, or for the sized format a 16-bit length and that many
// bytes) and the codes follow the public descriptions of the CUBIN format; each was checked
// against `ptxas -v` on real kernels (tests/tools/test_inspect_resources.py).
constexpr std::uint8_t kFormatNone = 1;
constexpr std::uint8_t kFormatSized = 4;
constexpr std::uint8_t kMaxThreads = 0x05;
constexpr std::uint8_t kRequiredThreads = 0x10;
constexpr std::uint8_t kFrameSize = 0x11;
constexpr std::uint8_t kMinStackSize = 0x12;
constexpr std::uint8_t kCbankParamSize = 0x19;
constexpr std::uint8_t kMaxRegCount = 0x1b;
constexpr std::uint8_t kMaxStackSize = 0x23;
constexpr std::uint8_t kRegCount = 0x2f;
constexpr std::uint32_t kShtNobits = 8;
constexpr std::uint32_t kSymbolMask = 0x00ffffff;  // .text.<name> sh_info: the symbol index

std::uint32_t le32(const std::vector<std::uint8_t>& v, std::size_t at) {
  return ByteView(v.data(), v.size()).le<std::uint32_t>(at);
}

std::uint64_t le16(const std::vector<std::uint8_t>& v) {
  return ByteView(v.data(), v.size()).le<std::uint16_t>(0);
}

// x*y*z of a three-word record; nullopt when the record is shorter.
std::optional<std::uint64_t> dimensions(const std::vector<std::uint8_t>& v) {
  if (v.size() < 12) return std::nullopt;
  return std::uint64_t{le32(v, 0)} * le32(v, 4) * le32(v, 8);
}

std::optional<std::string_view> suffix(std::string_view name, std::string_view prefix) {
  if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix) return std::nullopt;
  return name.substr(prefix.size());
}

// A (symbol index, value) record of the module-wide .nv.info section.
struct SymbolValue {
  std::uint8_t attribute;
  std::uint32_t symbol;
  std::uint32_t value;
};

void apply_kernel_record(const NvInfoRecord& r, CudaKernelResources* k) {
  switch (r.attribute) {
    case kMaxThreads:
      k->max_threads = dimensions(r.value);
      break;
    case kRequiredThreads:
      k->required_threads = dimensions(r.value);
      break;
    case kCbankParamSize:
      if (r.format != kFormatSized) k->param_bytes = le16(r.value);
      break;
    case kMaxRegCount:
      if (r.format != kFormatSized) k->max_registers = le16(r.value);
      break;
    default:
      break;  // the many others say nothing about resources
  }
}

void apply_module_record(const SymbolValue& r, CudaKernelResources* k) {
  switch (r.attribute) {
    case kRegCount:
      k->registers = r.value;
      break;
    case kFrameSize:
      k->stack_frame_bytes = r.value;
      break;
    case kMinStackSize:
      k->min_stack_bytes = r.value;
      break;
    case kMaxStackSize:
      k->max_stack_bytes = r.value;
      break;
    default:
      break;
  }
}

}  // namespace

Expected<std::vector<NvInfoRecord>> read_nv_info(const std::uint8_t* data, std::size_t size) {
  std::vector<NvInfoRecord> records;
  ByteReader reader(data, size);
  while (reader.remaining() > 0) {
    const std::size_t at = size - reader.remaining();
    std::uint8_t format = 0;
    std::uint8_t attribute = 0;
    std::uint16_t half = 0;
    if (!reader.le(&format) || !reader.le(&attribute) || !reader.le(&half))
      return Failure{HIPACM_ERROR_COMPILATION,
                     "EIATTR record at byte " + std::to_string(at) + " is truncated"};
    if (format < kFormatNone || format > kFormatSized)
      return Failure{HIPACM_ERROR_COMPILATION, "EIATTR record at byte " + std::to_string(at) +
                                                   " has the unknown format " +
                                                   std::to_string(format)};
    NvInfoRecord record{format, attribute, {}};
    if (format == kFormatSized) {
      const std::uint8_t* payload = nullptr;
      if (!reader.take(half, &payload))
        return Failure{HIPACM_ERROR_COMPILATION, "EIATTR record at byte " + std::to_string(at) +
                                                     " claims " + std::to_string(half) +
                                                     " bytes past the end"};
      record.value.assign(payload, payload + half);
    } else {
      record.value = {static_cast<std::uint8_t>(half), static_cast<std::uint8_t>(half >> 8)};
    }
    records.push_back(std::move(record));
  }
  return records;
}

std::vector<CudaKernelResources> read_cuda_kernel_resources(const std::vector<std::uint8_t>& image,
                                                            const CodeObjectInfo& info,
                                                            std::string* problem) {
  const ByteView bytes(image.data(), image.size());
  const std::set<std::string_view> entries(info.cuda_kernels.begin(), info.cuda_kernels.end());
  std::map<std::string, CudaKernelResources, std::less<>> kernels;
  for (const std::string& name : info.cuda_kernels) kernels[name].name = name;
  std::map<std::uint32_t, CudaKernelResources*> by_symbol;
  std::vector<SymbolValue> module_records;
  auto note = [&](std::string text) {
    if (problem != nullptr && problem->empty()) *problem = std::move(text);
  };
  auto kernel_named = [&](std::string_view name) -> CudaKernelResources* {
    auto it = kernels.find(name);
    return it == kernels.end() ? nullptr : &it->second;
  };
  for (const ElfSection& s : info.sections) {
    const std::string_view name = s.name;
    if (auto text = suffix(name, ".text."); text && entries.count(*text) != 0) {
      CudaKernelResources* kernel = kernel_named(*text);
      kernel->registers = s.info >> 24;
      by_symbol[s.info & kSymbolMask] = kernel;
    } else if (auto shared = suffix(name, ".nv.shared."); shared && entries.count(*shared) != 0) {
      kernel_named(*shared)->shared_bytes = s.size;
    } else if (auto local = suffix(name, ".nv.local."); local && entries.count(*local) != 0) {
      kernel_named(*local)->local_bytes = s.size;
    } else if (auto constant = suffix(name, ".nv.constant0.");
               constant && entries.count(*constant) != 0) {
      kernel_named(*constant)->constant0_bytes = s.size;
    }
    const bool module_info = name == ".nv.info";
    const auto kernel_info = suffix(name, ".nv.info.");
    if (!module_info && !(kernel_info && entries.count(*kernel_info) != 0)) continue;
    if (s.type == kShtNobits || !bytes.contains(s.offset, s.size)) {
      note("section " + std::string(name) + " lies outside the image");
      continue;
    }
    auto records = read_nv_info(bytes.at(s.offset, s.size), static_cast<std::size_t>(s.size));
    if (!records) {
      note(std::string(name) + ": " + records.failure().message);
      continue;
    }
    for (const NvInfoRecord& r : records.value()) {
      if (!module_info) {
        apply_kernel_record(r, kernel_named(*kernel_info));
      } else if (r.format == kFormatSized && r.value.size() >= 8) {
        module_records.push_back({r.attribute, le32(r.value, 0), le32(r.value, 4)});
      }
    }
  }
  // The module-wide records name kernels by symbol index, known once every .text section is seen.
  for (const SymbolValue& r : module_records)
    if (auto it = by_symbol.find(r.symbol); it != by_symbol.end())
      apply_module_record(r, it->second);
  std::vector<CudaKernelResources> out;
  out.reserve(kernels.size());
  for (auto& [name, kernel] : kernels) out.push_back(std::move(kernel));
  return out;
}

}  // namespace hipacm::backend
