// SPDX-License-Identifier: MIT
// offload_bundle.cpp - lists the entries of an uncompressed clang offload bundle without trusting
// its counts, lengths or offsets.
#include "hip_backend/codeobject/offload_bundle.h"

#include <cstring>
#include <utility>

#include "support/bytes/byte_reader.h"

namespace hipacm::backend {

namespace {

// Far longer than any "<kind>-<triple>-<target id>" a compiler writes.
constexpr std::uint64_t kMaxIdBytes = 1024;
// Each entry needs at least its offset, size and id length.
constexpr std::uint64_t kEntryHeaderBytes = 24;

Failure fail(std::string message) {
  return Failure{HIPACM_ERROR_COMPILATION, "invalid offload bundle: " + std::move(message)};
}

bool starts_with(const std::uint8_t* data, std::size_t size, std::string_view magic) {
  return data != nullptr && size >= magic.size() &&
         std::memcmp(data, magic.data(), magic.size()) == 0;
}

bool printable_id(std::string_view id) {
  for (const char c : id) {
    if (c <= ' ' || c > '~') return false;
  }
  return !id.empty();
}

}  // namespace

bool looks_like_offload_bundle(const std::uint8_t* data, std::size_t size) {
  return starts_with(data, size, kOffloadBundleMagic) ||
         starts_with(data, size, kCompressedBundleMagic);
}

Expected<std::vector<OffloadBundleEntry>> read_offload_bundle(const std::uint8_t* data,
                                                              std::size_t size) {
  if (starts_with(data, size, kCompressedBundleMagic)) {
    return fail("compressed (CCOB) bundles are not unpacked; compile without compression");
  }
  if (!starts_with(data, size, kOffloadBundleMagic)) {
    return fail("no __CLANG_OFFLOAD_BUNDLE__ magic");
  }
  ByteReader reader(data, size);
  const std::uint8_t* skipped = nullptr;
  reader.take(kOffloadBundleMagic.size(), &skipped);
  std::uint64_t count = 0;
  if (!reader.le(&count)) return fail("truncated before the entry count");
  if (count == 0) return fail("no entries");
  if (count > reader.remaining() / kEntryHeaderBytes) {
    return fail(std::to_string(count) + " entries cannot fit in the " + std::to_string(size) +
                "-byte image");
  }
  const ByteView image(data, size);
  std::vector<OffloadBundleEntry> entries;
  entries.reserve(static_cast<std::size_t>(count));
  for (std::uint64_t i = 0; i < count; ++i) {
    OffloadBundleEntry entry;
    std::uint64_t id_size = 0;
    const std::uint8_t* id = nullptr;
    if (!reader.le(&entry.offset) || !reader.le(&entry.size) || !reader.le(&id_size)) {
      return fail("entry " + std::to_string(i) + " is truncated");
    }
    if (id_size > kMaxIdBytes || !reader.take(static_cast<std::size_t>(id_size), &id)) {
      return fail("entry " + std::to_string(i) + " has an id of " + std::to_string(id_size) +
                  " bytes, past the end or over " + std::to_string(kMaxIdBytes));
    }
    entry.id.assign(reinterpret_cast<const char*>(id), static_cast<std::size_t>(id_size));
    if (!printable_id(entry.id)) {
      return fail("entry " + std::to_string(i) + " has an empty or non-printable id");
    }
    if (!image.contains(entry.offset, entry.size)) {
      return fail("entry " + std::to_string(i) + " (" + entry.id + ") at " +
                  std::to_string(entry.offset) + " + " + std::to_string(entry.size) +
                  " bytes leaves the " + std::to_string(size) + "-byte image");
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

}  // namespace hipacm::backend
