// SPDX-License-Identifier: MIT
// bounded_cbor_test.cpp - the shape check in front of every message between ranks: it accepts all
// that hipacm's encoder writes and refuses, without recursing, the CBOR a reader would follow
// off the stack.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/cluster/bounded_cbor.h"

namespace hipacm::cli {
namespace {

using Json = nlohmann::json;
using Bytes = std::vector<std::uint8_t>;

std::string refusal(const Bytes& bytes) {
  const Expected<void> shape = check_cbor_shape(bytes.data(), bytes.size());
  if (shape) return {};
  EXPECT_FALSE(shape.failure().message.empty());
  return shape.failure().message;
}

bool accepted(const Bytes& bytes) {
  return check_cbor_shape(bytes.data(), bytes.size()).has_value();
}

/// A value of every kind the encoder writes, nested `depth` levels (0: a scalar).
Json random_value(std::mt19937_64& rng, int depth) {
  const auto pick = [&rng](std::uint64_t n) { return rng() % n; };
  if (depth == 0) {
    switch (pick(9)) {
      case 0:
        return Json(pick(24));  // in the head
      case 1:
        return Json(std::uint64_t{1} << pick(64));  // 1 to 8 argument bytes
      case 2:
        return Json(-static_cast<std::int64_t>(pick(1u << 31)) - 1);
      case 3:
        return Json(static_cast<double>(pick(1000)) / 7.0);  // a double
      case 4:
        return Json(0.5);  // a half or single float
      case 5:
        return Json(pick(2) == 0);
      case 6:
        return Json(nullptr);
      case 7:
        return Json(std::string(pick(300), 'k'));  // 1- and 2-byte lengths
      default:
        return Json::binary(Bytes(pick(70000), 0xc3));  // up to a 4-byte length
    }
  }
  Json out = pick(2) == 0 ? Json::array() : Json::object();
  const std::uint64_t n = 1 + pick(3);
  for (std::uint64_t i = 0; i < n; ++i) {
    const int inner = static_cast<int>(pick(static_cast<std::uint64_t>(depth)));
    if (out.is_array())
      out.push_back(random_value(rng, inner));
    else {
      std::string field = "f";
      field += std::to_string(i);
      out[field] = random_value(rng, inner);
    }
  }
  return out;
}

/// `depth` arrays of one element around a 0.
Bytes nested_arrays(std::size_t depth) {
  Bytes bytes(depth, 0x81);
  bytes.push_back(0x00);
  return bytes;
}

TEST(BoundedCbor, AcceptsEverythingTheEncoderWritesWithinTheDepthBound) {
  std::mt19937_64 rng(20261205);
  for (int i = 0; i < 400; ++i) {
    const Json value = random_value(rng, 1 + i % static_cast<int>(kMaxCborDepth));
    const Bytes bytes = Json::to_cbor(value);
    EXPECT_EQ(refusal(bytes), "") << value.dump().substr(0, 200);
    const Expected<Json> decoded = parse_bounded_cbor(bytes.data(), bytes.size());
    ASSERT_TRUE(decoded) << decoded.failure().message;
    EXPECT_EQ(decoded.value(), value);
  }
}

TEST(BoundedCbor, TheDepthBoundIsExact) {
  EXPECT_TRUE(accepted(nested_arrays(kMaxCborDepth)));
  EXPECT_NE(refusal(nested_arrays(kMaxCborDepth + 1)).find("nested deeper than 16 levels"),
            std::string::npos);
  // Empty containers count as a level too, as in the decoder's own bound.
  Bytes empty_at_the_bottom(kMaxCborDepth, 0x81);
  empty_at_the_bottom.push_back(0x80);
  EXPECT_FALSE(accepted(empty_at_the_bottom));
  // Maps count as arrays do: {0: {0: ... 0}}.
  const auto nested_maps = [](std::size_t depth) {
    Bytes bytes;
    for (std::size_t i = 0; i < depth; ++i) bytes.insert(bytes.end(), {0xa1, 0x00});
    bytes.push_back(0x00);
    return bytes;
  };
  EXPECT_TRUE(accepted(nested_maps(kMaxCborDepth)));
  EXPECT_FALSE(accepted(nested_maps(kMaxCborDepth + 1)));
}

TEST(BoundedCbor, NestedIndefiniteStringsAreRefusedAtTheirFirstByte) {
  // An indefinite text string whose chunk is again an indefinite text string, 100,000 deep: a
  // recursive reader follows it one stack frame a level. RFC 8949 forbids it, and hipacm never
  // writes indefinite lengths at all.
  for (std::uint8_t initial : {0x7f, 0x5f, 0x9f, 0xbf}) {
    Bytes bytes(100000, initial);
    const std::string why = refusal(bytes);
    EXPECT_NE(why.find("indefinite length or break at byte 0"), std::string::npos) << why;
    EXPECT_FALSE(parse_bounded_cbor(bytes.data(), bytes.size()));
  }
  // Inside a map, one level down, and as a lone break.
  EXPECT_NE(refusal({0xa1, 0x61, 'v', 0x7f, 0x61, 'a', 0xff}).find("at byte 3"), std::string::npos);
  EXPECT_NE(refusal({0xff}).find("indefinite length or break"), std::string::npos);
}

TEST(BoundedCbor, RefusesTagsReservedHeadsTruncationAndTrailingBytes) {
  EXPECT_NE(refusal({0xc2, 0x41, 0x01}).find("a tag at byte 0"), std::string::npos);
  for (std::uint8_t reserved : {0x1c, 0x3d, 0x5e, 0xfc})
    EXPECT_NE(refusal({reserved, 0, 0, 0, 0, 0, 0, 0, 0}).find("reserved"), std::string::npos);
  EXPECT_NE(refusal({}).find("no bytes"), std::string::npos);
  EXPECT_NE(refusal({0x1b, 0, 0, 0}).find("ends inside the head"), std::string::npos);
  EXPECT_NE(refusal({0x82, 0x01}).find("holds more items"), std::string::npos);
  EXPECT_NE(refusal({0x83, 0x01, 0x02}).find("holds more items"), std::string::npos);
  EXPECT_NE(refusal({0x64, 'a', 'b', 'c'}).find("longer than the bytes"), std::string::npos);
  EXPECT_NE(refusal({0x01, 0x02}).find("1 bytes follow"), std::string::npos);
  // Lengths and counts near 2^64 neither wrap nor allocate.
  EXPECT_NE(refusal({0x5b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}).find("longer than"),
            std::string::npos);
  EXPECT_NE(refusal({0xbb, 0x80, 0, 0, 0, 0, 0, 0, 0x01, 0x00}).find("holds more items"),
            std::string::npos);
  EXPECT_NE(
      refusal({0x9b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00}).find("holds more"),
      std::string::npos);
}

TEST(BoundedCbor, RandomBytesNeverCrashTheCheckOrTheDecoderBehindIt) {
  // What the shape check lets through is what nlohmann's reader can follow without recursing
  // past the bound; every accepted input must also leave the decoder with an answer.
  std::mt19937_64 rng(7);
  const Bytes seed = Json::to_cbor({{"v", 1}, {"entries", Json::array({{{"item", 3}}})}});
  int accepted_count = 0;
  for (int i = 0; i < 20000; ++i) {
    Bytes bytes = seed;
    for (int m = 0; m < 1 + i % 4; ++m)
      bytes[rng() % bytes.size()] = static_cast<std::uint8_t>(rng());
    const Expected<Json> out = parse_bounded_cbor(bytes.data(), bytes.size());
    if (out)
      ++accepted_count;
    else
      EXPECT_FALSE(out.failure().message.empty());
  }
  EXPECT_GT(accepted_count, 0);
}

}  // namespace
}  // namespace hipacm::cli
