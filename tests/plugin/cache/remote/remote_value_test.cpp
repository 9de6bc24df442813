// SPDX-License-Identifier: MIT
// remote_value_test.cpp - the signed remote cache value: what round-trips and every way a value
// that was altered, cut, moved, forged or oversized is refused.
#include "plugin/cache/remote/remote_value.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "plugin/cache/integrity.h"
#include "support/bytes/sha256.h"

namespace hipacm::cache::remote {
namespace {

const std::string kLowered = "_Z5saxpyIfEvPT_S1_f";

SigningKey make_key(const std::string& bytes) {
  return std::move(SigningKey::from_bytes(bytes).value());
}

std::string key_of(const std::string& what) { return sha256_hex(what.data(), what.size()); }

// An entry as a local cache holds it after a compile of a templated saxpy for gfx90a; `code_bytes`
// of code stand in for the object (the codec never reads it).
CacheEntry sample_entry(std::size_t code_bytes = 48) {
  CacheEntry entry;
  entry.info.key = key_of("saxpy.hip gfx90a -O3");
  entry.info.arch = "gfx90a";
  entry.info.source_name = "saxpy.hip";
  entry.info.backend = "hiprtc";
  entry.info.compiler_version = "hiprtc 6.2.41134";
  entry.info.plugin_version = "0.9.0";
  entry.lowered_names = {kLowered, "_Z5saxpyIdEvPT_S1_d"};
  entry.log = "saxpy.hip:3:9: warning: unused variable 'n' [-Wunused-variable]\n";
  entry.code.assign({0x7f, 'E', 'L', 'F', 2, 1, 1, 0x40});
  for (std::size_t i = entry.code.size(); i < code_bytes; ++i)
    entry.code.push_back(static_cast<std::uint8_t>(i * 37));
  entry.info.size = payload_size(entry);
  entry.checksum = entry_checksum(entry);
  return entry;
}

void put_u32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
void put_field(std::string& out, const std::string& s) {
  put_u32(out, static_cast<std::uint32_t>(s.size()));
  out += s;
}

// The body of a value for `entry` written field by field as the format says, for values the
// encoder would never make; `sign` adds the MAC.
std::string body_of(const CacheEntry& e, const std::string& checksum) {
  std::string out("HIPACMR\x01", 8);
  for (const std::string* s : {&e.info.key, &e.info.arch, &e.info.source_name, &e.info.backend,
                               &e.info.compiler_version, &e.info.plugin_version, &checksum, &e.log})
    put_field(out, *s);
  put_field(out, std::string(e.code.begin(), e.code.end()));
  put_u32(out, static_cast<std::uint32_t>(e.lowered_names.size()));
  for (const auto& name : e.lowered_names) put_field(out, name);
  return out;
}
std::string sign(const std::string& body, const SigningKey& key) { return body + key.mac(body); }

std::string refusal(std::string_view value, std::string_view expected_key, const SigningKey& key) {
  Expected<CacheEntry> decoded = decode_remote_value(value, expected_key, key);
  EXPECT_FALSE(decoded.has_value());
  if (decoded) return {};
  EXPECT_EQ(decoded.failure().status, HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_FALSE(decoded.failure().message.empty());
  return decoded.failure().message;
}

class RemoteValue : public ::testing::Test {
 protected:
  SigningKey key_ = make_key("team-shared-key-4f9c2a7e81d3b605");
  CacheEntry entry_ = sample_entry();
};

TEST_F(RemoteValue, RoundTripsEveryField) {
  const std::string value = encode_remote_value(entry_, key_);
  Expected<CacheEntry> decoded = decode_remote_value(value, entry_.info.key, key_);
  ASSERT_TRUE(decoded.has_value()) << decoded.failure().message;
  const CacheEntry& got = decoded.value();
  EXPECT_EQ(got.info.key, entry_.info.key);
  EXPECT_EQ(got.info.arch, entry_.info.arch);
  EXPECT_EQ(got.info.source_name, entry_.info.source_name);
  EXPECT_EQ(got.info.backend, entry_.info.backend);
  EXPECT_EQ(got.info.compiler_version, entry_.info.compiler_version);
  EXPECT_EQ(got.info.plugin_version, entry_.info.plugin_version);
  EXPECT_EQ(got.info.size, entry_.info.size);
  EXPECT_EQ(got.lowered_names, entry_.lowered_names);
  EXPECT_TRUE(got.expected_kernels.empty());
  EXPECT_EQ(got.log, entry_.log);
  EXPECT_EQ(got.code, entry_.code);
  EXPECT_EQ(got.checksum, entry_.checksum);
  // Encoding what was decoded gives the very same bytes.
  EXPECT_EQ(encode_remote_value(got, key_), value);
  // The layout: magic, then the key's length and the key; the MAC last.
  EXPECT_EQ(value.substr(0, 8), std::string("HIPACMR\x01", 8));
  EXPECT_EQ(value.substr(8, 4), std::string("\x40\0\0\0", 4));
  EXPECT_EQ(value.substr(12, 64), entry_.info.key);
  EXPECT_EQ(value.substr(value.size() - kMacBytes), key_.mac(value.substr(0, value.size() - 32)));
}

TEST_F(RemoteValue, EmptyFieldsAndNoNamesRoundTrip) {
  CacheEntry bare;
  bare.info.key = key_of("bare");
  bare.info.size = payload_size(bare);
  bare.checksum = entry_checksum(bare);
  Expected<CacheEntry> decoded =
      decode_remote_value(encode_remote_value(bare, key_), bare.info.key, key_);
  ASSERT_TRUE(decoded.has_value()) << decoded.failure().message;
  EXPECT_TRUE(decoded->code.empty() && decoded->lowered_names.empty() && decoded->log.empty());
}

TEST_F(RemoteValue, EntryWithTheLegacyKernelListRoundTripsWithoutIt) {
  CacheEntry legacy = entry_;
  legacy.expected_kernels = {"saxpy", kLowered};
  legacy.checksum = entry_checksum(legacy);
  Expected<CacheEntry> decoded =
      decode_remote_value(encode_remote_value(legacy, key_), legacy.info.key, key_);
  ASSERT_TRUE(decoded.has_value()) << decoded.failure().message;
  EXPECT_TRUE(decoded->expected_kernels.empty());
  EXPECT_EQ(decoded->checksum, entry_.checksum);
  EXPECT_EQ(decoded->code, entry_.code);
}

TEST_F(RemoteValue, EverySingleBitFlipIsRefused) {
  const std::string value = encode_remote_value(entry_, key_);
  ASSERT_TRUE(decode_remote_value(value, entry_.info.key, key_).has_value());
  std::size_t refused = 0;
  for (std::size_t byte = 0; byte < value.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string flipped = value;
      flipped[byte] = static_cast<char>(flipped[byte] ^ (1 << bit));
      Expected<CacheEntry> decoded = decode_remote_value(flipped, entry_.info.key, key_);
      ASSERT_FALSE(decoded.has_value()) << "byte " << byte << " bit " << bit;
      EXPECT_NE(decoded.failure().message.find("signature"), std::string::npos);
      ++refused;
    }
  }
  EXPECT_EQ(refused, value.size() * 8);
}

TEST_F(RemoteValue, EveryTruncationAndAnExtensionAreRefused) {
  const std::string value = encode_remote_value(entry_, key_);
  for (std::size_t length = 0; length < value.size(); ++length)
    refusal(std::string_view(value).substr(0, length), entry_.info.key, key_);
  refusal(value + '\0', entry_.info.key, key_);
  EXPECT_NE(refusal("", entry_.info.key, key_).find("shorter than any value"), std::string::npos);
}

TEST_F(RemoteValue, ValueSignedWithAnotherKeyIsRefused) {
  const SigningKey theirs = make_key("another-teams-key-0000000000000000");
  const std::string message = refusal(encode_remote_value(entry_, theirs), entry_.info.key, key_);
  EXPECT_NE(message.find("signature does not verify"), std::string::npos) << message;
  EXPECT_NE(message.find(key_.fingerprint()), std::string::npos) << message;
}

TEST_F(RemoteValue, ValueStoredUnderAnotherKeyIsRefused) {
  const std::string value = encode_remote_value(entry_, key_);
  const std::string message = refusal(value, key_of("some other program"), key_);
  EXPECT_NE(message.find("another cache key"), std::string::npos) << message;
}

TEST_F(RemoteValue, ForgedValuesAreRefused) {
  // An attacker without the key signs their own entry (a valid HMAC under their key), claims
  // the victim's cache key, and keeps the checksum consistent.
  const SigningKey attacker = make_key("attacker-chosen-key-31337-31337!!");
  CacheEntry evil = sample_entry();
  evil.code.back() ^= 0xff;
  evil.checksum = entry_checksum(evil);
  ASSERT_TRUE(decode_remote_value(encode_remote_value(evil, attacker), evil.info.key, attacker)
                  .has_value());
  EXPECT_NE(refusal(encode_remote_value(evil, attacker), entry_.info.key, key_).find("signature"),
            std::string::npos);
  // The body of a genuine value with the attacker's MAC in place of ours.
  const std::string genuine = encode_remote_value(entry_, key_);
  const std::string body = genuine.substr(0, genuine.size() - kMacBytes);
  refusal(sign(body, attacker), entry_.info.key, key_);
  // A genuine value's MAC on an altered body, and no MAC at all.
  refusal(body.substr(0, body.size() - 1) + 'X' + genuine.substr(body.size()), entry_.info.key,
          key_);
  refusal(body + std::string(kMacBytes, '\0'), entry_.info.key, key_);
}

// Bodies the encoder never writes, signed with the right key so the parser behind the
// signature sees them: each is refused by the check that names it.
TEST_F(RemoteValue, SignedMalformedBodiesAreRefusedByTheirCheck) {
  auto refused_as = [&](const std::string& body, const char* check) {
    const std::string message = refusal(sign(body, key_), entry_.info.key, key_);
    EXPECT_NE(message.find(check), std::string::npos) << "wanted '" << check << "': " << message;
    // No value byte is echoed: neither the log nor the source name.
    EXPECT_EQ(message.find("unused variable"), std::string::npos) << message;
    EXPECT_EQ(message.find("saxpy"), std::string::npos) << message;
  };
  const std::string good = body_of(entry_, entry_.checksum);
  ASSERT_TRUE(decode_remote_value(sign(good, key_), entry_.info.key, key_).has_value());

  std::string magic = good;
  magic[7] = '\x02';
  refused_as(magic, "magic");
  refused_as(good + "z", "1 bytes follow its last field");

  CacheEntry upper = entry_;
  upper.info.key[0] = 'A';
  refused_as(body_of(upper, entry_.checksum), "not 64 lowercase hex");
  CacheEntry short_key = entry_;
  short_key.info.key.pop_back();
  refused_as(body_of(short_key, entry_.checksum), "not 64 lowercase hex");
  CacheEntry long_label = entry_;
  long_label.info.arch = std::string(kMaxLabelBytes + 1, 'g');
  refused_as(body_of(long_label, entry_.checksum), "its arch is 4097 bytes, over the bound");

  CacheEntry damaged = entry_;
  damaged.code[10] ^= 1;  // the old checksum, signed over changed code
  refused_as(body_of(damaged, entry_.checksum), "checksum does not match");
  refused_as(body_of(entry_, std::string(64, '0')), "checksum does not match");
  refused_as(body_of(entry_, "checksum"), "checksum is not 64 lowercase hex");

  CacheEntry long_name = entry_;
  long_name.lowered_names.push_back(std::string(64 * 1024 + 1, 'n'));
  refused_as(body_of(long_name, entry_.checksum), "lowered name is 65537 bytes");

  // A name count far beyond what the rest holds, and one beyond the bound.
  std::string counted = body_of(entry_, entry_.checksum);
  const std::size_t count_at = counted.size() - (4 + kLowered.size()) - (4 + 19) - 4;
  counted.replace(count_at, 4, std::string("\xff\xff\0\0", 4));
  refused_as(counted, "more than its remaining bytes can hold");
  counted.replace(count_at, 4, std::string("\x01\0\x01\0", 4));
  refused_as(counted, "over the bound of 65536");

  // A code length past the end of the value, and the value cut inside a length.
  std::string lengths = good.substr(0, 8);
  put_u32(lengths, 0xfffffff0u);
  refused_as(lengths + std::string(80, 'a'), "its key is 4294967280 bytes, over the bound");
  std::string code_past =
      good.substr(0, good.size() - (4 + kLowered.size()) - (4 + 19) - 4 - entry_.code.size() - 4);
  put_u32(code_past, 1u << 20);
  refused_as(code_past + std::string(40, 'c'), "code object runs past the end");
  refused_as(good.substr(0, 8 + 4 + 64 + 2), "ends inside the length of its arch");
}

TEST_F(RemoteValue, OversizeValueIsRefusedUnread) {
  // A signature over it would be valid, but the size alone refuses it (the MAC is not even
  // computed over 64 MiB of someone else's bytes).
  const std::string body = std::string(kMaxRemoteValueBytes + 1 - kMacBytes, '\0');
  const std::string message = refusal(sign(body, key_), entry_.info.key, key_);
  EXPECT_NE(message.find("over the bound of 67108864"), std::string::npos) << message;
}

TEST_F(RemoteValue, LargeCodeObjectRoundTrips) {
  const CacheEntry big = sample_entry(std::size_t{3} << 20);
  Expected<CacheEntry> decoded =
      decode_remote_value(encode_remote_value(big, key_), big.info.key, key_);
  ASSERT_TRUE(decoded.has_value()) << decoded.failure().message;
  EXPECT_EQ(decoded->code, big.code);
  EXPECT_EQ(decoded->info.size, big.info.size);
}

}  // namespace
}  // namespace hipacm::cache::remote
