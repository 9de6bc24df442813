// SPDX-License-Identifier: MIT
// remote_value.cpp - a cache entry as signed bytes for Redis, and their bounded decoding.
#include "plugin/cache/remote/remote_value.h"

#include <cstdint>
#include <utility>

#include "plugin/cache/store/entry.h"
#include "support/bytes/byte_reader.h"

// The format (version 1). Every integer is little-endian.
//
//   magic             8 bytes  "HIPACMR" then the format version, 0x01
//   key               u32 length, then bytes  (64 lowercase hex digits: the entry's cache key)
//   arch              u32 length, then bytes  (each label at most kMaxLabelBytes)
//   source_name       u32 length, then bytes
//   backend           u32 length, then bytes
//   compiler_version  u32 length, then bytes
//   plugin_version    u32 length, then bytes
//   checksum          u32 length, then bytes  (entry_checksum(): 64 lowercase hex digits)
//   log               u32 length, then bytes  (at most kMaxLogBytes)
//   code              u32 length, then bytes  (the code object)
//   lowered names     u32 count (at most kMaxLoweredNames), then each as u32 length and bytes
//                     (at most kMaxLoweredNameBytes each)
//   mac               32 bytes: HMAC-SHA256, under the shared key, of every byte before it
//
// Nothing follows the mac. The whole value is at most kMaxRemoteValueBytes. The entry's key is
// inside the signed bytes, so a value copied to another Redis key is refused, and the checksum
// is recomputed from the decoded fields, so a value signed over a damaged entry is refused too.
// The entry's legacy expected-kernel list is not carried (it is written empty and never used):
// the checksum put in a value is the one of the entry without it.

namespace hipacm::cache::remote {
namespace {

constexpr std::string_view kMagic{"HIPACMR\x01", 8};
constexpr std::size_t kFieldCount = 9;  // key .. code, each with a u32 length
constexpr std::size_t kMinValueBytes = kMagic.size() + 4 * kFieldCount + 4 + kMacBytes;
constexpr std::size_t kKeyBytes = 64;
constexpr std::size_t kMaxLogBytes = std::size_t{8} << 20;
constexpr std::uint32_t kMaxLoweredNames = 65536;
constexpr std::size_t kMaxLoweredNameBytes = 64 * 1024;

Failure refuse(std::string message) {
  return Failure{HIPACM_ERROR_INVALID_ARGUMENT,
                 "remote cache value refused: " + std::move(message)};
}

bool is_hex_key(std::string_view text) {
  if (text.size() != kKeyBytes) return false;
  for (char c : text)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

void put_u32(std::string& out, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

void put_field(std::string& out, std::string_view bytes) {
  put_u32(out, static_cast<std::uint32_t>(bytes.size()));
  out.append(bytes);
}

// Reads one length-prefixed field of at most `limit` bytes; `name` says which in a refusal.
class FieldReader {
 public:
  explicit FieldReader(std::string_view body)
      : reader_(reinterpret_cast<const std::uint8_t*>(body.data()), body.size()) {}

  Expected<std::string_view> field(const char* name, std::size_t limit) {
    std::uint32_t length = 0;
    if (!reader_.le(&length))
      return refuse(std::string("it ends inside the length of its ") + name);
    if (length > limit)
      return refuse(std::string("its ") + name + " is " + std::to_string(length) +
                    " bytes, over the bound of " + std::to_string(limit));
    const std::uint8_t* bytes = nullptr;
    if (!reader_.take(length, &bytes))
      return refuse(std::string("its ") + name + " runs past the end of the value");
    return std::string_view(reinterpret_cast<const char*>(bytes), length);
  }

  Expected<std::uint32_t> count(const char* name, std::uint32_t limit) {
    std::uint32_t n = 0;
    if (!reader_.le(&n)) return refuse(std::string("it ends inside its ") + name);
    if (n > limit)
      return refuse(std::string("its ") + name + " is " + std::to_string(n) +
                    ", over the bound of " + std::to_string(limit));
    return n;
  }

  bool take_magic() {
    const std::uint8_t* bytes = nullptr;
    return reader_.take(kMagic.size(), &bytes) &&
           std::string_view(reinterpret_cast<const char*>(bytes), kMagic.size()) == kMagic;
  }

  std::size_t remaining() const { return reader_.remaining(); }

 private:
  backend::ByteReader reader_;
};

}  // namespace

std::string encode_remote_value(const CacheEntry& entry, const SigningKey& key) {
  // An entry with the legacy list: its checksum covers the list, which the value does not carry,
  // so the value gets the checksum of what it does carry, when the entry's own one holds.
  std::string checksum = entry.checksum;
  if (!entry.expected_kernels.empty() && entry_checksum(entry) == entry.checksum) {
    CacheEntry carried;
    carried.info = entry.info;
    carried.lowered_names = entry.lowered_names;
    carried.log = entry.log;
    carried.code = entry.code;
    checksum = entry_checksum(carried);
  }
  std::size_t names_bytes = 0;
  for (const auto& name : entry.lowered_names) names_bytes += 4 + name.size();
  std::string out;
  out.reserve(kMinValueBytes + entry.info.key.size() + entry.info.arch.size() +
              entry.info.source_name.size() + entry.info.backend.size() +
              entry.info.compiler_version.size() + entry.info.plugin_version.size() +
              checksum.size() + entry.log.size() + entry.code.size() + names_bytes);
  out.append(kMagic);
  put_field(out, entry.info.key);
  put_field(out, entry.info.arch);
  put_field(out, entry.info.source_name);
  put_field(out, entry.info.backend);
  put_field(out, entry.info.compiler_version);
  put_field(out, entry.info.plugin_version);
  put_field(out, checksum);
  put_field(out, entry.log);
  put_field(out,
            std::string_view(reinterpret_cast<const char*>(entry.code.data()), entry.code.size()));
  put_u32(out, static_cast<std::uint32_t>(entry.lowered_names.size()));
  for (const auto& name : entry.lowered_names) put_field(out, name);
  out.append(key.mac(out));
  return out;
}

Expected<CacheEntry> decode_remote_value(std::string_view value, std::string_view expected_key,
                                         const SigningKey& key) {
  if (value.size() > kMaxRemoteValueBytes)
    return refuse("it is " + std::to_string(value.size()) + " bytes, over the bound of " +
                  std::to_string(kMaxRemoteValueBytes));
  if (value.size() < kMinValueBytes)
    return refuse("it is " + std::to_string(value.size()) + " bytes, shorter than any value (" +
                  std::to_string(kMinValueBytes) + ")");
  // The signature first: no byte of an unsigned value reaches the parser below.
  const std::string_view body = value.substr(0, value.size() - kMacBytes);
  if (!key.verify(body, value.substr(body.size())))
    return refuse("its signature does not verify under this key (fingerprint " + key.fingerprint() +
                  "): it was signed with another key, or altered");

  FieldReader in(body);
  if (!in.take_magic()) return refuse("it does not start with the format's magic and version 1");
  CacheEntry entry;
  struct Label {
    const char* name;
    std::string* target;
    std::size_t limit;
  };
  std::string checksum;
  const Label labels[] = {{"key", &entry.info.key, kKeyBytes},
                          {"arch", &entry.info.arch, kMaxLabelBytes},
                          {"source name", &entry.info.source_name, kMaxLabelBytes},
                          {"backend", &entry.info.backend, kMaxLabelBytes},
                          {"compiler version", &entry.info.compiler_version, kMaxLabelBytes},
                          {"plugin version", &entry.info.plugin_version, kMaxLabelBytes},
                          {"checksum", &checksum, kKeyBytes},
                          {"log", &entry.log, kMaxLogBytes}};
  for (const Label& label : labels) {
    Expected<std::string_view> bytes = in.field(label.name, label.limit);
    if (!bytes) return std::move(bytes).failure();
    label.target->assign(bytes.value());
  }
  Expected<std::string_view> code = in.field("code object", kMaxRemoteValueBytes);
  if (!code) return std::move(code).failure();
  entry.code.assign(code->begin(), code->end());
  Expected<std::uint32_t> names = in.count("lowered name count", kMaxLoweredNames);
  if (!names) return std::move(names).failure();
  // Each name costs at least its 4-byte length: a count the rest cannot hold reserves nothing.
  if (names.value() > in.remaining() / 4)
    return refuse("its lowered name count is more than its remaining bytes can hold");
  entry.lowered_names.reserve(names.value());
  for (std::uint32_t i = 0; i < names.value(); ++i) {
    Expected<std::string_view> name = in.field("lowered name", kMaxLoweredNameBytes);
    if (!name) return std::move(name).failure();
    entry.lowered_names.emplace_back(name.value());
  }
  if (in.remaining() != 0)
    return refuse(std::to_string(in.remaining()) + " bytes follow its last field");

  if (!is_hex_key(entry.info.key)) return refuse("its key is not 64 lowercase hex digits");
  if (entry.info.key != expected_key)
    return refuse("it was made for another cache key (a value copied under the wrong key)");
  if (!is_hex_key(checksum)) return refuse("its checksum is not 64 lowercase hex digits");
  entry.checksum = std::move(checksum);
  entry.info.size = payload_size(entry);
  if (entry_checksum(entry) != entry.checksum)
    return refuse("its checksum does not match its contents (signed over a damaged entry)");
  return entry;
}

}  // namespace hipacm::cache::remote
