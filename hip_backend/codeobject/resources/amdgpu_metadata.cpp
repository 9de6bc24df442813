// SPDX-License-Identifier: MIT
// amdgpu_metadata.cpp - finds the NT_AMDGPU_METADATA note of an AMDGPU code object and reads each
// kernel's resource fields from its MessagePack document.
#include <string_view>
#include <utility>

#include "hip_backend/codeobject/resources/kernel_resources.h"
#include "hip_backend/codeobject/resources/msgpack_reader.h"
#include "support/bytes/byte_reader.h"

namespace hipacm::backend {
namespace {

constexpr std::uint32_t kShtNote = 7;
constexpr std::uint32_t kNtAmdgpuMetadata = 32;
constexpr std::string_view kAmdgpuOwner("AMDGPU\0", 7);

std::optional<std::uint64_t> unsigned_field(const MsgpackValue& map, std::string_view key) {
  const MsgpackValue* v = map.find(key);
  return v != nullptr ? v->as_unsigned() : std::nullopt;
}

std::string string_field(const MsgpackValue& map, std::string_view key) {
  const MsgpackValue* v = map.find(key);
  const auto text = v != nullptr ? v->as_string() : std::nullopt;
  return text ? std::string(*text) : std::string();
}

AmdgpuKernelResources kernel_from(const MsgpackValue& entry) {
  AmdgpuKernelResources k;
  k.name = string_field(entry, ".name");
  k.symbol = string_field(entry, ".symbol");
  k.vgpr_count = unsigned_field(entry, ".vgpr_count");
  k.sgpr_count = unsigned_field(entry, ".sgpr_count");
  k.agpr_count = unsigned_field(entry, ".agpr_count");
  k.group_segment_fixed_size = unsigned_field(entry, ".group_segment_fixed_size");
  k.private_segment_fixed_size = unsigned_field(entry, ".private_segment_fixed_size");
  k.kernarg_segment_size = unsigned_field(entry, ".kernarg_segment_size");
  k.wavefront_size = unsigned_field(entry, ".wavefront_size");
  k.max_flat_workgroup_size = unsigned_field(entry, ".max_flat_workgroup_size");
  k.sgpr_spill_count = unsigned_field(entry, ".sgpr_spill_count");
  k.vgpr_spill_count = unsigned_field(entry, ".vgpr_spill_count");
  if (const MsgpackValue* v = entry.find(".uses_dynamic_stack");
      v != nullptr && v->kind == MsgpackValue::Kind::Bool)
    k.uses_dynamic_stack = v->boolean;
  return k;
}

// Notes are 4-byte aligned in AMDGPU code objects; an 8-aligned note section pads to 8.
std::uint64_t padded(std::uint64_t n, std::uint64_t align) {
  return (n + align - 1) / align * align;
}

}  // namespace

Expected<AmdgpuMetadata> amdgpu_metadata_from_msgpack(const std::uint8_t* data, std::size_t size) {
  auto read = read_msgpack(data, size);
  if (!read) return std::move(read).failure();
  const MsgpackValue& root = read.value();
  if (root.kind != MsgpackValue::Kind::Map)
    return Failure{HIPACM_ERROR_COMPILATION, "AMDGPU metadata: the document is not a map"};
  AmdgpuMetadata metadata;
  if (const MsgpackValue* version = root.find("amdhsa.version");
      version != nullptr && version->kind == MsgpackValue::Kind::Array) {
    if (!version->items.empty()) metadata.version_major = version->items[0].as_unsigned();
    if (version->items.size() > 1) metadata.version_minor = version->items[1].as_unsigned();
  }
  metadata.target = string_field(root, "amdhsa.target");
  if (const MsgpackValue* kernels = root.find("amdhsa.kernels");
      kernels != nullptr && kernels->kind == MsgpackValue::Kind::Array)
    for (const MsgpackValue& entry : kernels->items)
      if (entry.kind == MsgpackValue::Kind::Map) metadata.kernels.push_back(kernel_from(entry));
  return metadata;
}

Expected<std::optional<AmdgpuMetadata>> read_amdgpu_metadata(const std::vector<std::uint8_t>& image,
                                                             const CodeObjectInfo& info) {
  const ByteView bytes(image.data(), image.size());
  for (const ElfSection& section : info.sections) {
    if (section.type != kShtNote) continue;
    if (!bytes.contains(section.offset, section.size))
      return Failure{HIPACM_ERROR_COMPILATION,
                     "AMDGPU metadata: a note section lies past the end of the image"};
    const std::uint64_t align = section.addralign == 8 ? 8 : 4;
    const std::uint64_t end = section.offset + section.size;
    std::uint64_t at = section.offset;
    while (end - at >= 12) {
      const auto name_size = bytes.le<std::uint32_t>(at);
      const auto desc_size = bytes.le<std::uint32_t>(at + 4);
      const auto type = bytes.le<std::uint32_t>(at + 8);
      const std::uint64_t name_at = at + 12;
      const std::uint64_t desc_at = name_at + padded(name_size, align);
      if (desc_at > end || padded(desc_size, align) > end - desc_at)
        return Failure{HIPACM_ERROR_COMPILATION,
                       "AMDGPU metadata: a note runs past the end of its section"};
      if (type == kNtAmdgpuMetadata && bytes.text(name_at, name_size) == kAmdgpuOwner) {
        auto metadata = amdgpu_metadata_from_msgpack(bytes.at(desc_at, desc_size), desc_size);
        if (!metadata) return std::move(metadata).failure();
        return std::optional<AmdgpuMetadata>(std::move(metadata).value());
      }
      at = desc_at + padded(desc_size, align);
    }
  }
  return std::optional<AmdgpuMetadata>();
}

}  // namespace hipacm::backend
